// The harness: the part of the grader that runs inside the student's process.
// It calls the exercise function, then writes what the grader needs as one
// JSON document to a pipe the grader opened: the named tensors' state, the
// backward graph of each, the notebook's records, the warnings raised, and
// the outcome of each probe the rubric asked for. It uses only the torch:: API
// (and nlohmann/json), so it builds against gradlab's engine and LibTorch alike.
#include <gradlab/lab.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include "facts_of.h"
#include "probes.h"
#ifdef GRADLAB_ENGINE
#include <gradlab/tape.h>
#endif
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <typeinfo>
#include <iostream>
#include <algorithm>
#include <map>
#include <stdexcept>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

using json = nlohmann::ordered_json;

// Where an exception was thrown. Every throw in the process, the engine's
// and the student's, passes through __cxa_throw; this definition (the
// program's or its library's, found before libstdc++'s) notes the call stack
// of the latest one on its thread, then throws as the real one does. When
// an exception escapes the exercise, the frames inside the program (the
// student's code, never the engine's) go to the grader, which maps them to
// the student's lines with the program's line table.
namespace {
constexpr int kMaxFrames = 48;
thread_local void* g_throw_frames[kMaxFrames];
thread_local int g_throw_depth = 0;
}  // namespace

namespace __cxxabiv1 {  // where <cxxabi.h> declares it
extern "C" void __cxa_throw(void* object, std::type_info* type, void (*destroy)(void*)) {
  using Throw = void (*)(void*, std::type_info*, void (*)(void*));
  static const Throw real = reinterpret_cast<Throw>(dlsym(RTLD_NEXT, "__cxa_throw"));
  g_throw_depth = backtrace(g_throw_frames, kMaxFrames);
  if (!real) std::abort();
  real(object, type, destroy);
  std::abort();  // the real one does not return
}
}  // namespace __cxxabiv1

namespace lab {

struct Lab::State {
  std::vector<std::pair<std::string, torch::Tensor>> named;
  std::map<std::string, probes::TensorFunction> functions;
  std::map<std::string, probes::Walker> walkers;
  json records = json::array();
  json warnings = json::array();
  json given = json::object();  // the statement's numbers for this run (the request's "given")
  std::string phase = "exercise";  // who raised a warning: the exercise or a probe
};

namespace {

using facts::number;
using facts::values_of;
using facts::error_text;
using facts::describe;
using facts::graph_of;

// The latest throw's frames that lie in the program itself, as offsets from
// its load address (return addresses less one: inside the call).
json throw_trace() {
  uintptr_t base = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        *static_cast<uintptr_t*>(data) = info->dlpi_addr;  // the first object is the program
        return 1;
      },
      &base);
  json out = json::array();
  for (int i = 0; i < g_throw_depth && out.size() < 16; ++i) {
    Dl_info where{};
    if (!dladdr(g_throw_frames[i], &where) || reinterpret_cast<uintptr_t>(where.dli_fbase) != base) continue;
    out.push_back(reinterpret_cast<uintptr_t>(g_throw_frames[i]) - base - 1);
  }
  return out;
}

class Collector : public c10::WarningHandler {
 public:
  explicit Collector(Lab::State* s) : s_(s) {}
  void process(const c10::SourceLocation&, const std::string& msg, bool) override {
    s_->warnings.push_back({{"message", msg}, {"during", s_->phase}});
  }

 private:
  Lab::State* s_;
};

const torch::Tensor* find(const Lab::State& s, const std::string& name) {
  for (const auto& [n, t] : s.named)
    if (n == name) return &t;
  return nullptr;
}

json run_probe(Lab::State& s, const json& p) {
  json r = facts::state_probe(s.named, p);
  if (!r.is_null()) return r;
  const std::string kind = p.at("kind");
  const std::string name = p.value("function", "");
  auto unregistered = [&] {
    return std::runtime_error("the exercise did not hand the grader its function \"" + name +
                              "\" (the starter's lab.function(\"" + name + "\", ...) line is missing)");
  };
  if (kind == "gradcheck" || kind == "call") {
    auto it = s.functions.find(name);
    if (it == s.functions.end()) throw unregistered();
    return kind == "gradcheck" ? probes::gradcheck(it->second, p) : probes::call(it->second, p);
  }
  if (kind == "walk") {
    auto it = s.walkers.find(name);
    if (it == s.walkers.end()) throw unregistered();
    return probes::walk(it->second, p);
  }
  throw std::runtime_error("unknown probe kind \"" + kind + "\"");
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    // The system call itself: nothing the program links can stand in for it.
    const long w = syscall(SYS_write, fd, s.data() + done, s.size() - done);
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

// The lab's records go on the op tape too (the grader's replay makes its own
// from them); what the harness does to read a tensor is not the program's.
#ifdef GRADLAB_ENGINE
#define GRADLAB_LAB_RECORD(...)                \
  gradlab::tape::Inside harness_internal_; \
  gradlab::tape::lab_record(__VA_ARGS__)
#else
#define GRADLAB_LAB_RECORD(...)
#endif

void Lab::name(const std::string& name, const torch::Tensor& t) {
  GRADLAB_LAB_RECORD("name", name, &t);
  for (auto& [n, v] : s_->named)
    if (n == name) {
      v = t;
      return;
    }
  s_->named.emplace_back(name, t);
}

void Lab::snapshot(const std::string& label, const torch::Tensor& t) {
  GRADLAB_LAB_RECORD("snapshot", label, &t);
  s_->records.push_back({{"kind", "snapshot"}, {"label", label}, {"tensor", describe(t)}});
}

void Lab::value(const std::string& label, double v) {
  GRADLAB_LAB_RECORD("value", label, nullptr, "", v);
  s_->records.push_back({{"kind", "value"}, {"label", label}, {"value", number(v)}});
}

double Lab::given(const std::string& name) const {
  const auto at = s_->given.find(name);
  if (at == s_->given.end() || !at->is_number()) {
    std::string known;
    for (const auto& [k, _] : s_->given.items()) known += (known.empty() ? "" : ", ") + k;
    throw std::out_of_range("lab.given(\"" + name + "\"): the statement gives no number called \"" + name + "\"" +
                            (known.empty() ? std::string(" (it gives none)") : " (it gives: " + known + ")"));
  }
  return at->get<double>();
}

void Lab::begin_attempt(const std::string& label) { GRADLAB_LAB_RECORD("begin", label, nullptr); }

void Lab::error(const std::string& label, const std::exception& e) {
  GRADLAB_LAB_RECORD("error", label, nullptr, error_text(e));
  s_->records.push_back({{"kind", "error"}, {"label", label}, {"message", error_text(e)}});
}

void Lab::no_error(const std::string& label) {
  GRADLAB_LAB_RECORD("no_error", label, nullptr);
  s_->records.push_back({{"kind", "no_error"}, {"label", label}});
}

void Lab::function(const std::string& name, std::function<torch::Tensor(const torch::Tensor&)> f) {
  s_->functions[name] = std::move(f);
}

void Lab::function(const std::string& name,
                   std::function<void(const std::shared_ptr<torch::autograd::Node>&, int)> walker) {
  s_->walkers[name] = std::move(walker);
}

// `grade --device cuda`: every factory of the run defaults to the GPU, so
// the exercise runs unchanged there. LibTorch 1.13's C++ API has no default
// device to set; the grader never asks it to (it refuses that combination).
namespace {
void use_device(const std::string& device) {
  if (device == "cpu") return;
#ifdef GRADLAB_ENGINE
  if (device == "cuda") {
    if (!torch::cuda::is_available())
      throw std::runtime_error("--device cuda, but the program sees no GPU (" + gradlab::cuda_status() + ")");
    gradlab::TensorOptions::set_default_device(gradlab::Device(gradlab::DeviceType::CUDA, 0));
    return;
  }
#endif
  throw std::runtime_error("this program cannot run on device \"" + device + "\"");
}
}  // namespace

// The request: the grader puts it on fd 3 (its first line the channel's fd
// number and the run's nonce, then the JSON request), and this library's
// constructor takes it and closes fd 3 before the program's own static
// initialisers run (a shared library is initialised before the program that
// links it; priority 101 puts it first among constructors in one file too, for
// the LibTorch build that links the harness into the program). So no code of
// the student's can read the nonce from argv, the environment or fd 3.
//
// In memory the nonce is kept masked (xor with random bytes held apart), and
// whole only while the result is written: a scan of the process's memory for
// it finds nothing. The channel's identity (device and inode) is noted too: a
// channel swapped for another pipe while the exercise ran (dup2 over its
// number) gets no result. Both are costs for code that shares the process,
// not walls (grader/SECURITY.md).
namespace {
struct Request {
  bool present = false;
  int channel = -1;
  dev_t channel_dev = 0;
  ino_t channel_ino = 0;
  std::string text;
  std::vector<unsigned char> masked, mask;
};

Request& request_slot() {
  static Request r;
  return r;
}

__attribute__((constructor(101))) void take_request() {
  constexpr int kRequestFd = 3;
  constexpr size_t kMaxRequest = 16u << 20;
  std::string text;
  char buf[65536];
  for (ssize_t got; (got = read(kRequestFd, buf, sizeof buf)) > 0 && text.size() < kMaxRequest;) text.append(buf, static_cast<size_t>(got));
  const size_t space = text.find(' '), eol = text.find('\n');
  if (space == std::string::npos || eol == std::string::npos || space > eol) {
    close(kRequestFd);
    return;
  }
  // The grader's memfd (only a memfd has seals to ask about; a file a shell
  // left on fd 3 is never emptied), emptied of the request and the nonce, is
  // kept as the probes' capture file (probes.h: capture_sink).
  if (fcntl(kRequestFd, F_GET_SEALS) >= 0 && ftruncate(kRequestFd, 0) == 0)
    lab::probes::detail::capture_sink() = fcntl(kRequestFd, F_DUPFD_CLOEXEC, 3);
  close(kRequestFd);
  Request& r = request_slot();
  r.present = true;
  r.channel = std::atoi(text.substr(0, space).c_str());
  struct stat st{};
  if (fstat(r.channel, &st) == 0) r.channel_dev = st.st_dev, r.channel_ino = st.st_ino;
  const size_t n = eol - space - 1;
  r.mask.resize(n);
  r.masked.resize(n);
  if (getrandom(r.mask.data(), n, 0) != static_cast<ssize_t>(n)) r.present = false;
  for (size_t i = 0; i < n; ++i) r.masked[i] = static_cast<unsigned char>(text[space + 1 + i]) ^ r.mask[i];
  r.text = text.substr(eol + 1);
  std::fill(text.begin(), text.end(), '\0');
}

std::string nonce_of(const Request& r) {
  std::string n(r.masked.size(), '\0');
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<char>(r.masked[i] ^ r.mask[i]);
  return n;
}

// Whether the channel's number still holds the pipe the grader gave.
bool channel_intact(const Request& r) {
  struct stat st{};
  return fstat(r.channel, &st) == 0 && st.st_dev == r.channel_dev && st.st_ino == r.channel_ino;
}
}  // namespace

namespace {
#ifdef GRADLAB_ENGINE
// The op tape's way out: each event a line on the result channel, ahead of
// the result, written as the program runs (a few at a time).
class ChannelSink final : public gradlab::tape::Sink {
 public:
  explicit ChannelSink(int fd) : fd_(fd) {}
  void write(const std::string& event) override {
    buf_ += event;
    buf_ += '\n';
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    if (!buf_.empty()) write_all(fd_, buf_);
    buf_.clear();
  }

 private:
  static constexpr size_t kFlushBytes = 16384;
  int fd_;
  std::string buf_;
};
#endif

// Runs the exercise; its end (ok, an exception, out of memory) goes in `out`.
void run_exercise(void (*exercise)(Lab&), Lab& lab, const json& request, json& out) {
  try {
    use_device(request.value("device", "cpu"));
    exercise(lab);
    out["status"] = "ok";
  } catch (const std::bad_alloc&) {
    out["status"] = "out_of_memory";
    out["message"] = "the exercise ran out of memory (std::bad_alloc)";
  } catch (const std::exception& e) {
    out["status"] = "exception";
    out["message"] = error_text(e);
    out["trace"] = throw_trace();
  } catch (...) {
    out["status"] = "exception";
    out["message"] = "the exercise threw something that is not a std::exception";
    out["trace"] = throw_trace();
  }
  std::cout.flush();
}

// The rubric's probes. They change live state (a backward accumulates), so
// they run after the tensors were read, in the order the rubric lists them.
json run_probes(Lab::State& state, const json& request) {
  json probes = json::object();
  for (const auto& p : request.value("probes", json::array())) {
    const std::string id = p.at("id");
    state.phase = "probe:" + id;
    json r;
    try {
      r = run_probe(state, p);
    } catch (const std::exception& e) {
      r = {{"ok", false}, {"error", error_text(e)}};
    }
    for (const auto& name : p.value("after", std::vector<std::string>{})) {
      const torch::Tensor* t = find(state, name);
      r["after"][name] = t ? describe(*t) : json(nullptr);
    }
    probes[id] = r;
  }
  return probes;
}

// What the exercise left: its named tensors and their graphs, its records,
// then (after a clean end) the probes.
void read_state(Lab::State& state, const json& request, json& out) {
  try {
    json tensors = json::object(), graphs = json::object();
    for (const auto& [name, t] : state.named) {
      tensors[name] = describe(t);
      if (t.defined() && t.grad_fn()) graphs[name] = graph_of(t, state.named);
    }
    out["tensors"] = tensors;
    out["graphs"] = graphs;
    out["records"] = state.records;
    out["probes"] = out["status"] == "ok" ? run_probes(state, request) : json::object();
  } catch (const std::exception& e) {
    out["status"] = "exception";
    out["message"] = "while reading the exercise's tensors: " + error_text(e);
  }
}

// Under bubblewrap the grader cannot see this process's usage (bubblewrap
// does not wait for it), so the program reports its own, for the report.
json own_usage() {
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {{"cpu_seconds", double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                              1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec)},
          {"peak_memory_kb", ru.ru_maxrss}};
}

// Writes the result, with the nonce whole only for the moment it is written,
// on the channel the grader gave, and on no other.
int send_result(const Request& req, json& out) {
  if (!channel_intact(req)) {
    std::cerr << "gradlab harness: the result channel was replaced while the exercise ran; no result is sent\n";
    return 71;
  }
  out["nonce"] = nonce_of(req);
  // Text from the program (an exception's message, what a probed function
  // printed) may be any bytes: what is not UTF-8 is written as U+FFFD rather
  // than ending the run in a JSON error.
  std::string doc = out.dump(-1, ' ', false, json::error_handler_t::replace);
  const bool sent = write_all(req.channel, doc);
  std::fill(doc.begin(), doc.end(), '\0');
  return sent ? 0 : 70;
}
}  // namespace

int harness_main(int, char**, void (*exercise)(Lab&)) {
  Request& req = request_slot();
  if (!req.present) {
    std::cerr << "this program is run by the gradlab grader (grade exerciseN), not by hand\n";
    return 64;
  }
  json request;
  try {
    request = json::parse(req.text);
  } catch (const std::exception& e) {
    std::cerr << "gradlab harness: bad request: " << e.what() << "\n";
    return 70;
  }
  req.text.clear();

  Lab::State state;
  if (request.contains("given") && request["given"].is_object()) state.given = request["given"];
  Lab lab(&state);
  Collector collector(&state);
  c10::Warning::WarningHandlerGuard guard(&collector);
  // backtrace() loads its unwinder on first use: before the exercise runs.
  g_throw_depth = backtrace(g_throw_frames, 1);
  g_throw_depth = 0;

  json out;
  out["nonce"] = "";  // filled in as it is written
#ifdef GRADLAB_ENGINE
  ChannelSink tape_out(req.channel);
  {
    std::string key = nonce_of(req);
    gradlab::tape::start(&tape_out, key);
    std::fill(key.begin(), key.end(), '\0');
  }
#endif
  run_exercise(exercise, lab, request, out);
#ifdef GRADLAB_ENGINE
  gradlab::tape::stop();
  tape_out.flush();
  out["tape_chain"] = gradlab::tape::chain_digest();
#endif
  read_state(state, request, out);
  out["warnings"] = state.warnings;
  out["usage"] = own_usage();
  std::cout.flush();
  return send_result(req, out);
}

}  // namespace lab
