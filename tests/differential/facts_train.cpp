// The training pieces past the first network, engine vs LibTorch: dropout
// (the seeded mask, its graph, train/eval, in place), bernoulli draws,
// ModuleList (registration, iteration, insert and extend), the L1 loss,
// RMSprop and Adagrad over several steps with every option, and StepLR.
// Built against both; see CMakeLists.txt.
#include "facts_common.h"

using facts::attempt;
using facts::emit;
using facts::fact;
using facts::json;
using facts::printed;
using facts::text;
using torch::Tensor;
namespace F = torch::nn::functional;

namespace {

// The generator's draws: bernoulli with a scalar p, with per-element
// probabilities in float and in double, and what rand() gives after them
// (it shows how many words each draw used).
void bernoulli_draws() {
  torch::manual_seed(0);
  Tensor t = torch::empty({12});
  t.bernoulli_(0.3);
  fact("bernoulli_.float", t);
  fact("bernoulli_.double", torch::empty({6}, torch::kDouble).bernoulli_(0.7));
  fact("bernoulli_.long", torch::empty({5}, torch::kLong).bernoulli_(0.5));
  const Tensor p = torch::tensor({0.1f, 0.5f, 0.9f, 0.3f, 0.6f, 0.2f});
  fact("bernoulli(p).float", torch::bernoulli(p));
  fact("bernoulli(p).double", torch::bernoulli(p.to(torch::kDouble)));
  fact("bernoulli(p) method", p.bernoulli());
  fact("rand after the draws", torch::rand({3}));
  attempt("bernoulli_ p out of range", [] { torch::empty({3}).bernoulli_(1.5); });
}

void dropout_function() {
  torch::manual_seed(1);
  Tensor x = torch::ones({3, 4}, torch::requires_grad());
  Tensor y = torch::dropout(x, 0.5, true);
  fact("dropout train", y);
  y.sum().backward();
  fact("dropout x.grad", x.grad());
  fact("dropout eval is the input", torch::tensor(torch::dropout(x, 0.5, false).is_same(x)));
  fact("dropout p=0 is the input", torch::tensor(torch::dropout(x, 0.0, true).is_same(x)));
  fact("dropout p=1", torch::dropout(x, 1.0, true));
  fact("dropout double", torch::dropout(torch::ones({5}, torch::kDouble), 0.2, true));
  attempt("dropout p=1.5", [&] { torch::dropout(x, 1.5, false); });
  fact("F::dropout", F::dropout(x, F::DropoutFuncOptions().p(0.5)));
  fact("F::dropout default", F::dropout(x));
  fact("F::dropout training(false)", F::dropout(x, F::DropoutFuncOptions().training(false)));
  attempt("F::dropout p=-0.1", [&] { F::dropout(x, F::DropoutFuncOptions().p(-0.1)); });
  Tensor w = torch::ones({5}, torch::requires_grad());
  Tensor v = w * 3;
  fact("F::dropout inplace", F::dropout(v, F::DropoutFuncOptions().p(0.4).inplace(true)));
  fact("dropout inplace: v", v);
  v.sum().backward();
  fact("dropout inplace: w.grad", w.grad());
  Tensor u = torch::ones({4}) * 2;
  torch::dropout_(u, 0.5, true);
  fact("dropout_ on a plain tensor", u);
}

void dropout_module() {
  torch::manual_seed(2);
  torch::nn::Dropout drop(0.25);
  text("Dropout printed", printed(*drop));
  Tensor x = torch::ones({3, 4}, torch::requires_grad());
  fact("Dropout train", drop(x));
  drop->eval();
  fact("Dropout eval", drop(x));
  torch::nn::Dropout inplace(torch::nn::DropoutOptions().p(0.4).inplace(true));
  text("Dropout inplace printed", printed(*inplace));
  Tensor h = x * 2;
  fact("Dropout inplace", inplace(h));
  attempt("Dropout(1.5)", [] { torch::nn::Dropout bad(1.5); });
  // The natural spelling: dropout between layers, a few SGD steps, then eval.
  torch::nn::Sequential net(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Dropout(0.5),
                            torch::nn::Linear(8, 2));
  text("Sequential with Dropout printed", printed(*net));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1));
  Tensor in = torch::randn({6, 4}), target = torch::randn({6, 2});
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    Tensor loss = torch::mse_loss(net->forward(in), target);
    loss.backward();
    opt.step();
    fact("dropout net loss " + std::to_string(i), loss);
  }
  net->eval();
  fact("dropout net eval output", net->forward(in));
  fact("dropout net last weight", net->parameters().back());
}

void module_lists() {
  torch::manual_seed(3);
  torch::nn::ModuleList list(torch::nn::Linear(2, 3), torch::nn::ReLU(), torch::nn::Linear(3, 1));
  text("ModuleList printed", printed(*list));
  emit("ModuleList size", json{{"n", list->size()}});
  list->push_back(torch::nn::Tanh());
  json names = json::array();
  for (const auto& p : list->named_parameters()) names.push_back(p.key());
  emit("ModuleList parameter names", json{{"names", names}});
  json kinds = json::array();
  for (const auto& m : *list) kinds.push_back(m->name());
  emit("ModuleList iterated", json{{"names", kinds}});
  Tensor h = torch::randn({2, 2});
  for (const auto& m : *list) {
    if (auto* lin = m->as<torch::nn::Linear>()) h = lin->forward(h);
    else if (auto* relu = m->as<torch::nn::ReLU>()) h = relu->forward(h);
    else if (auto* tanh = m->as<torch::nn::TanhImpl>()) h = tanh->forward(h);
  }
  fact("ModuleList forward by hand", h);
  fact("ModuleList at<LinearImpl>(0).weight", list->at<torch::nn::LinearImpl>(0).weight);
  fact("ModuleList ptr<LinearImpl>(2)->bias", list->ptr<torch::nn::LinearImpl>(2)->bias);
  attempt("ModuleList ptr(9)", [&] { list->ptr(9); });
  emit("ModuleList [1]", json{{"name", list[1]->name()}});
  torch::nn::ModuleList other;
  emit("empty ModuleList", json{{"empty", other->is_empty()}, {"text", printed(*other)}});
  other->extend(*list);
  text("ModuleList extended", printed(*other));
  // LibTorch 1.13 re-registers only the insertion point's name: the printed
  // children keep the old modules at the later names.
  other->insert(1, torch::nn::Sigmoid());
  text("ModuleList after insert", printed(*other));
  emit("ModuleList size after insert", json{{"n", other->size()}});
  struct Net : torch::nn::Module {
    torch::nn::ModuleList layers;
    Net() {
      layers = register_module("layers", torch::nn::ModuleList());
      for (int i = 0; i < 2; ++i) layers->push_back(torch::nn::Linear(2, 2));
    }
  };
  Net net;
  json nested = json::array();
  for (const auto& p : net.named_parameters()) nested.push_back(p.key());
  emit("ModuleList in a module: parameter names", json{{"names", nested}});
}

void l1_losses() {
  torch::manual_seed(4);
  Tensor x = torch::randn({3, 4}, torch::requires_grad()), t = torch::randn({3, 4});
  fact("torch::l1_loss", torch::l1_loss(x, t));
  fact("torch::l1_loss sum", torch::l1_loss(x, t, at::Reduction::Sum));
  fact("F::l1_loss", F::l1_loss(x, t));
  fact("F::l1_loss none", F::l1_loss(x, t, F::L1LossFuncOptions(torch::kNone)));
  fact("F::l1_loss sum", F::l1_loss(x, t, F::L1LossFuncOptions().reduction(torch::kSum)));
  torch::nn::L1Loss criterion;
  text("L1Loss printed", printed(*criterion));
  Tensor loss = criterion(x, t);
  fact("L1Loss", loss);
  text("L1Loss graph", facts::graph_desc(loss.grad_fn()));
  Tensor g = torch::autograd::grad({loss}, {x}, {}, true, true)[0];
  fact("L1Loss gradient (create_graph)", g);
  text("L1Loss gradient graph", facts::graph_desc(g.grad_fn()));
  fact("L1Loss broadcast target", F::l1_loss(x, torch::randn({4})));
}

template <class Opt, class Options>
void train(const std::string& label, const Options& options, int steps = 4) {
  torch::manual_seed(5);
  Tensor w = torch::randn({2, 3}, torch::requires_grad()), b = torch::randn({3}, torch::requires_grad());
  Tensor x = torch::randn({5, 2}), y = torch::randn({5, 3});
  Opt opt({w, b}, options);
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    (x.mm(w) + b - y).pow(2).mean().backward();
    opt.step();
  }
  fact(label + ": w", w);
  fact(label + ": b", b);
}

void more_optimisers() {
  using namespace torch::optim;
  train<RMSprop>("RMSprop", RMSpropOptions(0.01));
  train<RMSprop>("RMSprop momentum", RMSpropOptions(0.01).momentum(0.9));
  train<RMSprop>("RMSprop centered, weight decay", RMSpropOptions(0.02).centered(true).weight_decay(0.1));
  train<RMSprop>("RMSprop every option",
                 RMSpropOptions(0.02).centered(true).momentum(0.5).alpha(0.9).eps(1e-6));
  train<Adagrad>("Adagrad", AdagradOptions(0.1));
  train<Adagrad>("Adagrad every option",
                 AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.05).initial_accumulator_value(0.1).eps(1e-8));
  Tensor p = torch::ones({2}, torch::requires_grad());
  attempt("RMSprop alpha -1", [&] { RMSprop({p}, RMSpropOptions(0.1).alpha(-1)); });
  attempt("RMSprop lr -0.1", [&] { RMSprop({p}, RMSpropOptions(-0.1)); });
  attempt("RMSprop momentum -1", [&] { RMSprop({p}, RMSpropOptions(0.1).momentum(-1)); });
  attempt("Adagrad lr_decay -1", [&] { Adagrad({p}, AdagradOptions(0.1).lr_decay(-1)); });
  attempt("Adagrad initial_accumulator_value -1",
          [&] { Adagrad({p}, AdagradOptions(0.1).initial_accumulator_value(-1)); });
  attempt("Adagrad: a parameter in two groups", [&] {
    Adagrad a({p});
    a.add_param_group(OptimizerParamGroup({p}));
  });
}

void step_lr() {
  using namespace torch::optim;
  Tensor w = torch::ones({2}, torch::requires_grad()), v = torch::ones({2}, torch::requires_grad());
  std::vector<OptimizerParamGroup> groups{OptimizerParamGroup({w}),
                                          OptimizerParamGroup({v}, std::make_unique<SGDOptions>(0.5))};
  SGD opt(groups, SGDOptions(0.1));
  StepLR schedule(opt, 3, 0.5);
  json lrs = json::array();
  for (int epoch = 0; epoch < 8; ++epoch) {
    opt.zero_grad();
    (w * w + v * v).sum().backward();
    opt.step();
    schedule.step();
    lrs.push_back({opt.param_groups()[0].options().get_lr(), opt.param_groups()[1].options().get_lr()});
  }
  emit("StepLR learning rates", json{{"lrs", lrs}});
  fact("StepLR: w", w);
  fact("StepLR: v", v);
  Adam adam({w}, AdamOptions(0.1));
  StepLR every(adam, 1);
  for (int i = 0; i < 3; ++i) every.step();
  emit("StepLR on Adam, gamma 0.1", json{{"lr", static_cast<AdamOptions&>(adam.param_groups()[0].options()).lr()}});
}

}  // namespace

int main() {
  bernoulli_draws();
  dropout_function();
  dropout_module();
  module_lists();
  l1_losses();
  more_optimisers();
  step_lr();
}
