# Debian's LibTorch (package libtorch-dev), for the differential test and the
# benchmarks. Found by path rather than through its CMake package, which pulls
# in Caffe2's configuration. Defines the target gradlab_libtorch when present.
find_path(GRADLAB_TORCH_API_INCLUDE torch/torch.h PATHS /usr/include/torch/csrc/api/include NO_DEFAULT_PATH)
find_library(GRADLAB_TORCH_LIB torch)
find_library(GRADLAB_TORCH_CPU_LIB torch_cpu)
find_library(GRADLAB_C10_LIB c10)
if(GRADLAB_TORCH_API_INCLUDE AND GRADLAB_TORCH_LIB AND GRADLAB_TORCH_CPU_LIB AND GRADLAB_C10_LIB)
  if(NOT TARGET gradlab_libtorch)
    add_library(gradlab_libtorch INTERFACE)
    target_include_directories(gradlab_libtorch SYSTEM INTERFACE ${GRADLAB_TORCH_API_INCLUDE})
    target_link_libraries(gradlab_libtorch INTERFACE ${GRADLAB_TORCH_LIB} ${GRADLAB_TORCH_CPU_LIB} ${GRADLAB_C10_LIB})
  endif()
  set(GRADLAB_HAVE_LIBTORCH ON)
else()
  set(GRADLAB_HAVE_LIBTORCH OFF)
endif()
