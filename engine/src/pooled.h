// The pooled classes' operator new and delete (declared inline by
// GRADLAB_POOLED in the public headers). Every library file that makes such
// an object, or defines its destructor, includes this through
// ops/ops_internal.h; nothing outside the library makes or destroys them
// directly (a tensor's last reference is dropped through its virtual
// destructor, defined here).
#pragma once
#include "gradlab/autograd.h"
#include "gradlab/tensor.h"
#include "pool.h"

namespace gradlab {
GRADLAB_DEFINE_POOLED(StorageImpl)
GRADLAB_DEFINE_POOLED(VersionCounter)
GRADLAB_DEFINE_POOLED(TensorImpl)
GRADLAB_DEFINE_POOLED(autograd::AccumulateGrad)
}  // namespace gradlab
