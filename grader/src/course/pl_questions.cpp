#include "course/pl_questions.h"

#include <stdexcept>

#include "common/files.h"
#include "reports/escape.h"
#include "common/sha256.h"
#include "judge/variants.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

// A question's uuid: PrairieLearn wants one per question, stable across
// releases, so it is made from the course's and the exercise's names.
std::string uuid_of(const std::string& course, const std::string& exercise) {
  std::string h = sha256_hex("gradlab question " + course + "/" + exercise).substr(0, 32);
  h[12] = '4';                                         // version 4 (random-like)
  h[16] = "89ab"[std::stoi(h.substr(16, 1), nullptr, 16) % 4];  // RFC 4122 variant
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20, 12);
}

// server.py: the variant this student's copy of the question shows, from
// PrairieLearn's own variant seed (one per student and question), so that a
// student keeps their numbers across visits and classmates get others.
std::string server_py(int count) {
  return "# The gradlab variant this copy of the question shows (0: the lesson's numbers).\n"
         "# PrairieLearn gives each student their own variant of a question, with a\n"
         "# seed of its own; the numbers follow from it, and the external grader reads\n"
         "# them back from params (PrairieLearn hands it no identity).\n"
         "import hashlib\n\n"
         "COUNT = " + std::to_string(count) + "\n\n\n"
         "def generate(data):\n"
         "    seed = str(data.get(\"variant_seed\", \"\")).encode()\n"
         "    n = int.from_bytes(hashlib.sha256(seed).digest()[:8], \"big\")\n"
         "    data[\"params\"][\"gradlab_variant\"] = 1 + n % COUNT if COUNT > 0 else 0\n";
}

std::string question_html(const std::string& exercise, const std::string& title) {
  return "<pl-question-panel>\n"
         "  <p><b>" + reports::xml_text(exercise) + "</b>: " + reports::xml_text(title) + ".</p>\n"
         "  <p>The statement is the comment at the top of the file. Fill in the blanks, then submit.</p>\n"
         "</pl-question-panel>\n\n"
         "<pl-file-editor file-name=\"" + exercise + ".cpp\" ace-mode=\"ace/mode/c_cpp\"\n"
         "                source-file-name=\"starters/" + exercise + ".v{{params.gradlab_variant}}.cpp\"></pl-file-editor>\n\n"
         "<pl-submission-panel>\n"
         "  <pl-external-grader-results></pl-external-grader-results>\n"
         "  <pl-file-preview></pl-file-preview>\n"
         "</pl-submission-panel>\n";
}

}  // namespace

void write_pl_questions(const Course& course, const fs::path& dir, int count,
                        const std::function<json(const std::string& exercise, int variant)>& facts_at) {
  const std::string course_name = fs::path(course.root).filename().string();
  for (const auto& e : course.exercises()) {
    const Rubric rubric = load_rubric(course.rubric_path(e));
    const fs::path q = dir / "questions" / e;
    const int n = rubric.variants.empty() ? 0 : count;
    const auto starter = read_file(course.starter_path(e));
    if (!starter) throw std::runtime_error("cannot read " + course.starter_path(e));
    for (int v = 0; v <= n; ++v)
      write_text(q / "starters" / (e + ".v" + std::to_string(v) + ".cpp"),
            v == 0 ? *starter : starter_at(*starter, rubric, v, given_at(rubric, v), facts_at(e, v)));
    const json info = {
        {"uuid", uuid_of(course_name, e)},
        {"title", fill(rubric.title, given_at(rubric, 0), facts_at(e, 0))},
        {"topic", "Autograd"},
        {"tags", {"gradlab"}},
        {"type", "v3"},
        {"singleVariant", n == 0},
        {"gradingMethod", "External"},
        {"externalGradingOptions",
         {{"enabled", true}, {"image", "YOUR/gradlab-grader"}, {"entrypoint", "/gradlab/pl-grade"}, {"timeout", 60}}}};
    write_text(q / "info.json", info.dump(2) + "\n");
    write_text(q / "question.html", question_html(e, info["title"].get<std::string>()));
    write_text(q / "server.py", server_py(n));
  }
}

}  // namespace grader
