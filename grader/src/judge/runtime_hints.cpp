#include "judge/runtime_hints.h"

#include <utility>

namespace grader {

std::string runtime_hint(const std::string& message) {
  // (message part, what to do), most specific first.
  static const std::pair<const char*, const char*> known[] = {
      {"a leaf Variable that requires grad is being used in an in-place operation",
       "An update of a parameter goes under a torch::NoGradGuard: { torch::NoGradGuard no_grad; w -= lr * w.grad(); }, "
       "so that autograd does not record it."},
      {"Trying to backward through the graph a second time",
       "A second backward through the same graph needs retain_graph=true on the first one: "
       "loss.backward({}, /*retain_graph=*/true). Otherwise build the graph again."},
      {"grad can be implicitly created only for scalar outputs",
       "Start backward from a scalar (t.sum().backward()), or give a gradient of t's shape: "
       "t.backward(torch::ones_like(t))."},
      {"does not require grad and does not have a grad_fn",
       "Nothing that backward starts from requires grad: create the inputs with torch::requires_grad(), "
       "and compute the result outside any torch::NoGradGuard."},
      {"modified by an inplace operation",
       "A tensor that a backward needs was changed in place after it was used: make a new tensor instead "
       "(t = t + 1, not t += 1), or change a clone."},
  };
  for (const auto& [part, hint] : known)
    if (message.find(part) != std::string::npos) return hint;
  return "";
}

}  // namespace grader
