// Watching a sandboxed child: its pipes, its clock, its CPU and its
// working folder (collect), and cleaning up after it (remove_tree).
#include "fence/watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace grader {
namespace fs = std::filesystem;

// Visits every entry under `root`, folders before what they hold, without
// following links, until `visit(stat)` returns false. Where the
// run shares the grader's uid (no root, no lease), a folder it shut (mode
// 000) is opened again; as root the grader reads it anyway, and changes no
// mode in a tree a run could still be rearranging.
namespace {

constexpr auto kWatchEvery = std::chrono::milliseconds(50);

// Folders deeper than this are not walked, and a folder that holds them is
// over its limits: an exercise writes no folders at all, and past PATH_MAX a
// folder cannot be opened by its path, so what lies below would go unseen.
constexpr size_t kMaxFolderDepth = 64;

// Returns false when some folder was too deep to walk.
template <class Visit>
bool walk_folder(const std::string& root, Visit&& visit) {
  std::vector<std::pair<std::string, size_t>> todo{{root, 0}};
  bool whole = true;
  while (!todo.empty()) {
    const auto [dir, depth] = std::move(todo.back());
    todo.pop_back();
    if (depth > kMaxFolderDepth) {
      whole = false;
      continue;
    }
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && geteuid() != 0 && fchmodat(AT_FDCWD, dir.c_str(), 0700, AT_SYMLINK_NOFOLLOW) == 0)
      fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR* d = fd >= 0 ? fdopendir(fd) : nullptr;
    if (!d) {
      // A folder that cannot be opened hides what it holds: past PATH_MAX
      // (255-byte names 16 deep) a walk by path skipped 1 GiB in 24 000
      // entries (resource red team 4). Not walked whole, so over its limits.
      if (fd >= 0) close(fd);
      else if (errno != ENOENT) whole = false;
      continue;
    }
    while (const dirent* e = readdir(d)) {
      if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
      struct stat st{};
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!visit(st)) {
        closedir(d);
        return whole;
      }
      if (S_ISDIR(st.st_mode)) todo.emplace_back(dir + "/" + e->d_name, depth + 1);
    }
    closedir(d);
  }
  return whole;
}

// Whether a folder holds more than `max_bytes` (allocated blocks, so a
// sparse file counts what it holds) or more than `max_entries` entries.
bool folder_over(const std::string& root, uintmax_t max_bytes, size_t max_entries) {
  uintmax_t bytes = 0;
  size_t entries = 0;
  const bool whole = walk_folder(root, [&](const struct stat& st) {
    bytes += static_cast<uintmax_t>(st.st_blocks) * 512;
    return ++entries <= max_entries && bytes <= max_bytes;
  });
  return !whole || entries > max_entries || bytes > max_bytes;
}

}  // namespace

namespace {

// The subfolders of `dir`, once every other entry of it is unlinked.
std::vector<std::string> clear_files(int dir) {
  std::vector<std::string> subs;
  const int fd = dup(dir);
  DIR* d = fd >= 0 ? fdopendir(fd) : nullptr;
  if (!d) {
    if (fd >= 0) close(fd);
    return subs;
  }
  rewinddir(d);
  while (const dirent* e = readdir(d)) {
    if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
    struct stat st{};
    if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) subs.push_back(e->d_name);
    else unlinkat(dir, e->d_name, 0);
  }
  closedir(d);
  return subs;
}

// A folder opened below `dir`, made searchable and writable first where the
// grader owns it (a run under the grader's uid may shut its folders).
int open_below(int dir, const std::string& name) {
  int fd = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES && geteuid() != 0 && fchmodat(dir, name.c_str(), 0700, 0) == 0)
    fd = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && geteuid() != 0) fchmod(fd, 0700);
  return fd;
}

}  // namespace

// Removes a folder a run wrote in, folders it shut (mode 000) included, with
// at most kOpen folders open at a time. std::filesystem::remove_all keeps one
// open per level, so a chain of folders deeper than the grader's open-file
// limit outlived the run, the grader and the next start's sweep (resource
// red team 4: 7 000 levels, 262 MiB left). Here a chain is cut where it gets
// too deep, and its lower part moved up beside the top, then removed in turn.
void remove_tree(const std::string& path) {
  constexpr size_t kOpen = 32;
  const int top = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top < 0) {
    std::error_code ec;
    fs::remove(path, ec);  // a file, or nothing
    return;
  }
  if (geteuid() != 0) fchmod(top, 0700);
  // Depth first: each open folder with the subfolders still to remove.
  struct Frame {
    int fd;
    std::string name;  // in the folder above
    std::vector<std::string> subs;
  };
  std::vector<Frame> stack{{top, "", clear_files(top)}};
  unsigned long cut = 0;
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (!f.subs.empty()) {
      const std::string sub = f.subs.back();
      f.subs.pop_back();
      if (stack.size() >= kOpen) {  // too deep: this part moves up beside the top, and comes later
        const std::string up = ".cut-" + std::to_string(cut++);
        if (renameat(f.fd, sub.c_str(), top, up.c_str()) == 0) stack.front().subs.push_back(up);
        continue;
      }
      const int fd = open_below(f.fd, sub);
      if (fd >= 0) stack.push_back({fd, sub, clear_files(fd)});
      continue;
    }
    // Every subfolder of this one is gone (or could not be): it goes too.
    const Frame done = std::move(stack.back());
    stack.pop_back();
    if (stack.empty()) break;
    close(done.fd);
    unlinkat(stack.back().fd, done.name.c_str(), AT_REMOVEDIR);
  }
  close(top);
  rmdir(path.c_str());
}

// CPU seconds used so far by `pid` and every process below it (under
// bubblewrap the program is a grandchild), from /proc: each live process's
// own, and that of the children it has already waited for (the compiler
// driver's finished cc1plus).
namespace {

double tree_cpu_seconds(pid_t pid, int depth = 0) {
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');  // the name may hold blanks and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int k = 3; k <= 17 && fields >> f; ++k)
    if (k >= 14) ticks += std::atof(f.c_str());  // utime, stime, cutime, cstime
  double total = ticks / tick;
  if (depth > 8) return total;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream children(task.path() / "children");
    for (pid_t child; children >> child;) total += tree_cpu_seconds(child, depth + 1);
  }
  return total;
}

// The seconds the process tree spent runnable but waiting for a CPU
// (/proc/PID/task/TID/schedstat's second field, in ns); -1 when the kernel
// keeps no schedstat.
double tree_waited_seconds(pid_t pid, int depth = 0) {
  double total = 0;
  bool known = false;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream stat(task.path() / "schedstat");
    double ran = 0, waited = 0;
    if (stat >> ran >> waited) total += waited / 1e9, known = true;
    if (depth > 8) continue;
    std::ifstream children(task.path() / "children");
    for (pid_t child; children >> child;)
      if (const double w = tree_waited_seconds(child, depth + 1); w >= 0) total += w;
  }
  return known ? total : -1;
}

// CPU seconds the machine has spent busy since it started (/proc/stat's
// first line: user, system, irq, softirq and steal), -1 when unreadable.
// Niced work is left out (it hardly delays a run at the default priority),
// unless the grader itself runs niced, when its runs compete with it.
double machine_busy_seconds() {
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  static const bool niced = getpriority(PRIO_PROCESS, 0) > 0;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") return -1;
  return (user + (niced ? nice : 0) + system + irq + softirq + steal) / tick;
}

double own_cpu_seconds() {
  rusage me{};
  getrusage(RUSAGE_SELF, &me);
  return double(me.ru_utime.tv_sec + me.ru_stime.tv_sec) + 1e-6 * double(me.ru_utime.tv_usec + me.ru_stime.tv_usec);
}

}  // namespace

bool deserves_more_time(double elapsed, double cpu, double waited, double others) {
  return cpu >= 0.1 * elapsed && (waited < 0 || waited >= 0.1 * elapsed) && (others < 0 || others >= 0.25 * elapsed);
}

// Reads the child's pipes until it is gone, or kills it at the deadline,
// past an output cap, or once `watched` (the fallback's working folder)
// holds too much. Returns its wait status.
int collect(pid_t pid, Stream* streams, size_t n_streams, double wall_seconds,
            std::chrono::steady_clock::time_point start, SandboxOutcome& o, rusage& ru, const std::string& watched) {
  auto next_watch = start + kWatchEvery;
  auto deadline = start + std::chrono::duration<double>(wall_seconds);
  // A program that is computing on a machine busy with other work gets more
  // wall-clock time (deserves_more_time), so that it meets its CPU limit as
  // it would on an idle machine: a verdict must not depend on what else the
  // machine was doing.
  const auto last_deadline = start + std::chrono::duration<double>(3 * wall_seconds);
  // What the rest of the machine computed meanwhile: the busy time of every
  // CPU, less the run's and the grader's own. A run whose threads queue
  // behind each other waits too, but on nobody else's work.
  // Each extension is judged on the time since the last judgement, not since
  // the start: a program that computed for 1.7 s and then slept earned the
  // whole 3x on its first second (resource red team 6).
  double busy_at_start = machine_busy_seconds(), own_at_start = own_cpu_seconds();
  double cpu_at_mark = 0, waited_at_mark = 0;
  auto mark = start;
  auto kill_group = [&] {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  };
  int status = 0;
  bool reaped = false;
  char buf[65536];
  for (;;) {
    if (!reaped && wait4(pid, &status, WNOHANG, &ru) == pid) {
      reaped = true;
      kill(-pid, SIGKILL);  // whatever it left running goes with it
    }
    pollfd pf[3];
    Stream* which[3];
    int n = 0;
    for (size_t i = 0; i < n_streams; ++i)
      if (streams[i].open) pf[n] = {streams[i].fd, POLLIN, 0}, which[n++] = &streams[i];
    if (n == 0 && reaped) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline && !reaped && deadline < last_deadline) {
      const double elapsed = std::chrono::duration<double>(now - mark).count();
      const double cpu_now = tree_cpu_seconds(pid), waited_now = tree_waited_seconds(pid);
      const double busy = machine_busy_seconds(), own = own_cpu_seconds();
      const double cpu = cpu_now - cpu_at_mark;
      const double waited = waited_now < 0 ? -1 : waited_now - waited_at_mark;
      const double others = busy < 0 || busy_at_start < 0 ? -1 : std::max(0.0, busy - busy_at_start - cpu - (own - own_at_start));
      mark = now, cpu_at_mark = cpu_now, waited_at_mark = std::max(0.0, waited_now);
      busy_at_start = busy, own_at_start = own;
      if (deserves_more_time(elapsed, cpu, waited, others)) {
        deadline = std::min(last_deadline, deadline + std::chrono::duration<double>(wall_seconds / 2));
        continue;
      }
    }
    if (now >= deadline) {
      o.timed_out = !reaped;
      // Once the group is killed, what bubblewrap's children used is lost to
      // its rusage (they die unwaited for): the time is read while they live.
      if (!reaped) o.cpu_seconds = tree_cpu_seconds(pid);
      kill_group();
      if (!reaped) wait4(pid, &status, 0, &ru), reaped = true;
      break;
    }
    if (!reaped && !watched.empty() && now >= next_watch) {
      next_watch = now + kWatchEvery;
      if (folder_over(watched, kWorkFolderBytes, kWorkFolderEntries)) {
        o.disk_limit = true;
        kill_group();
      }
    }
    if (n == 0) {
      usleep(1000);
      continue;
    }
    if (poll(pf, static_cast<nfds_t>(n), reaped ? 50 : 10) < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Stream& s = *which[i];
      const ssize_t got = read(s.fd, buf, sizeof buf);
      if (got <= 0) {
        s.open = false;
        continue;
      }
      const size_t room = s.cap > s.buf->size() ? s.cap - s.buf->size() : 0;
      s.buf->append(buf, std::min(room, static_cast<size_t>(got)));
      if (static_cast<size_t>(got) > room) {
        if (s.truncated) *s.truncated = true;
        o.output_limit = true;
        kill_group();
      }
    }
  }
  for (size_t i = 0; i < n_streams; ++i) close(streams[i].fd);
  if (!reaped) wait4(pid, &status, 0, &ru);
  return status;
}

}  // namespace grader
