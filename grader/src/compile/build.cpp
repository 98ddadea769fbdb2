#include "compile/build.h"
#include "compile/diagnostics.h"
#include "compile/tools.h"
#include "source/lines.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "config.h"
#include "common/files.h"
#include "compile/guard.h"
#include "fence/sandbox.h"
#include "common/sha256.h"

namespace grader {

// The largest program a build keeps (see build_program).
constexpr uintmax_t kMaxProgramBytes = uintmax_t{16} << 20;
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxSymbolListing = size_t(256) << 20;
constexpr size_t kMaxSource = size_t(1) << 20;  // an exercise is a few KiB
constexpr size_t kMaxLineListing = size_t(64) << 20;

// A tool's listing (symbols, sections, line table), if it is there and under `cap`.
std::optional<std::string> read_listing(const std::string& file, uintmax_t cap) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  return !ec && size < cap ? read_file(file) : std::nullopt;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> v;
  for (std::string w; in >> w;) v.push_back(w);
  return v;
}

bool is_libtorch(const std::string& engine) { return engine == "libtorch"; }

// What compiles a student's file: clang with its precompiled header against
// the engine when it is installed (grader/CMakeLists.txt says why), GCC
// against LibTorch. Programs are linked by GCC's driver either way.
const char* student_compiler(const std::string& engine) {
  return is_libtorch(engine) ? GRADLAB_CXX : GRADLAB_STUDENT_CXX;
}

bool clang_pch(const std::string& engine) { return !is_libtorch(engine) && *GRADLAB_STUDENT_PCH; }

// The private folder's path, as the compiler prints it, becomes the file's
// own name again in the diagnostics.
std::string restore_names(std::string text, const std::string& work, const std::string& copy, const std::string& shown) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{copy, shown}, {work + "/", std::string()}}) {
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  }
  return text;
}

std::string stat_key(const char* path) {
  struct stat st{};
  if (stat(path, &st) != 0) return std::string(path) + ":missing;";
  return std::string(path) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ";";
}

// Every file of the harness's folder (harness.cpp and the headers it
// includes: probes.h, facts_of.h, random_graphs.h), in name order: a
// harness built against LibTorch at grading time is built again when any of
// them changes, not only harness.cpp.
std::string harness_key() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(fs::path(GRADLAB_HARNESS_SOURCE).parent_path(), ec))
    if (f.is_regular_file(ec)) files.push_back(f.path().string());
  std::sort(files.begin(), files.end());
  std::string k;
  for (const auto& f : files) k += stat_key(f.c_str());
  return k;
}

// What the compiled program depends on besides the student's file.
std::string toolchain_key(const std::string& engine) {
  std::string k = std::string(GRADLAB_VERSION) + ";rpath-origin;" + engine + ";" + GRADLAB_CXX + ";" +
                  student_compiler(engine) + ";" + GRADLAB_STUDENT_FLAGS + ";";
  if (is_libtorch(engine)) {
    k += std::string(GRADLAB_LIBTORCH_LIBS) + ";" + harness_key() +
         stat_key(GRADLAB_PCH_LIBTORCH_DIR "/gradlab/lab.h.gch");
    for (const auto& lib : split_words(GRADLAB_LIBTORCH_LIBS)) k += stat_key(lib.c_str());
  } else {
    k += std::string(GRADLAB_LINK_LIBS) + ";" + GRADLAB_ENGINE_STUDENT_FLAGS + ";" + stat_key(GRADLAB_STUDENT_LIB) +
         stat_key(clang_pch(engine) ? GRADLAB_STUDENT_PCH : GRADLAB_PCH_DIR "/gradlab/lab.h.gch");
  }
  return sha256_hex(k + stat_key(GRADLAB_LAB_INCLUDE "/gradlab/lab.h"));
}

std::vector<std::string> compile_flags(const std::string& engine) {
  std::vector<std::string> f = split_words(is_libtorch(engine) ? GRADLAB_STUDENT_FLAGS : GRADLAB_ENGINE_STUDENT_FLAGS);
  // GCC: the precompiled header directory comes first so <gradlab/lab.h>
  // finds lab.h.gch. clang reads its precompiled header only when named, and
  // first, whatever the file includes (lab.h's #pragma once makes the
  // file's own #include of it a no-op). -isystem keeps warnings from our
  // headers out of the student's diagnostics. LibTorch gets its own PCH and
  // headers, not the engine's.
  const bool torch = is_libtorch(engine), pch = clang_pch(engine);
  if (pch) f.insert(f.end(), {"-include-pch", GRADLAB_STUDENT_PCH});
  // What LibTorch 1.13's headers are written for.
  if (torch) std::replace(f.begin(), f.end(), std::string("-std=c++20"), std::string("-std=c++17"));
  const std::vector<const char*> dirs =
      torch ? std::vector<const char*>{GRADLAB_PCH_LIBTORCH_DIR, GRADLAB_LAB_INCLUDE, GRADLAB_LIBTORCH_INCLUDE}
      : pch ? std::vector<const char*>{GRADLAB_LAB_INCLUDE, GRADLAB_ENGINE_INCLUDE}
            : std::vector<const char*>{GRADLAB_PCH_DIR, GRADLAB_LAB_INCLUDE, GRADLAB_ENGINE_INCLUDE};
  for (const char* d : dirs) {
    f.push_back("-isystem");
    f.push_back(d);
  }
  f.push_back("-fdiagnostics-color=never");
  return f;
}

// The Itanium C++ ABI's name of `void FUNCTION(lab::Lab&)` (GCC and clang).
std::string mangled_exercise(const std::string& function) {
  return "_Z" + std::to_string(function.size()) + function + "RN3lab3LabE";
}

// The linker flag that makes harness/entry.cpp's gradlab_exercise the
// exercise's function.
std::string exercise_alias(const std::string& function) {
  return "-Wl,--defsym=" + mangled_exercise("gradlab_exercise") + "=" + mangled_exercise(function);
}

// The linker's words for an alias to a function the file does not define
// (ld.bfd quotes `like this', gold 'like this'), with the function's C++ name
// in place of its mangled one.
std::string readable_link_errors(std::string out, const std::string& function) {
  for (const char* q : {"`", "'"}) {
    const std::string raw = std::string("undefined symbol ") + q + mangled_exercise(function) + "' referenced in expression";
    for (size_t at = out.find(raw); at != std::string::npos; at = out.find(raw, at))
      out.replace(at, raw.size(), "undefined reference to '" + function + "(lab::Lab&)'");
  }
  return out;
}

// A link error a student can make, said in the exercise's words.
std::string link_hint(const std::string& out, const std::string& function) {
  // ld.bfd quotes names `like this', gold 'like this'.
  for (const char* q : {"`", "'"}) {
    if (out.find(std::string("undefined reference to ") + q + function + "(") != std::string::npos)
      return "gradlab: the file must define the exercise function `void " + function +
             "(lab::Lab& lab)` (check its name and its parameter).\n";
    if (out.find(std::string("multiple definition of ") + q + "main'") != std::string::npos)
      return "gradlab: remove main(): the grader provides its own and calls " + function + "(lab).\n";
  }
  return "";
}

// Compiles `source` into the cached object `obj` unless it is there already.
std::string cached_object(const fs::path& obj, const std::string& source, const std::string& engine,
                          const std::string& what, std::string& error) {
  std::error_code ec;
  if (fs::exists(obj, ec)) return obj.string();
  fs::create_directories(obj.parent_path(), ec);
  const fs::path tmp = obj.string() + unique_temp_suffix() + ".o";
  std::vector<std::string> cmd = {student_compiler(engine)};
  for (auto& f : compile_flags(engine)) cmd.push_back(f);
  cmd.insert(cmd.end(), {"-c", source, "-o", tmp.string()});
  ToolResult r = run_tool(cmd);
  if (r.status != 0) {
    error = "cannot compile " + what + ":\n" + r.output;
    return "";
  }
  fs::rename(tmp, obj, ec);
  if (ec) fs::remove(tmp, ec);
  return obj.string();
}

// The program's main. Against the engine, the build's own (harness/entry.cpp),
// which the link aims at the exercise's function (exercise_alias). Against
// LibTorch, a two-line main for the function, compiled once per function.
std::string entry_object(const fs::path& cache, const std::string& function, const std::string& engine,
                         const std::string& tool_key, std::string& error) {
  if (!is_libtorch(engine)) return GRADLAB_STUDENT_ENTRY;
  const fs::path obj = cache / "entry" / (function + "-" + tool_key.substr(0, 16) + ".o");
  std::error_code ec;
  if (fs::exists(obj, ec)) return obj.string();
  fs::create_directories(obj.parent_path(), ec);
  const std::string src = obj.string() + ".cpp";
  const std::string werr = write_file_atomic(
      src, "namespace lab { class Lab; int harness_main(int, char**, void (*)(Lab&)); }\n"
           "void " + function + "(lab::Lab&);\n"
           "int main(int argc, char** argv) { return lab::harness_main(argc, argv, &" + function + "); }\n");
  if (!werr.empty()) {
    error = werr;
    return "";
  }
  return cached_object(obj, src, engine, "the grader's entry point for " + function, error);
}

}  // namespace

std::vector<std::string> tool_paths(const std::string& engine) {
  if (is_libtorch(engine)) return {GRADLAB_PCH_LIBTORCH_DIR, GRADLAB_LAB_INCLUDE, GRADLAB_LIBTORCH_INCLUDE};
  return {GRADLAB_PCH_DIR, GRADLAB_LAB_INCLUDE, GRADLAB_ENGINE_INCLUDE, GRADLAB_STUDENT_LIB};
}

std::string default_cache_dir() {
  if (const char* c = std::getenv("GRADLAB_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/gradlab";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/gradlab";
  return (fs::temp_directory_path() / "gradlab-cache").string();
}

std::string compiler_id(const std::string& engine) {
  return is_libtorch(engine) ? GRADLAB_CXX_ID : GRADLAB_STUDENT_CXX_ID;
}

bool libtorch_available() { return std::string(GRADLAB_LIBTORCH_LIBS).size() > 0; }

namespace {

// A shell word: the argument between single quotes, its own quotes escaped.
std::string quoted(const std::string& arg) {
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_line(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& w : words) line += (line.empty() ? "" : " ") + quoted(w);
  return line;
}

// The steps' command lines: compile, list the symbols and the sections into
// files, link, write the line table. They run as one script in one fence
// (each start of a fence costs tens of milliseconds); the lists are checked
// afterwards, and a program whose object broke the rules is thrown away unrun.
std::string build_script(const BuildRequest& req, const std::string& work, const std::string& copy,
                         const std::string& harness) {
  const std::string object = work + "/student.o";
  std::vector<std::string> compile = {student_compiler(req.engine)};
  for (auto& f : compile_flags(req.engine)) compile.push_back(f);
  compile.insert(compile.end(), {"-c", copy, "-o", object});
  std::vector<std::string> link = {GRADLAB_CXX, object, work + "/entry.o", harness};
  if (is_libtorch(req.engine)) {
    for (auto& l : split_words(GRADLAB_LIBTORCH_LIBS)) link.push_back(l);
    link.push_back("-pthread");
  } else {
    // The library (harness and engine) is found beside the program: the
    // sandbox stages the two together (sandbox.h).
    link.push_back("-Wl,-rpath,$ORIGIN");
    link.push_back(exercise_alias(req.function));
    for (auto& l : split_words(GRADLAB_LINK_LIBS)) link.push_back(l);
  }
  for (auto& l : split_words(GRADLAB_LINKER_FLAG)) link.push_back(l);
  link.push_back("-Wl,--version-script=" + work + "/program.map");
  link.insert(link.end(), {"-o", work + "/program"});
  std::vector<std::string> nm = {GRADLAB_NM};
  if (*GRADLAB_NM_PLUGIN) nm.insert(nm.end(), {"--plugin", GRADLAB_NM_PLUGIN});
  nm.insert(nm.end(), {"-P", "--defined-only", "-g", object});
  return "set -e\n" + shell_line(compile) + "\n" + shell_line(nm) + " > " + quoted(work + "/symbols.txt") + "\n" +
         shell_line({GRADLAB_READELF, "-SW", object}) + " > " + quoted(work + "/sections.txt") + "\n" +
         shell_line(link) + "\n" +
         // The line table, for the lines of an escaped exception (lines.h);
         // a program without one still runs.
         shell_line({GRADLAB_OBJDUMP, "--dwarf=decodedline", work + "/program"}) + " > " +
         quoted(work + "/lines.txt") + " 2>/dev/null || true\n";
}

// Compiles, lists the symbols and links in `work`, which holds the copy of
// the student's file; then checks the symbols. The program is work/program
// when the result's status is 0.
ToolResult compile_and_link(const BuildRequest& req, const std::string& work, const std::string& copy,
                            const std::string& entry, const std::string& harness) {
  std::error_code ec;
  fs::copy_file(entry, work + "/entry.o", ec);
  // The program exports none of its symbols: a library never binds to the
  // student's code. Without this, a weak definition of a C++ library function
  // the file wrote itself (std::future_category, spelled in namespace std)
  // stood in for libstdc++'s own, which calls it while it starts, before the
  // harness has taken its request: it read the nonce and forged a result.
  // Nothing is lost: the libraries never refer to a program's symbols, and
  // type_info compares by name across libraries.
  write_file_atomic(work + "/program.map", "{ local: *; };\n");
  std::string linked = harness;
  if (is_libtorch(req.engine)) fs::copy_file(harness, work + "/harness.o", ec), linked = work + "/harness.o";
  ToolLimits limits;
  if (!is_libtorch(req.engine)) limits.cpu_seconds = kStudentCpuSeconds, limits.wall_seconds = kStudentWallSeconds;
  ToolResult r = run_fenced({"/bin/sh", "-c", build_script(req, work, copy, linked)}, work, tool_paths(req.engine),
                            req.isolate, limits);
  const std::string symbols_file = work + "/symbols.txt";
  if (!r.failure.empty() || !fs::exists(symbols_file, ec) || !req.guarded) return r;  // the compiler's verdict
  // What the object defines: nothing of the grader's, the engine's or the C
  // library's. Every symbol is checked: a template-heavy file lists hundreds
  // of kilobytes of them, far past the diagnostics' cap.
  const auto symbols = read_listing(symbols_file, kMaxSymbolListing);
  const auto sections = read_listing(work + "/sections.txt", kMaxSymbolListing);
  const std::string refused =
      (symbols ? check_symbols(*symbols, req.source) : "gradlab: could not list the symbols of the compiled file\n") +
      (sections ? check_sections(*sections, req.source) : "gradlab: could not list the sections of the compiled file\n");
  if (!refused.empty()) r.output += refused, r.status = 1;
  return r;
}

// A build of this very file with this toolchain, if the cache holds a whole one.
bool read_cached(const fs::path& dir, BuildOutcome& b) {
  std::error_code ec;
  if (!fs::exists(dir / "status", ec)) return false;
  b.ok = read_file(dir / "status") == "ok";
  b.diagnostics = read_file(dir / "diagnostics.txt").value_or("");
  b.program = (dir / "program").string();
  return !b.ok || fs::exists(b.program, ec);  // a damaged entry is built again
}

// The file's rules, before any compiler sees it: its size, then the guard's.
ToolResult check_rules(const BuildRequest& req, const std::string& source) {
  ToolResult r;
  if (!req.guarded) return r;
  if (source.size() > kMaxSource) {
    r.output = req.source + ": error: the file is " + std::to_string(source.size() >> 10) +
               " KiB; the grader compiles files up to " + std::to_string(kMaxSource >> 10) +
               " KiB (an exercise is a few KiB: is this the right file?)\n";
    r.status = 1;
    return r;
  }
  std::string refused = check_source(source, req.source);
  if (refused.size() > kMaxDiagnostics)
    refused = refused.substr(0, refused.rfind('\n', kMaxDiagnostics) + 1) + "[… more refusals left out …]\n";
  if (!refused.empty()) r.output = refused, r.status = 1;
  return r;
}

// Compiles and links a copy of the file, in an otherwise empty work folder
// (nothing lies beside it to include); a program that built is kept in `tmp`
// with its line table.
ToolResult build_in_work(const BuildRequest& req, const std::string& source, const std::string& entry,
                         const std::string& harness, const fs::path& tmp, std::string& failure) {
  const std::string work = make_work_folder(failure);
  if (work.empty()) return ToolResult{1, "", false, false, failure};
  const std::string copy = work + "/" + req.function + ".cpp";
  const std::string werr = write_file_atomic(copy, source);
  ToolResult r = werr.empty() ? compile_and_link(req, work, copy, entry, harness)
                              : ToolResult{1, "gradlab: " + werr + "\n", false, false, ""};
  r.output = restore_names(r.output, work, copy, req.source);
  std::error_code ec;
  if (r.status == 0 && !r.killed) {
    std::unique_lock<std::shared_mutex> writing(executable_writes());
    fs::copy_file(work + "/program", tmp / "program", ec);
    const auto listing = read_listing(work + "/lines.txt", kMaxLineListing);
    ec.clear();  // as before: a failed copy is found by the next run (read_cached builds again)
    std::ofstream(tmp / "lines.txt", std::ios::binary) << line_table(listing.value_or(""), req.function + ".cpp");
  }
  if (ec) r.status = 1, r.output += "gradlab: cannot keep the program: " + ec.message() + "\n";
  fs::remove_all(work, ec);
  return r;
}

// The file's verdict, cached: renamed into place whole, so two graders never
// see each other's half-written entries. A compile stopped by a limit is
// cached as such too: sending the same bomb again costs nothing.
void store(const fs::path& tmp, const fs::path& dir, BuildOutcome& b) {
  std::error_code ec;
  std::ofstream(tmp / "diagnostics.txt", std::ios::binary) << b.diagnostics;
  std::ofstream(tmp / "status", std::ios::binary) << (b.ok ? "ok" : "failed");
  fs::create_directories(dir.parent_path(), ec);
  fs::rename(tmp, dir, ec);
  if (ec) fs::remove_all(tmp, ec);  // another grader finished first; its copy is as good
  b.program = (dir / "program").string();
}

}  // namespace

BuildOutcome build_program(const BuildRequest& req) {
  BuildOutcome b;
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  const std::string source = read_file(req.source).value_or("");
  const std::string source_hash = sha256_hex(source);
  auto finish = [&] {
    b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    b.source_sha256 = source_hash;
    if (!b.ok && b.failure.empty() && req.guarded) b.hints = compile_hints(b.diagnostics, req.source, source);
    return b;
  };
  const std::string tool_key = toolchain_key(req.engine);
  const std::string key = sha256_hex(tool_key + "\n" + req.function + "\n" + req.source + "\n" +
                                     (req.guarded ? "guard " + std::to_string(kGuardVersion) : "trusted") + "\n" + source);
  const fs::path cache = req.cache_dir;
  const fs::path dir = cache / "build" / key.substr(0, 2) / key.substr(2);
  if (read_cached(dir, b)) {
    b.cached = true;
    return finish();
  }
  b = BuildOutcome{};

  fs::create_directories(cache / "build", ec);
  if (ec) {
    b.failure = "cannot create the compile cache " + (cache / "build").string() + ": " + ec.message();
    return finish();
  }
  std::string entry_error;
  const std::string entry = entry_object(cache, req.function, req.engine, tool_key, entry_error);
  // Against LibTorch the harness is compiled too, once per toolchain (it takes a while).
  const std::string harness =
      is_libtorch(req.engine)
          ? cached_object(cache / "entry" / ("harness-libtorch-" + tool_key.substr(0, 16) + ".o"),
                          GRADLAB_HARNESS_SOURCE, req.engine, "the harness against LibTorch", entry_error)
          : GRADLAB_STUDENT_LIB;
  if (entry.empty() || harness.empty()) {
    b.failure = entry_error;
    return finish();
  }
  std::string tmpl = (cache / "build" / "tmp-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    b.failure = "cannot write to the compile cache " + cache.string() + ": " + std::strerror(errno);
    return finish();
  }
  const fs::path tmp = tmpl;
  // The file's rules first: a file that breaks them is not even compiled.
  ToolResult r = check_rules(req, source);
  if (r.output.empty()) r = build_in_work(req, source, entry, harness, tmp, b.failure);
  if (!r.failure.empty() || !b.failure.empty()) {  // not the file's verdict: nothing cached
    if (b.failure.empty()) b.failure = "cannot compile in the sandbox: " + r.failure;
    fs::remove_all(tmp, ec);
    return finish();
  }
  b.ok = r.status == 0 && !r.killed;
  b.diagnostics = readable_link_errors(r.output, req.function);
  if (!b.ok) b.diagnostics += link_hint(b.diagnostics, req.function);
  // An exercise links to a few dozen KiB. A program of hundreds of MiB (a
  // static array of numbers) would stay in the cache for good, one per
  // version of the file: it is refused, and not kept.
  const uintmax_t size = b.ok ? fs::file_size(tmp / "program", ec) : 0;
  if (b.ok && !ec && size > kMaxProgramBytes) {
    b.ok = false;
    b.diagnostics = "the program is " + std::to_string(size >> 20) + " MiB once linked, and a program may be at most " +
                    std::to_string(kMaxProgramBytes >> 20) + " MiB: an exercise links to a few dozen KiB. Is there a "
                    "large array with its values written out (static char blob[...] = {...})?\n";
    fs::remove(tmp / "program", ec);
  }
  if (r.stop != ToolStop::Unsettled) {
    store(tmp, dir, b);
  } else {  // the file's verdict for now, not for good
    b.diagnostics += "gradlab: the compiler was stopped before it had used its CPU time (the machine was busy, or "
                     "something outside the grader ended it); this verdict is not kept: grading again compiles it again.\n";
    fs::remove_all(tmp, ec);
  }
  return finish();
}

int student_line(const BuildOutcome& built, const std::vector<uint64_t>& trace) {
  if (trace.empty() || built.program.empty()) return 0;
  const auto table = read_file((fs::path(built.program).parent_path() / "lines.txt").string());
  for (int line : student_lines(table.value_or(""), trace))
    if (line > 0) return line;
  return 0;
}

}  // namespace grader
