// Modules and optimisers, engine vs LibTorch: what a course's training loop
// touches. Seeded initialisation, the order and names of parameters, the
// graphs a Linear layer records, printing, training mode, zero_grad, every
// optimiser option over several steps (values and versions of the weights),
// and the errors students meet. Built against both; see CMakeLists.txt.
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

struct NetImpl : torch::nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(3, 4));
    fc2 = register_module("fc2", torch::nn::Linear(torch::nn::LinearOptions(4, 2).bias(false)));
    scale = register_parameter("scale", torch::ones({2}));
  }
  Tensor forward(Tensor x) { return fc2->forward(torch::relu(fc1->forward(x))) * scale; }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  Tensor scale;
};
TORCH_MODULE(Net);

// A holder the student forgot to fill (kept out of the optimiser's sight, so
// that it cannot prove the access null at compile time and warn).
[[gnu::noinline]] torch::nn::Linear unregistered() { return nullptr; }

json keys(const torch::OrderedDict<std::string, Tensor>& d) {
  json r = json::array();
  for (const auto& item : d) r.push_back(item.key());
  return r;
}

void linear_layers() {
  torch::manual_seed(0);
  torch::nn::Linear lin(3, 2);
  fact("linear.weight", lin->weight);
  fact("linear.bias", lin->bias);
  text("linear.name", lin->name());
  text("linear.print", printed(lin));
  emit("linear.named_parameters", json{{"keys", keys(lin->named_parameters())}});

  Tensor x = torch::tensor({{1.0f, -2.0f, 0.5f}, {0.0f, 1.0f, 2.0f}});
  Tensor y = lin(x);
  fact("linear.2d", y);
  y.sum().backward();
  fact("linear.2d.weight", lin->weight);
  fact("linear.2d.bias", lin->bias);
  fact("linear.1d", lin(torch::tensor({1.0f, 2.0f, 3.0f})));
  Tensor x3 = torch::arange(12, torch::kFloat).reshape({2, 2, 3});
  fact("linear.3d", lin->forward(x3));
  fact("linear.3d.transposed", lin->forward(x3.transpose(0, 1)));
  fact("linear.functional", F::linear(x, lin->weight));
  fact("linear.torch", torch::linear(x, lin->weight, lin->bias));

  torch::nn::Linear nobias(torch::nn::LinearOptions(3, 2).bias(false));
  fact("linear.nobias.forward", nobias(x));
  emit("linear.nobias.named_parameters", json{{"keys", keys(nobias->named_parameters())}});
  text("linear.nobias.print", printed(nobias));
  attempt("linear.shape_mismatch", [&] { lin(torch::ones({2, 4})); });
}

void module_tree() {
  torch::manual_seed(1);
  Net net;
  emit("net.named_parameters", json{{"keys", keys(net->named_parameters())}});
  emit("net.own_parameters", json{{"keys", keys(net->named_parameters(false))}});
  emit("net.sizes", json{{"parameters", net->parameters().size()}, {"children", net->children().size()},
                         {"modules", net->modules().size()}, {"buffers", net->buffers().size()}});
  json names = json::array();
  for (const auto& m : net->named_modules()) names.push_back(m.key());
  emit("net.named_modules", json{{"keys", names}});
  text("net.print", printed(*net));
  text("net.name", net->name());
  fact("net.scale", net->scale);
  emit("net.as", json{{"linear", net->fc1->as<torch::nn::Linear>() != nullptr},
                      {"impl", net->fc1->as<torch::nn::LinearImpl>() != nullptr},
                      {"relu", net->fc1->as<torch::nn::ReLU>() != nullptr}});

  net->eval();
  emit("net.eval", json{{"self", net->is_training()}, {"child", net->fc1->is_training()}});
  net->train();
  emit("net.train", json{{"self", net->is_training()}, {"child", net->fc2->is_training()}});

  Tensor x = torch::tensor({{0.5f, -1.0f, 2.0f}, {1.0f, 1.0f, -1.0f}});
  Tensor out = net(x);
  fact("net.out", out);
  out.pow(2).sum().backward();
  for (const auto& p : net->named_parameters()) fact("net.grad." + p.key(), p.value());
  net->zero_grad();
  for (const auto& p : net->named_parameters()) fact("net.zeroed." + p.key(), p.value());
  net(x).sum().backward();
  net->zero_grad(true);
  fact("net.set_to_none.fc1.weight", net->fc1->weight);

  // The shared handle: parameters() hands out the module's own tensors.
  torch::NoGradGuard guard;
  net->parameters()[0].fill_(0.25);
  fact("net.shared_handle", net->fc1->weight);
}

void module_errors() {
  attempt("error.duplicate_parameter", [] {
    torch::nn::Module m;
    m.register_parameter("w", torch::ones({1}));
    m.register_parameter("w", torch::ones({1}));
  });
  attempt("error.empty_parameter_name", [] {
    torch::nn::Module m;
    m.register_parameter("", torch::ones({1}));
  });
  attempt("error.dotted_parameter_name", [] {
    torch::nn::Module m;
    m.register_parameter("a.b", torch::ones({1}));
  });
  attempt("error.duplicate_module", [] {
    torch::nn::Module m;
    m.register_module("fc", torch::nn::Linear(1, 1));
    m.register_module("fc", torch::nn::Linear(1, 1));
  });
  attempt("error.dotted_module_name", [] {
    torch::nn::Module m;
    m.register_module("a.b", torch::nn::Linear(1, 1));
  });
  attempt("error.empty_holder", [] {
    torch::nn::Linear fc = unregistered();
    fc->forward(torch::ones({1, 1}));
  });
  attempt("error.missing_key", [] { torch::nn::Linear(1, 1)->named_parameters()["weights"]; });
  attempt("error.empty_sequential", [] { torch::nn::Sequential()->forward(torch::ones({1})); });
  attempt("error.stack_module_named_modules", [] {
    torch::nn::Module m;
    m.named_modules();
  });
  attempt("error.stack_module_children", [] {
    torch::nn::Module m;
    m.register_module("fc", torch::nn::Linear(1, 1));
    if (m.modules(false).size() != 1) throw std::runtime_error("wrong count");
  });
  attempt("error.fan_of_vector", [] { torch::nn::init::xavier_uniform_(torch::empty({3})); });
}

void sequential_models() {
  torch::manual_seed(2);
  torch::nn::Sequential seq(torch::nn::Linear(2, 3), torch::nn::ReLU(), torch::nn::Linear(3, 1), torch::nn::Sigmoid());
  emit("seq.named_parameters", json{{"keys", keys(seq->named_parameters())}});
  text("seq.print", printed(seq));
  emit("seq.size", json{{"size", seq->size()}});
  text("seq.item1", seq[1]->name());
  Tensor x = torch::tensor({{1.0f, 2.0f}, {-1.0f, 0.5f}, {0.0f, -3.0f}});
  Tensor y = seq->forward(x);
  fact("seq.out", y);
  F::mse_loss(y, torch::ones({3, 1})).backward();
  fact("seq.grad.0.weight", seq[0]->as<torch::nn::Linear>()->weight);
  fact("seq.grad.2.bias", seq->ptr(2)->as<torch::nn::LinearImpl>()->bias);

  torch::nn::Sequential named({{"fc", torch::nn::Linear(2, 2)},
                               {"act", torch::nn::Tanh()},
                               {"soft", torch::nn::Softmax(1)}});
  named->push_back("log", torch::nn::LogSoftmax(torch::nn::LogSoftmaxOptions(1)));
  named->push_back(torch::nn::Identity());
  emit("seq.named.keys", json{{"keys", keys(named->named_parameters())}});
  json mods = json::array();
  for (const auto& m : named->named_children()) mods.push_back(m.key());
  emit("seq.named.children", json{{"keys", mods}});
  text("seq.named.print", printed(named));
  fact("seq.named.out", named->forward(x));

  torch::nn::Sequential fn(torch::nn::Functional(torch::relu), torch::nn::Flatten(),
                           torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  text("seq.functional.print", printed(fn));
  Tensor a = torch::tensor({{{-1.0f, 2.0f}}, {{3.0f, -4.0f}}}).requires_grad_();
  fact("seq.functional.out", fn->forward(a * 1));
  text("seq.flatten.print", printed(torch::nn::Flatten(torch::nn::FlattenOptions().start_dim(0))));
}

void init_functions() {
  torch::manual_seed(3);
  Tensor w = torch::empty({4, 3}).requires_grad_();
  torch::nn::init::xavier_uniform_(w);
  fact("init.xavier_uniform", w);
  torch::nn::init::xavier_normal_(w, 2.0);
  fact("init.xavier_normal", w);
  torch::nn::init::kaiming_uniform_(w, 0, torch::kFanOut, torch::kReLU);
  fact("init.kaiming_uniform", w);
  torch::nn::init::kaiming_normal_(w);
  fact("init.kaiming_normal", w);
  torch::nn::init::normal_(w, 1.0, 0.5);
  fact("init.normal", w);
  torch::nn::init::uniform_(w, -2, 2);
  fact("init.uniform", w);
  torch::nn::init::constant_(w, 0.5);
  fact("init.constant", w);
  torch::nn::init::zeros_(w);
  fact("init.zeros", w);
  torch::nn::init::ones_(w);
  fact("init.ones", w);
  emit("init.gain", json{{"tanh", torch::nn::init::calculate_gain(torch::kTanh)},
                         {"relu", torch::nn::init::calculate_gain(torch::kReLU)},
                         {"leaky", torch::nn::init::calculate_gain(torch::kLeakyReLU, 0.2)},
                         {"sigmoid", torch::nn::init::calculate_gain(torch::kSigmoid)}});
}

// A few steps of a small regression, the loop students write, for one optimiser.
template <class Opt, class Options>
void train(const std::string& label, const Options& options, int steps = 3) {
  torch::manual_seed(4);
  torch::nn::Sequential model(torch::nn::Linear(3, 4), torch::nn::Tanh(), torch::nn::Linear(4, 1));
  Opt opt(model->parameters(), options);
  Tensor x = torch::randn({5, 3});
  Tensor target = torch::randn({5, 1});
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    Tensor loss = F::mse_loss(model->forward(x), target);
    loss.backward();
    opt.step();
  }
  for (const auto& p : model->named_parameters()) fact(label + "." + p.key(), p.value());
  fact(label + ".loss", F::mse_loss(model->forward(x), target));
}

void optimisers() {
  using namespace torch::optim;
  train<SGD>("sgd", SGDOptions(0.1));
  train<SGD>("sgd.momentum", SGDOptions(0.1).momentum(0.9));
  train<SGD>("sgd.dampening", SGDOptions(0.1).momentum(0.9).dampening(0.5));
  train<SGD>("sgd.nesterov", SGDOptions(0.05).momentum(0.8).nesterov(true));
  train<SGD>("sgd.weight_decay", SGDOptions(0.1).momentum(0.5).weight_decay(0.01));
  train<Adam>("adam", AdamOptions(0.01), 4);
  train<Adam>("adam.amsgrad", AdamOptions(0.02).amsgrad(true).betas(std::make_tuple(0.8, 0.9)), 4);
  train<Adam>("adam.weight_decay", AdamOptions(0.01).weight_decay(0.1).eps(1e-6), 4);
  train<AdamW>("adamw", AdamWOptions(0.01), 4);

  attempt("optim.bad_lr", [] { SGD({torch::ones({1}, torch::requires_grad())}, SGDOptions(-1)); });
  attempt("optim.nesterov", [] {
    SGD({torch::ones({1}, torch::requires_grad())}, SGDOptions(0.1).nesterov(true));
  });
  attempt("optim.bad_beta", [] {
    Adam({torch::ones({1}, torch::requires_grad())}, AdamOptions().betas(std::make_tuple(0.9, 1.0)));
  });
  attempt("optim.bad_eps", [] { Adam({torch::ones({1}, torch::requires_grad())}, AdamOptions().eps(-1)); });
  attempt("optim.non_leaf", [] { SGD({torch::ones({1}, torch::requires_grad()) * 2}, SGDOptions(0.1)); });

  // What a step does to the parameters' versions and gradients.
  Tensor w = torch::tensor({1.0f, -2.0f}, torch::requires_grad());
  Tensor v = torch::tensor({0.5f, 0.5f}, torch::requires_grad());
  SGD sgd({w}, SGDOptions(0.5));
  (w * w).sum().backward();
  sgd.step();
  fact("optim.sgd.version", w);
  sgd.zero_grad();
  fact("optim.sgd.zero_grad", w);
  Adam adam({v}, AdamOptions(0.1));
  (v * 3).sum().backward();
  adam.step();
  fact("optim.adam.version", v);
  emit("optim.sizes", json{{"sgd", sgd.size()}, {"adam", adam.size()}, {"adam_state", adam.state().size()},
                           {"sgd_state", sgd.state().size()}});

  // A closure: step runs it with grad mode on and returns its loss.
  Tensor z = torch::tensor({2.0f}, torch::requires_grad());
  SGD closure_opt({z}, SGDOptions(0.25));
  Tensor loss = closure_opt.step([&] {
    closure_opt.zero_grad();
    Tensor l = (z * z).sum();
    l.backward();
    return l;
  });
  fact("optim.closure.loss", loss);
  fact("optim.closure.param", z);

  // Two groups, each with its own learning rate; the lr read and changed
  // through the group's options, as a schedule does.
  Tensor a = torch::tensor({1.0f}, torch::requires_grad());
  Tensor b = torch::tensor({1.0f}, torch::requires_grad());
  std::vector<OptimizerParamGroup> groups{OptimizerParamGroup({a}),
                                          OptimizerParamGroup({b}, std::make_unique<SGDOptions>(0.5))};
  SGD grouped(groups, SGDOptions(0.1));
  (a + b).sum().backward();
  grouped.step();
  static_cast<SGDOptions&>(grouped.param_groups()[0].options()).lr(1.0);
  grouped.param_groups()[1].options().set_lr(0.0);
  grouped.step();
  fact("optim.groups.a", a);
  fact("optim.groups.b", b);
  emit("optim.groups.lr", json{{"first", grouped.param_groups()[0].options().get_lr()},
                               {"second", static_cast<SGDOptions&>(grouped.param_groups()[1].options()).lr()}});
}

// The class-index losses with their options, and cross-entropy against probabilities.
void class_losses() {
  torch::manual_seed(6);
  const Tensor logits = torch::randn({4, 3});
  const Tensor target = torch::tensor({2, 0, 1, 2}, torch::kLong);
  const Tensor weight = torch::tensor({0.2f, 1.0f, 3.0f});
  auto leaf = [&] { return logits.clone().requires_grad_(); };
  auto loss_and_grad = [&](const std::string& label, const std::function<Tensor(const Tensor&)>& f) {
    Tensor x = leaf();
    Tensor l = f(x);
    fact(label, l);
    l.sum().backward();
    fact(label + ".grad", x);
  };
  using Opts = F::CrossEntropyFuncOptions;
  loss_and_grad("ce.weight.mean", [&](const Tensor& x) { return F::cross_entropy(x, target, Opts().weight(weight)); });
  loss_and_grad("ce.weight.sum",
                [&](const Tensor& x) { return F::cross_entropy(x, target, Opts().weight(weight).reduction(torch::kSum)); });
  loss_and_grad("ce.weight.none", [&](const Tensor& x) {
    return F::cross_entropy(x, target, Opts().weight(weight).reduction(torch::kNone));
  });
  loss_and_grad("ce.ignore.mean", [&](const Tensor& x) { return F::cross_entropy(x, target, Opts().ignore_index(2)); });
  loss_and_grad("ce.ignore.weight.none", [&](const Tensor& x) {
    return F::cross_entropy(x, target, Opts().ignore_index(0).weight(weight).reduction(torch::kNone));
  });
  loss_and_grad("ce.all_ignored", [&](const Tensor& x) {
    return F::cross_entropy(x, torch::full({4}, 1, torch::kLong), Opts().ignore_index(1));
  });
  loss_and_grad("ce.smooth.mean", [&](const Tensor& x) { return F::cross_entropy(x, target, Opts().label_smoothing(0.1)); });
  loss_and_grad("ce.smooth.weight.ignore", [&](const Tensor& x) {
    return F::cross_entropy(x, target, Opts().label_smoothing(0.3).weight(weight).ignore_index(0));
  });
  loss_and_grad("ce.smooth.none.ignore", [&](const Tensor& x) {
    return F::cross_entropy(x, target, Opts().label_smoothing(0.2).ignore_index(2).reduction(torch::kNone));
  });
  loss_and_grad("ce.smooth.sum", [&](const Tensor& x) {
    return F::cross_entropy(x, target, Opts().label_smoothing(0.2).reduction(torch::kSum));
  });

  const Tensor probs = torch::softmax(torch::randn({4, 3}), 1);
  loss_and_grad("ce.probs.mean", [&](const Tensor& x) { return F::cross_entropy(x, probs); });
  loss_and_grad("ce.probs.weight.smooth", [&](const Tensor& x) {
    return F::cross_entropy(x, probs, Opts().weight(weight).label_smoothing(0.25));
  });
  loss_and_grad("ce.probs.none",
                [&](const Tensor& x) { return F::cross_entropy(x, probs, Opts().reduction(torch::kNone)); });
  Tensor soft = probs.clone().requires_grad_();
  F::cross_entropy(leaf(), soft, Opts().reduction(torch::kSum)).backward();
  fact("ce.probs.target_grad", soft);

  // A 1-d input and a 0-d target: one sample without a batch.
  loss_and_grad("ce.unbatched", [&](const Tensor& x) { return F::cross_entropy(x[1], target[1]); });
  // (N, C, d) and (N, C, H, W): the spatial losses.
  const Tensor seq_target = torch::tensor({{0, 2, 1, 1, 0}, {2, 2, 0, 1, 1}}, torch::kLong);
  Tensor x3 = torch::randn({2, 3, 5}).requires_grad_();
  Tensor l3 = F::cross_entropy(x3, seq_target, Opts().weight(weight).ignore_index(1));
  fact("ce.3d", l3);
  l3.backward();
  fact("ce.3d.grad", x3);
  fact("ce.3d.none", F::cross_entropy(x3, seq_target, Opts().reduction(torch::kNone)));
  Tensor x4 = torch::randn({2, 3, 2, 2}).requires_grad_();
  const Tensor img_target = torch::tensor({{{0, 1}, {2, 2}}, {{1, 1}, {0, 2}}}, torch::kLong);
  Tensor l4 = F::cross_entropy(x4, img_target, Opts().label_smoothing(0.1));
  fact("ce.4d", l4);
  l4.backward();
  fact("ce.4d.grad", x4);
  fact("nll.4d.none", F::nll_loss(x4.log_softmax(1), img_target, F::NLLLossFuncOptions().reduction(torch::kNone)));
  fact("nll.5d", F::nll_loss(torch::randn({1, 3, 2, 1, 2}).requires_grad_(), torch::zeros({1, 2, 1, 2}, torch::kLong)));

  // Second derivatives through the weighted loss, 2-d and spatial.
  for (const bool spatial : {false, true}) {
    Tensor x = spatial ? x4.detach().clone().requires_grad_() : leaf();
    const Tensor t = spatial ? img_target : target;
    Tensor l = F::cross_entropy(x, t, Opts().weight(weight));
    Tensor g = torch::autograd::grad({l}, {x}, {}, true, true)[0];
    const std::string label = spatial ? "ce.double.4d" : "ce.double.2d";
    fact(label + ".g", g);
    Tensor gg = torch::autograd::grad({g.pow(2).sum()}, {x})[0];
    fact(label + ".gg", gg);
  }

  // The ATen spellings and the modules.
  fact("nll.aten", torch::nll_loss(logits.log_softmax(1), target, weight, at::Reduction::Sum, 2));
  fact("ce.aten", torch::cross_entropy_loss(logits, target, weight, at::Reduction::Mean, 0, 0.15));
  torch::nn::CrossEntropyLoss ce_module(torch::nn::CrossEntropyLossOptions().weight(weight).label_smoothing(0.05));
  fact("ce.module", ce_module(logits, target));
  torch::nn::NLLLoss nll_module(torch::nn::NLLLossOptions().ignore_index(0).reduction(torch::kSum));
  fact("nll.module", nll_module->forward(logits.log_softmax(1), target));

  attempt("error.ce.target_bounds", [&] { F::cross_entropy(logits, torch::tensor({0, 1, 3, 0}, torch::kLong)); });
  attempt("error.ce.negative_target", [&] { F::cross_entropy(logits, torch::tensor({0, -1, 2, 0}, torch::kLong)); });
  attempt("error.ce.weight_size", [&] { F::cross_entropy(logits, target, Opts().weight(torch::ones({2}))); });
  attempt("error.ce.weight_requires_grad",
          [&] { F::cross_entropy(logits, target, Opts().weight(torch::ones({3}, torch::requires_grad()))); });
  attempt("error.ce.prob_int", [&] { F::cross_entropy(logits, torch::ones({4, 3}, torch::kLong)); });
  attempt("error.ce.prob_ignore", [&] { F::cross_entropy(logits, probs, Opts().ignore_index(1)); });
  attempt("error.ce.smoothing", [&] { F::cross_entropy(logits, target, Opts().label_smoothing(1.5)); });
  attempt("error.ce.batch", [&] { F::cross_entropy(logits, torch::tensor({0, 1}, torch::kLong)); });
  attempt("error.ce.3d_target", [&] { F::cross_entropy(x3, torch::zeros({2, 4}, torch::kLong)); });
  attempt("error.nll.0d", [&] { F::nll_loss(torch::tensor(1.0f), torch::tensor(0, torch::kLong)); });
  attempt("error.nll.float_target", [&] { F::nll_loss(logits, torch::zeros({4})); });
  attempt("error.nll.unbatched", [&] { F::nll_loss(logits[0], target[0]); });
  attempt("error.nll.batch", [&] { F::nll_loss(logits, torch::zeros({3}, torch::kLong)); });
  fact("nll.aten.unbatched", torch::nll_loss(logits[0].log_softmax(0), target[0], {}));
}

// Loss modules are modules: registered as a network's criterion, printed,
// held empty; the binary cross-entropies through their options.
struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl() {
    fc = register_module("fc", torch::nn::Linear(3, 2));
    criterion = register_module("criterion", torch::nn::CrossEntropyLoss(torch::nn::CrossEntropyLossOptions().label_smoothing(0.1)));
  }
  Tensor loss(const Tensor& x, const Tensor& y) { return criterion(fc(x), y); }
  torch::nn::Linear fc{nullptr};
  torch::nn::CrossEntropyLoss criterion{nullptr};
};
TORCH_MODULE(Classifier);

void loss_modules() {
  torch::manual_seed(8);
  Classifier net;
  text("losses.classifier.print", printed(*net));
  emit("losses.classifier.parameters", json{{"keys", keys(net->named_parameters())}});
  Tensor l = net->loss(torch::randn({4, 3}), torch::tensor({0, 1, 1, 0}, torch::kLong));
  fact("losses.classifier.loss", l);
  text("losses.mse.print", printed(torch::nn::MSELoss(torch::kSum)));
  text("losses.nll.print", printed(torch::nn::NLLLoss()));
  text("losses.bce.print", printed(torch::nn::BCELoss()));
  text("losses.bce_logits.print", printed(torch::nn::BCEWithLogitsLoss()));
  text("losses.mse.name", torch::nn::MSELoss()->name());
  torch::nn::MSELoss empty{nullptr};
  emit("losses.empty_holder", json{{"empty", empty.is_empty()}});

  const Tensor p = torch::rand({5}).requires_grad_(), y = torch::rand({5}), w = torch::rand({5});
  Tensor bce = F::binary_cross_entropy(p, y, F::BinaryCrossEntropyFuncOptions().weight(w).reduction(torch::kSum));
  fact("losses.bce.functional", bce);
  bce.backward();
  fact("losses.bce.functional.grad", p);
  torch::nn::BCEWithLogitsLoss with_logits(torch::nn::BCEWithLogitsLossOptions().pos_weight(torch::full({5}, 2.0)));
  fact("losses.bce_logits.module", with_logits(p, y));
  fact("losses.bce_logits.functional",
       F::binary_cross_entropy_with_logits(p, y, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone)));
  torch::nn::BCELoss bce_module(torch::nn::BCELossOptions().weight(w));
  fact("losses.bce.module", bce_module->forward(p, y));

  torch::nn::Sequential seq(torch::nn::Linear(1, 1), torch::nn::ReLU());
  attempt("error.sequential_at_wrong_type", [&] { seq->at<torch::nn::LinearImpl>(1); });
  // amsgrad turned on after the first step: the state it needs was never made.
  attempt("error.amsgrad_toggled", [] {
    Tensor v = torch::ones({2}, torch::requires_grad());
    torch::optim::Adam adam({v}, torch::optim::AdamOptions(0.1));
    (v * v).sum().backward();
    adam.step();
    static_cast<torch::optim::AdamOptions&>(adam.param_groups()[0].options()).amsgrad(true);
    adam.step();
  });
}

// What a training loop borrows: shuffled minibatches (randperm), gradient
// clipping, leaky_relu.
void training_utilities() {
  torch::manual_seed(9);
  fact("randperm.10", torch::randperm(10));
  fact("randperm.float", torch::randperm(6, torch::kFloat));
  fact("randperm.after", torch::rand({3}));
  fact("randperm.1", torch::randperm(1));
  fact("randperm.0", torch::randperm(0));
  attempt("randperm.negative", [] { torch::randperm(-1); });

  auto grads = [](std::vector<Tensor> ps) {
    for (auto& p : ps) p.mutable_grad() = p.detach() * 3;
    return ps;
  };
  auto a = torch::tensor({1.0f, -2.0f}, torch::requires_grad()), b = torch::tensor({{0.5f, 4.0f}}, torch::requires_grad());
  emit("clip.norm.total", json{{"value", torch::nn::utils::clip_grad_norm_(grads({a, b}), 1.0)}});
  fact("clip.norm.a", a);
  fact("clip.norm.b", b);
  // The max norm, on double gradients (LibTorch 1.13 raises a dtype error for float ones).
  auto ad = a.detach().to(torch::kDouble).requires_grad_(), bd = b.detach().to(torch::kDouble).requires_grad_();
  emit("clip.norm.inf", json{{"value", torch::nn::utils::clip_grad_norm_(grads({ad, bd}), 2.0, INFINITY)}});
  fact("clip.norm.inf.b", bd);
  attempt("clip.norm.inf.float", [&] { torch::nn::utils::clip_grad_norm_(grads({a, b}), 2.0, INFINITY); });
  emit("clip.norm.p1.single", json{{"value", torch::nn::utils::clip_grad_norm_(grads({a})[0], 100.0, 1.0)}});
  fact("clip.norm.unclipped", a);
  emit("clip.norm.none", json{{"value", torch::nn::utils::clip_grad_norm_({torch::ones({2}, torch::requires_grad())}, 1.0)}});
  grads({a, b});
  torch::nn::utils::clip_grad_value_({a, b}, 2.5);
  fact("clip.value.a", a);
  fact("clip.value.b", b);
  attempt("clip.nonfinite", [] {
    Tensor n = torch::ones({2}, torch::requires_grad());
    n.mutable_grad() = torch::tensor({1.0f, INFINITY});
    torch::nn::utils::clip_grad_norm_(n, 1.0, 2.0, true);
  });

  Tensor x = torch::tensor({-2.0, -0.5, 0.0, 1.5, static_cast<double>(NAN)}, torch::kDouble).requires_grad_();
  Tensor y = torch::leaky_relu(x, 0.2);
  fact("leaky_relu", y);
  Tensor g = torch::autograd::grad({(y * y).sum()}, {x}, {}, true, true)[0];
  fact("leaky_relu.g", g);
  fact("leaky_relu.gg", torch::autograd::grad({g.sum()}, {x})[0]);
  fact("leaky_relu.functional", F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.3)));
  torch::nn::LeakyReLU module(torch::nn::LeakyReLUOptions().negative_slope(0.1));
  fact("leaky_relu.module", module(x));
  text("leaky_relu.print", printed(module));
  text("leaky_relu.print.default", printed(torch::nn::LeakyReLU()));
  attempt("leaky_relu.int", [] { torch::leaky_relu(torch::tensor({1, -1})); });
  // In place: LeakyReluBackward1 saves the result, and refuses a negative slope in backward.
  Tensor h = x * 1;
  torch::leaky_relu_(h, 0.2);
  fact("leaky_relu_.out", h);
  Tensor hg = torch::autograd::grad({(h * h).sum()}, {x}, {}, true, true)[0];
  fact("leaky_relu_.g", hg);
  fact("leaky_relu_.gg", torch::autograd::grad({hg.sum()}, {x})[0]);
  torch::nn::LeakyReLU in_place(torch::nn::LeakyReLUOptions().negative_slope(0.1).inplace(true));
  text("leaky_relu_.print", printed(in_place));
  fact("leaky_relu_.module", in_place(x * 2));
  fact("leaky_relu_.functional", F::leaky_relu(x * 3, F::LeakyReLUFuncOptions().negative_slope(0.3).inplace(true)));
  Tensor negative = x * 1;
  torch::leaky_relu_(negative, -0.5);
  attempt("leaky_relu_.negative_slope_backward", [&] { negative.sum().backward(); });
  attempt("leaky_relu_.leaf", [&] { torch::leaky_relu_(x, 0.1); });
}

void moving_modules() {
  torch::manual_seed(5);
  torch::nn::Linear lin(2, 2);
  Tensor handle = lin->weight;
  torch::optim::SGD opt(lin->parameters(), torch::optim::SGDOptions(0.1));
  lin->to(torch::kDouble);
  fact("to.double.weight", lin->weight);
  fact("to.double.handle", handle);
  Tensor y = lin(torch::ones({1, 2}, torch::kDouble));
  fact("to.double.out", y);
  y.sum().backward();
  opt.step();
  fact("to.double.stepped", lin->weight);
}

}  // namespace

int main() {
  linear_layers();
  module_tree();
  module_errors();
  sequential_models();
  init_functions();
  optimisers();
  class_losses();
  loss_modules();
  training_utilities();
  moving_modules();
  return 0;
}
