#include "judge/replay_ops.h"

#include <gradlab/tape.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace grader::replay {
namespace {

using torch::Tensor;
using gradlab::IntArrayRef;
using gradlab::Reduction;
using gradlab::Scalar;
using gradlab::ScalarType;
using gradlab::TensorList;

[[noreturn]] void bad(const json& v, const char* expected) {
  throw std::runtime_error(std::string("expected ") + expected + ", found " + v.dump().substr(0, 80));
}

double real(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v == "nan") return NAN;
  if (v == "inf") return INFINITY;
  if (v == "-inf") return -INFINITY;
  bad(v, "a number");
}

ScalarType dtype_named(const json& v) {
  if (!v.is_string()) bad(v, "a dtype");
  for (ScalarType t : {ScalarType::Bool, ScalarType::Int, ScalarType::Long, ScalarType::Float, ScalarType::Double})
    if (v.get<std::string>() == gradlab::c10_name(t)) return t;
  bad(v, "a dtype");
}

// An argument decoded into what holds it for the call: a list into a vector
// the IntArrayRef points at, and so on.
template <class P>
struct Hold;
template <>
struct Hold<Tensor> {
  Tensor v;
  Hold(const json& j, Tensors& ts) : v(j.is_null() ? Tensor() : ts.at(j)) {}
  const Tensor& get() const { return v; }
};
template <>
struct Hold<Scalar> {
  Scalar v;
  Hold(const json& j, Tensors&) : v(of(j)) {}
  static Scalar of(const json& j) {
    if (j.is_boolean()) return Scalar(j.get<bool>());
    if (j.is_number_integer()) return Scalar(j.get<int64_t>());
    return Scalar(real(j));
  }
  Scalar get() const { return v; }
};
template <>
struct Hold<IntArrayRef> {
  std::vector<int64_t> v;
  Hold(const json& j, Tensors&) {
    if (!j.is_array() || j.size() > 64) bad(j, "a list of at most 64 integers");
    for (const auto& e : j) {
      if (!e.is_number_integer()) bad(e, "an integer");
      v.push_back(e.get<int64_t>());
    }
  }
  IntArrayRef get() const { return v; }
};
template <>
struct Hold<std::vector<Tensor>> {
  std::vector<Tensor> v;
  Hold(const json& j, Tensors& ts) {
    if (!j.is_array()) bad(j, "a list of tensors");
    for (const auto& e : j) v.push_back(e.is_null() ? Tensor() : ts.at(e));
  }
  const std::vector<Tensor>& get() const { return v; }
};
template <>
struct Hold<TensorList> : Hold<std::vector<Tensor>> {
  using Hold<std::vector<Tensor>>::Hold;
  TensorList get() const { return v; }
};
template <>
struct Hold<gradlab::TensorOptions> {
  gradlab::TensorOptions v;
  Hold(const json& j, Tensors&) {
    if (!j.is_array() || j.size() != 2) bad(j, "tensor options [dtype, requires_grad]");
    if (!j[0].is_null()) v = v.dtype(dtype_named(j[0]));
    if (!j[1].is_boolean()) bad(j[1], "true or false");
    v = v.requires_grad(j[1].get<bool>());
  }
  const gradlab::TensorOptions& get() const { return v; }
};
template <>
struct Hold<gradlab::ArrayRef<gradlab::indexing::TensorIndex>> {
  std::vector<gradlab::indexing::TensorIndex> v;
  Hold(const json& j, Tensors& ts) {
    using gradlab::indexing::TensorIndex;
    if (!j.is_array() || j.size() > 64) bad(j, "a list of at most 64 indices");
    auto bound = [](const json& b) -> std::optional<int64_t> {
      if (b.is_null()) return std::nullopt;
      if (!b.is_number_integer()) bad(b, "an integer or null");
      return b.get<int64_t>();
    };
    for (const auto& i : j) {
      if (!i.is_array() || i.empty() || !i[0].is_string()) bad(i, "an index");
      const std::string k = i[0];
      if (k == "i" && i.size() == 2 && i[1].is_number_integer()) v.emplace_back(i[1].get<int64_t>());
      else if (k == "s" && i.size() == 4) v.emplace_back(gradlab::indexing::Slice(bound(i[1]), bound(i[2]), bound(i[3])));
      else if (k == "n" && i.size() == 1) v.emplace_back(std::nullopt);
      else if (k == "e" && i.size() == 1) v.emplace_back(gradlab::indexing::Ellipsis);
      else if (k == "b" && i.size() == 2 && i[1].is_boolean()) v.emplace_back(i[1].get<bool>());
      else if (k == "t" && i.size() == 2) v.emplace_back(ts.at(i[1]));
      else bad(i, "an index");
    }
  }
  gradlab::ArrayRef<gradlab::indexing::TensorIndex> get() const { return gradlab::ArrayRef<gradlab::indexing::TensorIndex>(v.data(), v.size()); }
};

template <class T>
T plain(const json& j);
template <>
bool plain<bool>(const json& j) {
  if (!j.is_boolean()) bad(j, "true or false");
  return j.get<bool>();
}
template <>
int64_t plain<int64_t>(const json& j) {
  if (!j.is_number_integer()) bad(j, "an integer");
  return j.get<int64_t>();
}
template <>
double plain<double>(const json& j) { return real(j); }
template <>
ScalarType plain<ScalarType>(const json& j) { return dtype_named(j); }
template <>
Reduction plain<Reduction>(const json& j) {
  const int64_t r = plain<int64_t>(j);
  if (r < 0 || r > 2) bad(j, "a reduction (0, 1 or 2)");
  return static_cast<Reduction>(r);
}
template <class T>
  requires(std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
           std::is_same_v<T, ScalarType> || std::is_same_v<T, Reduction>)
struct Hold<T> {
  T v;
  Hold(const json& j, Tensors&) : v(plain<T>(j)) {}
  T get() const { return v; }
};
template <class T>
struct Hold<std::optional<T>> {
  std::optional<Hold<T>> h;
  Hold(const json& j, Tensors& ts) {
    if (!j.is_null()) h.emplace(j, ts);
  }
  auto get() const -> std::optional<std::decay_t<decltype(h->get())>> {
    if (!h) return std::nullopt;
    return h->get();
  }
};

Outcome outcome_of(const Tensor& t) { return {{t}, nullptr}; }
Outcome outcome_of(const std::tuple<Tensor, Tensor>& p) { return {{std::get<0>(p), std::get<1>(p)}, nullptr}; }
Outcome outcome_of(const std::vector<Tensor>& v) { return {v, nullptr}; }
Outcome outcome_of(const Scalar& s) {
  if (s.isBoolean()) return {{}, s.toBool()};
  if (s.isIntegral()) return {{}, s.toLong()};
  const double d = s.toDouble();
  return {{}, std::isfinite(d) ? json(d) : json(std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf")};
}

template <class R, class... P, size_t... I>
Outcome call(R (*f)(P...), const json& args, Tensors& ts, std::index_sequence<I...>) {
  std::tuple<Hold<std::decay_t<P>>...> held{Hold<std::decay_t<P>>(args[I], ts)...};
  if constexpr (std::is_void_v<R>) {
    f(std::get<I>(held).get()...);
    return {};
  } else {
    return outcome_of(f(std::get<I>(held).get()...));
  }
}

class Table {
 public:
  template <class R, class... P>
  void add(const std::string& name, R (*f)(P...)) {
    const std::string key = name + "(" + gradlab::tape::signature<P...>() + ")";
    map_[key] = [f](const json& args, Tensors& ts) {
      if (!args.is_array() || args.size() != sizeof...(P))
        throw std::runtime_error("expected " + std::to_string(sizeof...(P)) + " arguments");
      return call(f, args, ts, std::index_sequence_for<P...>{});
    };
  }
  std::unordered_map<std::string, Invoker> map_;
};

using T = const Tensor&;
using O = std::optional<ScalarType>;

void binary(Table& t) {
  t.add("add", +[](T a, T b, Scalar s) { return gradlab::add(a, b, s); });
  t.add("add", +[](T a, Scalar b, Scalar s) { return gradlab::add(a, b, s); });
  t.add("sub", +[](T a, T b, Scalar s) { return gradlab::sub(a, b, s); });
  t.add("sub", +[](T a, Scalar b, Scalar s) { return gradlab::sub(a, b, s); });
  t.add("rsub", +[](T a, T b, Scalar s) { return gradlab::rsub(a, b, s); });
  t.add("rsub", +[](T a, Scalar b, Scalar s) { return gradlab::rsub(a, b, s); });
  t.add("addcmul", +[](T a, T b, T c, Scalar v) { return gradlab::addcmul(a, b, c, v); });
  t.add("addcdiv", +[](T a, T b, T c, Scalar v) { return gradlab::addcdiv(a, b, c, v); });
  t.add("addcmul_", +[](T a, T b, T c, Scalar v) -> Tensor { return a.addcmul_(b, c, v); });
  t.add("addcdiv_", +[](T a, T b, T c, Scalar v) -> Tensor { return a.addcdiv_(b, c, v); });
  t.add("mul", +[](T a, T b) { return gradlab::mul(a, b); });
  t.add("mul", +[](T a, Scalar b) { return gradlab::mul(a, b); });
  t.add("div", +[](T a, T b) { return gradlab::div(a, b); });
  t.add("div", +[](T a, Scalar b) { return gradlab::div(a, b); });
  t.add("pow", +[](T a, T b) { return gradlab::pow(a, b); });
  t.add("pow", +[](T a, Scalar b) { return gradlab::pow(a, b); });
  t.add("pow", +[](Scalar a, T b) { return gradlab::pow(a, b); });
  t.add("maximum", +[](T a, T b) { return gradlab::maximum(a, b); });
  t.add("minimum", +[](T a, T b) { return gradlab::minimum(a, b); });
  t.add("where", +[](T c, T a, T b) { return gradlab::where(c, a, b); });
  t.add("masked_fill", +[](T s, T m, Scalar v) { return s.masked_fill(m, v); });
  t.add("masked_fill", +[](T s, T m, T v) { return s.masked_fill(m, v); });
  t.add("masked_fill_", +[](T s, T m, Scalar v) -> Tensor { return s.masked_fill_(m, v); });
  t.add("masked_fill_", +[](T s, T m, T v) -> Tensor { return s.masked_fill_(m, v); });
  t.add("add_", +[](T s, T o, Scalar a) -> Tensor { return s.add_(o, a); });
  t.add("add_", +[](T s, Scalar o, Scalar a) -> Tensor { return s.add_(o, a); });
  t.add("sub_", +[](T s, T o, Scalar a) -> Tensor { return s.sub_(o, a); });
  t.add("sub_", +[](T s, Scalar o, Scalar a) -> Tensor { return s.sub_(o, a); });
  t.add("mul_", +[](T s, T o) -> Tensor { return s.mul_(o); });
  t.add("mul_", +[](T s, Scalar o) -> Tensor { return s.mul_(o); });
  t.add("div_", +[](T s, T o) -> Tensor { return s.div_(o); });
  t.add("div_", +[](T s, Scalar o) -> Tensor { return s.div_(o); });
  t.add("pow_", +[](T s, Scalar e) -> Tensor { return s.pow_(e); });
  using OS = std::optional<Scalar>;
  t.add("clamp", +[](T a, OS lo, OS hi) { return gradlab::clamp(a, lo, hi); });
  t.add("clamp_min", +[](T a, Scalar lo) { return gradlab::clamp_min(a, lo); });
  t.add("clamp_max", +[](T a, Scalar hi) { return gradlab::clamp_max(a, hi); });
  t.add("clamp_", +[](T s, OS lo, OS hi) -> Tensor { return s.clamp_(lo, hi); });
  t.add("clamp_min_", +[](T s, Scalar lo) -> Tensor { return s.clamp_min_(lo); });
  t.add("clamp_max_", +[](T s, Scalar hi) -> Tensor { return s.clamp_max_(hi); });
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  t.add(#name, +[](T a) { return a.name(); });                                                   \
  GRADLAB_WHEN_##inplace(t.add(#name "_", +[](T a) -> Tensor { return a.name##_(); });)
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
}

void reductions(Table& t) {
  using L = IntArrayRef;
  t.add("sum", +[](T a, O d) { return gradlab::sum(a, d); });
  t.add("sum", +[](T a, L dims, bool k, O d) { return gradlab::sum(a, dims, k, d); });
  t.add("mean", +[](T a, O d) { return gradlab::mean(a, d); });
  t.add("mean", +[](T a, L dims, bool k, O d) { return gradlab::mean(a, dims, k, d); });
  t.add("max", +[](T a) { return gradlab::max(a); });
  t.add("min", +[](T a) { return gradlab::min(a); });
  t.add("max", +[](T a, int64_t d, bool k) { return gradlab::max(a, d, k); });
  t.add("min", +[](T a, int64_t d, bool k) { return gradlab::min(a, d, k); });
  t.add("argmax", +[](T a, std::optional<int64_t> d, bool k) { return gradlab::argmax(a, d, k); });
  t.add("argmin", +[](T a, std::optional<int64_t> d, bool k) { return gradlab::argmin(a, d, k); });
  t.add("softmax", +[](T a, int64_t d, O dt) { return gradlab::softmax(a, d, dt); });
  t.add("log_softmax", +[](T a, int64_t d, O dt) { return gradlab::log_softmax(a, d, dt); });
  t.add("logsumexp", +[](T a, L dims, bool k) { return gradlab::logsumexp(a, dims, k); });
  t.add("mm", +[](T a, T b) { return gradlab::mm(a, b); });
  t.add("mv", +[](T a, T b) { return gradlab::mv(a, b); });
  t.add("dot", +[](T a, T b) { return gradlab::dot(a, b); });
  t.add("bmm", +[](T a, T b) { return gradlab::bmm(a, b); });
  t.add("matmul", +[](T a, T b) { return gradlab::matmul(a, b); });
  t.add("addmm", +[](T c, T a, T b, Scalar be, Scalar al) { return gradlab::addmm(c, a, b, be, al); });
  t.add("outer", +[](T a, T b) { return gradlab::outer(a, b); });
  t.add("mse_loss", +[](T a, T b, Reduction r) { return gradlab::mse_loss(a, b, r); });
  t.add("l1_loss", +[](T a, T b, Reduction r) { return gradlab::l1_loss(a, b, r); });
  t.add("leaky_relu", +[](T a, Scalar s) { return gradlab::leaky_relu(a, s); });
}

void shapes(Table& t) {
  using L = IntArrayRef;
  using OI = std::optional<int64_t>;
  t.add("view", +[](T a, L s) { return a.view(s); });
  t.add("reshape", +[](T a, L s) { return a.reshape(s); });
  t.add("flatten", +[](T a, int64_t s, int64_t e) { return a.flatten(s, e); });
  t.add("transpose", +[](T a, int64_t x, int64_t y) { return a.transpose(x, y); });
  t.add("t", +[](T a) { return a.t(); });
  t.add("permute", +[](T a, L d) { return a.permute(d); });
  t.add("squeeze", +[](T a) { return a.squeeze(); });
  t.add("squeeze", +[](T a, int64_t d) { return a.squeeze(d); });
  t.add("unsqueeze", +[](T a, int64_t d) { return a.unsqueeze(d); });
  t.add("repeat", +[](T a, L r) { return a.repeat(r); });
  t.add("select", +[](T a, int64_t d, int64_t i) { return a.select(d, i); });
  t.add("slice", +[](T a, int64_t d, OI s, OI e, int64_t st) { return a.slice(d, s, e, st); });
  t.add("narrow", +[](T a, int64_t d, int64_t s, int64_t n) { return a.narrow(d, s, n); });
  t.add("split", +[](T a, int64_t s, int64_t d) { return a.split(s, d); });
  t.add("chunk", +[](T a, int64_t c, int64_t d) { return a.chunk(c, d); });
  t.add("unbind", +[](T a, int64_t d) { return a.unbind(d); });
  t.add("clone", +[](T a) { return a.clone(); });
  t.add("contiguous", +[](T a) { return a.contiguous(); });
  t.add("cat", +[](TensorList l, int64_t d) { return gradlab::cat(l, d); });
  t.add("stack", +[](TensorList l, int64_t d) { return gradlab::stack(l, d); });
  t.add("zero_", +[](T s) -> Tensor { return s.zero_(); });
  t.add("fill_", +[](T s, Scalar v) -> Tensor { return s.fill_(v); });
  t.add("fill_", +[](T s, T v) -> Tensor { return s.fill_(v); });
  t.add("copy_", +[](T s, T src) -> Tensor { return s.copy_(src); });
}

void more(Table& t) {
  using L = IntArrayRef;
  using OT = std::optional<Tensor>;
  using OS = std::optional<Scalar>;
  using Index = gradlab::ArrayRef<gradlab::indexing::TensorIndex>;
#define GRADLAB_REPLAY_COMPARE(NAME)                   \
  t.add(#NAME, +[](T a, T b) { return a.NAME(b); }); \
  t.add(#NAME, +[](T a, Scalar b) { return a.NAME(b); });
  GRADLAB_REPLAY_COMPARE(gt)
  GRADLAB_REPLAY_COMPARE(lt)
  GRADLAB_REPLAY_COMPARE(ge)
  GRADLAB_REPLAY_COMPARE(le)
  GRADLAB_REPLAY_COMPARE(eq)
  GRADLAB_REPLAY_COMPARE(ne)
#undef GRADLAB_REPLAY_COMPARE
  t.add("where", +[](T c, Scalar a, T b) { return gradlab::where(c, a, b); });
  t.add("where", +[](T c, T a, Scalar b) { return gradlab::where(c, a, b); });
  t.add("where", +[](T c, Scalar a, Scalar b) { return gradlab::where(c, a, b); });
  t.add("isnan", +[](T a) { return gradlab::isnan(a); });
  t.add("isinf", +[](T a) { return gradlab::isinf(a); });
  t.add("isfinite", +[](T a) { return gradlab::isfinite(a); });
  t.add("gather", +[](T a, int64_t d, T i) { return a.gather(d, i); });
  t.add("scatter_add", +[](T a, int64_t d, T i, T s) { return a.scatter_add(d, i, s); });
  t.add("flip", +[](T a, L d) { return a.flip(d); });
  t.add("cumsum", +[](T a, int64_t d, O dt) { return a.cumsum(d, dt); });
  t.add("cumprod", +[](T a, int64_t d, O dt) { return a.cumprod(d, dt); });
  t.add("tril", +[](T a, int64_t k) { return a.tril(k); });
  t.add("triu", +[](T a, int64_t k) { return a.triu(k); });
  t.add("sort", +[](T a, int64_t d, bool desc) { return a.sort(d, desc); });
  t.add("topk", +[](T a, int64_t k, int64_t d, bool l, bool s) { return a.topk(k, d, l, s); });
  t.add("scatter", +[](T a, int64_t d, T i, T s) { return a.scatter(d, i, s); });
  t.add("scatter", +[](T a, int64_t d, T i, Scalar v) { return a.scatter(d, i, v); });
  t.add("scatter_", +[](T a, int64_t d, T i, T s) -> Tensor { return a.scatter_(d, i, s); });
  t.add("scatter_", +[](T a, int64_t d, T i, Scalar v) -> Tensor { return a.scatter_(d, i, v); });
  t.add("masked_select", +[](T a, T m) { return a.masked_select(m); });
  t.add("masked_scatter", +[](T a, T m, T s) { return a.masked_scatter(m, s); });
  t.add("masked_scatter_", +[](T a, T m, T s) -> Tensor { return a.masked_scatter_(m, s); });
  t.add("diag", +[](T a, int64_t k) { return a.diag(k); });
  t.add("index", +[](T a, Index i) { return a.index(i); });
  t.add("index_put_", +[](T a, Index i, T v) -> Tensor { return a.index_put_(i, v); });
  t.add("index_put_", +[](T a, Index i, Scalar v) -> Tensor { return a.index_put_(i, v); });
  t.add("index_select", +[](T a, int64_t d, T i) { return a.index_select(d, i); });
  t.add("prod", +[](T a, O dt) { return gradlab::prod(a, dt); });
  t.add("prod", +[](T a, int64_t d, bool k, O dt) { return gradlab::prod(a, d, k, dt); });
  t.add("amax", +[](T a, L d, bool k) { return gradlab::amax(a, d, k); });
  t.add("amin", +[](T a, L d, bool k) { return gradlab::amin(a, d, k); });
  t.add("var", +[](T a, L d, bool u, bool k) { return gradlab::var(a, d, u, k); });
  t.add("std", +[](T a, L d, bool u, bool k) { return gradlab::std(a, d, u, k); });
  t.add("norm", +[](T a, Scalar p) { return gradlab::norm(a, p); });
  t.add("norm", +[](T a, OS p, L d, bool k) { return gradlab::norm(a, p, d, k); });
  t.add("spread_of_all", +[](T a, bool u, bool s) { return a.spread_of_all(u, s); });
  t.add("all", +[](T a) { return a.all(); });
  t.add("all", +[](T a, int64_t d, bool k) { return a.all(d, k); });
  t.add("any", +[](T a) { return a.any(); });
  t.add("any", +[](T a, int64_t d, bool k) { return a.any(d, k); });
  t.add("nll_loss", +[](T a, T b, OT w, Reduction r, int64_t ig) { return gradlab::nll_loss(a, b, w, r, ig); });
  t.add("nll_loss", +[](T a, T b, Reduction r) { return gradlab::nll_loss(a, b, r); });
  t.add("cross_entropy", +[](T a, T b, OT w, Reduction r, int64_t ig, double ls) {
    return gradlab::cross_entropy(a, b, w, r, ig, ls);
  });
  t.add("cross_entropy", +[](T a, T b, Reduction r) { return gradlab::cross_entropy(a, b, r); });
  t.add("binary_cross_entropy", +[](T a, T b, OT w, Reduction r) { return gradlab::binary_cross_entropy(a, b, w, r); });
  t.add("binary_cross_entropy_with_logits", +[](T a, T b, OT w, OT pw, Reduction r) {
    return gradlab::binary_cross_entropy_with_logits(a, b, w, pw, r);
  });
  t.add("leaky_relu_", +[](T a, Scalar s) -> Tensor {
    Tensor self = a;
    return gradlab::leaky_relu_(self, s);
  });
  t.add("expand", +[](T a, L s) { return a.expand(s); });
  t.add("to", +[](T a, const gradlab::TensorOptions& o, bool copy) { return a.to(o, false, copy); });
}

void autograd(Table& t) {
  using V = std::vector<Tensor>;
  t.add("item", +[](T a) { return a.item(); });
  t.add("set_requires_grad", +[](T a, bool r) -> Tensor { return a.set_requires_grad(r); });
  t.add("requires_grad_", +[](T a, bool r) -> Tensor { return a.requires_grad_(r); });
  t.add("grad", +[](T a) -> Tensor { return a.grad(); });
  t.add("mutable_grad", +[](T a) -> Tensor { return a.mutable_grad(); });
  t.add("retain_grad", +[](T a) { a.retain_grad(); });
  t.add("detach", +[](T a) { return a.detach(); });
  t.add("detach_", +[](T a) -> Tensor { return a.detach_(); });
  t.add("data", +[](T a) { return a.data(); });
  t.add("set_data", +[](T a, T d) { a.set_data(d); });
  t.add("backward", +[](T a, T g, std::optional<bool> keep, bool create, std::optional<TensorList> in) {
    a.backward(g, keep, create, in);
  });
  t.add("autograd::backward", +[](const V& ts, const V& gs, std::optional<bool> keep, bool create, const V& in) {
    torch::autograd::backward(ts, gs, keep, create, in);
  });
  t.add("autograd::grad",
        +[](const V& outs, const V& ins, const V& gs, std::optional<bool> keep, bool create, bool unused) {
          return torch::autograd::grad(outs, ins, gs, keep, create, unused);
        });
}

Table make_table() {
  Table t;
  binary(t);
  reductions(t);
  shapes(t);
  more(t);
  autograd(t);
  return t;
}

}  // namespace

const std::unordered_map<std::string, Invoker>& ops() {
  static const Table table = make_table();
  return table.map_;
}

}  // namespace grader::replay
