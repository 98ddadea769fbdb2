// LibTorch declares torch::autograd::AccumulateGrad in this header, which
// torch/torch.h does not include; code that inspects a graph's leaves includes
// it by this path. The engine's torch.h already declares it.
#pragma once
#include <torch/torch.h>
