// The ops a replay can redo, keyed as the tape names them: "add(TTS)", the
// op's name and its arguments' codes (gradlab/tape.h). Each entry is the
// engine's own function, called with the arguments decoded by the types its
// signature declares, so recording and replaying agree by construction.
#pragma once
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/torch.h>

#include "reports/result.h"

namespace grader::replay {

// The replay's tensors by tape id (throws for an id it never made).
class Tensors {
 public:
  virtual ~Tensors() = default;
  virtual torch::Tensor at(const json& id) = 0;
};

// What an op gave: its tensors in order (tuples and lists flattened), or the
// number it returned (item).
struct Outcome {
  std::vector<torch::Tensor> tensors;
  json value;
};

using Invoker = std::function<Outcome(const json& args, Tensors& tensors)>;
const std::unordered_map<std::string, Invoker>& ops();

}  // namespace grader::replay
