// report.html and the graph pictures, from hand-made results: what the page
// says for each kind of check, that nothing from a submission reaches it
// unescaped, that the pictures are real PNGs even for hostile graphs, and
// that every colour pair the page uses reads at 4.5:1 or better.
#include "catch_compat.h"

#include <filesystem>
#include <vector>

#include "../grader/temp_dir.h"
#include "html_style.h"
#include "reports/graphs.h"
#include "reports/writer.h"
#include "samples.h"

using grader::json;

namespace {

using samples::check;
using samples::kHostile;

json node(const std::string& id, const std::string& name, json tensors, json next) {
  return {{"id", id}, {"name", name}, {"tensors", std::move(tensors)}, {"next", std::move(next)}};
}
json leaf(const std::string& id, const std::string& name, json shape) {
  json n = node(id, "torch::autograd::AccumulateGrad", {name}, json::array());
  n["shape"] = std::move(shape);
  return n;
}

// loss = (w * x).sum(), with h = w * x retaining its grad.
json small_graph() {
  return json::array({node("n0", "torch::autograd::SumBackward0", {"loss"}, json::parse(R"([["n1", 0]])")),
                      node("n1", "torch::autograd::MulBackward0", {"h"}, json::parse(R"([["n2", 0], [null, 0]])")),
                      leaf("n2", "w", {3, 2})});
}
json small_tensors() {
  return {{"loss", {{"shape", json::array()}, {"is_leaf", false}, {"retains_grad", false}}},
          {"h", {{"shape", {3, 2}}, {"is_leaf", false}, {"retains_grad", true}}},
          {"w", {{"shape", {3, 2}}, {"is_leaf", true}, {"retains_grad", false}}}};
}

grader::Result result() {
  grader::Result r;
  r.exercise = "exercise3", r.title = "The lab's exercise", r.submission = "exercises/exercise3.cpp";
  r.submission_sha256 = std::string(64, 'a');
  r.verdict = grader::Verdict::Failed, r.score = 1, r.max_score = 4;
  r.checks = {check("a", grader::CheckStatus::Passed, 1), check("b", grader::CheckStatus::Failed, 1), check("c", grader::CheckStatus::Failed, 1, true), check("g", grader::CheckStatus::Failed, 1)};
  r.checks[1].message = kHostile;
  r.checks[3].kind = "graph";
  r.compile.ok = true;
  r.run.status = grader::RunStatus::Ok, r.run.exit_code = 0, r.run.isolation = "fallback";
  r.run.stdout_text = kHostile;
  r.engine = "gradlab 0.1.0", r.compiler = "GNU 12.2.0", r.created = "2026-11-22T00:00:00Z";
  grader::GraphView v;
  v.tensor = "loss", v.check_id = "g";
  v.student = small_graph();
  v.reference = small_graph();
  v.reference[1]["name"] = "torch::autograd::AddBackward0";
  v.student_marked = {"n1"}, v.reference_marked = {"n1"};
  v.differences = {"root → SumBackward0 input 0: expected AddBackward0, found MulBackward0"};
  v.student_tensors = v.reference_tensors = small_tensors();
  r.graphs.push_back(v);
  return r;
}

bool is_png(const std::string& b) { return b.size() > 24 && b.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0; }

}  // namespace

TEST_CASE("a graph becomes torchviz-style DOT and a PNG drawn by libgvc", "[reports][graphs]") {
  grader::GraphView v;
  v.tensor = "loss";
  v.student = small_graph();
  v.student_tensors = small_tensors();
  const std::string dot = reports::graph_dot(v);
  CHECK_THAT(dot, Catch::Contains("nroot [label=\"loss\\n ()\" fillcolor=darkolivegreen1]"));
  CHECK_THAT(dot, Catch::Contains("n2 [label=\"w\\n (3, 2)\" fillcolor=lightblue]"));
  CHECK_THAT(dot, Catch::Contains("MulBackward0\\nh (retains grad)"));
  CHECK_THAT(dot, Catch::Contains("n2 -> n1"));
  CHECK_THAT(dot, !Catch::Contains("cluster"));
  const auto p = reports::render_png(dot);
  CHECK(p.error.empty());
  CHECK(is_png(p.png));
  CHECK(p.width > 50);
  CHECK(p.height > p.width);  // three levels under one another
  // The same graph at twice the dpi is twice as wide: the pictures are drawn, not scaled.
  CHECK(std::abs(reports::render_png(dot, 192).width - 2 * p.width) <= 2);
}

TEST_CASE("beside a failed check the two graphs share one picture, the differing nodes outlined",
          "[reports][graphs]") {
  const grader::GraphView v = result().graphs[0];
  const std::string dot = reports::graph_dot(v);
  CHECK_THAT(dot, Catch::Contains("subgraph cluster_student"));
  CHECK_THAT(dot, Catch::Contains("subgraph cluster_reference"));
  CHECK_THAT(dot, Catch::Contains("s1 [label=\"MulBackward0\\nh (retains grad)\\n≠ differs\" fillcolor=lightgrey color=red3"));
  CHECK_THAT(dot, Catch::Contains("r1 [label=\"AddBackward0\\nh (retains grad)\\n≠ differs\""));
  CHECK_THAT(dot, !Catch::Contains("s2 [label=\"w\\n (3, 2)\" fillcolor=lightblue color"));
  CHECK(is_png(reports::render_png(dot).png));

  const std::string alt = reports::graph_alt(v);
  CHECK_THAT(alt, Catch::Contains("Two graphs side by side"));
  CHECK_THAT(alt, Catch::Contains("loss comes from SumBackward0 (loss)"));
  CHECK_THAT(alt, Catch::Contains("MulBackward0 (h) takes leaf w."));
  CHECK_THAT(alt, Catch::Contains("Leaves: w (3, 2)."));
  CHECK_THAT(alt, Catch::Contains("Retaining their grad: h."));
  CHECK_THAT(alt, Catch::Contains("Outlined as different: AddBackward0 (h)."));
}

TEST_CASE("a hostile or malformed graph still draws, or fails with a message", "[reports][graphs]") {
  grader::GraphView v;
  v.tensor = "a\"b\\c\nd\x01\xff}";
  v.student = json::array({node("n0\"];evil", "Op\"]\n[label=x", {v.tensor}, json::parse(R"([["nowhere", 0], 7, []])")),
                           leaf("n1", "x\\\"", json::array({"not a number"})), json("not a node")});
  v.student[0]["next"].push_back({"n1", 0});
  const std::string dot = reports::graph_dot(v);
  CHECK_THAT(dot, !Catch::Contains("evil"));  // node ids are the grader's own
  const auto p = reports::render_png(dot);
  CHECK(p.error.empty());
  CHECK(is_png(p.png));

  const auto bad = reports::render_png("digraph { a -> }");
  CHECK(bad.png.empty());
  CHECK_THAT(bad.error, Catch::Contains("could not read"));
}

TEST_CASE("a picture drawn once is read back from the cache, and only for the very same DOT text",
          "[reports][graphs]") {
  namespace fs = std::filesystem;
  gradlab_test::TempDir dir("gradlab-pictures");
  const std::string cache = (dir.path / "pictures").string();
  grader::GraphView v;
  v.tensor = "loss";
  v.student = small_graph();
  v.student_tensors = small_tensors();
  const std::string dot = reports::graph_dot(v);
  const auto drawn = reports::render_png(dot, 96, cache);
  REQUIRE(is_png(drawn.png));
  CHECK(drawn.png == reports::render_png(dot).png);  // the cache changes no byte
  std::vector<fs::path> stored;
  for (const auto& e : fs::directory_iterator(cache)) stored.push_back(e.path());
  REQUIRE(stored.size() == 1);
  const fs::path file = stored[0];

  // What is stored is what comes back: put another picture under the same
  // text, and it is returned with its own size.
  const auto other = reports::render_png(reports::graph_dot(result().graphs[0]));
  REQUIRE(is_png(other.png));
  gradlab_test::write(file, std::to_string(dot.size()) + "\n" + dot + other.png);
  const auto hit = reports::render_png(dot, 96, cache);
  CHECK(hit.png == other.png);
  CHECK(hit.width == other.width);
  CHECK(hit.height == other.height);

  // The same name for another text (a collision, or a file cut short) is
  // never used: the picture is drawn again and put back.
  std::string changed = dot;
  changed[changed.size() / 2] ^= 1;
  gradlab_test::write(file, std::to_string(changed.size()) + "\n" + changed + other.png);
  CHECK(reports::render_png(dot, 96, cache).png == drawn.png);
  gradlab_test::write(file, std::to_string(dot.size()) + "\n" + dot.substr(0, 10));
  CHECK(reports::render_png(dot, 96, cache).png == drawn.png);
  CHECK(reports::render_png(dot, 96, cache).png == drawn.png);  // stored again, read back
  // Another dpi is another picture.
  CHECK(reports::render_png(dot, 192, cache).width > drawn.width);

  // A cache that cannot be written costs nothing but the time.
  const fs::path blocked = dir.path / "a-file";
  gradlab_test::write(blocked, "not a folder");
  CHECK(reports::render_png(dot, 96, (blocked / "pictures").string()).png == drawn.png);
}

TEST_CASE("graph file names keep letters and digits, and never collide", "[reports][graphs]") {
  std::vector<grader::GraphView> g(4);
  g[0].tensor = "loss", g[1].tensor = "a.b", g[2].tensor = "ab", g[3].tensor = "../../x";
  g[2].reference = json::array();
  CHECK(reports::graph_file_names(g) ==
        std::vector<std::string>{"graph-loss.png", "graph-ab.png", "graph-ab-vs-reference.png", "graph-x.png"});
  g[2].reference = nullptr;
  g[0].tensor = "√";
  CHECK(reports::graph_file_names(g) ==
        std::vector<std::string>{"graph-1.png", "graph-ab.png", "graph-ab-2.png", "graph-x.png"});
}

TEST_CASE("report.html shows the score, each check's status in words, and escapes the submission's text",
          "[reports][html]") {
  const auto files = reports::html_writer()->files(result());
  REQUIRE(files.size() == 2);
  CHECK(files[0].name == "report.html");
  CHECK(files[1].name == "graph-loss-vs-reference.png");
  CHECK(is_png(files[1].bytes));
  const std::string& html = files[0].bytes;
  CHECK(html == reports::html_writer()->render(result()));  // same input, same bytes
  CHECK_THAT(html, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK_THAT(html, Catch::Contains("<p class=\"score\" id=\"score\"><strong>1</strong> / 4 points</p>"));
  CHECK_THAT(html, Catch::Contains("✗ Failed"));
  CHECK_THAT(html, Catch::Contains("✓ passed</span><span class=\"check-name\">check a</span>"));
  CHECK_THAT(html, Catch::Contains("<dt>Expected</dt><dd><pre class=\"value\">expected b</pre>"));
  CHECK_THAT(html, Catch::Contains("<strong>Hint:</strong> hint b"));
  // The hidden check says only that it failed.
  CHECK_THAT(html, Catch::Contains("hidden check c"));
  CHECK_THAT(html, !Catch::Contains("hint c"));
  CHECK_THAT(html, !Catch::Contains("expected c"));
  CHECK_THAT(html, !Catch::Contains(">check c<"));
  // The failed graph check links to its picture, which is embedded with alt text.
  CHECK_THAT(html, Catch::Contains("<a href=\"#graph-1\">See your graph beside the reference's</a>"));
  CHECK_THAT(html, Catch::Contains("<img src=\"data:image/png;base64,iVBORw0KGgo"));
  CHECK_THAT(html, Catch::Contains("alt=\"Two graphs side by side."));
  CHECK_THAT(html, Catch::Contains("not namespace-isolated"));
  // Escaped everywhere: no markup, no control bytes, no invalid UTF-8.
  CHECK_THAT(html, !Catch::Contains("<script"));
  CHECK_THAT(html, Catch::Contains("&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#39;)"));
  size_t controls = 0;
  for (char c : html) controls += c >= 0 && c < 0x20 && c != '\n' && c != '\t';
  CHECK(controls == 0);
  CHECK(html.find("\xff") == std::string::npos);
  CHECK(html.find("http") == std::string::npos);  // nothing fetched from elsewhere
}

TEST_CASE("report.html cuts long output with a marker and says why nothing ran", "[reports][html]") {
  grader::Result r = result();
  r.verdict = grader::Verdict::RuntimeError;
  r.run.status = grader::RunStatus::OutputLimit, r.run.message = "stopped after printing more than 256 KiB";
  r.run.stdout_text = std::string(30000, 'y');
  r.run.stderr_text = "short";
  r.run.stderr_truncated = true;
  for (auto& c : r.checks) c.status = grader::CheckStatus::NotRun, c.points = 0, c.message = "the program did not finish";
  r.graphs.clear();
  const std::string html = reports::html_writer()->render(r);
  CHECK_THAT(html, Catch::Contains("✗ Did not finish"));
  CHECK_THAT(html, Catch::Contains("no check could run: stopped after printing more than 256 KiB"));
  CHECK_THAT(html, Catch::Contains("[… 10000 more bytes not shown here; report.json has them]"));
  CHECK_THAT(html, Catch::Contains("[… the program printed more: the grader stopped reading at its output limit]"));
  CHECK_THAT(html, Catch::Contains("– not run"));
  // Said once at the top, not under each check.
  CHECK_THAT(html, !Catch::Contains("the program did not finish</p>"));
  CHECK_THAT(html, !Catch::Contains("<img"));

  r.verdict = grader::Verdict::CompileError;
  r.compile.ok = false;
  r.run = grader::RunInfo{};
  r.compile.diagnostics = "exercise3.cpp: In function 'void f()':\nexercise3.cpp:4:3: error: 'y' was not declared <here>\n";
  const std::string c = reports::html_writer()->render(r);
  CHECK_THAT(c, Catch::Contains("The compiler's first error: <code>exercise3.cpp:4:3: error: &#39;y&#39; was not "
                                "declared &lt;here&gt;</code>"));
}

TEST_CASE("a graph too large to draw is described instead", "[reports][html]") {
  grader::Result r = result();
  grader::GraphView big;
  big.tensor = "chain";
  big.student = json::array();
  for (size_t i = 0; i <= reports::kMaxDrawnNodes; ++i)
    big.student.push_back(node("n" + std::to_string(i), "torch::autograd::MulBackward0", json::array(),
                               json::array({json::array({"n" + std::to_string(i + 1), 0})})));
  r.graphs = {big};
  const auto files = reports::html_writer()->files(r);
  CHECK(files.size() == 1);
  CHECK_THAT(files[0].bytes, Catch::Contains("This graph has 251 nodes, too many to draw legibly"));
}

TEST_CASE("every colour pair of the page reads at 4.5:1 or better, and the stylesheet uses them", "[reports][html]") {
  CHECK(reports::contrast_ratio("#000000", "#ffffff") == Approx(21));
  CHECK(reports::contrast_ratio("#777777", "#ffffff") == Approx(4.48).epsilon(0.01));
  const std::string css = reports::stylesheet();
  for (const auto& s : reports::palette()) {
    INFO(s.name << ": " << s.foreground << " on " << s.background);
    CHECK(reports::contrast_ratio(s.foreground, s.background) >= 4.5);
    CHECK_THAT(css, Catch::Contains(std::string("--") + s.name + "-fg:" + s.foreground));
  }
}
