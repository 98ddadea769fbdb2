// The op tape's writer (see gradlab/tape.h): ids, the JSON text of events,
// the bounds, and the watch on grad slots handed to the program.
#include "gradlab/tape.h"

#include <cmath>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <random>

#include "autograd/modes.h"
#include "gradlab/autograd.h"
#include "gradlab/ops.h"

namespace gradlab::tape {
namespace detail {
Sink* g_sink = nullptr;
std::atomic<int> g_depth{0};
size_t g_storage_limit = SIZE_MAX;
}  // namespace detail

namespace {
struct Tape {
  std::mutex mu;
  uint64_t next_id = 1;
  size_t events = 0, values = 0;
  bool overflowed = false;
  bool checking_slots = false;
  Chain chain;     // masked: chain ^ mask
  Chain mask;
  // Grad slots the program was handed (owner, what the slot held then).
  std::vector<std::pair<Tensor, TensorImpl*>> slots;
  // The grad slot of every tensor that can hold a gradient (a leaf that
  // requires grad, or one that retains it), watched without keeping the
  // tensor alive: a gradient written through impl->grad, a slot no
  // mutable_grad() ever handed out, is written as set_grad too. Each entry
  // goes with its tensor (forget).
  std::vector<std::pair<const TensorImpl*, TensorImpl*>> held;
  std::unordered_map<const TensorImpl*, size_t> held_at;
  // Which tensor each number was given to, and each tensor's number, kept
  // here rather than believed from TensorImpl::tape_id alone: that field is
  // the program's to write, and a tensor that claimed another's number
  // would have the replay redo an op on the wrong tensor.
  std::vector<const TensorImpl*> owner{nullptr};
  std::unordered_map<const TensorImpl*, uint64_t> number_of;
  bool forged = false;  // a tensor came with a number that is not its own
  // The numbers of the nodes the program read (read_grad_fn and the rest).
  // A node that dies and whose address comes back is announced again by the
  // read that reaches it, which the replay follows in order.
  std::unordered_map<const autograd::Node*, int64_t> node_number;
};
Tape& tape() {
  // Never destroyed: tensors that outlive static destruction still tell it
  // they are going (TensorImpl's destructor).
  static Tape* t = new Tape;
  return *t;
}

// The tensor's number on the tape, given now if it has none (then *fresh is
// set), and held to the tape's own record of whose number it is.
uint64_t tape_number(const Tensor& t, bool* fresh = nullptr) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  uint64_t& id = impl->tape_id;
  Tape& tp = tape();
  std::lock_guard<std::mutex> lock(tp.mu);
  if (fresh) *fresh = false;
  if (id == 0) {
    if (auto known = tp.number_of.find(impl); known != tp.number_of.end()) {
      tp.forged = true;  // its number was wiped, to announce it again as it is now
      return id = known->second;
    }
    id = tp.next_id++;
    tp.owner.push_back(impl);
    tp.number_of[impl] = id;
    if (fresh) *fresh = true;
  } else if (id >= tp.owner.size() || tp.owner[id] != impl) {
    tp.forged = true;  // another tensor's number, or one never given
  }
  return id;
}

void append_number(std::string& s, double v, bool force_float) {
  if (std::isnan(v)) {
    s += "\"nan\"";
    return;
  }
  if (std::isinf(v)) {
    s += v > 0 ? "\"inf\"" : "\"-inf\"";
    return;
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  s.append(buf, static_cast<size_t>(n));
  // A Scalar's kind is part of the call (2 and 2.0 promote differently).
  if (force_float && std::string_view(buf, static_cast<size_t>(n)).find_first_of(".e") == std::string_view::npos)
    s += ".0";
}

void check_slots();
void watch_if_grad_capable(const Tensor& t, bool given);
}  // namespace

bool grad_enabled() { return !::gradlab::detail::t_modes.grad_disabled; }

std::string Chain::hex() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  return buf;
}

namespace {
void chain_line(const std::string& line) {
  Tape& t = tape();
  Chain c;
  c.a = t.chain.a ^ t.mask.a, c.b = t.chain.b ^ t.mask.b;
  c.add(line);
  c.add("\n");
  t.chain.a = c.a ^ t.mask.a, t.chain.b = c.b ^ t.mask.b;
}
}  // namespace

std::string chain_digest() {
  Tape& t = tape();
  Chain c;
  c.a = t.chain.a ^ t.mask.a, c.b = t.chain.b ^ t.mask.b;
  return c.hex();
}

void start(Sink* sink, const std::string& key) {
  Tape& t = tape();
  std::random_device rd;
  t.mask.a = (uint64_t{rd()} << 32) ^ rd(), t.mask.b = (uint64_t{rd()} << 32) ^ rd();
  const Chain seed(key);
  t.chain.a = seed.a ^ t.mask.a, t.chain.b = seed.b ^ t.mask.b;
  t.events = t.values = 0;
  t.overflowed = false;
  t.forged = false;
  t.slots.clear();
  t.held.clear();
  t.held_at.clear();
  t.node_number.clear();
  detail::g_sink = sink;
}

namespace detail {
void forget(const TensorImpl* impl, uint64_t id) {
  Tape& t = tape();
  std::lock_guard<std::mutex> lock(t.mu);
  if (id != 0 && id < t.owner.size() && t.owner[id] == impl) t.owner[id] = nullptr;
  t.number_of.erase(impl);
  if (auto at = t.held_at.find(impl); at != t.held_at.end()) {
    const size_t k = at->second;
    t.held_at.erase(at);
    if (k + 1 != t.held.size()) {
      t.held[k] = t.held.back();
      t.held_at[t.held[k].first] = k;
    }
    t.held.pop_back();
  }
}
}  // namespace detail

void stop() {
  if (!detail::g_sink) return;
  {
    Inside inside;
    check_slots();
  }
  detail::g_sink = nullptr;
  tape().slots.clear();
  tape().held.clear();
  tape().held_at.clear();
}

namespace {

int64_t node_number(const autograd::Node* n) {
  Tape& t = tape();
  std::lock_guard<std::mutex> lock(t.mu);
  auto [it, fresh] = t.node_number.emplace(n, static_cast<int64_t>(t.node_number.size()) + 1);
  return it->second;
}

}  // namespace

void read_grad_fn(const Tensor& of, const autograd::Node* node) {
  Inside inside;
  Event e("node");
  e.key("how").text("grad_fn").key("id").integer(node_number(node)).key("of").tensor(of);
  e.write();
}

void read_edge(const autograd::Node* from, size_t at, const autograd::Node* node) {
  Inside inside;
  Event e("node");
  e.key("how").text("edge").key("id").integer(node_number(node)).key("from").integer(node_number(from));
  e.key("at").integer(static_cast<int64_t>(at));
  e.write();
}

void read_name(const autograd::Node* node) {
  Inside inside;
  Event e("node");
  e.key("how").text("name").key("id").integer(node_number(node));
  e.write();
}

Event::Event(const char* kind) : s_("{\"e\":\"") {
  s_ += kind;
  s_ += '"';
  first_ = false;
}

void Event::separate() {
  if (!first_ && s_.back() != '[' && s_.back() != ':') s_ += ',';
  first_ = false;
}

Event& Event::key(const char* k) {
  s_ += ",\"";
  s_ += k;
  s_ += "\":";
  return *this;
}

namespace {
// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
size_t utf8_length(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = at(i);
  const auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return at(k) >= lo && at(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}
}  // namespace

// A JSON string. Text from the program (an exception's message) may be any
// bytes; one that is not UTF-8 is written as U+FFFD, as the harness's
// result writes it, so that the line still parses and the two agree.
Event& Event::text(const std::string& str) {
  separate();
  s_ += '"';
  for (size_t i = 0; i < str.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(str[i]);
    if (c >= 0x80) {
      const size_t n = utf8_length(str, i);
      if (n == 0) {
        s_ += "\\ufffd";
      } else {
        s_.append(str, i, n);
        i += n - 1;
      }
      continue;
    }
    if (c == '"' || c == '\\') {
      s_ += '\\';
      s_ += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      s_ += buf;
    } else {
      s_ += static_cast<char>(c);
    }
  }
  s_ += '"';
  return *this;
}

Event& Event::number(double v) {
  separate();
  append_number(s_, v, true);
  return *this;
}

Event& Event::integer(int64_t v) {
  separate();
  s_ += std::to_string(v);
  return *this;
}

Event& Event::boolean(bool b) {
  separate();
  s_ += b ? "true" : "false";
  return *this;
}

Event& Event::null() {
  separate();
  s_ += "null";
  return *this;
}

Event& Event::open_list() {
  separate();
  s_ += '[';
  return *this;
}

Event& Event::close_list() {
  s_ += ']';
  return *this;
}

Event& Event::tensor(const Tensor& t) {
  if (!t.defined()) return null();
  bool fresh = false;
  const uint64_t id = tape_number(t, &fresh);
  if (fresh) {
    // Made where the tape does not look (an op not taped yet, the engine's
    // own work): written with its values, and the replay takes it as given.
    Event g("given");
    g.key("id").integer(static_cast<int64_t>(id));
    g.contents(t);
    g.write();
  }
  watch_if_grad_capable(t, fresh);
  return integer(static_cast<int64_t>(id));
}

Event& Event::output(const Tensor& t) {
  if (!t.defined()) return null();
  const uint64_t id = tape_number(t);
  watch_if_grad_capable(t, false);
  return integer(static_cast<int64_t>(id));
}

Event& Event::contents(const Tensor& t) {
  if (!t.defined()) return *this;
  key("shape").open_list();
  for (int64_t d : t.sizes()) integer(d);
  close_list();
  key("dtype").text(c10_name(t.scalar_type()));
  key("requires_grad").boolean(t.requires_grad());
  key("leaf").boolean(t.is_leaf());
  key("grad_fn");
  if (t.grad_fn()) text(t.grad_fn()->name());
  else null();
  key("version").integer(t.unsafeGetTensorImpl()->version());
  Tape& tp = tape();
  key("values");
  if (tp.values + static_cast<size_t>(t.numel()) > kMaxValues) {
    tp.overflowed = true;
    return null();
  }
  tp.values += static_cast<size_t>(t.numel());
  Tensor c = t.detach().to(Device(DeviceType::CPU), ScalarType::Double).contiguous();
  const double* p = c.data_ptr<double>();
  open_list();
  for (int64_t i = 0; i < c.numel(); ++i) {
    separate();
    append_number(s_, p[i], false);
  }
  return close_list();
}

void Event::write() {
  s_ += '}';
  Tape& t = tape();
  Sink* sink = detail::g_sink;
  if (!sink) return;
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.forged) {  // the last line: what follows could name any tensor
    const std::string forged = "{\"e\":\"forged_id\"}";
    chain_line(forged);
    sink->write(forged);
    detail::g_sink = nullptr;
    return;
  }
  if (t.overflowed || ++t.events > kMaxEvents) {
    const std::string overflow = "{\"e\":\"overflow\"}";
    chain_line(overflow);
    sink->write(overflow);
    detail::g_sink = nullptr;
    return;
  }
  chain_line(s_);
  sink->write(s_);
}

void Event::arg(const Scalar& s) {
  separate();
  if (s.isBoolean()) s_ += s.toBool() ? "true" : "false";
  else if (s.isIntegral()) s_ += std::to_string(s.toLong());
  else append_number(s_, s.toDouble(), true);
}

void Event::arg(IntArrayRef l) {
  open_list();
  for (int64_t v : l) integer(v);
  close_list();
}

void Event::arg(TensorList l) {
  open_list();
  for (const Tensor& t : l) tensor(t);
  close_list();
}

void Event::arg(ScalarType t) { text(c10_name(t)); }

void Event::arg(const TensorOptions& o) {
  open_list();
  if (o.has_dtype()) text(c10_name(o.dtype()));
  else null();
  boolean(o.requires_grad());
  close_list();
}

void Event::arg(ArrayRef<indexing::TensorIndex> idx) {
  using K = indexing::TensorIndex::Kind;
  auto maybe = [this](const std::optional<int64_t>& v) {
    if (v) integer(*v);
    else null();
  };
  open_list();
  for (const auto& i : idx) {
    open_list();
    switch (i.kind()) {
      case K::Int: text("i").integer(i.integer()); break;
      case K::Slice:
        text("s");
        maybe(i.slice().start);
        maybe(i.slice().stop);
        maybe(i.slice().step);
        break;
      case K::None: text("n"); break;
      case K::Ellipsis: text("e"); break;
      case K::Bool: text("b").boolean(i.integer() != 0); break;
      case K::Tensor: text("t").tensor(i.tensor()); break;
    }
    close_list();
  }
  close_list();
}
void Event::arg(Reduction r) { integer(static_cast<int64_t>(r)); }

void Event::result(const std::vector<Tensor>& v) {
  open_list();
  for (const Tensor& t : v) output(t);
  close_list();
}

void Event::result(const std::tuple<Tensor, Tensor>& p) {
  open_list();
  output(std::get<0>(p));
  output(std::get<1>(p));
  close_list();
}

void watch_grad_slot(const Tensor& owner) {
  if (!detail::g_sink || !owner.defined()) return;
  Tape& t = tape();
  TensorImpl* now = owner.unsafeGetTensorImpl()->grad.get();
  for (auto& [o, held] : t.slots)
    if (o.is_same(owner)) {
      held = now;
      return;
    }
  t.slots.emplace_back(owner, now);
}

void slots_before() { check_slots(); }

void slots_after() {
  Tape& t = tape();
  for (auto& [owner, held] : t.slots) held = owner.unsafeGetTensorImpl()->grad.get();
  std::lock_guard<std::mutex> lock(t.mu);
  for (auto& [impl, held] : t.held) held = impl->grad.get();
}

namespace {
// A slot that holds another tensor than it did after the last taped call:
// the program assigned to mutable_grad() in between. Written before the
// next call's event.
void write_set_grad(const Tensor& owner) {
  Event e("set_grad");
  e.key("of").tensor(owner).key("to");
  if (owner.unsafeGetTensorImpl()->grad) e.tensor(Tensor(owner.unsafeGetTensorImpl()->grad));
  else e.null();
  e.write();
}

void check_slots() {
  Tape& t = tape();
  if ((t.slots.empty() && t.held.empty()) || t.checking_slots) return;
  t.checking_slots = true;
  for (auto& [owner, held] : t.slots) {
    TensorImpl* now = owner.unsafeGetTensorImpl()->grad.get();
    if (now == held) continue;
    held = now;
    write_set_grad(owner);
  }
  // The watched tensors whose slot changed, held for the writing (which
  // numbers tensors, under the same lock).
  std::vector<Tensor> changed;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    for (auto& [impl, held] : t.held) {
      if (impl->grad.get() == held) continue;
      held = impl->grad.get();
      changed.emplace_back(IntrusivePtr<TensorImpl>(const_cast<TensorImpl*>(impl)));
    }
  }
  for (const Tensor& owner : changed) write_set_grad(owner);
  t.checking_slots = false;
}

// A tensor the tape writes that can hold a gradient joins the watched ones.
// First seen as given (made where the tape does not look) with a gradient
// already, that gradient was set by hand.
constexpr size_t kMaxHeldSlots = size_t{1} << 16;
void watch_if_grad_capable(const Tensor& t, bool given) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (!t.requires_grad() || !(t.is_leaf() || impl->retains_grad)) return;
  Tape& tp = tape();
  {
    std::lock_guard<std::mutex> lock(tp.mu);
    if (tp.held_at.count(impl)) return;
    if (tp.held.size() >= kMaxHeldSlots) {
      tp.overflowed = true;  // more than an exercise holds: the tape says it is incomplete
      return;
    }
    tp.held_at[impl] = tp.held.size();
    tp.held.emplace_back(impl, impl->grad.get());
  }
  if (given && impl->grad) write_set_grad(t);
}
}  // namespace

void lab_record(const char* kind, const std::string& label, const Tensor* t, const std::string& text,
                std::optional<double> value) {
  if (!detail::g_sink) return;
  Inside inside;
  check_slots();
  Event e("lab");
  e.key("kind").text(kind).key("label").text(label);
  if (t) {
    e.key("id");
    e.tensor(*t);
  }
  if (!text.empty()) e.key("message").text(text);
  if (value) e.key("value").number(*value);
  e.write();
}

}  // namespace gradlab::tape
