// Replays one recorded case fact by fact. A case is a sequence of statements
// (run facts) and observations (tensor, value and graph facts) in one
// namespace; the test supplies the C++ for each statement and binds the
// case's variable names to its own tensors, and play() walks the recorded
// facts in their original order. A fact the test gives no handler for fails
// the test, so a case cannot be half-checked by accident; facts that are out of
// the engine's scope (LibTorch's own printing, glog's stderr format) are
// skipped explicitly, with the reason.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "reference.h"

namespace ref {

class Scenario {
 public:
  explicit Scenario(std::string case_id, const json& db = cpp());

  // A variable of the case's namespace: tensor facts whose expr is `name`
  // check it, graph facts name leaves after it.
  Scenario& var(const std::string& name, torch::Tensor& t);
  // A statement: run when its fact is reached; outcome (raised or not, the
  // exception's type and text, warnings) compared with the record.
  Scenario& run(const std::string& label, std::function<void()> fn);
  // An observation whose recorded result is plain JSON (bool, number, string, list).
  Scenario& value(const std::string& label, std::function<json()> fn);
  // An observation whose recorded result is a tensor record.
  Scenario& value_tensor(const std::string& label, std::function<torch::Tensor()> fn);
  // A tensor fact whose expr is not a bare variable (e.g. "x.grad()").
  Scenario& expr(const std::string& expr, std::function<torch::Tensor()> fn);
  Scenario& skip(const std::string& label, const std::string& why);

  // Replays every fact in sequence order.
  void play();

 private:
  std::string case_id_;
  const json& facts_;
  std::map<std::string, torch::Tensor*> vars_;
  std::map<std::string, std::function<void()>> runs_;
  std::map<std::string, std::function<json()>> values_;
  std::map<std::string, std::function<torch::Tensor()>> tensor_values_;
  std::map<std::string, std::function<torch::Tensor()>> exprs_;
  std::map<std::string, std::string> skipped_;

  json graph_record(const torch::Tensor& root) const;
};

// JSON equality with floating-point tolerance on numbers.
bool json_close(const json& got, const json& want);

}  // namespace ref
