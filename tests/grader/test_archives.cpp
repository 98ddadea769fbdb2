// Archives students hand in (archives.h) and the file chooser (chooser.h),
// on archives written here with libarchive's writer and on real folders:
// what each limit refuses and says, what is passed over and why, and which
// file a TA would take.
#include "catch_compat.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cohort/archives.h"
#include "cohort/chooser.h"
#include "cohort/intake.h"
#include "fence/seccomp.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using grader::ArchiveLimits;
using grader::unpack_fenced;

namespace {

struct Entry {
  std::string path;
  std::string data;
  mode_t type;
  std::string link;  // a symbolic link's target, or a hard link's
  bool hard;
  Entry(std::string p, std::string d, mode_t t = AE_IFREG, std::string l = "", bool h = false)
      : path(std::move(p)), data(std::move(d)), type(t), link(std::move(l)), hard(h) {}
};

enum class Kind { Zip, TarGz };

// An archive holding `entries`, as bytes.
std::string make_archive(const std::vector<Entry>& entries, Kind kind = Kind::Zip) {
  std::unique_ptr<archive, int (*)(archive*)> a(archive_write_new(), archive_write_free);
  if (kind == Kind::Zip) {
    archive_write_set_format_zip(a.get());
  } else {
    archive_write_set_format_pax_restricted(a.get());
    archive_write_add_filter_gzip(a.get());
  }
  std::vector<char> buf(64 << 20);
  size_t used = 0;
  REQUIRE(archive_write_open_memory(a.get(), buf.data(), buf.size(), &used) == ARCHIVE_OK);
  for (const Entry& e : entries) {
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> en(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(en.get(), e.path.c_str());
    archive_entry_set_perm(en.get(), 0644);
    if (e.hard) {
      archive_entry_set_hardlink(en.get(), e.link.c_str());
    } else {
      archive_entry_set_filetype(en.get(), e.type);
      if (e.type == AE_IFLNK) archive_entry_set_symlink(en.get(), e.link.c_str());
      if (e.type == AE_IFREG) archive_entry_set_size(en.get(), static_cast<la_int64_t>(e.data.size()));
    }
    REQUIRE(archive_write_header(a.get(), en.get()) >= ARCHIVE_WARN);  // WARN: a name it could not convert, kept as bytes
    if (e.type == AE_IFREG && !e.hard && !e.data.empty())
      REQUIRE(archive_write_data(a.get(), e.data.data(), e.data.size()) == static_cast<la_ssize_t>(e.data.size()));
  }
  REQUIRE(archive_write_close(a.get()) == ARCHIVE_OK);
  return std::string(buf.data(), used);
}

std::string skipped(const grader::Unpacked& u, const std::string& path) {
  for (const auto& s : u.skipped)
    if (s.path == path) return s.why;
  return "";
}

struct TempDir : gradlab_test::TempDir {
  TempDir() : gradlab_test::TempDir("gradlab-archives") {}
};
using gradlab_test::write;

void write_bytes(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string reason(const grader::Intake& in, const std::string& entry) {
  for (const auto& n : in.notes)
    if (n.entry == entry) return n.reason;
  return "";
}

const grader::IntakeFile* find(const grader::Intake& in, const std::string& student, const std::string& exercise) {
  for (const auto& f : in.files)
    if (f.student == student && f.exercise == exercise) return &f;
  return nullptr;
}

const auto kAll = [](const std::string&) { return true; };
// The files whose bytes come back: C++ sources.
const std::function<bool(const std::string&)> kSources = [](const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".cpp") == 0;
};
const std::vector<std::string> kExercises = {"exercise3", "exercise5", "exercise13"};

}  // namespace

TEST_CASE("archives: a macOS zip and a tarball give their files, and nothing of macOS's", "[grader][archives]") {
  const auto zip = make_archive({{"hw/exercise3.cpp", "int x;\n"},
                                 {"__MACOSX/hw/._exercise3.cpp", "\x00\x05\x16\x07"},
                                 {"hw/.DS_Store", "junk"},
                                 {"hw/notes.txt", "hello"}});
  const auto u = unpack_fenced(zip, kSources);
  REQUIRE(u.refused.empty());
  REQUIRE(u.files.size() == 2);
  CHECK(u.files[0].path == "hw/exercise3.cpp");
  CHECK(u.files[0].text == "int x;\n");
  CHECK(u.files[1].path == "hw/notes.txt");
  CHECK(u.files[1].text.empty());  // only C++ sources come back with their bytes
  CHECK(u.files[1].size == 5);
  CHECK(u.skipped.empty());

  const auto tgz = make_archive({{"./src/exercise5.cpp", "int y;\n"}}, Kind::TarGz);
  const auto t = unpack_fenced(tgz, kSources);
  REQUIRE(t.refused.empty());
  REQUIRE(t.files.size() == 1);
  CHECK(t.files[0].path == "src/exercise5.cpp");
  CHECK(t.files[0].text == "int y;\n");
}

TEST_CASE("archives: entries that point outside are refused and said, never followed", "[grader][archives]") {
  const auto tgz = make_archive({{"../../pwned.cpp", "x"},
                                 {"/etc/cron.d/x.cpp", "x"},
                                 {"a/../../b.cpp", "x"},
                                 {"link.cpp", "", AE_IFLNK, "/etc/shadow"},
                                 {"hard.cpp", "", AE_IFREG, "etc/passwd", true},
                                 {"dev.cpp", "", AE_IFCHR},
                                 {"fifo.cpp", "", AE_IFIFO},
                                 {"ok.cpp", "fine"}},
                                Kind::TarGz);
  const auto u = unpack_fenced(tgz, kSources);
  REQUIRE(u.refused.empty());
  REQUIRE(u.files.size() == 1);
  CHECK(u.files[0].path == "ok.cpp");
  CHECK_THAT(skipped(u, "../../pwned.cpp"), Catch::Contains("climbs out of the archive"));
  CHECK_THAT(skipped(u, "/etc/cron.d/x.cpp"), Catch::Contains("absolute"));
  CHECK_THAT(skipped(u, "a/../../b.cpp"), Catch::Contains("climbs out"));
  CHECK(skipped(u, "link.cpp") == "a symbolic link (to /etc/shadow): not followed");
  CHECK(skipped(u, "hard.cpp") == "a hard link (to etc/passwd): not followed");
  CHECK(skipped(u, "dev.cpp") == "a device, fifo or socket, not a file");
  CHECK(skipped(u, "fifo.cpp") == "a device, fifo or socket, not a file");
}

TEST_CASE("archives: each limit refuses the whole archive and gives its numbers", "[grader][archives]") {
  SECTION("size of the archive itself") {
    ArchiveLimits l;
    l.archive_bytes = 100;
    const auto u = unpack_fenced(make_archive({{"exercise3.cpp", std::string(1000, 'a')}}, Kind::Zip), kSources, l);
    CHECK_THAT(u.refused, Catch::StartsWith("an archive of") && Catch::Contains("up to 100 bytes"));
  }
  SECTION("entries") {
    std::vector<Entry> many;
    for (int i = 0; i < 30; ++i) many.push_back({"f" + std::to_string(i) + ".txt", ""});
    ArchiveLimits l;
    l.entries = 20;
    const auto u = unpack_fenced(make_archive(many), kSources, l);
    CHECK(u.refused == "it holds more than 20 entries: not opened further");
    CHECK(u.files.empty());
  }
  SECTION("unpacked size, said by the headers") {
    ArchiveLimits l;
    l.unpacked_bytes = 1 << 20;
    const auto u = unpack_fenced(make_archive({{"a.bin", std::string(2 << 20, 'q')}}, Kind::TarGz), kSources, l);
    CHECK_THAT(u.refused, Catch::StartsWith("it unpacks to more than 1 MiB"));
  }
  SECTION("ratio: a compression bomb") {
    const std::string zeros(8 << 20, '\0');
    const auto zip = make_archive({{"exercise3.cpp", "int x;"}, {"zeros.bin", zeros}});
    REQUIRE(zip.size() < zeros.size() / 200);
    const auto u = unpack_fenced(zip, kSources);
    CHECK_THAT(u.refused, Catch::Contains("times its size") && Catch::Contains("as a compression bomb does"));
    CHECK(u.files.empty());
  }
  SECTION("depth of a path") {
    ArchiveLimits l;
    l.path_depth = 3;
    const auto u = unpack_fenced(make_archive({{"a/b/c/d/e.cpp", "x"}, {"a/b/c/ok.cpp", "y"}}), kSources, l);
    REQUIRE(u.refused.empty());
    CHECK(skipped(u, "a/b/c/d/e.cpp") == "more than 3 folders deep");
    REQUIRE(u.files.size() == 1);
  }
  SECTION("not an archive") {
    const auto u = unpack_fenced(std::string(4096, '\x7f'), kSources);
    CHECK_THAT(u.refused, Catch::StartsWith("not a zip or tar archive the grader can read"));
  }
  SECTION("a damaged archive") {
    std::string zip = make_archive({{"exercise3.cpp", std::string(5000, 'z')}});
    const auto u = unpack_fenced(zip.substr(0, zip.size() / 2), kSources);
    CHECK_FALSE(u.refused.empty());
  }
}

TEST_CASE("archives: one level of archives inside is opened, the next is not", "[grader][archives]") {
  const auto deepest = make_archive({{"exercise3.cpp", "deepest"}});
  const auto inner = make_archive({{"exercise3.cpp", "inner"}, {"deeper.zip", deepest}}, Kind::TarGz);
  const auto outer = make_archive({{"inner.tar.gz", inner}});
  const auto u = unpack_fenced(outer, kSources);
  REQUIRE(u.refused.empty());
  REQUIRE(u.files.size() == 1);
  CHECK(u.files[0].path == "inner.tar.gz/exercise3.cpp");
  CHECK(u.files[0].text == "inner");
  CHECK(skipped(u, "inner.tar.gz/deeper.zip") == "an archive inside an archive inside the archive: not opened");
}

TEST_CASE("archive_named", "[grader][archives]") {
  for (const char* yes : {"exercise3.zip", "HW.ZIP", "a.tar", "a.tar.gz", "a.tgz", "a.tar.xz", "a.tar.bz2"})
    CHECK(grader::archive_named(yes));
  for (const char* no : {"zip", ".zip", "exercise3.cpp", "a.gz", "a.7z", "a.zip.txt"}) CHECK_FALSE(grader::archive_named(no));
}

TEST_CASE("chooser: files at depth, in archives, with their own main, and the reasons said", "[grader][archives]") {
  TempDir tmp;
  const fs::path subs = tmp.path / "subs";
  // Files below the top, where students keep them.
  write(subs / "ana" / "src" / "exercise3.cpp", "int ana;\n");
  write(subs / "ben" / "lab2b" / "exercise3" / "exercise3.cpp", "int ben;\n");
  write(subs / "cat" / "Exercise 3" / "exercise3.cpp", "int cat;\n");
  // The top wins over a conventional folder, which wins over elsewhere.
  write(subs / "dan" / "exercise3.cpp", "int top;\n");
  write(subs / "dan" / "src" / "exercise3.cpp", "int src;\n");
  write(subs / "dan" / "old" / "exercise3.cpp", "int old;\n");
  // A file with its own main() is passed over for one without.
  write(subs / "eve" / "exercise3.cpp", "#include <cstdio>\nint main() { return 0; }\n");
  write(subs / "eve" / "src" / "exercise3.cpp", "int eve;\n");
  // A committed gradlab-reports/ and __MACOSX/ are never read.
  write(subs / "fay" / "gradlab-reports" / "exercise3.cpp", "int reports;\n");
  write(subs / "fay" / "__MACOSX" / "exercise5.cpp", "int mac;\n");
  write(subs / "fay" / "exercise5.cpp", "int fay;\n");
  // An archive, and a file handed in as itself beside an archive holding the same name.
  write_bytes(subs / "gus" / "exercise3.zip", make_archive({{"exercise3/exercise3.cpp", "int gus;\n"}}));
  write(subs / "hal" / "exercise3.cpp", "int loose;\n");
  write_bytes(subs / "hal" / "hw.zip", make_archive({{"exercise3.cpp", "int zipped;\n"}}));
  // A bomb: the student's verdict, with why.
  write_bytes(subs / "ivy" / "exercise3.zip", make_archive({{"exercise3.cpp", std::string(16 << 20, '\0')}}));
  // Too deep to search.
  write(subs / "jon" / "a/b/c/d/e/f/g/h/i/exercise3.cpp", "int deep;\n");

  const auto in = grader::take_submissions(subs.string(), kExercises, kAll);
  auto text = [&](const std::string& s, const std::string& e) {
    const auto* f = find(in, s, e);
    return f ? f->text : std::string("(none)");
  };
  CHECK(text("ana", "exercise3") == "int ana;\n");
  CHECK(text("ben", "exercise3") == "int ben;\n");
  CHECK(text("cat", "exercise3") == "int cat;\n");
  CHECK(text("dan", "exercise3") == "int top;\n");
  CHECK(reason(in, "dan/src/exercise3.cpp") == "not graded: dan/exercise3.cpp was taken for exercise3 (it is at the submission's top)");
  CHECK_THAT(reason(in, "dan/old/exercise3.cpp"), Catch::StartsWith("not graded: dan/exercise3.cpp was taken"));
  CHECK(text("eve", "exercise3") == "int eve;\n");
  CHECK_THAT(reason(in, "eve/exercise3.cpp"), Catch::Contains("it defines its own main()"));
  CHECK(text("fay", "exercise3") == "(none)");
  CHECK(text("fay", "exercise5") == "int fay;\n");
  CHECK_THAT(reason(in, "fay/gradlab-reports"), Catch::Contains("never taken from a submission"));
  const auto* gus = find(in, "gus", "exercise3");
  REQUIRE(gus);
  CHECK(gus->text == "int gus;\n");
  CHECK(gus->archived);
  CHECK(gus->shown == subs.string() + "/gus/exercise3.zip/exercise3/exercise3.cpp");
  CHECK(text("hal", "exercise3") == "int loose;\n");
  CHECK_THAT(reason(in, "hal/hw.zip/exercise3.cpp"), Catch::Contains("handed in as a file, not inside an archive"));
  const auto* ivy = find(in, "ivy", "exercise3");
  REQUIRE(ivy);
  CHECK_THAT(ivy->bad_archive, Catch::Contains("times its size"));
  CHECK_THAT(grader::too_large_message(*ivy), Catch::Contains("the archive was not opened"));
  CHECK(text("jon", "exercise3") == "(none)");
  CHECK_THAT(reason(in, "jon/a/b/c/d/e/f/g/h/i"), Catch::StartsWith("not searched: more than 8 folders"));
}

TEST_CASE("archives: the unpacker's seccomp allow list refuses open, socket and kill", "[grader][archives]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    grader::SeccompFilter f;
    grader::build_parser_filter(f);
    if (!grader::install_seccomp_filter(f)) _exit(10);
    // What a parser led astray would try; each answer goes back as one byte.
    const char answers[] = {
        static_cast<char>(open("/etc/passwd", O_RDONLY) < 0 && errno == EPERM),
        static_cast<char>(openat(AT_FDCWD, "/tmp", O_RDONLY) < 0 && errno == EPERM),
        static_cast<char>(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM),
        static_cast<char>(kill(getppid(), 0) < 0 && errno == EPERM),
        static_cast<char>(syscall(SYS_execve, "/bin/true", nullptr, nullptr) < 0 && errno == EPERM),
        static_cast<char>(malloc(1 << 24) != nullptr),  // memory stays
    };
    _exit(write(fds[1], answers, sizeof answers) == sizeof answers ? 0 : 11);
  }
  close(fds[1]);
  char got[6] = {};
  CHECK(read(fds[0], got, sizeof got) == sizeof got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (int i = 0; i < 6; ++i) {
    INFO("answer " << i);
    CHECK(got[i] == 1);
  }
}

// What a red team found in the first version (the classes, each as a case).
TEST_CASE("chooser: crowded folders, budgets, duplicates, hidden members and odd names", "[grader][archives]") {
  TempDir tmp;
  const fs::path subs = tmp.path / "subs";
  // A folder of 6000 files that sorts first does not hide the top's file (breadth first).
  for (int i = 0; i < 6000; ++i) write(subs / "ann" / "data" / ("img" + std::to_string(i) + ".png"), "");
  write(subs / "ann" / "exercise3.cpp", "int ann;\n");
  // 60 backups that sort first do not spend the read budget before the top's file.
  for (int i = 1; i <= 60; ++i) write(subs / "bea" / "backup" / ("exercise3 (" + std::to_string(i) + ").cpp"), "int old;\n");
  write(subs / "bea" / "exercise3.cpp", "int bea;\n");
  // tar -u: the later member of one name is what unpacking leaves.
  write_bytes(subs / "cid" / "hw3.tar.gz",
              make_archive({{"exercise3.cpp", "int first;\n"}, {"exercise3.cpp", "int later;\n"}}, Kind::TarGz));
  // Hidden folders and gradlab-reports/ inside an archive are not read, as on disk.
  write_bytes(subs / "dee" / "hw.zip", make_archive({{".old/exercise3.cpp", "int hidden;\n"},
                                                     {"gradlab-reports/exercise5.cpp", "int reports;\n"},
                                                     {"exercise13.cpp", "int dee;\n"}}));
  // A link whose target is not UTF-8, and 500 refused entries: notes stay valid text, and few.
  std::vector<Entry> refused = {{"notes.txt", "", AE_IFLNK, "\xff\xfe/x"}};
  for (int i = 0; i < 500; ++i) refused.push_back({"../" + std::string(400, 'a') + std::to_string(i), "x"});
  refused.push_back({"exercise3.cpp", "int eli;\n"});
  write_bytes(subs / "eli" / "x.tar.gz", make_archive(refused, Kind::TarGz));

  const auto in = grader::take_submissions(subs.string(), kExercises, kAll);
  auto text = [&](const std::string& s, const std::string& e) {
    const auto* f = find(in, s, e);
    return f ? f->text : std::string("(none)");
  };
  CHECK(text("ann", "exercise3") == "int ann;\n");
  CHECK(text("bea", "exercise3") == "int bea;\n");
  CHECK(text("cid", "exercise3") == "int later;\n");
  CHECK(text("dee", "exercise3") == "(none)");
  CHECK(text("dee", "exercise5") == "(none)");
  CHECK(text("dee", "exercise13") == "int dee;\n");
  CHECK_THAT(reason(in, "dee/hw.zip/.old/exercise3.cpp"), Catch::Contains("hidden folder"));
  CHECK(text("eli", "exercise3") == "int eli;\n");
  size_t eli_notes = 0;
  for (const auto& n : in.notes) {
    CHECK_NOTHROW(nlohmann::json(n.reason).dump());  // valid UTF-8, whatever the archive held
    CHECK_NOTHROW(nlohmann::json(n.entry).dump());
    if (n.entry.rfind("eli/", 0) != 0) continue;
    ++eli_notes;
    CHECK(n.entry.size() < 400);
  }
  CHECK(eli_notes < 210);
  CHECK_THAT(reason(in, "eli/x.tar.gz/…"), Catch::Contains("more entries refused, not listed"));
}
