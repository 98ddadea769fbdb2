// The lab's exercise with a hook that watches the gradient reach p: written
// against LibTorch's API, built against the installed gradlab package.
#include <torch/torch.h>

#include <iostream>

int main() {
  auto x = torch::tensor(-2.0, torch::requires_grad());
  auto y = torch::tensor(2.0, torch::requires_grad());
  auto z = torch::tensor(3.0, torch::requires_grad());
  auto p = x.pow(2);
  double seen = 0;
  p.register_hook([&](torch::Tensor g) { seen = g.item<double>(); });
  auto f = (p + y) * z;
  f.backward();
  std::cout << "dp=" << seen << " dx=" << x.grad().item<double>() << " dy=" << y.grad().item<double>()
            << " dz=" << z.grad().item<double>() << "\n";
  return 0;
}
