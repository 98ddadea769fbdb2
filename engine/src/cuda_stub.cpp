// torch::cuda queries. The CUDA backend (a later addition) registers itself;
// without it no device is available.
#include "backend/backend.h"
#include "torch/torch.h"

namespace torch::cuda {
bool is_available() { return device_count() > 0; }
int64_t device_count() {
  try {
    (void)gradlab::backend::for_device(gradlab::Device(gradlab::DeviceType::CUDA, 0));
    return 1;
  } catch (const gradlab::Error&) {
    return 0;
  }
}
}  // namespace torch::cuda
