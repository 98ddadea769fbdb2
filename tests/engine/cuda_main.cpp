// The CUDA tests' entry point: without a GPU (or without the CUDA backend)
// the whole binary reports "skipped" to ctest (exit 77), never "passed".
#define CATCH_CONFIG_RUNNER
#include "catch_compat.h"
#include <iostream>
#include <torch/torch.h>

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::cout << "skipped: no CUDA GPU to test on (" << gradlab::cuda_status() << ")\n";
    return 77;
  }
  std::cout << "testing on " << gradlab::cuda_device_name(0) << "\n";
  return Catch::Session().run(argc, argv);
}
