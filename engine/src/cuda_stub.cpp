// A build without the CUDA toolkit: no CUDA backend, no GPU. The queries
// answer honestly instead of failing, so student code can test for a GPU.
#include "backend/backend.h"

namespace gradlab {
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
std::string cuda_device_name(int) { return ""; }
std::string cuda_status() { return "this build of gradlab has no CUDA backend"; }
void cuda_synchronize() {}
namespace backend {
Backend* cuda_backend() { return nullptr; }
}  // namespace backend
}  // namespace gradlab
