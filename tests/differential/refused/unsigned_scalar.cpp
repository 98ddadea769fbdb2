// expect: ambiguous
// A size_t is no c10::Scalar: x / v.size() is ambiguous in LibTorch.
#include <torch/torch.h>
#include <vector>
int main() {
  std::vector<float> v(4);
  torch::Tensor x = torch::ones({3});
#ifdef AS_LIBTORCH_TAKES_IT
  x = x / static_cast<int64_t>(v.size());
#else
  x = x / v.size();
#endif
  return x.numel() == 3 ? 0 : 1;
}
