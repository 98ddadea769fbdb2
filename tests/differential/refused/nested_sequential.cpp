// expect: non-templatized argument type
// A Sequential cannot hold a Sequential: LibTorch's AnyModule needs a plain forward.
#include <torch/torch.h>
int main() {
  torch::nn::Sequential outer(torch::nn::Linear(2, 2));
#ifdef AS_LIBTORCH_TAKES_IT
  outer->push_back(torch::nn::ReLU());
#else
  outer->push_back(torch::nn::Sequential(torch::nn::ReLU()));
#endif
  return outer->size() == 2 ? 0 : 1;
}
