// The replay of a run's op tape (engine/include/gradlab/tape.h) in the
// grader's own engine, and the comparison of what the program claimed with
// what its computation gives. The program shares its process with the harness,
// so what it writes as its result may be forged; the tape, written event by
// event as it ran, is replayed here, and the grade reads the replay's facts.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "reports/result.h"

namespace grader {

// How a provenance says a gradient a backward wrote was then reset by hand
// (mutable_grad() = {}): a tensor that "keeps no gradient" only because the
// program erased it.
inline constexpr const char* kResetAfterBackward = "reset by hand after a backward wrote it";

// A claim that the replay does not bear out: which fact, what the program
// said, what its computation gives.
struct Mismatch {
  std::string what;     // "tensor x", "record \"x.grad after step 1\"", "probe second-backward"
  std::string field;    // "grad", "values", "graph", "message", ...
  std::string claimed;  // as text, cut short
  std::string computed;
};

// What a mismatch's `computed` says of a fact that only a custom Function of
// the program's own vouches for, where the exercise asks for none.
inline constexpr const char* kThroughOwnFunction =
    "through a custom autograd Function of the program's own, which this exercise does not ask for";

// The name a backward's root takes in the root graphs a replay records.
inline constexpr const char* kBackwardRoot = "(backward root)";

struct Verified {
  bool replayed = false;        // a tape was there and replayed to its end
  std::string failure;          // why it could not be (malformed, too large, an op it cannot redo)
  json doc;                     // the result with the replay's facts in place of the program's
  std::vector<Mismatch> mismatches;
  // Facts the replay could not compute and left as the program claimed them:
  // what made them the program's own (a custom Function, an op not on the tape).
  std::vector<std::string> unverified;
};

// Splits the channel's text: the tape's lines, then the result document.
struct Channel {
  std::string_view tape;
  std::string_view result;
};
Channel split_channel(std::string_view text);

// Replays `tape` and holds the program's result (`claimed`, already checked
// against the harness's schema) against it. `probes` are the rubric's.
// (GRADLAB_DEBUG_TAPE=FILE in the grader's environment writes each tape it
// replays to FILE, for whoever debugs the replay.)
// `key` is the run's token: the tape's lines must chain to the digest the
// harness reported (gradlab/tape.h's Chain), or nothing is replayed. Empty:
// no chain to hold them to (tests of the replay itself).
//
// `shadows`: questions of numerical dependence, each answered by replaying
// the tape again with other values (the grader's own, the same for every
// program) given to one named tensor as it is made, or to the gradients
// backward and autograd::grad give for it; the answer is what `observe`
// holds at the end. A program that computed `observe` from `source` gives the
// reference's answer; one that typed its numbers in, or multiplied the
// source away (`w.grad() * 0 + typed`), does not. The answers go to the
// result's provenance.shadows, by the asking check's id: {"values": [...]},
// or {"failed": why} when the shadow could not be replayed. With `records`,
// the answer is what the lab's records of those labels hold instead, in
// order ({"records": [...]}): a recorded number is the one the same item()
// gives in the shadow, so a loss recorded as (loss * 0 + typed).item() does
// not follow the parameters a real loss follows.
struct Shadow {
  std::string id;       // the check that asks
  std::string source;   // the named tensor given other values
  bool grads = false;   // its gradients, not its values
  std::string observe;  // the named tensor read at the end
  std::vector<std::string> records = {};  // or: the records of these labels
};
// `own_functions`: whether the exercise asks for a custom autograd Function
// (rubric.h's custom_functions). Without it, a fact computed through one is a
// mismatch ("through a custom autograd Function ..."), not the program's word.
// `curvature`: probe each backward's root twice over (rubric.h's curvature).
Verified verify(std::string_view tape, const json& claimed, const json& probes, const std::string& key = "",
                const std::vector<Shadow>& shadows = {}, bool own_functions = true, bool curvature = false);

}  // namespace grader
