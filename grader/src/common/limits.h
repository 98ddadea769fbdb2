// What one fenced run may use: a rubric sets them per exercise (its
// "limits", judge/rubric.h) and the fence enforces them (fence/sandbox.h).
// Plain numbers, so that neither has to know the other.
#pragma once

namespace grader {

struct Limits {
  double cpu_seconds = 2;
  double wall_seconds = 5;
  long memory_mb = 1024;
  long output_kb = 256;
  long processes = 16;
};

}  // namespace grader
