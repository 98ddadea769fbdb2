// Downloads laid out as each LMS lays them out (layouts.h), read on real
// folders, and rosters as instructors and LMSs write them (roster.h): who
// is found, under which name, with which identity, and what is listed as
// not graded or missing.
#include "catch_compat.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cohort/intake.h"
#include "temp_dir.h"
#include "cohort/roster.h"

namespace fs = std::filesystem;
using grader::Layout;

namespace {

struct TempDir : gradlab_test::TempDir {
  TempDir() : gradlab_test::TempDir("gradlab-layouts") {}
};
using gradlab_test::write;

std::string text_of(const grader::Intake& in, const std::string& student, const std::string& exercise) {
  for (const auto& f : in.files)
    if (f.student == student && f.exercise == exercise) return f.text;
  return "<none>";
}

bool noted(const grader::Intake& in, const std::string& entry, const std::string& words) {
  for (const auto& n : in.notes)
    if (n.entry == entry && n.reason.find(words) != std::string::npos) return true;
  return false;
}

const std::vector<std::string> kExercises{"exercise3", "exercise5"};
const auto kAll = [](const std::string&) { return true; };

grader::Intake take(const fs::path& root, Layout l = Layout::Auto, const std::vector<reports::Identity>* roster = nullptr) {
  grader::IntakeOptions o;
  o.layout = l;
  o.roster = roster;
  return grader::take_submissions(root.string(), kExercises, kAll, o);
}

std::vector<reports::Identity> roster_from(const fs::path& file, const std::string& csv) {
  write(file, csv);
  return grader::read_roster(file.string());
}

}  // namespace

TEST_CASE("Canvas's flat download: lastfirst[_LATE]_userid_submissionid_file", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path d = t.path / "canvas";
  write(d / "doejane_1001_5001_exercise3.cpp", "jane 3");
  write(d / "doejane_1001_5001_exercise5.cpp", "jane 5");
  write(d / "martinelodie_LATE_1002_5002_Exercise3-1.cpp", "elodie 3");  // late, renamed by Canvas
  write(d / "smithbob_1003_5003_notes.txt", "bob's notes");
  write(d / "smithbob_1004_5004_exercise3.cpp", "another smithbob");  // two students, one lastfirst
  write(d / "smithbob_1003_5005_exercise3.cpp", "bob 3");
  const auto in = take(d);
  CHECK(in.layout == "canvas");
  CHECK(in.students == std::vector<std::string>{"doejane", "martinelodie", "smithbob_1003", "smithbob_1004"});
  CHECK(text_of(in, "doejane", "exercise5") == "jane 5");
  CHECK(text_of(in, "martinelodie", "exercise3") == "elodie 3");
  CHECK(text_of(in, "smithbob_1003", "exercise3") == "bob 3");
  CHECK(in.identities.at("doejane").id == "1001");
  CHECK(noted(in, "smithbob_1003_5003_notes.txt", "no exercise"));

  SECTION("a roster from Canvas's own gradebook export names them and adds who handed in nothing") {
    const auto roster = roster_from(t.path / "roster.csv",
                                    "Student,ID,SIS User ID,SIS Login ID,Section\r\n"
                                    "    Points Possible,,,,\r\n"
                                    "\"Doe, Jane\",1001,S1,jdoe,A\r\n"
                                    "\"Martin, Élodie\",1002,S2,emartin,B\r\n"
                                    "\"Smith, Bob\",1003,S3,bsmith,A\r\n"
                                    "\"Quiet, Carl\",1006,S6,cquiet,B\r\n");
    REQUIRE(roster.size() == 4);
    const auto r = take(d, Layout::Auto, &roster);
    CHECK(r.students == std::vector<std::string>{"bsmith", "cquiet", "emartin", "jdoe", "smithbob"});
    CHECK(text_of(r, "bsmith", "exercise3") == "bob 3");
    CHECK(text_of(r, "cquiet", "exercise3") == "<none>");
    CHECK(r.identities.at("cquiet").section == "B");
    CHECK(r.identities.at("emartin").sis_id == "S2");
    CHECK(r.identities.at("emartin").name == "Martin, Élodie");
    CHECK(text_of(r, "smithbob", "exercise3") == "another smithbob");  // user 1004: not on the roster
    // Its name fits Bob's row too, but user 1003's id matches it better.
    CHECK(noted(r, "smithbob_1004_5004_exercise3.cpp", "would be bsmith on the roster, but smithbob_1003_"));
  }
}

TEST_CASE("Canvas's LATE mark is read from the file's name, and from no other layout's", "[grader][intake][layouts]") {
  using grader::Layout, grader::marked_late;
  CHECK(marked_late(Layout::Canvas, "martinelodie_LATE_1002_5002_exercise3.cpp"));
  CHECK(marked_late(Layout::Canvas, "LATE_anon_aB3xY_67890_exercise3.cpp"));
  CHECK_FALSE(marked_late(Layout::Canvas, "martinelodie_1002_5002_exercise3.cpp"));
  CHECK_FALSE(marked_late(Layout::Canvas, "anon_aB3xY_67890_exercise3_LATE.cpp"));
  // A student's own file named with LATE is not the LMS's mark.
  CHECK_FALSE(marked_late(Layout::Canvas, "doejane_1001_5001_LATE_exercise3.cpp"));
  CHECK_FALSE(marked_late(Layout::Moodle, "Jane Doe_LATE_123456_assignsubmission_file_"));
  CHECK_FALSE(marked_late(Layout::Folders, "doejane_LATE_1_2_x.cpp"));
}

TEST_CASE("Moodle's download: a folder per participant, or the prefix on each file", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path d = t.path / "moodle";
  write(d / "Jane Doe_123456_assignsubmission_file_" / "exercise3.cpp", "jane 3");
  write(d / "Jane Doe_123456_assignsubmission_file_" / "Exercise5 (1).cpp", "jane 5");
  write(d / "Élodie Martin_123457_assignsubmission_onlinetext_" / "onlinetext.html", "<p>hello</p>");
  write(d / "Élodie Martin_123457_assignsubmission_file_" / "exercise3.cpp", "elodie 3");
  write(d / "Bob Flat_123458_assignsubmission_file_exercise3.cpp", "bob 3");
  write(d / "readme.txt", "from the instructor");
  const auto in = take(d);
  CHECK(in.layout == "moodle");
  CHECK(in.students == std::vector<std::string>{"Bob Flat", "Jane Doe", "Élodie Martin"});
  CHECK(text_of(in, "Jane Doe", "exercise5") == "jane 5");
  CHECK(text_of(in, "Bob Flat", "exercise3") == "bob 3");
  CHECK(text_of(in, "Élodie Martin", "exercise3") == "elodie 3");
  CHECK(in.identities.at("Élodie Martin").participant == "123457");
  CHECK(noted(in, "Élodie Martin_123457_assignsubmission_onlinetext_/onlinetext.html", "no exercise"));
  CHECK(noted(in, "readme.txt", "not named as Moodle"));

  SECTION("a roster with first and last names (Moodle's participants export) matches by name") {
    const auto roster = roster_from(t.path / "r.csv", "First name,Last name,Email address\nJane,Doe,jane@x.edu\n"
                                                      "Élodie,Martin,elodie@x.edu\n");
    const auto r = take(d, Layout::Moodle, &roster);
    CHECK(r.students == std::vector<std::string>{"Bob Flat", "elodie@x.edu", "jane@x.edu"});
    CHECK(r.identities.at("jane@x.edu").participant == "123456");
    CHECK(r.identities.at("jane@x.edu").email == "jane@x.edu");
    CHECK(noted(r, "Bob Flat_123458_assignsubmission_file_exercise3.cpp", "not on the roster"));
  }
}

TEST_CASE("Gradescope's export: submission_metadata.yml names each folder's submitters", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path d = t.path / "gs";
  write(d / "submission_111" / "exercise3.cpp", "jane 3");
  write(d / "submission_222" / "exercise3.cpp", "pair 3");
  write(d / "submission_333" / "exercise3.cpp", "unlisted");
  write(d / "submission_metadata.yml",
        "---\n:submission_111:\n  :submitters:\n  - :name: Jane Doe\n    :sid: '1001'\n    :email: jane@x.edu\n"
        "  :created_at: 2026-11-01 10:00:00.000000000 -07:00\n  :score: 18.0\n  :history: []\n"
        ":submission_222:\n  :submitters:\n  - :name: \"\\u00C9lodie Martin\"\n    :sid: '1002'\n    :email: elodie@x.edu\n"
        "  - :name: Bob Partner\n    :sid:\n    :email: bob@x.edu\n:submission_444:\n  :submitters:\n  - :name: Ghost\n");
  const auto in = take(d);
  CHECK(in.layout == "gradescope");
  // A group's submission is each member's.
  CHECK(in.students == std::vector<std::string>{"Bob Partner", "Jane Doe", "Élodie Martin"});
  CHECK(text_of(in, "Bob Partner", "exercise3") == "pair 3");
  CHECK(text_of(in, "Élodie Martin", "exercise3") == "pair 3");
  CHECK(in.identities.at("Jane Doe").sis_id == "1001");
  CHECK(in.identities.at("Bob Partner").email == "bob@x.edu");
  CHECK(noted(in, "submission_333", "not a submission folder"));
  CHECK(noted(in, "submission_444", "no such folder"));

  SECTION("metadata that is not YAML is the instructor's error, with its line") {
    write(d / "submission_metadata.yml", "---\n:submission_111: [unclosed\n");
    CHECK_THROWS_WITH(take(d), Catch::Contains("submission_metadata.yml:") && Catch::Contains("Gradescope's export"));
  }
}

TEST_CASE("GitHub Classroom: a clone per student, files where the release puts them", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path d = t.path / "hw3-submissions";
  for (const char* who : {"jdoe", "e-martin"}) fs::create_directories(d / (std::string("hw3-") + who) / ".git");
  write(d / "hw3-jdoe" / "exercises" / "exercise3.cpp", "jane 3");
  write(d / "hw3-jdoe" / "exercise5.cpp", "not where the release puts it");
  write(d / "hw3-e-martin" / "exercises" / "exercise3.cpp", "elodie 3");
  const auto in = take(d);
  CHECK(in.layout == "github-classroom");
  CHECK(in.students == std::vector<std::string>{"e-martin", "jdoe"});
  CHECK(text_of(in, "jdoe", "exercise3") == "jane 3");
  CHECK(in.identities.at("e-martin").login == "e-martin");

  SECTION("GitHub Classroom's roster export matches by login; its identifier may be an email") {
    const auto roster = roster_from(t.path / "classroom_roster.csv",
                                    "\"identifier\",\"github_username\",\"github_id\",\"name\"\n"
                                    "\"jane@x.edu\",\"jdoe\",\"1\",\"Jane Doe\"\n"
                                    "\"elodie@x.edu\",\"e-martin\",\"2\",\"Élodie Martin\"\n"
                                    "\"carl@x.edu\",\"\",\"\",\"Carl Quiet\"\n");
    REQUIRE(roster[0].email == "jane@x.edu");
    const auto r = take(d, Layout::Auto, &roster);
    CHECK(r.students == std::vector<std::string>{"carl@x.edu", "e-martin", "jdoe"});
    CHECK(text_of(r, "carl@x.edu", "exercise3") == "<none>");
    CHECK(r.identities.at("jdoe").name == "Jane Doe");
  }
}

TEST_CASE("folders by hand stay as they were, and a roster names them by login or email", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path d = t.path / "class";
  write(d / "alice" / "exercise3.cpp", "alice 3");
  write(d / "bob@x.edu" / "exercise3.cpp", "bob 3");
  write(d / "stranger" / "exercise3.cpp", "who?");
  const auto in = take(d);
  CHECK(in.layout == "folders");
  CHECK(in.identities.empty());
  const auto roster = roster_from(t.path / "r.csv", "id,name,login,email,section\n7,Alice A,alice,,1\n8,Bob B,bobby,bob@x.edu,2\n"
                                                    "9,Ann Twin,,,1\n10,Ann Twin,,,2\n");
  const auto r = take(d, Layout::Folders, &roster);
  CHECK(r.students == std::vector<std::string>{"10", "9", "alice", "bobby", "stranger"});
  CHECK(text_of(r, "bobby", "exercise3") == "bob 3");
  CHECK(r.identities.at("alice").section == "1");
  CHECK(noted(r, "stranger", "not on the roster"));

  SECTION("a name two roster rows share matches neither") {
    write(d / "Ann Twin" / "exercise3.cpp", "ann");
    const auto a = take(d, Layout::Folders, &roster);
    CHECK(noted(a, "Ann Twin", "matches several students on the roster"));
  }
  SECTION("a shard keeps only its own roster students") {
    grader::IntakeOptions o;
    o.roster = &roster;
    const auto s = grader::take_submissions(d.string(), kExercises, [](const std::string& k) { return k == "9"; }, o);
    CHECK(s.students == std::vector<std::string>{"9"});
    CHECK(s.files.empty());
  }
}

TEST_CASE("rosters: RFC 4180, any header spelling, and clear errors", "[grader][roster]") {
  CHECK(grader::parse_csv("\xEF\xBB\xBF" "a,\"b,\"\"c\"\"\"\r\n\r\nd,\"multi\nline\"", "x") ==
        std::vector<std::vector<std::string>>{{"a", "b,\"c\""}, {"d", "multi\nline"}});
  CHECK_THROWS_WITH(grader::parse_csv("a\n\"open", "r.csv"), Catch::Contains("r.csv:2: a quote is never closed"));
  TempDir t;
  CHECK_THROWS_WITH(roster_from(t.path / "bad.csv", "score,comment\n3,ok\n"),
                    Catch::Contains("bad.csv:1: no column names a student") && Catch::Contains("id,name,login,email,section"));
  CHECK_THROWS_WITH(grader::read_roster((t.path / "none.csv").string()), Catch::Contains("none.csv: No such file"));
  const auto r = roster_from(t.path / "ok.csv", "Full Name , E-mail,Group\nZoë Ng,zoe@x.edu,Tue\n,,\n");
  REQUIRE(r.size() == 1);
  CHECK(r[0].name == "Zoë Ng");
  CHECK(r[0].email == "zoe@x.edu");
  CHECK(r[0].section == "Tue");
}

// Found by a fresh pair of eyes trying to break the intake (issue 22): each
// case a download or a student could produce.
TEST_CASE("a name after the LMS's prefix never decides whose file it is", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path m = t.path / "moodle-flat";
  write(m / "Bob Smith_200_assignsubmission_file_exercise3.cpp", "bob 3");
  write(m / "Eve Evil_201_assignsubmission_file_x_200_assignsubmission_file_exercise3.cpp", "eve's trap");
  write(m / "Eve Evil_201_assignsubmission_file_exercise5.cpp", "eve 5");
  const auto in = take(m);
  CHECK(text_of(in, "Bob Smith", "exercise3") == "bob 3");
  CHECK(text_of(in, "Eve Evil", "exercise3") == "eve's trap");  // her own, under her own name
  const fs::path c = t.path / "canvas";
  write(c / "doejane_1001_5001_x_1002_5002_exercise3.cpp", "jane's trap");
  write(c / "smithjohn_1002_5003_exercise3.cpp", "john 3");
  write(c / "de_lacruzjuan_1010_5010_exercise3.cpp", "juan 3");  // Canvas keeps '_' in names
  write(c / "anon_aB3xY_7001_exercise3.cpp", "anonymous 3");      // anonymous grading
  write(c / "LATE_anon_Qz9Kp_7002_exercise5.cpp", "anonymous late 5");
  const auto ci = take(c);
  CHECK(ci.layout == "canvas");
  CHECK(text_of(ci, "smithjohn", "exercise3") == "john 3");
  CHECK(text_of(ci, "doejane", "exercise3") == "jane's trap");
  CHECK(text_of(ci, "de_lacruzjuan", "exercise3") == "juan 3");
  CHECK(text_of(ci, "anon_aB3xY", "exercise3") == "anonymous 3");
  CHECK(text_of(ci, "anon_Qz9Kp", "exercise5") == "anonymous late 5");
  CHECK(!ci.identities.count("anon_aB3xY"));  // an anonymous id is no Canvas user id
}

TEST_CASE("the layout most entries fit: one stray or planted entry does not turn the class", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path c = t.path / "canvas";
  write(c / "doejane_1001_5001_exercise3.cpp", "jane");
  write(c / "smithjohn_1002_5003_exercise3.cpp", "john");
  write(c / "evileve_1003_5005_x_1_assignsubmission_file_.txt", "planted");
  CHECK(take(c).layout == "canvas");
  const fs::path f = t.path / "class";
  write(f / "alice" / "exercise3.cpp", "alice");
  write(f / "bob" / "exercise3.cpp", "bob");
  write(f / "old_12_34_notes.txt", "stray");
  write(f / "Notes_2024_assignsubmission_file_" / "x.txt", "stray");
  const auto in = take(f);
  CHECK(in.layout == "folders");
  CHECK(text_of(in, "alice", "exercise3") == "alice");
  const fs::path m4 = t.path / "moodle4";  // Moodle 4: no trailing '_' on the folders
  write(m4 / "Jane Doe_101_assignsubmission_file" / "exercise3.cpp", "jane");
  write(m4 / "Jane Doe_101_assignsubmission_onlinetext" / "onlinetext.html", "<p/>");
  const auto m = take(m4);
  CHECK(m.layout == "moodle");
  CHECK(m.students == std::vector<std::string>{"Jane Doe"});
  CHECK(text_of(m, "Jane Doe", "exercise3") == "jane");
}

TEST_CASE("GitHub Classroom: logins with '-', and no login taken by its suffix", "[grader][intake][layouts]") {
  TempDir t;
  const fs::path d = t.path / "hw3-submissions";  // as `gh classroom clone student-repos` names it
  for (const char* who : {"mary-jo", "mary-ann"}) {
    fs::create_directories(d / (std::string("hw3-") + who) / ".git");
    write(d / (std::string("hw3-") + who) / "exercises" / "exercise3.cpp", who);
  }
  const auto in = take(d);
  CHECK(in.students == std::vector<std::string>{"mary-ann", "mary-jo"});
  const fs::path g = t.path / "clones";
  for (const char* who : {"alice", "bob", "a-bob", "jim-bob"}) {
    fs::create_directories(g / (std::string("hw3-") + who) / ".git");
    write(g / (std::string("hw3-") + who) / "exercises" / "exercise3.cpp", who);
  }
  write(g / "hw3-alice" / "exercise5.cpp", "alice 5 at the top");  // not where the release puts it: still found
  const auto roster = roster_from(t.path / "r.csv", "identifier,github_username,github_id,name\n"
                                                    "alice@u.edu,alice,1,Alice A\nbob@u.edu,bob,2,Bob B\n");
  const auto r = take(g, Layout::Auto, &roster);
  CHECK(text_of(r, "bob", "exercise3") == "bob");  // not a-bob's, not jim-bob's
  CHECK(text_of(r, "a-bob", "exercise3") == "a-bob");
  CHECK(text_of(r, "jim-bob", "exercise3") == "jim-bob");
  CHECK(text_of(r, "alice", "exercise5") == "alice 5 at the top");
  CHECK(noted(r, "hw3-jim-bob", "not on the roster"));
}

TEST_CASE("a roster's student keeps their name against look-alikes", "[grader][intake][roster]") {
  TempDir t;
  const fs::path d = t.path / "class";
  write(d / "msmith" / "exercise3.cpp", "mike");
  write(d / "marys" / "exercise3.cpp", "mary");
  write(d / "Alice" / "exercise3.cpp", "other Alice");
  write(d / "alice" / "exercise3.cpp", "alice");
  write(d / ".bob" / "exercise3.cpp", "hidden");
  write(d / "carl" / ".exercise5.cpp", "hidden file");
  write(d / "carl" / "exercise3-9.cpp", "copy 9");
  write(d / "carl" / "exercise3-10.cpp", "copy 10");
  const auto roster = roster_from(t.path / "r.csv", "id,name,login,email\n1,Mike Smith,msmith,mike.smith@u.edu\n"
                                                    "2,Mary Smith,marys,msmith@u.edu\n2,Mary Smith,marys,msmith@u.edu\n"
                                                    "3,Alice A,alice,\n4,Carl C,carl,\n");
  CHECK(roster.size() == 4);  // the repeated row is one student
  const auto r = take(d, Layout::Folders, &roster);
  CHECK(text_of(r, "msmith", "exercise3") == "mike");  // his login, exactly, beats Mary's email's local part
  CHECK(text_of(r, "marys", "exercise3") == "mary");
  CHECK(text_of(r, "alice", "exercise3") == "alice");  // the exact folder name wins over "Alice"
  CHECK(text_of(r, "Alice", "exercise3") == "other Alice");
  CHECK(noted(r, "Alice", "would be alice on the roster, but alice matches them better"));
  CHECK(noted(r, ".bob", "hidden entry"));
  CHECK(noted(r, "carl/.exercise5.cpp", "hidden file"));
  CHECK(text_of(r, "carl", "exercise3") == "copy 10");  // the highest copy number, not the last by name
}

TEST_CASE("a submission on no row cannot take a roster student's name", "[grader][intake][roster]") {
  TempDir t;
  const fs::path d = t.path / "gs";
  write(d / "submission_100" / "exercise3.cpp", "impostor");
  write(d / "submission_200" / "exercise3.cpp", "the real alice");
  write(d / "submission_metadata.yml", ":submission_100:\n  :submitters:\n  - :name: alice\n    :email: sneaky@x.com\n"
                                       ":submission_200:\n  :submitters:\n  - :name: Alice Real\n    :sid: '111'\n");
  const auto roster = roster_from(t.path / "r.csv", "name,login,email,sid\nAlice Real,alice,alice@u.edu,111\n");
  const auto r = take(d, Layout::Auto, &roster);
  CHECK(text_of(r, "alice", "exercise3") == "the real alice");
  CHECK(r.identities.at("alice").email == "alice@u.edu");
  CHECK(r.students.size() == 2);
  CHECK(text_of(r, r.students[0] == "alice" ? r.students[1] : r.students[0], "exercise3") == "impostor");
  write(d / "submission_metadata.yml", ":submission_100:\n  :submitters:\n  - alice\n");
  CHECK_THROWS_WITH(take(d), Catch::Contains("submission_100's submitters are not listed as Gradescope lists them"));
}

TEST_CASE("times as LMSs write them, in UTC", "[grader][layouts]") {
  using grader::utc_time;
  CHECK(utc_time("2026-11-01 10:00:00.000000000 -07:00") == "2026-11-01T17:00:00Z");  // Gradescope's created_at
  CHECK(utc_time("2026-11-01T23:30:00+0530") == "2026-11-01T18:00:00Z");
  CHECK(utc_time("2026-12-31 23:59:59 Z") == "2026-12-31T23:59:59Z");
  CHECK(utc_time("2026-11-01 10:00:00") == "2026-11-01T10:00:00Z");  // no zone: UTC
  CHECK(utc_time("yesterday").empty());
  CHECK(utc_time("") .empty());
  CHECK(utc_time(int64_t{0}) == "1970-01-01T00:00:00Z");
}
