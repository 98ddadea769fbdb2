// What `grade` exits with, as its --help and the README document: the
// verdict of one grading, or what stopped the grader. The result model is
// reports/'s; which number each outcome gets is the command line's business.
#pragma once
#include "reports/result.h"

namespace grader {

enum ExitCode : int {
  kExitPassed = 0,
  kExitFailed = 1,
  kExitCompileError = 2,
  kExitRuntimeError = 3,
  kExitUsage = 64,
  kExitNoDevice = 69,
  kExitInternal = 70,
};

inline int exit_code_for(const Result& r) {
  switch (r.verdict) {
    case Verdict::Passed: return kExitPassed;
    case Verdict::Failed: return kExitFailed;
    case Verdict::CompileError: return kExitCompileError;
    case Verdict::RuntimeError: return kExitRuntimeError;
    case Verdict::Missing: return kExitFailed;
    case Verdict::InternalError: return kExitInternal;
    case Verdict::SharedFile: return kExitFailed;
  }
  return kExitFailed;
}

}  // namespace grader
