// What the grader knows of a tensor and its graph, as JSON: written by the
// harness inside the student's program, and by the grader's replay of the op
// tape (grader/src/judge/replay.cpp) from its own engine, so that the two can be
// compared field by field. Header-only and written against the torch:: API
// alone: the harness is also compiled against LibTorch, as one file.
#ifndef GRADLAB_FACTS_OF_H
#define GRADLAB_FACTS_OF_H
#include <torch/torch.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lab::facts {

using json = nlohmann::ordered_json;
using Named = std::vector<std::pair<std::string, torch::Tensor>>;

// Values beyond this many elements are not sent; exercises use small tensors.
inline constexpr int64_t kMaxValues = 4096;

// JSON has no NaN or infinity; they travel as strings.
inline json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

inline json values_of(const torch::Tensor& t) {
  json out = json::array();
  torch::Tensor c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  const int64_t n = std::min<int64_t>(c.numel(), kMaxValues);
  for (int64_t i = 0; i < n; ++i) out.push_back(number(p[i]));
  return out;
}

inline std::string error_text(const std::exception& e) {
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) return ce->what_without_backtrace();
  return e.what();
}

inline json describe(const torch::Tensor& t) {
  json j;
  j["defined"] = t.defined();
  if (!t.defined()) return j;
  j["shape"] = t.sizes().vec();
  j["dtype"] = c10::str(t.scalar_type());
  j["device"] = c10::str(t.device());
  j["requires_grad"] = t.requires_grad();
  j["is_leaf"] = t.is_leaf();
  j["retains_grad"] = t.retains_grad();
  j["grad_fn"] = t.grad_fn() ? json(t.grad_fn()->name()) : json(nullptr);
  // An inference tensor (made under InferenceMode) keeps no version counter,
  // and asking for one throws: the grader's reading must not.
  j["version"] = t.is_inference() ? json(nullptr) : json(t._version());
  j["values"] = values_of(t);
  if (t.numel() > kMaxValues) j["values_truncated"] = true;
  // PyTorch keeps .grad only on leaves and on tensors that retain it; reading
  // it elsewhere warns, and the warning would be blamed on the student.
  if (t.is_leaf() || t.retains_grad()) {
    const torch::Tensor& g = t.grad();
    if (g.defined()) {
      j["grad"] = {{"shape", g.sizes().vec()}, {"values", values_of(g)}};
    } else {
      j["grad"] = nullptr;
    }
  } else {
    j["grad"] = nullptr;
  }
  return j;
}

// The backward graph below `root`, breadth first along next_edges in order,
// so the same graph always gets the same node ids. Nodes that are a named
// tensor's grad_fn, or the AccumulateGrad of a named leaf, carry the name.
inline json graph_of(const torch::Tensor& root, const std::vector<std::pair<std::string, torch::Tensor>>& named) {
  using torch::autograd::Node;
  std::unordered_map<const Node*, size_t> id;
  std::vector<std::shared_ptr<Node>> order;
  auto visit = [&](const std::shared_ptr<Node>& n) {
    if (!n || id.count(n.get())) return;
    id.emplace(n.get(), order.size());
    order.push_back(n);
  };
  visit(root.grad_fn());
  for (size_t i = 0; i < order.size(); ++i)
    for (const auto& e : order[i]->next_edges()) visit(e.function);

  json nodes = json::array();
  for (const auto& n : order) {
    json node;
    node["id"] = "n" + std::to_string(id[n.get()]);
    node["name"] = n->name();
    json tensors = json::array();
    if (auto* acc = dynamic_cast<torch::autograd::AccumulateGrad*>(n.get())) {
      for (const auto& [name, t] : named)
        if (t.defined() && acc->variable.is_same(t)) tensors.push_back(name);
      // A leaf's picture shows its shape (torchviz's convention), named or not.
      if (acc->variable.defined()) node["shape"] = acc->variable.sizes().vec();
    } else {
      for (const auto& [name, t] : named)
        if (t.defined() && t.grad_fn().get() == n.get()) tensors.push_back(name);
    }
    node["tensors"] = tensors;
    json next = json::array();
    for (const auto& e : n->next_edges()) {
      if (e.function)
        next.push_back({"n" + std::to_string(id[e.function.get()]), e.input_nr});
      else
        next.push_back({nullptr, e.input_nr});
    }
    node["next"] = next;
    nodes.push_back(node);
  }
  return nodes;
}


// The probes that act on the named tensors' state (a second backward, an
// in-place change), run alike by the harness and by the replay. Null for a
// kind that is not one of them.
inline json state_probe(const Named& named, const json& p) {
  const std::string kind = p.at("kind");
  auto need = [&](const char* key) -> const torch::Tensor& {
    const std::string name = p.at(key);
    for (const auto& [n, t] : named)
      if (n == name) return t;
    throw std::runtime_error("the exercise did not name a tensor \"" + name + "\"");
  };
  if (kind == "backward") {
    need("tensor").backward({}, p.value("retain_graph", false));
    return {{"ok", true}};
  }
  if (kind == "inplace") {
    // Changes a named tensor in place (outside autograd when no_grad is set),
    // which bumps its version, as a student's stray `x += 1` would.
    std::unique_ptr<torch::NoGradGuard> guard;
    if (p.value("no_grad", true)) guard = std::make_unique<torch::NoGradGuard>();
    need("tensor").add_(p.value("value", 1.0));
    return {{"ok", true}};
  }
  return nullptr;
}

}  // namespace lab::facts

#endif  // GRADLAB_FACTS_OF_H
