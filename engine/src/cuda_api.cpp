// torch::cuda as LibTorch spells it, on top of whichever CUDA support this
// build has (engine/src/backend/cuda, or cuda_stub.cpp).
#include "torch/torch.h"

namespace torch::cuda {
bool is_available() { return gradlab::cuda_device_count() > 0; }
int64_t device_count() { return gradlab::cuda_device_count(); }
void synchronize(int64_t) { gradlab::cuda_synchronize(); }
}  // namespace torch::cuda
