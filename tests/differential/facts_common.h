// What both differential programs share: how a tensor, an attempt and a
// labelled fact are printed as one JSON line. Written against the torch::
// subset both sides have (see facts.cpp).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace facts {

using json = nlohmann::json;
using torch::Tensor;

inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(torch::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

inline json next_names(const Tensor& t) {
  json r = json::array();
  if (!t.grad_fn()) return r;
  for (const auto& e : t.grad_fn()->next_edges())
    r.push_back(json::array({e.function ? json(e.function->name()) : json(nullptr), e.input_nr}));
  return r;
}

// The whole backward graph below a node, as PyTorch's own tests write it:
// Name(child child ...), "None" for a missing edge.
inline std::string graph_desc(const std::shared_ptr<torch::autograd::Node>& node) {
  if (!node) return "None";
  std::string r = node->name() + "(";
  for (const auto& e : node->next_edges()) r += graph_desc(e.function);
  return r + ")";
}

inline void emit(const std::string& label, json j) {
  j["label"] = label;
  std::cout << j.dump() << '\n';
}

// Everything autograd says about a tensor. grad() is read only where it is
// defined behaviour without a warning (leaves, or tensors that retain grad).
inline void fact(const std::string& label, const Tensor& t) {
  json j;
  j["defined"] = t.defined();
  if (t.defined()) {
    j["shape"] = t.sizes().vec();
    j["dtype"] = c10::str(t.scalar_type());
    j["requires_grad"] = t.requires_grad();
    j["is_leaf"] = t.is_leaf();
    j["grad_fn"] = t.grad_fn() ? json(t.grad_fn()->name()) : json(nullptr);
    j["next"] = next_names(t);
    j["retains_grad"] = t.retains_grad();
    j["version"] = t._version();
    j["is_view"] = t.is_view();
    j["values"] = values(t);
    if (t.is_leaf() || t.retains_grad()) {
      const Tensor& g = t.grad();
      j["grad"] = g.defined() ? json(values(g)) : json(nullptr);
      if (g.defined()) j["grad_shape"] = g.sizes().vec();
    }
  }
  emit(label, j);
}

// A printed text (a module, a graph) as a fact.
inline void text(const std::string& label, const std::string& s) { emit(label, json{{"text", s}}); }
// What `os << m` prints.
template <class M>
std::string printed(const M& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

// Runs a statement and records whether it raised, and what.
inline void attempt(const std::string& label, const std::function<void()>& fn) {
  json j;
  try {
    fn();
    j["raised"] = false;
  } catch (const c10::Error& e) {
    j["raised"] = true;
    j["type"] = "c10::Error";
    j["message"] = e.what_without_backtrace();
  } catch (const std::exception& e) {
    j["raised"] = true;
    j["type"] = "std::exception";
    j["message"] = e.what();
  }
  emit(label, j);
}

}  // namespace facts
