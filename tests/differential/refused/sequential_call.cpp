// expect: LibTorch cannot call this holder
// LibTorch's Sequential holder is not callable: its forward is a template.
#include <torch/torch.h>
int main() {
  torch::nn::Sequential net(torch::nn::Linear(2, 2));
#ifdef AS_LIBTORCH_TAKES_IT
  return net->forward(torch::ones({1, 2})).numel() == 2 ? 0 : 1;
#else
  return net(torch::ones({1, 2})).numel() == 2 ? 0 : 1;
#endif
}
