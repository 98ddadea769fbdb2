// The op tape. While the grader runs an exercise, the engine writes down what
// the program asks of it, in order: every tensor a factory makes (with its
// values), every op called from the program's own code (its name, the C++
// types and values of its arguments, tensors by id, what it returned or the
// error it raised, whether grad mode was on), and the lab's records. Each
// event is written out through a sink the moment it happens, before control
// returns to the program, so nothing the program does afterwards can change
// it. The grader replays the tape in its own engine (grader/src/judge/replay.cpp)
// and believes only what the replay computes.
//
// An op is taped at its entry with one line, and only when it was called
// from outside the engine (an op inside an op is part of the outer one):
//
//   Tensor mul(const Tensor& a, const Tensor& b) {
//     GRADLAB_TAPE("mul", mul(a, b), a, b);
//     ... the op as before ...
//
// The replayer finds it again by name and argument types ("mul(TT)"), so the
// two sides agree by construction: the codes below are the only spelling.
// With no sink (everywhere but a graded run) the cost is one load and branch.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gradlab/tensor.h"

namespace gradlab {
enum class Reduction;
}

// Nothing of the tape is exported from the library student programs load:
// code in the program cannot find its state or its writer by name (dlsym),
// to turn it off, hide ops from it or write lines of its own through it. The
// library is stripped too, so the names are not in its file either.
#pragma GCC visibility push(hidden)
namespace gradlab::tape {

// Where events go: one JSON object per call, complete.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(const std::string& event) = 0;
};

namespace detail {
extern Sink* g_sink;
// How deep in taped calls the engine is (any thread: the engine's own
// backward threads work inside a taped call).
extern std::atomic<int> g_depth;
// The largest tensor the engine allocates (bytes): a replay's bound on what
// a forged tape may ask of the grader's memory. Unbounded elsewhere.
extern size_t g_storage_limit;
// A tensor with a number on the tape is going away (its address may be
// reused): the tape's record of whose number is whose forgets it.
void forget(const TensorImpl* impl, uint64_t id);
}  // namespace detail

// What the engine throws when a replay asks for more than g_storage_limit.
class LimitExceeded : public Error {
 public:
  using Error::Error;
};

// Whether a call made now is to be taped: a tape is on and this is not an op
// inside another.
inline bool on() { return detail::g_sink && detail::g_depth.load(std::memory_order_relaxed) == 0; }

// The harness starts the tape before the exercise and stops it after: stop
// writes any grad slot the program rewrote since its last event.
void start(Sink* sink, const std::string& key = "");
void stop();

// A keyed running digest of every line the engine wrote, in order. The key
// comes from the run's token, which the grader has too: a line the program
// writes on the channel itself, or one it changes or drops, breaks the
// chain the harness reports at the end. (In memory the state is masked;
// like the token's, that is a cost for code in the process, not a wall.)
struct Chain {
  uint64_t a = 0x6a09e667f3bcc908ULL, b = 0xbb67ae8584caa73bULL;
  explicit Chain(const std::string& key = "") { add(key); }
  void add(std::string_view line) {
    for (unsigned char c : line) {
      a = (a ^ c) * 0x100000001b3ULL;
      b = ((b ^ a) << 29 | (b ^ a) >> 35) * 0x9e3779b97f4a7c15ULL + c;
    }
    a ^= b >> 17;
  }
  std::string hex() const;
};
// The chain over the lines written since start (hex).
std::string chain_digest();

// Bounds: past them the tape ends with an "overflow" event, and the grader
// trusts nothing of the run it could not replay.
inline constexpr size_t kMaxEvents = 200000;
inline constexpr size_t kMaxValues = size_t{1} << 22;  // numbers written, all tensors together

// --- argument codes: one character (or '?' and one) per C++ type
template <class T, class = void>
struct Code;
template <> struct Code<Tensor> { static constexpr const char* c = "T"; };
template <> struct Code<Scalar> { static constexpr const char* c = "S"; };
template <> struct Code<IntArrayRef> { static constexpr const char* c = "L"; };
template <> struct Code<std::vector<int64_t>> { static constexpr const char* c = "L"; };
template <> struct Code<TensorList> { static constexpr const char* c = "V"; };
template <> struct Code<std::vector<Tensor>> { static constexpr const char* c = "V"; };
template <> struct Code<bool> { static constexpr const char* c = "b"; };
template <> struct Code<int64_t> { static constexpr const char* c = "i"; };
template <> struct Code<int> { static constexpr const char* c = "i"; };
template <> struct Code<double> { static constexpr const char* c = "d"; };
template <> struct Code<ScalarType> { static constexpr const char* c = "y"; };
template <> struct Code<Reduction> { static constexpr const char* c = "r"; };
template <> struct Code<std::optional<Tensor>> { static constexpr const char* c = "?T"; };
template <> struct Code<std::optional<Scalar>> { static constexpr const char* c = "?S"; };
template <> struct Code<std::optional<bool>> { static constexpr const char* c = "?b"; };
template <> struct Code<std::optional<int64_t>> { static constexpr const char* c = "?i"; };
template <> struct Code<std::optional<ScalarType>> { static constexpr const char* c = "?y"; };
template <> struct Code<std::optional<TensorList>> { static constexpr const char* c = "?V"; };
template <> struct Code<TensorOptions> { static constexpr const char* c = "o"; };
template <> struct Code<ArrayRef<indexing::TensorIndex>> { static constexpr const char* c = "I"; };
template <class... A>
std::string signature() {
  std::string s;
  (s.append(Code<std::decay_t<A>>::c), ...);
  return s;
}

// One event as it is written: a JSON object, built in order.
class Event {
 public:
  explicit Event(const char* kind);
  Event& key(const char* k);
  Event& text(const std::string& s);
  Event& number(double v);
  Event& integer(int64_t v);
  Event& boolean(bool b);
  Event& null();
  Event& tensor(const Tensor& t);  // its id (announcing a tensor the tape has not seen), or null
  Event& open_list();
  Event& close_list();
  // A tensor's description with its values (factories, tensors from outside the tape).
  Event& contents(const Tensor& t);
  void write();  // to the sink, after any grad slot the program rewrote

  void arg(const Tensor& t) { tensor(t); }
  void arg(const Scalar& s);
  void arg(IntArrayRef l);
  void arg(const std::vector<int64_t>& l) { arg(IntArrayRef(l)); }
  void arg(TensorList l);
  void arg(const std::vector<Tensor>& l) { arg(TensorList(l)); }
  void arg(bool b) { boolean(b); }
  void arg(int64_t i) { integer(i); }
  void arg(int i) { integer(i); }
  void arg(double d) { number(d); }
  void arg(ScalarType t);
  void arg(Reduction r);
  void arg(const TensorOptions& o);             // [dtype or null, requires_grad]: the replay runs on the CPU
  void arg(ArrayRef<indexing::TensorIndex> idx);  // each ["i", n], ["s", start, stop, step], ["n"], ["e"], ["b", v], ["t", id]
  template <class T>
  void arg(const std::optional<T>& o) {
    if (o) arg(*o);
    else null();
  }
  // What an op returned: a new tensor gets its id here (no description:
  // the replay makes its own), one the tape knows keeps its id.
  Event& output(const Tensor& t);
  void result(const Tensor& t) { output(t); }
  void result(const std::vector<Tensor>& v);
  void result(const std::tuple<Tensor, Tensor>& p);
  void result(bool b) { boolean(b); }
  void result(const Scalar& s) { arg(s); }
  void result(double d) { number(d); }

 private:
  void separate();
  std::string s_;
  bool first_ = true;
};

// Inside a taped call: ops it calls are its own.
struct Inside {
  Inside() { detail::g_depth.fetch_add(1, std::memory_order_relaxed); }
  ~Inside() { detail::g_depth.fetch_sub(1, std::memory_order_relaxed); }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

bool grad_enabled();

// The event "node": the program's own code reading the backward graph, which
// the replay follows on its own graph. Each node gets a number when first
// seen: "grad_fn" (a tensor's, `of` its id), "edge" (next edge `at` of node
// `from`), "name" (its name() was read).
void read_grad_fn(const Tensor& of, const autograd::Node* node);
void read_edge(const autograd::Node* from, size_t at, const autograd::Node* node);
void read_name(const autograd::Node* node);

// Notes an op's grad slot handed to the program (mutable_grad): what it holds
// is compared before every later taped call, and a change the program made
// in between (not one the calls made) is written as set_grad.
void watch_grad_slot(const Tensor& owner);
void slots_before();
void slots_after();

// The event "op": name, signature, arguments, grad mode, then the result or
// the error.
// The taped path is kept out of line and cold: every op carries one, and
// inlined it made the untaped ops (every run but a graded one) larger and
// slower.
template <class F, class... A>
[[gnu::noinline, gnu::cold]] decltype(auto) record(const char* name, F&& call, const A&... args) {
  Inside inside;
  slots_before();
  struct After {
    ~After() { slots_after(); }
  } after;
  Event e("op");
  e.key("op").text(name).key("sig").text(signature<A...>());
  if (!grad_enabled()) e.key("no_grad").boolean(true);
  e.key("args").open_list();
  (e.arg(args), ...);
  e.close_list();
  using R = decltype(call());
  try {
    if constexpr (std::is_void_v<R>) {
      call();
      e.write();
    } else {
      R r = call();
      e.key("out");
      e.result(r);
      e.write();
      return static_cast<R>(r);
    }
  } catch (const std::exception& ex) {
    e.key("throws").text(ex.what());
    e.write();
    throw;
  }
}

// The event "new": a factory's tensor with its values.
template <class F>
[[gnu::noinline, gnu::cold]] Tensor record_new(const char* name, F&& call) {
  Inside inside;
  slots_before();
  Tensor t = call();
  Event e("new");
  e.key("op").text(name).key("id").output(t);
  e.contents(t);
  e.write();
  return t;
}

// The event "refill": an in-place op that draws random numbers (uniform_,
// normal_, bernoulli_), written with the values it left, since a replay
// cannot draw the same ones.
template <class F>
[[gnu::noinline, gnu::cold]] Tensor& record_refill(const char* name, F&& call, const Tensor& self) {
  Inside inside;
  slots_before();
  Event e("refill");
  e.key("op").text(name).key("id").tensor(self);
  if (!grad_enabled()) e.key("no_grad").boolean(true);
  try {
    Tensor& r = call();
    e.contents(r);
    e.write();
    return r;
  } catch (const std::exception& ex) {
    e.key("throws").text(ex.what());
    e.write();
    throw;
  }
}

// The lab's records (harness): a name given to a tensor, a snapshot, a caught
// error, a number. `t` may be undefined; `text` is the label's message or "".
void lab_record(const char* kind, const std::string& label, const Tensor* t, const std::string& text = "",
                std::optional<double> value = std::nullopt);

}  // namespace gradlab::tape
#pragma GCC visibility pop

#ifdef GRADLAB_NO_TAPE
// An engine with no tape at all (the CMake option GRADLAB_NO_TAPE, for
// bench/run --tape-cost only): what the switched-off tape costs is measured
// against it. Nothing graded is built this way.
#define GRADLAB_TAPE(name, call, ...)
#define GRADLAB_TAPE_REFILL(name, call, self)
#define GRADLAB_TAPE_NEW(name, call)
#else
#define GRADLAB_TAPE(name, call, ...) \
  if (::gradlab::tape::on()) [[unlikely]] return ::gradlab::tape::record(name, [&]() -> decltype(auto) { return call; }, __VA_ARGS__)
#define GRADLAB_TAPE_REFILL(name, call, self) \
  if (::gradlab::tape::on()) [[unlikely]] return ::gradlab::tape::record_refill(name, [&]() -> Tensor& { return call; }, self)
#define GRADLAB_TAPE_NEW(name, call) \
  if (::gradlab::tape::on()) [[unlikely]] return ::gradlab::tape::record_new(name, [&]() -> Tensor { return call; })
#endif
