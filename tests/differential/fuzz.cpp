// The fuzzer: seeded random autograd programs (fuzz_program.h) run here,
// built against the engine or against LibTorch, or written out as Python for
// PyTorch (--python). Each side prints the same facts as JSON lines, which
// compare.cpp holds to each other (and compare_pytorch.py to PyTorch's,
// where the two APIs name the same thing differently).
//
//   fuzz [--seed S] [--count N]            run programs S*1000+0 … S*1000+N-1
//   fuzz [--seed S] [--count N] --python   print them as one Python script
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "facts_common.h"
#include "fuzz_program.h"

using facts::json;
using torch::Tensor;

namespace {

json numbers(const Tensor& t) {
  json out = json::array();
  for (double v : facts::values(t)) out.push_back(std::isfinite(v) ? json(v) : json(nullptr));
  return out;
}

// What the fuzzer compares of a tensor: enough to catch a wrong value,
// gradient, node, flag or version, small enough to record.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Reading a tensor's flags can raise too (grad_fn of a view made under
// no_grad whose base was then changed with grad mode on): that is the fact.
void fact(const std::string& label, const Tensor& t) {
  try {
    json j = {{"shape", t.sizes().vec()}, {"requires_grad", t.requires_grad()}, {"is_leaf", t.is_leaf()},
              {"grad_fn", t.grad_fn() ? json(t.grad_fn()->name()) : json(nullptr)}, {"version", t._version()},
              {"values", numbers(t)}};
    facts::emit(label, j);
  } catch (const std::exception& e) {
    facts::emit(label, {{"reading raised", first_line(e.what())}});
  }
}

void grads(const std::string& label, const std::vector<Tensor>& pool) {
  json j = json::object();
  for (size_t i = 0; i < pool.size(); ++i) {
    const Tensor& t = pool[i];
    if (!t.defined()) continue;
    try {
      if (!(t.is_leaf() || t.retains_grad())) continue;
      j[std::to_string(i)] = t.grad().defined() ? numbers(t.grad()) : json(nullptr);
    } catch (const std::exception& e) {
      j[std::to_string(i)] = "reading raised: " + first_line(e.what());
    }
  }
  facts::emit(label, {{"grads", j}});
}

Tensor unary(const std::string& n, const Tensor& x) {
  if (n == "exp") return x.exp();
  if (n == "tanh") return x.tanh();
  if (n == "sigmoid") return x.sigmoid();
  if (n == "relu") return x.relu();
  if (n == "neg") return x.neg();
  if (n == "sin") return x.sin();
  if (n == "cos") return x.cos();
  if (n == "square") return x.pow(2);
  if (n == "cube") return x.pow(3);
  if (n == "abs") return x.abs();
  if (n == "clone") return x.clone();
  if (n == "sum") return x.sum();
  if (n == "mean") return x.mean();
  if (n == "prod") return x.prod();
  if (n == "flatten") return x.reshape({-1});
  if (n == "unsqueeze") return x.unsqueeze(0);
  if (n == "clamp") return x.clamp(-1.0, 1.0);
  if (n == "max") return x.max();
  if (n == "norm") return x.norm();
  if (n == "log_sigmoid") return x.sigmoid().log();
  if (n == "sqrt_sigmoid") return x.sigmoid().sqrt();
  if (n == "expand2") {
    std::vector<int64_t> shape = x.sizes().vec();
    shape.insert(shape.begin(), 2);
    return x.unsqueeze(0).expand(shape);
  }
  if (n == "sum_keep0") return x.sum(0, true);
  if (n == "sum0") return x.sum(0);
  if (n == "mean0") return x.mean(0);
  if (n == "select0") return x[0];
  if (n == "softmax0") return x.softmax(0);
  throw std::logic_error("unknown op " + n);
}

Tensor scalar(const std::string& n, const Tensor& x, double c) {
  if (n == "mul_c") return x * c;
  if (n == "add_c") return x + c;
  if (n == "rsub_c") return c - x;
  return x / c;
}

Tensor binary(const std::string& n, const Tensor& a, const Tensor& b) {
  if (n == "add") return a + b;
  if (n == "sub") return a - b;
  if (n == "mul") return a * b;
  if (n == "maximum") return torch::maximum(a, b);
  if (n == "where_gt") return torch::where(a > b, a, b);
  if (n == "pow_sigmoid") return a.abs().pow(b.sigmoid());
  if (n == "mse") return torch::mse_loss(a, b.expand_as(a));
  return a / b.sigmoid();
}

// One step; what it makes joins the pool (an undefined tensor where it
// raised, so that the pool's numbering stays the generator's).
void run_step(const fuzz::Step& s, std::vector<Tensor>& pool, const std::string& label) {
  using fuzz::Kind;
  const size_t a = static_cast<size_t>(s.a), b = static_cast<size_t>(s.b);
  const size_t op = static_cast<size_t>(s.op);
  auto made = [&](const std::function<Tensor()>& fn) {
    Tensor t;
    try {
      if (s.no_grad) {
        torch::NoGradGuard guard;
        t = fn();
      } else {
        t = fn();
      }
    } catch (const std::exception& e) {
      facts::emit(label, {{"raised", first_line(e.what())}});
      pool.emplace_back();
      return;
    }
    pool.push_back(t);
    fact(label, t);
  };
  auto attempt = [&](const std::function<void()>& fn) {
    try {
      fn();
      facts::emit(label, {{"raised", false}});
    } catch (const std::exception& e) {
      facts::emit(label, {{"raised", first_line(e.what())}});
    }
  };
  switch (s.kind) {
    case Kind::Leaf: {
      std::vector<float> v(s.values.begin(), s.values.end());
      made([&] { return torch::tensor(v).reshape(s.shape).clone().requires_grad_(s.requires_grad); });
      break;
    }
    case Kind::Unary: made([&] { return unary(fuzz::unary_ops()[op].name, pool[a]); }); break;
    case Kind::Dim: made([&] { return unary(fuzz::dim_ops()[op].name, pool[a]); }); break;
    case Kind::Scalar: made([&] { return scalar(fuzz::scalar_ops()[op].name, pool[a], s.c); }); break;
    case Kind::Binary: made([&] { return binary(fuzz::binary_ops()[op].name, pool[a], pool[b]); }); break;
    case Kind::Mm: made([&] { return pool[a].mm(pool[b]); }); break;
    case Kind::Transpose: made([&] { return pool[a].t(); }); break;
    case Kind::Grad:
      made([&] { return torch::autograd::grad({pool[a].sum()}, {pool[b]}, {}, s.retain, s.create)[0]; });
      break;
    case Kind::Cat: made([&] { return torch::cat({pool[a], pool[b]}, 0); }); break;
    case Kind::Detach: made([&] { return pool[a].detach(); }); break;
    case Kind::RetainGrad: attempt([&] { pool[a].retain_grad(); }); break;
    case Kind::InPlace:
      attempt([&] {
        torch::AutoGradMode mode(!s.no_grad);
        const std::string n = fuzz::inplace_ops()[op].name;
        if (n == "mul_") pool[a].mul_(s.c);
        else if (n == "add_") pool[a].add_(s.c);
        else if (n == "add_t") pool[a].add_(pool[b]);
        else if (n == "mul_t") pool[a].mul_(pool[b]);
        else pool[a].copy_(pool[b]);
      });
      fact(label + " after", pool[a]);
      break;
    case Kind::Backward:
      attempt([&] {
        const Tensor& t = pool[a];
        if (s.seed == 0) t.backward({}, s.retain);
        else if (s.seed == 1) t.sum().backward({}, s.retain);
        else t.backward(torch::ones_like(t), s.retain);
      });
      grads(label + " grads", pool);
      break;
    case Kind::ZeroGrads:
      attempt([&] {
        for (const Tensor& t : pool)
          if (t.defined() && t.is_leaf() && t.grad().defined()) t.grad().zero_();
      });
      grads(label + " grads", pool);
      break;
  }
}

void run_program(const fuzz::Program& p) {
  std::vector<Tensor> pool;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const std::string label = std::to_string(p.seed) + "/" + std::to_string(i);
    // An operand that an earlier step failed to make: the step is skipped
    // on every side alike.
    const fuzz::Step& s = p.steps[i];
    if ((s.a >= 0 && !pool[static_cast<size_t>(s.a)].defined()) || (s.b >= 0 && !pool[static_cast<size_t>(s.b)].defined())) {
      if (s.kind != fuzz::Kind::RetainGrad && s.kind != fuzz::Kind::InPlace && s.kind != fuzz::Kind::Backward) pool.emplace_back();
      facts::emit(label, {{"skipped", true}});
      continue;
    }
    run_step(s, pool, label);
  }
}

// Each program in a child of its own: LibTorch 1.13 crashes on a few
// (retain_grad() on a view of a view of a leaf changed in place under
// no_grad), and a crash is then a fact like any other.
void run(const fuzz::Program& p) {
  std::cout.flush();
  const pid_t child = fork();
  if (child == 0) {
    run_program(p);
    std::cout.flush();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
    facts::emit(std::to_string(p.seed), {{"crashed", WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                                          : "exit " + std::to_string(WEXITSTATUS(status))}});
}

// ---- the same programs as Python ----

std::string number(double c) {
  std::ostringstream os;
  os.precision(17);
  os << c;
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string spelled(const char* pattern, const std::string& x, const std::string& y = "", double c = 0) {
  std::string out;
  for (const char* p = pattern; *p; ++p) {
    if (p[0] == '{' && p[1] == '0' && p[2] == '}') out += x, p += 2;
    else if (p[0] == '{' && p[1] == '1' && p[2] == '}') out += y, p += 2;
    else if (p[0] == '{' && p[1] == 'c' && p[2] == '}') out += number(c), p += 2;
    else out += *p;
  }
  return out;
}

void python(const fuzz::Program& p, std::ostream& os) {
  os << "pool = []\n";
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const fuzz::Step& s = p.steps[i];
    const std::string label = "'" + std::to_string(p.seed) + "/" + std::to_string(i) + "'";
    const std::string a = "pool[" + std::to_string(s.a) + "]", b = "pool[" + std::to_string(s.b) + "]";
    const size_t op = static_cast<size_t>(s.op);
    std::string operands = "[" + (s.a >= 0 ? std::to_string(s.a) : "") + (s.b >= 0 ? ", " + std::to_string(s.b) : "") + "]";
    using fuzz::Kind;
    auto made = [&](const std::string& expr) {
      os << "made(" << label << ", " << operands << ", " << (s.no_grad ? "True" : "False") << ", lambda: " << expr << ")\n";
    };
    switch (s.kind) {
      case Kind::Leaf: {
        std::string v = "[";
        for (double x : s.values) v += number(x) + ", ";
        std::string shape = "(";
        for (int64_t d : s.shape) shape += std::to_string(d) + ",";
        made("torch.tensor(" + v + "], dtype=torch.float32).reshape(" + shape + ")).clone().requires_grad_(" +
             (s.requires_grad ? "True" : "False") + ")");
        break;
      }
      case Kind::Unary: made(spelled(fuzz::unary_ops()[op].python, a)); break;
      case Kind::Dim: made(spelled(fuzz::dim_ops()[op].python, a)); break;
      case Kind::Scalar: made(spelled(fuzz::scalar_ops()[op].python, a, "", s.c)); break;
      case Kind::Binary: made(spelled(fuzz::binary_ops()[op].python, a, b)); break;
      case Kind::Mm: made(a + ".mm(" + b + ")"); break;
      case Kind::Transpose: made(a + ".t()"); break;
      case Kind::Grad:
        made("torch.autograd.grad([" + a + ".sum()], [" + b + "], retain_graph=" + (s.retain ? "True" : "False") +
             ", create_graph=" + (s.create ? "True" : "False") + ")[0]");
        break;
      case Kind::Cat: made("torch.cat([" + a + ", " + b + "], 0)"); break;
      case Kind::Detach: made(a + ".detach()"); break;
      case Kind::RetainGrad: os << "attempt(" << label << ", " << operands << ", lambda: " << a << ".retain_grad())\n"; break;
      case Kind::InPlace:
        os << "inplace(" << label << ", " << operands << ", " << (s.no_grad ? "True" : "False")
           << ", lambda: " << spelled(fuzz::inplace_ops()[op].python, a, b, s.c) << ")\n";
        break;
      case Kind::Backward: {
        const std::string r = s.retain ? "True" : "False";
        const std::string call = s.seed == 0   ? a + ".backward(retain_graph=" + r + ")"
                                 : s.seed == 1 ? a + ".sum().backward(retain_graph=" + r + ")"
                                               : a + ".backward(torch.ones_like(" + a + "), retain_graph=" + r + ")";
        os << "backward(" << label << ", " << s.a << ", lambda: " << call << ")\n";
        break;
      }
      case Kind::ZeroGrads: os << "zero_grads(" << label << ")\n"; break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  int count = 300;
  bool as_python = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--count" && i + 1 < argc) count = std::atoi(argv[++i]);
    else if (a == "--python") as_python = true;
    else {
      std::cerr << "usage: " << argv[0] << " [--seed S] [--count N] [--python]\n";
      return 2;
    }
  }
  for (int k = 0; k < count; ++k) {
    const fuzz::Program p = fuzz::generate(seed * 1000 + static_cast<uint64_t>(k));
    if (as_python) python(p, std::cout);
    else run(p);
  }
  return 0;
}
