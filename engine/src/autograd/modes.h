// The grad and inference mode flags: thread-local, as in PyTorch. Declared
// __thread plain data (not thread_local) so that reading one is a single
// TLS-relative load with no wrapper call (see pool.h). The library's own
// checks, one or more per op, read them inline through these; GradMode and
// InferenceMode (gradlab/autograd.h) are the public, out-of-line doors.
#pragma once

namespace gradlab::detail {

struct ModeFlags {
  bool grad_disabled;  // zero-initialised: grad mode starts on
  bool inference;
};
extern __thread ModeFlags t_modes __attribute__((tls_model("initial-exec")));

inline bool grad_mode() { return !t_modes.grad_disabled; }
inline bool inference_mode() { return t_modes.inference; }

}  // namespace gradlab::detail
