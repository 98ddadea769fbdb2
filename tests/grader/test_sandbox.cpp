// The sandbox's plumbing when the grader has many files open, as `grade
// batch` does with its threads: the channel must reach the program whatever
// fd number its pipe got, and no other open file may reach it.
#include "catch_compat.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compile/tools.h"
#include "fence/fence.h"
#include "fence/sandbox.h"
#include "fence/watch.h"

namespace {

// A program that writes "ok" on the channel (whose number is the first line
// of its request, on fd 3) and lists the numbers of its open fds on stderr,
// with builtins only (the sandbox lets a program start threads, not
// processes).
std::string script() {
  const auto path = std::filesystem::temp_directory_path() / ("gradlab-sandbox-test-" + std::to_string(getpid()));
  std::ofstream(path) << "#!/bin/bash\nread -r ch rest <&3\nprintf ok >&\"$ch\"\nfor f in /proc/$$/fd/*; do echo \"${f##*/}\"; done >&2\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

std::set<int> fds(const std::string& listing) {
  std::set<int> s;
  size_t at = 0;
  while (at < listing.size()) {
    const size_t end = std::min(listing.find('\n', at), listing.size());
    if (end > at) s.insert(std::stoi(listing.substr(at, end - at)));
    at = end + 1;
  }
  return s;
}

}  // namespace

TEST_CASE("the channel reaches the program even when its pipe already has the channel's number", "[sandbox]") {
  const std::string program = script();
  // Fill every fd below 30, then free 24 to 29: the sandbox's three pipes
  // (stdout, stderr, the channel) take them, the channel's write end one of
  // the last. Whichever it is, one of the runs below asks for that number.
  std::vector<int> held;
  for (int fd; (fd = open("/dev/null", O_RDONLY)) >= 0;) {
    if (fd >= 30) {
      close(fd);
      break;
    }
    held.push_back(fd);
  }
  for (int fd = 24; fd < 30; ++fd)
    if (std::find(held.begin(), held.end(), fd) != held.end()) close(fd);
  for (int channel = 24; channel <= 31; ++channel) {
    grader::SandboxSpec spec;
    spec.program = program;
    spec.isolate = false;
    spec.channel_fd = channel;
    const auto o = grader::run_sandboxed(spec);
    INFO("channel fd " << channel);
    CHECK(o.failure.empty());
    CHECK(o.channel == "ok");
  }
  for (int fd : held)
    if (fd < 24) close(fd);
  std::filesystem::remove(program);
}

TEST_CASE("no file the grader has open reaches the program", "[sandbox]") {
  const std::string program = script();
  // A file another thread might be writing, opened without O_CLOEXEC, at a
  // number no shell uses for itself.
  const auto leak_path = std::filesystem::temp_directory_path() / ("gradlab-leak-" + std::to_string(getpid()));
  const int opened = open(leak_path.c_str(), O_WRONLY | O_CREAT, 0600);
  REQUIRE(opened >= 0);
  const int leak = dup2(opened, 77);
  close(opened);
  grader::SandboxSpec spec;
  spec.program = program;
  spec.isolate = false;
  spec.channel_fd = 40;
  const auto o = grader::run_sandboxed(spec);
  CHECK(o.channel == "ok");
  INFO(o.err);
  const auto open_in_child = fds(o.err);
  CHECK(open_in_child.count(0) == 1);
  CHECK(open_in_child.count(40) == 1);
  CHECK(open_in_child.count(77) == 0);
  close(leak);
  std::filesystem::remove(leak_path);
  std::filesystem::remove(program);
}

namespace {

// The probe's report: "NAME RESULT" lines.
std::map<std::string, std::string> probe_lines(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream in(out);
  for (std::string name, value; in >> name >> value;) m[name] = value;
  return m;
}

// Runs tests/grader/fence_probe.cpp in one fence, as the student's program
// or as a tool (the compiler's kind of run), against a world-readable file
// and a world-writable folder outside it: only the fence stands in the way.
std::map<std::string, std::string> probe(bool namespaces, bool as_tool) {
  namespace fs = std::filesystem;
  const fs::path outside = fs::temp_directory_path() / ("gradlab-fence-test-" + std::to_string(getpid()));
  fs::create_directories(outside);
  fs::permissions(outside, fs::perms::all);
  std::ofstream(outside / "secret") << "secret\n";
  fs::permissions(outside / "secret", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  grader::SandboxSpec spec;
  spec.isolate = namespaces;
  spec.limits.processes = 16;
  spec.limits.wall_seconds = 30;
  spec.limits.cpu_seconds = 10;
  spec.file_size_kb = 1L << 20;  // so that /tmp's own size is what stops the writes
  if (as_tool) {
    spec.tool = {GRADLAB_FENCE_PROBE, (outside / "secret").string(), outside.string()};
    spec.view.read_only = {GRADLAB_FENCE_PROBE};
    spec.view.tmpfs = {{"/tmp", 64L << 20}};
    spec.view.chdir = "/";
  } else {
    spec.program = GRADLAB_FENCE_PROBE;
    spec.request = (outside / "secret").string() + " " + outside.string();
  }
  const auto o = grader::run_sandboxed(spec);
  INFO(o.failure << o.out << o.err);
  REQUIRE(o.failure.empty());
  CHECK(o.isolation == std::string(namespaces ? "bubblewrap" : "fallback"));
  auto lines = probe_lines(o.out);
  CHECK(!fs::exists(outside / "pwned"));
  fs::remove_all(outside);
  return lines;
}

void check_fenced(const std::map<std::string, std::string>& p) {
  for (const char* denied : {"read-outside", "create-outside", "sysctl-write", "create-in-dev"}) {
    INFO(denied);
    CHECK(p.count(denied) == 1);
    CHECK(p.at(denied) != "ok");
  }
  for (const char* eperm : {"mount", "unshare", "socket", "ptrace", "prlimit-parent", "setown-parent", "personality"}) {
    INFO(eperm);
    CHECK(p.count(eperm) == 1);
    CHECK(p.at(eperm) == "EPERM");
  }
  CHECK(p.at("prlimit-self") == "ok");
  CHECK(p.at("uid") != "0");
  CHECK(std::stoi(p.at("threads")) >= 1);
}

}  // namespace

TEST_CASE("the namespace fence: nothing outside, no privilege, bounded threads and /tmp", "[sandbox][fence]") {
  if (!grader::bubblewrap_usable()) {
    WARN("bubblewrap cannot make namespaces here: the namespace fence is not tested");
    return;
  }
  SECTION("the student's program") {
    const auto p = probe(true, false);
    check_fenced(p);
    CHECK(p.at("fork") == "EPERM");
    CHECK(std::stoi(p.at("threads")) <= 16);
    const long tmp = std::stol(p.at("tmp-mib"));
    CHECK(tmp >= 1);
    CHECK(tmp <= 64);
  }
  SECTION("the compiler's kind of run: it may start processes") {
    const auto p = probe(true, true);
    check_fenced(p);
    CHECK(p.at("fork") == "ok");
    CHECK(std::stoi(p.at("threads")) <= 16);
  }
}

// Whether every folder above `path` lets anyone through: the fallback fence
// runs its tools as an unprivileged uid, which a checkout under /root shuts out.
bool reachable_by_anyone(std::filesystem::path path) {
  for (path = path.parent_path(); !path.empty() && path != path.root_path(); path = path.parent_path()) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH)) return false;
  }
  return true;
}

TEST_CASE("the fallback fence: Landlock keeps the work to its paths, with the same seccomp filter", "[sandbox][fence]") {
  if (grader::landlock_abi() < 1) {
    WARN("the kernel has no Landlock: the fallback fence is not tested");
    return;
  }
  if (geteuid() == 0 && !reachable_by_anyone(GRADLAB_FENCE_PROBE)) {
    WARN("this checkout is behind a private folder, which the fallback's unprivileged uid cannot cross: not tested here");
    return;
  }
  SECTION("the student's program") {
    const auto p = probe(false, false);
    check_fenced(p);
    CHECK(p.at("fork") == "EPERM");
    CHECK(p.at("tmp-mib") == "-1");  // /tmp is not among its paths
  }
  SECTION("the compiler's kind of run") {
    const auto p = probe(false, true);
    check_fenced(p);
    CHECK(p.at("fork") == "ok");
  }
}

TEST_CASE("more wall-clock time only for a program kept from the CPU by other work", "[sandbox]") {
  using grader::deserves_more_time;
  CHECK(deserves_more_time(10, 9, 4, 8));          // computing, waited 40% of the time, others busy: a busy machine
  CHECK_FALSE(deserves_more_time(10, 9, 0.2, 8));  // computing, hardly waiting: its CPU limit comes first
  CHECK_FALSE(deserves_more_time(10, 2, 0, 0));    // bursts and sleeps on an idle machine: its limit, no more
  CHECK_FALSE(deserves_more_time(10, 0.5, 6, 8));  // waiting on something else than the CPU
  // Its own threads queueing behind each other while the rest of the machine
  // idles (resource red team 3): waiting, but on nobody else.
  CHECK_FALSE(deserves_more_time(10, 2, 30, 0.5));
  CHECK(deserves_more_time(10, 2, 30, 2.5));       // the same with a quarter of a CPU's worth of other work
  CHECK(deserves_more_time(10, 2, 4, -1));         // the machine's load unknown: waiting is enough
  CHECK(deserves_more_time(10, 2, -1, -1));        // no schedstat either: computing is enough, as before
  CHECK_FALSE(deserves_more_time(10, 0.5, -1, -1));
}

namespace {

// The processes that run as `uid`, with their names.
std::vector<std::pair<pid_t, std::string>> processes_of(uid_t uid) {
  std::vector<std::pair<pid_t, std::string>> found;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    struct stat st{};
    if (name.empty() || name[0] < '1' || name[0] > '9' || stat(e.path().c_str(), &st) != 0 || st.st_uid != uid) continue;
    std::ifstream comm(e.path() / "comm");
    std::string c;
    std::getline(comm, c);
    found.emplace_back(std::stoi(name), c);
  }
  return found;
}

}  // namespace

// A lease is given back with nothing of its uid left running: a process of
// the uid that outlived its run (the kernel ends a pid namespace's processes
// after bubblewrap is gone) is killed and waited for.
TEST_CASE("a uid lease ends every process of its uid before it is given back", "[sandbox]") {
  if (geteuid() != 0) return;  // leases are a root grader's (Catch2 2.13 has no SKIP)
  grader::UidLease lease;
  REQUIRE(lease.active());
  const uid_t uid = lease.uid();
  const pid_t left = fork();
  if (left == 0) {
    if (setresgid(uid, uid, uid) == 0 && setresuid(uid, uid, uid) == 0) {
      const pid_t orphan = fork();  // not the grader's child: nobody reaps it early
      if (orphan == 0) {
        sleep(60);
        _exit(0);
      }
    }
    _exit(0);
  }
  waitpid(left, nullptr, 0);
  auto running = [&] { return static_cast<int>(processes_of(uid).size()); };
  REQUIRE(running() == 2);  // the orphan and the lease's holder
  lease.end_processes();
  CHECK(running() == 0);
}

// A uid some process already runs as is not leased, whatever the lock files
// say: a grader with lease folders of its own (a chroot's /run) in this pid
// namespace, or what a killed grader left, keeps it, and is never ended.
TEST_CASE("a uid that a process runs as is not leased", "[sandbox]") {
  if (geteuid() != 0) return;  // leases are a root grader's
  uid_t free_uid = 0;
  {
    grader::UidLease probe;
    REQUIRE(probe.active());
    free_uid = probe.uid();
  }
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t foreign = fork();
  if (foreign == 0) {
    close(ready[0]);
    if (setresgid(free_uid, free_uid, free_uid) == 0 && setresuid(free_uid, free_uid, free_uid) == 0) {
      (void)!write(ready[1], "x", 1);
      sleep(60);
    }
    _exit(0);
  }
  close(ready[1]);
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  {
    grader::UidLease lease;
    REQUIRE(lease.active());
    CHECK(lease.uid() != free_uid);
  }
  // Its lease given back, the other uid's process lives on.
  CHECK(kill(foreign, 0) == 0);
  kill(foreign, SIGKILL);
  waitpid(foreign, nullptr, 0);
}

// What a run leaves is removed whatever its shape, with a few folders open
// at a time: a chain of folders far deeper than the open-file limit (a
// run's 7 000-level chain outlived the grader: resource red team 4), a wide
// folder, files at every level, and names near NAME_MAX.
TEST_CASE("a work folder is removed however deep its folders go", "[sandbox]") {
  const std::filesystem::path root = std::filesystem::temp_directory_path() / ("gradlab-deep-" + std::to_string(getpid()));
  std::filesystem::create_directories(root);
  const std::string name(200, 'd');
  int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  int level = 0;
  for (; level < 5000 && mkdirat(fd, name.c_str(), 0700) == 0; ++level) {
    const int file = openat(fd, "f", O_WRONLY | O_CREAT, 0600);
    if (file >= 0) close(file);
    const int next = openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY);
    close(fd);
    fd = next;
    if (fd < 0) break;
  }
  if (fd >= 0) close(fd);
  REQUIRE(level == 5000);
  for (int i = 0; i < 2000; ++i) std::filesystem::create_directory(root / ("w" + std::to_string(i)));
  struct rlimit was{}, low{};
  getrlimit(RLIMIT_NOFILE, &was);
  low = was;
  low.rlim_cur = 128;  // far below the chain's depth
  setrlimit(RLIMIT_NOFILE, &low);
  grader::remove_tree(root.string());
  setrlimit(RLIMIT_NOFILE, &was);
  CHECK_FALSE(std::filesystem::exists(root));
}

// How a compile's end is read decides what is cached: a file's verdict for
// good, or one for now (the clock ran out on a busy machine: a compile bomb
// there, but maybe an honest file on a quieter one).
TEST_CASE("a fenced tool's end: its own limit, or a clock that ran out with CPU time to spare", "[sandbox]") {
  std::string error;
  const std::string work = grader::make_work_folder(error);
  REQUIRE(error.empty());
  auto run = [&](const std::string& script, double cpu, double wall) {
    grader::ToolLimits tl;
    tl.cpu_seconds = cpu, tl.wall_seconds = wall;
    const auto r = grader::run_fenced({"/bin/sh", "-c", script}, work, {}, grader::bubblewrap_usable(), tl);
    INFO(script << ": " << r.failure << r.output);
    CHECK(r.failure.empty());
    CHECK(r.killed == (r.stop != grader::ToolStop::Finished));
    return r.stop;
  };
  CHECK(run("exit 3", 5, 20) == grader::ToolStop::Finished);
  CHECK(run("while :; do :; done", 1, 30) == grader::ToolStop::Limit);    // its CPU time, all of it
  CHECK(run("sleep 30", 10, 1) == grader::ToolStop::Unsettled);           // the clock, with CPU to spare
  CHECK(run("i=0; while [ $i -lt 100000000 ]; do i=$((i+1)); done", 1.1, 3) == grader::ToolStop::Limit);
  std::filesystem::remove_all(work);
}

// A grader with lock files of its own (a chroot's /run) in this pid
// namespace sees a held uid as taken: the lease's holder runs as it, and
// nothing of the grader's files reaches the holder (a copy of another
// lease's lock would keep that lock held after its lease ended).
TEST_CASE("a held uid has a holder process running as it, with none of the grader's files", "[sandbox]") {
  if (geteuid() != 0) return;  // leases are a root grader's
  auto holders = [](uid_t uid) {
    std::vector<pid_t> found;
    for (const auto& [pid, comm] : processes_of(uid))
      if (comm == grader::UidLease::kHolderName) found.push_back(pid);
    return found;
  };
  uid_t uid = 0;
  {
    grader::UidLease first;
    REQUIRE(first.active());
    uid = first.uid();
    const auto h = holders(uid);
    REQUIRE(h.size() == 1);
    std::error_code ec;
    long fds = 0;
    for ([[maybe_unused]] const auto& f : std::filesystem::directory_iterator("/proc/" + std::to_string(h[0]) + "/fd", ec)) ++fds;
    CHECK(!ec);
    CHECK(fds == 0);
    grader::UidLease second;  // another thread's lease, in the same folder
    REQUIRE(second.active());
    CHECK(second.uid() != uid);
    CHECK(holders(second.uid()).size() == 1);
  }
  CHECK(holders(uid).empty());  // given back: its holder is gone
}
