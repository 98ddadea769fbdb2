#include "cohort/archives.h"

#include <archive.h>
#include <archive_entry.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <clocale>
#include <functional>
#include <cstring>
#include <initializer_list>
#include <memory>

#include "common/files.h"
#include "fence/seccomp.h"

namespace grader {
namespace {

constexpr long kChildMemory = 768L << 20;
constexpr int kChildFailed = 4, kChildOutOfMemory = 3;
constexpr size_t kMaxAnswer = size_t(160) << 20;  // what the parent reads of the child's answer
constexpr int kMaxKept = 100;                      // wanted files whose bytes come back
constexpr uint64_t kMaxSkipped = 100;              // refused entries listed one by one
constexpr size_t kMaxShownName = 300;              // bytes of a refused entry's name that are listed

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string mib(uint64_t bytes) {
  return bytes >= (uint64_t(1) << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

// ---- the child's side -------------------------------------------------------

// The answer, as records: a type letter, then fields, each a 64-bit length
// and its bytes.
struct Sink {
  int fd;
  bool ok = true;
  void raw(const void* p, size_t n) { ok = ok && write_all(fd, p, n); }
  void record(char type, std::initializer_list<std::string_view> fields) {
    raw(&type, 1);
    for (std::string_view f : fields) {
      const uint64_t n = f.size();
      raw(&n, sizeof n);
      raw(f.data(), f.size());
    }
  }
};

struct Walk {
  const ArchiveLimits& limits;
  Sink& out;
  uint64_t packed;          // the outermost archive's size
  uint64_t entries = 0;
  uint64_t unpacked = 0;    // bytes its entries unpacked to so far, every level
  int kept = 0;
  uint64_t skipped = 0;
  const std::function<bool(const std::string&)>& wanted;
};

// macOS's resource forks and Finder files, which ride along in its zips.
bool macos_companion(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return path.rfind("__MACOSX/", 0) == 0 || path.find("/__MACOSX/") != std::string::npos || base.rfind("._", 0) == 0 ||
         base == ".DS_Store";
}

// "" when the path stays inside the archive; else why not. Sets `depth`.
std::string path_problem(const std::string& path, int& depth) {
  if (path.empty()) return "an entry with no name";
  if (path[0] == '/' || path.find('\\') != std::string::npos)
    return "its path is absolute or uses '\\' (never written anywhere, and not graded)";
  depth = 0;
  for (size_t at = 0; at <= path.size();) {
    const size_t end = std::min(path.find('/', at), path.size());
    const std::string_view part(path.data() + at, end - at);
    if (part == "..") return "its path climbs out of the archive with '..' (never written anywhere, and not graded)";
    if (end < path.size() && !part.empty() && part != ".") ++depth;
    at = end + 1;
  }
  return "";
}

std::string unpack_level(Walk& w, std::string_view bytes, const std::string& prefix, int level);

// The bytes of the entry the reader stands on: all of them when `keep_all`,
// else at most `keep` (counting the rest). "" or why it stopped.
std::string read_entry(Walk& w, archive* a, uint64_t keep, std::string& text, uint64_t& size) {
  char buf[1 << 16];
  for (;;) {
    const la_ssize_t n = archive_read_data(a, buf, sizeof buf);
    if (n == 0) return "";
    if (n < 0) return std::string("cannot be read (") + (archive_error_string(a) ? archive_error_string(a) : "?") + ")";
    size += static_cast<uint64_t>(n);
    w.unpacked += static_cast<uint64_t>(n);
    if (w.unpacked > w.limits.unpacked_bytes) return "!";
    if (text.size() < keep) text.append(buf, std::min<uint64_t>(static_cast<uint64_t>(n), keep - text.size()));
  }
}

// The archive as a whole: over the size or ratio the limits allow?
std::string over_limits(const Walk& w) {
  const ArchiveLimits& l = w.limits;
  if (w.unpacked > l.unpacked_bytes)
    return "it unpacks to more than " + mib(l.unpacked_bytes) + " (from " + mib(w.packed) + "): not opened further";
  if (w.unpacked > (uint64_t(1) << 20) && w.unpacked / std::max<uint64_t>(w.packed, 1) > l.ratio)
    return "it unpacks to more than " + std::to_string(l.ratio) + " times its size (" + mib(w.unpacked) + " from " +
           mib(w.packed) + "), as a compression bomb does: not opened further";
  return "";
}

// Records what was refused in the archive: the first kMaxSkipped, each name
// cut to kMaxShownName bytes; the rest are counted and said once at the end.
void skip(Walk& w, const std::string& shown, const std::string& why) {
  if (++w.skipped > kMaxSkipped) return;
  w.out.record('S', {shown.size() > kMaxShownName ? shown.substr(0, kMaxShownName) + "…" : shown, why});
}

// The bytes of an entry that is passed over are still unpacked and counted
// (libarchive would unpack them anyway to reach the next entry): a bomb in
// a macOS companion or a link's data is a bomb.
std::string drain(Walk& w, archive* a) {
  std::string none;
  uint64_t size = 0;
  const std::string why = read_entry(w, a, 0, none, size);
  return why == "!" || !over_limits(w).empty() ? over_limits(w) : "";
}

// One entry. "" to go on, else why the whole archive is refused.
std::string take_entry(Walk& w, archive* a, archive_entry* e, const std::string& prefix, int level) {
  const char* p = archive_entry_pathname_utf8(e);
  if (!p) p = archive_entry_pathname(e);
  std::string path = p ? p : "";
  while (path.rfind("./", 0) == 0) path.erase(0, 2);
  const std::string shown = prefix + path;
  const mode_t type = archive_entry_filetype(e);
  if (type == AE_IFDIR || macos_companion(path)) return drain(w, a);
  if (!p) return skip(w, prefix + "(an entry)", "its name cannot be read as UTF-8 or as this system's encoding"), drain(w, a);
  int depth = 0;
  if (std::string why = path_problem(path, depth); !why.empty()) return skip(w, shown, why), drain(w, a);
  if (depth > w.limits.path_depth)
    return skip(w, shown, "more than " + std::to_string(w.limits.path_depth) + " folders deep"), drain(w, a);
  if (archive_entry_hardlink(e))
    return skip(w, shown, std::string("a hard link (to ") + archive_entry_hardlink(e) + "): not followed"), drain(w, a);
  if (type == AE_IFLNK) {
    const char* to = archive_entry_symlink(e);
    return skip(w, shown, std::string("a symbolic link (to ") + (to ? to : "?") + "): not followed"), drain(w, a);
  }
  if (type != AE_IFREG) return skip(w, shown, "a device, fifo or socket, not a file"), drain(w, a);
  if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0) {
    Walk probe = w;
    probe.unpacked += static_cast<uint64_t>(archive_entry_size(e));
    if (std::string why = over_limits(probe); !why.empty()) return why;  // said by its header, before unpacking
  }
  const std::string base = path.substr(path.rfind('/') + 1);
  const bool nested = archive_named(base);
  if (nested && level >= w.limits.nesting)
    return skip(w, shown, "an archive inside an archive inside the archive: not opened"), drain(w, a);
  const bool wanted = !nested && w.wanted && w.wanted(base);
  const bool kept = wanted && w.kept < kMaxKept;
  std::string text;
  uint64_t size = 0;
  const uint64_t keep = nested ? w.limits.archive_bytes + 1 : kept ? w.limits.file_bytes + 1 : 0;
  const std::string why = read_entry(w, a, keep, text, size);
  if (why == "!" || !over_limits(w).empty()) return over_limits(w);
  if (!why.empty()) return skip(w, shown, why), "";
  if (nested) {
    if (size > w.limits.archive_bytes)
      return skip(w, shown, "an archive of " + mib(size) + ", more than " + mib(w.limits.archive_bytes)), "";
    if (std::string inner = unpack_level(w, text, shown + "/", level + 1); !inner.empty()) {
      if (inner.rfind("!", 0) == 0) return inner.substr(1);  // a limit of the whole: said once, for the outermost
      skip(w, shown, inner);
    }
    return "";
  }
  if (kept) ++w.kept;
  // Its bytes when it was wanted and kept; "-" says wanted but over the count.
  const std::string mtime = archive_entry_mtime_is_set(e) ? std::to_string(archive_entry_mtime(e)) : std::string();
  w.out.record('F', {shown, std::to_string(size), kept ? std::string_view(text) : std::string_view(),
                     wanted && !kept ? std::string_view("-") : std::string_view(), mtime});
  return "";
}

// One archive, at `level` (0: the one handed in). "" when it was read to its
// end; "!why" when a limit of the whole was passed; else why it was not read.
std::string unpack_level(Walk& w, std::string_view bytes, const std::string& prefix, int level) {
  std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
  archive_read_support_format_zip(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_bzip2(a.get());
  archive_read_support_filter_xz(a.get());
  auto error = [&](const char* what) {
    const char* s = archive_error_string(a.get());
    return std::string(what) + (s ? std::string(" (") + s + ")" : "");
  };
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    return error("not a zip or tar archive the grader can read");
  for (;;) {
    archive_entry* e = nullptr;
    const int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) return "";
    if (r < ARCHIVE_WARN) return error("damaged, read up to an entry it cannot");
    if (++w.entries > w.limits.entries)
      return "!it holds more than " + std::to_string(w.limits.entries) + " entries: not opened further";
    if (std::string why = take_entry(w, a.get(), e, prefix, level); !why.empty()) return "!" + why;
  }
}

[[noreturn]] void unpack_child(int fd, std::string_view bytes, const ArchiveLimits& limits,
                               const std::function<bool(const std::string&)>& wanted) {
  // Nothing but the answer's pipe stays open.
  if (fd != 3) dup2(fd, 3);
  close_range(4, ~0U, 0);
  for (int i = 0; i < 3; ++i) close(i);
  const rlimit as{static_cast<rlim_t>(kChildMemory), static_cast<rlim_t>(kChildMemory)};
  const rlimit cpu{static_cast<rlim_t>(limits.cpu_seconds), static_cast<rlim_t>(limits.cpu_seconds + 1)};
  const rlimit none{0, 0};
  setrlimit(RLIMIT_AS, &as);
  setrlimit(RLIMIT_CPU, &cpu);
  setrlimit(RLIMIT_FSIZE, &none);
  setrlimit(RLIMIT_NPROC, &none);
  signal(SIGPIPE, SIG_DFL);
  // Names in zips are UTF-8 (the flag Python, Finder and 7-Zip set): in the
  // "C" locale libarchive cannot convert them and gives none. glibc's
  // C.UTF-8 needs no locale files (the filter below would refuse opening them).
  setlocale(LC_CTYPE, "C.UTF-8");
  SeccompFilter filter;
  build_parser_filter(filter);
  if (!install_seccomp_filter(filter)) _exit(kChildFailed);
  Sink sink{3};
  try {
    Walk w{limits, sink, bytes.size(), 0, 0, 0, 0, wanted};
    std::string why = unpack_level(w, bytes, "", 0);
    if (w.skipped > kMaxSkipped)
      sink.record('S', {"…", "and " + std::to_string(w.skipped - kMaxSkipped) + " more entries refused, not listed"});
    if (!why.empty()) sink.record('R', {why[0] == '!' ? std::string_view(why).substr(1) : std::string_view(why)});
  } catch (const std::bad_alloc&) {
    _exit(kChildOutOfMemory);
  } catch (...) {
    _exit(kChildFailed);
  }
  _exit(sink.ok ? 0 : kChildFailed);
}

// ---- the grader's side ------------------------------------------------------

// Reads the child's records back, refusing anything malformed.
bool parse_answer(std::string_view text, Unpacked& u) {
  size_t at = 0;
  auto field = [&](std::string& out) {
    uint64_t n = 0;
    if (text.size() - at < sizeof n) return false;
    std::memcpy(&n, text.data() + at, sizeof n);
    at += sizeof n;
    if (n > text.size() - at) return false;
    out.assign(text.data() + at, n);
    at += n;
    return true;
  };
  while (at < text.size()) {
    const char type = text[at++];
    std::string a, b, c;
    std::string d, m;
    auto digits = [](const std::string& x, size_t most) {
      return x.size() < most && x.find_first_not_of("-0123456789") == std::string::npos && x.find('-', 1) == std::string::npos;
    };
    if (type == 'F' && field(a) && field(b) && field(c) && field(d) && field(m) && !b.empty() && digits(b, 20) &&
        b[0] != '-' && digits(m, 21) && m != "-")
      u.files.push_back({a, std::stoull(b), c, d == "-", m.empty() ? 0 : std::stoll(m)});
    else if (type == 'S' && field(a) && field(b))
      u.skipped.push_back({a, b});
    else if (type == 'R' && field(a))
      u.refused = a;
    else
      return false;
  }
  return true;
}

std::string child_failure(int status, bool late, const ArchiveLimits& l) {
  if (late) return "unpacking it took longer than " + std::to_string(l.wall_seconds) + " s: not opened";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
    return "unpacking it took more than " + std::to_string(l.cpu_seconds) + " s of CPU time, as a bomb does: not opened";
  if ((WIFEXITED(status) && WEXITSTATUS(status) == kChildOutOfMemory) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV))
    return "unpacking it needed more than " + mib(kChildMemory) + " of memory: not opened";
  return "it could not be unpacked (the unpacker ended with " +
         (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                              : "exit code " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1)) +
         ")";
}

}  // namespace

std::string archive_stem(std::string_view name) {
  const std::string n = ascii_lower(std::string(name));
  for (const char* tail : {".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz"})
    if (ends_with(n, tail) && n.size() > std::strlen(tail)) return std::string(name.substr(0, n.size() - std::strlen(tail)));
  return "";
}

bool archive_named(std::string_view name) { return !archive_stem(name).empty(); }

Unpacked unpack_fenced(std::string_view bytes, const std::function<bool(const std::string&)>& wanted,
                       const ArchiveLimits& limits) {
  Unpacked u;
  if (bytes.size() > limits.archive_bytes) {
    u.refused = "an archive of " + mib(bytes.size()) + ": the grader opens archives up to " + mib(limits.archive_bytes);
    return u;
  }
  const ChildAnswer a =
      fork_and_read([&](int fd) { unpack_child(fd, bytes, limits, wanted); }, limits.wall_seconds, kMaxAnswer);
  if (!a.failed.empty()) return u.refused = "the grader could not start its unpacker (" + a.failed + ")", u;
  if (a.too_long) return Unpacked{"it holds more source than the grader reads (" + mib(kMaxAnswer) + "): not opened", {}, {}};
  if (a.late || !WIFEXITED(a.status) || WEXITSTATUS(a.status) != 0) return Unpacked{child_failure(a.status, a.late, limits), {}, {}};
  if (!parse_answer(a.text, u)) return Unpacked{"the unpacker's answer was malformed: not opened", {}, {}};
  if (!u.refused.empty()) u.files.clear();  // a refused archive gives nothing, not a part
  return u;
}

}  // namespace grader
