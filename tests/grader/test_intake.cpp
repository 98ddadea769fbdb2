// What `grade batch` takes from a class folder (intake.h), on real folders:
// links to a peer, to a file outside, to a folder, a fifo, a device, a file
// over 1 MiB, a hard link, and names with newlines, '../' look-alikes,
// leading '-', formula characters and escapes.
#include "catch_compat.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cohort/intake.h"
#include "cohort/lookalikes.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using grader::IntakeFile;
using grader::safe_name;
using grader::take_submissions;

namespace {

struct TempDir : gradlab_test::TempDir {
  TempDir() : gradlab_test::TempDir("gradlab-intake") {}
};
using gradlab_test::write;

const IntakeFile* find(const grader::Intake& in, const std::string& student, const std::string& exercise) {
  for (const auto& f : in.files)
    if (f.student == student && f.exercise == exercise) return &f;
  return nullptr;
}

std::string reason(const grader::Intake& in, const std::string& entry) {
  for (const auto& n : in.notes)
    if (n.entry == entry) return (n.refused ? "refused: " : "flagged: ") + n.reason;
  return "";
}

const auto kAll = [](const std::string&) { return true; };

}  // namespace

TEST_CASE("intake takes regular files and refuses every link, fifo, device and folder", "[grader][intake]") {
  TempDir t;
  const fs::path subs = t.path / "subs", outside = t.path / "solutions";
  write(outside / "exercise3.cpp", "// SECRET REFERENCE SOLUTION\n");
  write(subs / "alice" / "exercise3.cpp", "// alice's own work\n");
  write(subs / "alice" / "exercise5.cpp", "// alice 5\n");
  fs::create_directories(subs / "mallory");
  fs::create_symlink("../alice/exercise3.cpp", subs / "mallory" / "exercise3.cpp");           // a peer
  fs::create_symlink(outside / "exercise3.cpp", subs / "mallory" / "exercise5.cpp");          // outside
  fs::create_directories(subs / "trudy" / "exercise3.cpp");                                   // a folder
  fs::create_directories(subs / "oscar");
  REQUIRE(mkfifo((subs / "oscar" / "exercise3.cpp").c_str(), 0644) == 0);                     // a fifo: must not block
  fs::create_symlink("/dev/zero", subs / "oscar" / "exercise5.cpp");                          // a device behind a link
  fs::create_directory_symlink(outside, subs / "peggy");                                      // a student folder that is a link
  fs::create_directory_symlink(subs / "alice", subs / "sybil");                               // ... to a peer's folder
  fs::create_symlink(t.path, subs / "victor" );
  write(subs / "notes.txt", "not a student\n");

  const grader::Intake in = take_submissions(subs.string(), {"exercise3", "exercise5"}, kAll);
  CHECK(in.students == std::vector<std::string>{"alice", "mallory", "oscar", "trudy"});
  REQUIRE(in.files.size() == 2);
  CHECK(find(in, "alice", "exercise3")->text == "// alice's own work\n");
  CHECK(find(in, "alice", "exercise3")->shown == subs.string() + "/alice/exercise3.cpp");
  CHECK(find(in, "alice", "exercise5"));
  CHECK_FALSE(find(in, "mallory", "exercise3"));
  for (const auto& f : in.files) CHECK(f.text.find("SECRET") == std::string::npos);

  CHECK(reason(in, "mallory/exercise3.cpp") ==
        "refused: a symbolic link (to ../alice/exercise3.cpp): only regular files are graded");
  CHECK_THAT(reason(in, "mallory/exercise5.cpp"), Catch::StartsWith("refused: a symbolic link (to /"));
  CHECK(reason(in, "trudy/exercise3.cpp") == "refused: a folder: only regular files are graded (and none in it is named like an exercise)");
  CHECK(reason(in, "oscar/exercise3.cpp") == "refused: a named pipe (fifo): only regular files are graded");
  CHECK_THAT(reason(in, "oscar/exercise5.cpp"), Catch::StartsWith("refused: a symbolic link (to /dev/zero)"));
  CHECK_THAT(reason(in, "peggy"), Catch::StartsWith("refused: a symbolic link (to "));
  CHECK_THAT(reason(in, "sybil"), Catch::Contains("a student is a folder (links are not followed)"));
  CHECK_THAT(reason(in, "victor"), Catch::StartsWith("refused: a symbolic link"));
  CHECK(reason(in, "notes.txt") == "refused: a file: a student is a folder (links are not followed)");
}

TEST_CASE("intake: a file over 1 MiB is the student's verdict, read no further", "[grader][intake]") {
  TempDir t;
  const fs::path subs = t.path / "subs";
  write(subs / "bigfoot" / "exercise3.cpp", std::string(2 << 20, 'x'));
  write(subs / "exact" / "exercise3.cpp", std::string(grader::kMaxSubmissionBytes, 'y'));
  const grader::Intake in = take_submissions(subs.string(), {"exercise3"}, kAll);
  const IntakeFile* big = find(in, "bigfoot", "exercise3");
  REQUIRE(big);
  CHECK(big->too_large);
  CHECK(big->size == (2u << 20));
  CHECK(big->text.empty());
  CHECK_THAT(grader::too_large_message(*big), Catch::Contains("the file is 2097152 bytes; the grader reads files up to "
                                                              "1048576 bytes (1 MiB)"));
  const IntakeFile* exact = find(in, "exact", "exercise3");
  REQUIRE(exact);
  CHECK_FALSE(exact->too_large);
  CHECK(exact->text.size() == grader::kMaxSubmissionBytes);
}

TEST_CASE("intake: a file shared by two students is held for both, naming the other", "[grader][intake]") {
  TempDir t;
  const fs::path subs = t.path / "subs";
  write(subs / "alice" / "exercise3.cpp", "// alice\n");
  write(subs / "bob" / "exercise3.cpp", "// bob\n");
  fs::create_directories(subs / "mallory");
  fs::create_hard_link(subs / "alice" / "exercise3.cpp", subs / "mallory" / "exercise3.cpp");
  // A hard link inside one student's own folder shares nothing with a classmate.
  fs::create_hard_link(subs / "bob" / "exercise3.cpp", subs / "bob" / "notes.cpp");
  const grader::Intake in = take_submissions(subs.string(), {"exercise3"}, kAll);
  REQUIRE(in.files.size() == 3);
  CHECK(reason(in, "mallory/exercise3.cpp") ==
        "flagged: a hard link (2 names share this file, alice/exercise3.cpp among them): held, not graded: the same "
        "file is another student's; a person decides whose work it is");
  CHECK_THAT(reason(in, "alice/exercise3.cpp"), Catch::Contains("mallory/exercise3.cpp among them"));
  for (const auto& f : in.files)
    CHECK(f.shared_with == (f.student == "alice"     ? std::vector<std::string>{"mallory/exercise3.cpp"}
                            : f.student == "mallory" ? std::vector<std::string>{"alice/exercise3.cpp"}
                                                     : std::vector<std::string>{}));
  // In a shard without alice, mallory's note still names her; alice's file is not noted there.
  const grader::Intake shard = take_submissions(subs.string(), {"exercise3"}, [](const std::string& s) { return s == "mallory"; });
  CHECK(shard.files.size() == 1);
  CHECK(reason(shard, "mallory/exercise3.cpp") == reason(in, "mallory/exercise3.cpp"));
  CHECK(reason(shard, "alice/exercise3.cpp").empty());
}

TEST_CASE("intake: odd folder names get safe names, shown visibly", "[grader][intake]") {
  TempDir t;
  const fs::path subs = t.path / "subs";
  const std::vector<std::string> names = {"eve\nscore 18/18", "-rf", "=cmd()", "\x1b[2Jmal", "o'brien, jr",
                                          "ren\xE2\x80\xAEtxt.cpp"};
  for (const auto& n : names) write(subs / n / "exercise3.cpp", "// " + n + "\n");
  const grader::Intake in = take_submissions(subs.string(), {"exercise3"}, kAll);
  REQUIRE(in.students.size() == names.size());
  for (const auto& s : in.students) {
    INFO(s);
    CHECK(s == safe_name(s));  // safe names are fixed points
    CHECK(s.find_first_of("/\\\n\r\x1b") == std::string::npos);
    CHECK(std::string("-.=+@ ").find(s[0]) == std::string::npos);
  }
  for (const auto& f : in.files) CHECK(f.shown.find_first_of("\n\x1b") == std::string::npos);
  CHECK(find(in, "o'brien, jr", "exercise3"));  // a name that is already safe stays as it is
}

TEST_CASE("safe_name: nothing that can act on a shell, a terminal or a path", "[grader][intake]") {
  CHECK(safe_name("alice") == "alice");
  CHECK(safe_name("o'brien, jr") == "o'brien, jr");
  CHECK(safe_name("José Ñúñez") == "José Ñúñez");
  CHECK_THAT(safe_name("-rf"), Catch::StartsWith("_rf~"));
  CHECK_THAT(safe_name("../../etc"), Catch::StartsWith("_._.._etc~"));
  CHECK_THAT(safe_name("=HYPERLINK(1)"), Catch::StartsWith("_HYPERLINK(1)~"));
  CHECK_THAT(safe_name("@x"), Catch::StartsWith("_x~"));
  CHECK_THAT(safe_name("a\nb"), Catch::StartsWith("a_b~"));
  CHECK_THAT(safe_name("a\x1b[31mb"), Catch::StartsWith("a_[31mb~"));
  CHECK_THAT(safe_name("r\xE2\x80\xAEl"), Catch::StartsWith("r_l~"));
  CHECK_THAT(safe_name(""), Catch::StartsWith("_~"));
  CHECK(safe_name("a\nb") != safe_name("a\rb"));  // changed names keep a hash of the original
  CHECK(safe_name(std::string(500, 'a')).size() <= 80 + 9);
}

TEST_CASE("private_copy: the bytes read, in a folder of the grader's", "[grader][intake]") {
  TempDir t;
  IntakeFile f;
  f.exercise = "exercise3";
  f.text = "int main() {}\n";
  std::string err;
  const std::string p = grader::private_copy((t.path / "intake").string(), f, err);
  REQUIRE(err.empty());
  CHECK_THAT(p, Catch::StartsWith((t.path / "intake").string()));
  CHECK_THAT(p, Catch::EndsWith("/exercise3.cpp"));
  std::ifstream in(p);
  std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(back == f.text);
  struct stat st {};
  REQUIRE(stat(p.c_str(), &st) == 0);
  CHECK((st.st_mode & 077) == 0);
  CHECK(grader::private_copy((t.path / "intake").string(), f, err) == p);  // identical files share one copy
}

TEST_CASE("exercise_named: files as students and LMSs name them", "[grader][intake]") {
  const std::vector<std::string> ex = {"exercise1", "exercise3", "exercise13"};
  using grader::exercise_named;
  CHECK(exercise_named("exercise3.cpp", ex) == "exercise3");
  CHECK(exercise_named("Exercise3.cpp", ex) == "exercise3");
  CHECK(exercise_named("EXERCISE3.CPP", ex) == "exercise3");
  CHECK(exercise_named("exercise3 (1).cpp", ex) == "exercise3");                      // a browser's second download
  CHECK(exercise_named("exercise3-2.cpp", ex) == "exercise3");                        // Canvas: a resubmission
  CHECK(exercise_named("doejane_12345_67890_exercise3.cpp", ex) == "exercise3");      // Canvas's download
  CHECK(exercise_named("doejane_late_12345_67890_exercise3-1.cpp", ex) == "exercise3");
  CHECK(exercise_named("exercise13.cpp", ex) == "exercise13");                        // never exercise3 or exercise1
  CHECK(exercise_named("doejane_1_2_exercise13.cpp", ex) == "exercise13");
  CHECK(exercise_named("myexercise3.cpp", ex).empty());                               // no separator before it
  CHECK(exercise_named("exercise3.cpp.txt", ex).empty());
  CHECK(exercise_named("exercise4.cpp", ex).empty());
  CHECK(exercise_named("notes.txt", ex).empty());
}

TEST_CASE("intake: LMS names are matched, and every other entry is listed, never dropped", "[grader][intake]") {
  TempDir t;
  const fs::path subs = t.path / "subs";
  write(subs / "alice" / "Exercise3.cpp", "// alice 3\n");
  write(subs / "bob" / "doebob_123_456_exercise3.cpp", "// bob 3\n");
  write(subs / "carol" / "exercise3.cpp", "// carol 3, the canonical name\n");
  write(subs / "carol" / "exercise3 (1).cpp", "// carol 3, a copy\n");
  write(subs / "carol" / "README.md", "notes\n");
  write(subs / "dave" / "exercise3-1.cpp", "// dave 3, first\n");
  write(subs / "dave" / "exercise3-2.cpp", "// dave 3, resubmitted\n");
  const grader::Intake in = take_submissions(subs.string(), {"exercise3"}, kAll);
  REQUIRE(in.files.size() == 4);
  CHECK(find(in, "alice", "exercise3")->text == "// alice 3\n");
  CHECK(find(in, "alice", "exercise3")->shown == subs.string() + "/alice/Exercise3.cpp");
  CHECK(find(in, "bob", "exercise3")->text == "// bob 3\n");
  CHECK(find(in, "carol", "exercise3")->text == "// carol 3, the canonical name\n");
  CHECK(find(in, "dave", "exercise3")->text == "// dave 3, resubmitted\n");
  CHECK(reason(in, "carol/exercise3 (1).cpp") == "refused: not graded: carol/exercise3.cpp was taken for exercise3 (it is named exactly for the exercise)");
  CHECK(reason(in, "carol/README.md") == "refused: not graded: no exercise of the course is named like it");
  CHECK(reason(in, "dave/exercise3-1.cpp") == "refused: not graded: dave/exercise3-2.cpp was taken for exercise3 (it has the higher copy number)");
}

TEST_CASE("intake: names that only look different are flagged, never merged", "[grader][intake]") {
  using grader::name_skeleton;
  const std::string alice = name_skeleton("alice");
  CHECK(name_skeleton("Alice") == alice);                      // letter case
  CHECK(name_skeleton("al\u200Bice") == alice);                // a zero-width space
  CHECK(name_skeleton("\u0430lice") == alice);                 // a Cyrillic а
  CHECK(name_skeleton("\uFF41\uFF4C\uFF49\uFF43\uFF45") == alice);  // full width
  CHECK(name_skeleton("alicia") != alice);
  CHECK(name_skeleton("bob") != alice);
  CHECK(name_skeleton("\xff\xfe") == name_skeleton("\xff\xfe"));  // bytes that are not UTF-8: no crash, stable

  TempDir tmp;
  const fs::path subs = tmp.path / "subs";
  for (const char* who : {"alice", "Alice", "\u0430lice", "bob"}) write(subs / who / "exercise3.cpp", "int x;\n");
  const auto in = take_submissions(subs.string(), {"exercise3"}, kAll);
  CHECK(in.students.size() == 4);  // graded apart
  CHECK_THAT(reason(in, "alice"), Catch::StartsWith("flagged: reads the same as Alice, \u0430lice (the names differ only"));
  CHECK_THAT(reason(in, "\u0430lice"), Catch::Contains("possibly one person twice"));
  CHECK(reason(in, "bob").empty());
  // With a roster, its rows say who is who: nothing is flagged.
  const std::vector<reports::Identity> roster = {{"Alice A", "", "", "alice", "", "", ""}, {"Bob", "", "", "bob", "", "", ""}};
  grader::IntakeOptions o;
  o.roster = &roster;
  const auto with = take_submissions(subs.string(), {"exercise3"}, kAll, o);
  for (const auto& n : with.notes) CHECK_THAT(n.reason, !Catch::Contains("reads the same"));
}
