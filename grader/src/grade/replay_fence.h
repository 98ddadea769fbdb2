// The replay of a student's op tape, run in a child process of its own with
// limits of its own (grader/SECURITY.md). The tape is the student's program
// speaking: a program that makes and frees a thousand tensors holds little
// at once, but a replay that kept them all would hold them all; an op that
// failed in the program for want of memory could run for hours when
// replayed. In a child under RLIMIT_AS and RLIMIT_CPU, and a wall-clock
// deadline, such a tape costs the grader a bounded amount and ends in a
// failure the checks report ("the grader could not check the program's
// computation: ..."), never in a grader that hangs or a pass.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "judge/replay.h"

namespace grader {

// What the replay found, as the snapshot carries it to the checks.
json computation_of(const Verified& v);

// The replay's limits: address space, CPU time and wall-clock time.
constexpr long kReplayMemoryBytes = 2L << 30;
constexpr int kReplayCpuSeconds = 25;
constexpr int kReplayWallSeconds = 35;
// And its answer: the result as replayed is the program's (capped at the
// channel's 64 MiB) with provenance beside it; past this the grader stops
// reading (an answer inflated to 394 MB had cost the grader as much memory).
constexpr size_t kReplayAnswerBytes = size_t{256} << 20;

struct FencedReplay {
  json doc;          // the result with the replay's facts in place of the program's (or as claimed, on failure)
  json computation;  // computation_of(): replayed, mismatches, unverified, failure
};

// verify() (replay.h) in a child process under the limits above.
FencedReplay replay_fenced(std::string_view tape, const json& claimed, const json& probes, const std::string& key,
                           const std::vector<Shadow>& shadows, bool own_functions, bool curvature);

}  // namespace grader
