// Seeded random autograd programs over the course's ops, for the fuzzer
// (fuzz.cpp). A program is data: a list of steps over a pool of tensors whose
// shapes the generator tracks, so that every op it emits is well formed and
// the same steps can be run by the engine, by LibTorch (the same fuzz.cpp
// built against it) and by PyTorch (the Python text `python_of` writes).
// Errors are part of the program: an in-place change of a leaf that
// requires grad, a backward through a freed graph or a changed saved tensor
// must raise the same error everywhere.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fuzz {

// One op of a family: its name in the facts, and how Python spells it with
// {0} and {1} for the operands and {c} for the constant.
struct OpText {
  const char* name;
  const char* python;
};

inline const std::vector<OpText>& unary_ops() {
  static const std::vector<OpText> k = {
      {"exp", "{0}.exp()"},      {"tanh", "{0}.tanh()"},       {"sigmoid", "{0}.sigmoid()"},
      {"relu", "{0}.relu()"},    {"neg", "{0}.neg()"},         {"sin", "{0}.sin()"},
      {"cos", "{0}.cos()"},      {"square", "{0}.pow(2)"},     {"cube", "{0}.pow(3)"},
      {"abs", "{0}.abs()"},      {"clone", "{0}.clone()"},     {"sum", "{0}.sum()"},
      {"mean", "{0}.mean()"},    {"prod", "{0}.prod()"},       {"flatten", "{0}.reshape(-1)"},
      {"unsqueeze", "{0}.unsqueeze(0)"}, {"clamp", "{0}.clamp(-1.0, 1.0)"}, {"max", "{0}.max()"},
      {"norm", "torch.ops.aten.norm.Scalar({0}, 2)"}, {"log_sigmoid", "{0}.sigmoid().log()"},
      {"sqrt_sigmoid", "{0}.sigmoid().sqrt()"},
  };
  return k;
}
// Ops of one tensor that need at least one dimension.
inline const std::vector<OpText>& dim_ops() {
  static const std::vector<OpText> k = {
      {"sum0", "{0}.sum(0)"}, {"mean0", "{0}.mean(0)"}, {"select0", "{0}[0]"}, {"softmax0", "{0}.softmax(0)"},
      {"expand2", "{0}.unsqueeze(0).expand(2, *{0}.shape)"}, {"sum_keep0", "{0}.sum(0, True)"},
  };
  return k;
}
inline const std::vector<OpText>& scalar_ops() {
  static const std::vector<OpText> k = {
      // C++'s tensor-and-number ops reach the Scalar overloads (MulBackward1,
      // saving no number), where Python wraps the number in a tensor: Python
      // calls those overloads by name. And C++'s `c - x` is LibTorch's
      // empty_like(x).fill_(c).sub_(x) (a SubBackward0 at version 2), not rsub.
      {"mul_c", "torch.ops.aten.mul.Scalar({0}, {c})"},
      {"add_c", "torch.ops.aten.add.Scalar({0}, {c})"},
      {"rsub_c", "torch.empty_like({0}).fill_({c}).sub_({0})"},
      {"div_c", "torch.ops.aten.div.Scalar({0}, {c})"},
  };
  return k;
}
// Two operands of the same shape (or the second 0-d).
inline const std::vector<OpText>& binary_ops() {
  static const std::vector<OpText> k = {
      {"add", "{0} + {1}"},         {"sub", "{0} - {1}"},
      {"mul", "{0} * {1}"},         {"div_sigmoid", "{0} / {1}.sigmoid()"},
      {"maximum", "torch.maximum({0}, {1})"}, {"where_gt", "torch.where({0} > {1}, {0}, {1})"},
      {"pow_sigmoid", "{0}.abs().pow({1}.sigmoid())"}, {"mse", "torch.nn.functional.mse_loss({0}, {1}.expand_as({0}))"},
  };
  return k;
}
inline const std::vector<OpText>& inplace_ops() {
  // The last three take a tensor of the target's shape (or a 0-d one).
  static const std::vector<OpText> k = {{"mul_", "torch.ops.aten.mul_.Scalar({0}, {c})"},
                                        {"add_", "torch.ops.aten.add_.Scalar({0}, {c})"},
                                        {"add_t", "{0}.add_({1})"},
                                        {"mul_t", "{0}.mul_({1})"},
                                        {"copy_", "{0}.copy_({1})"}};
  return k;
}

enum class Kind { Leaf, Unary, Dim, Scalar, Binary, Mm, Transpose, Detach, RetainGrad, InPlace, Backward, ZeroGrads, Grad, Cat };

struct Step {
  Kind kind = Kind::Leaf;
  int op = 0;          // index into the kind's op table
  int a = -1, b = -1;  // pool operands
  double c = 0;        // the constant of a scalar or in-place op
  bool no_grad = false;
  bool retain = false;      // a backward's (or autograd::grad's) retain_graph
  bool create = false;      // autograd::grad's create_graph
  int seed = 0;             // a backward's start: 0 implicit (0-d root), 1 sum() first, 2 a gradient of ones
  std::vector<int64_t> shape;  // a leaf's
  std::vector<double> values;  // a leaf's, multiples of 1/8
  bool requires_grad = false;  // a leaf's
};

struct Program {
  uint64_t seed = 0;
  std::vector<Step> steps;
};

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }

 private:
  uint64_t state_;
};

inline int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A program of about `length` steps. Shapes are tracked as the ops change
// them; every op is chosen among those its operands' shapes allow.
inline Program generate(uint64_t seed, int length = 14) {
  Random r(seed);
  Program p{seed, {}};
  std::vector<std::vector<int64_t>> shapes;
  static const std::vector<std::vector<int64_t>> leaf_shapes = {{}, {3}, {2, 3}, {3, 2}, {2, 2}, {4}};
  auto leaf = [&] {
    Step s;
    s.kind = Kind::Leaf;
    s.shape = leaf_shapes[static_cast<size_t>(r.below(static_cast<int>(leaf_shapes.size())))];
    for (int64_t i = 0; i < numel(s.shape); ++i) s.values.push_back((r.below(33) - 16) / 8.0);
    s.requires_grad = r.chance(70);
    shapes.push_back(s.shape);
    p.steps.push_back(s);
  };
  leaf();
  leaf();
  auto any = [&] { return r.below(static_cast<int>(shapes.size())); };
  auto pick = [&](const std::vector<OpText>& table) { return r.below(static_cast<int>(table.size())); };
  while (static_cast<int>(p.steps.size()) < length) {
    Step s;
    const int roll = r.below(100);
    if (roll < 10) {
      leaf();
      continue;
    }
    if (roll < 30) {
      s.kind = Kind::Unary, s.op = pick(unary_ops()), s.a = any(), s.no_grad = r.chance(10);
      const std::string name = unary_ops()[static_cast<size_t>(s.op)].name;
      std::vector<int64_t> out = shapes[static_cast<size_t>(s.a)];
      if (name == "sum" || name == "mean" || name == "prod" || name == "max" || name == "norm") out = {};
      if (name == "flatten") out = {numel(out)};
      if (name == "unsqueeze") out.insert(out.begin(), 1);
      if (out.size() > 3) continue;
      shapes.push_back(out);
    } else if (roll < 40) {
      s.kind = Kind::Dim, s.op = pick(dim_ops()), s.a = any();
      std::vector<int64_t> out = shapes[static_cast<size_t>(s.a)];
      if (out.empty()) continue;
      const std::string name = dim_ops()[static_cast<size_t>(s.op)].name;
      if (name == "expand2") out.insert(out.begin(), 2);
      else if (name == "sum_keep0") out[0] = 1;
      else if (name != "softmax0") out.erase(out.begin());
      if (out.size() > 3) continue;
      shapes.push_back(out);
    } else if (roll < 52) {
      s.kind = Kind::Scalar, s.op = pick(scalar_ops()), s.a = any(), s.c = (r.below(15) + 1) / 4.0;
      shapes.push_back(shapes[static_cast<size_t>(s.a)]);
    } else if (roll < 66) {
      s.kind = Kind::Binary, s.op = pick(binary_ops()), s.a = any(), s.b = any();
      const auto &sa = shapes[static_cast<size_t>(s.a)], &sb = shapes[static_cast<size_t>(s.b)];
      if (sa != sb && !sb.empty()) continue;
      shapes.push_back(std::string(binary_ops()[static_cast<size_t>(s.op)].name) == "mse" ? std::vector<int64_t>{} : sa);
    } else if (roll < 69) {  // d(Σ a)/d b, the gradient as a tensor of b's shape
      s.kind = Kind::Grad, s.a = any(), s.b = any(), s.retain = r.chance(50), s.create = r.chance(40);
      shapes.push_back(shapes[static_cast<size_t>(s.b)]);
    } else if (roll < 71) {
      s.kind = Kind::Cat, s.a = any(), s.b = any();
      std::vector<int64_t> sa = shapes[static_cast<size_t>(s.a)];
      if (sa.empty() || sa != shapes[static_cast<size_t>(s.b)]) continue;
      sa[0] *= 2;
      shapes.push_back(sa);
    } else if (roll < 72) {
      s.kind = Kind::Mm, s.a = any(), s.b = any();
      const auto &sa = shapes[static_cast<size_t>(s.a)], &sb = shapes[static_cast<size_t>(s.b)];
      if (sa.size() != 2 || sb.size() != 2 || sa[1] != sb[0]) continue;
      shapes.push_back({sa[0], sb[1]});
    } else if (roll < 76) {
      s.kind = Kind::Transpose, s.a = any();
      const auto& sa = shapes[static_cast<size_t>(s.a)];
      if (sa.size() != 2) continue;
      shapes.push_back({sa[1], sa[0]});
    } else if (roll < 79) {
      s.kind = Kind::Detach, s.a = any();
      shapes.push_back(shapes[static_cast<size_t>(s.a)]);
    } else if (roll < 83) {
      s.kind = Kind::RetainGrad, s.a = any();
    } else if (roll < 88) {
      s.kind = Kind::InPlace, s.op = pick(inplace_ops()), s.a = any(), s.c = (r.below(7) + 1) / 2.0;
      s.no_grad = r.chance(40);
      if (s.op >= 2) {
        s.b = any();
        const auto& sb = shapes[static_cast<size_t>(s.b)];
        if (sb != shapes[static_cast<size_t>(s.a)] && !sb.empty()) continue;
      }
    } else if (roll < 97) {
      s.kind = Kind::Backward, s.a = any(), s.retain = r.chance(50);
      s.seed = shapes[static_cast<size_t>(s.a)].empty() ? (r.chance(70) ? 0 : 2) : 1 + r.below(2);
    } else {
      s.kind = Kind::ZeroGrads;
    }
    p.steps.push_back(s);
  }
  return p;
}

}  // namespace fuzz
