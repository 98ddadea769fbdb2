// expect: cannot convert|no viable conversion
// x.dtype() is a TypeMeta, which turns into a ScalarType only through toScalarType().
#include <torch/torch.h>
int main() {
  torch::Tensor x = torch::ones({1});
#ifdef AS_LIBTORCH_TAKES_IT
  torch::ScalarType t = x.dtype().toScalarType();
#else
  torch::ScalarType t = x.dtype();
#endif
  return t == torch::kFloat ? 0 : 1;
}
