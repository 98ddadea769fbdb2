// What checks.cpp, checks_routes.cpp, checks_grad_routes.cpp and checks_probes.cpp share: a check's outcome before it
// becomes a CheckResult, how numbers are written in messages, and the checks
// of how results were computed (checks_routes.cpp), which read the replay's
// provenance rather than the results.
#pragma once
#include <string>
#include <vector>

#include "judge/checks.h"
#include "judge/replay_route.h"

namespace grader::check_detail {

struct Outcome {
  bool pass = false;
  json expected, found;
  std::string message;
  // What the check reads was never recorded (a tensor not named, a label
  // not attempted, no backward at all): after an exception, not reached.
  bool unreached = false;
};

std::string format_number(const json& v);

// A check held to a named tensor (a backward's root, an update's loss, the
// tensor an error is about, a gradient's owner) where the program did not
// name it: the check fails. A program that returned
// before the starter's lab.name lines had dodged the check (red team 14), and
// so had one that threw on purpose (the starters now name on exit, with
// lab::Names, so an honest exception keeps its names). Returns true when it
// failed.
bool target_unnamed(const json& student, const std::string& name, const std::string& role, Outcome& o);

// A check that cannot be evaluated because the reference lacks what it
// compares against is the rubric's fault, not the student's.
[[noreturn]] void rubric_bug(const Check& c, const std::string& what);

// Printed output as compared: trailing blanks and blank last lines dropped.
std::string normalise_output(const std::string& s);
// Where two outputs part: the first line that differs, quoted.
std::string first_difference(const std::string& found, const std::string& expected);

// What checks.cpp's checks of tensors and checks_records.cpp's checks of
// records share.
std::string missing_name(const std::string& name);
const json* record(const json& snap, const std::string& label);
// One field of a recorded tensor as a student reads it (grad_fn=None).
std::string field_text(const json& t, const std::string& f);
// A record as text; for a snapshot, the fields a check compares.
std::string record_text(const json* r, const std::vector<std::string>& fields = {"values"});
// The first line of an error message, without the hints PyTorch appends.
std::string first_line(const std::string& s);
// A one-element tensor where the reference has a scalar: [1], [1, 1], ...
bool one_element_for_scalar(const json& found_shape, const json& exp_shape);
bool on_another_graph(const json& student, const std::string& name);
Outcome check_grad(const Check& c, const std::string& name, const json& t, const json* ref, bool backward_ran,
                   bool on_graph);

// The checks of records (checks_records.cpp).
Outcome check_snapshots(const Check& c, const json& student, const json& reference);
// A stdout check with "walked": the output is a walk of that named tensor's
// graph, so the program must have read the graph: every node's name(), as
// the replay of its tape saw (typed text reads none, another graph's walk
// reads other nodes). Without a replay (LibTorch) nothing is judged.
Outcome walk_printed_elsewhere(const Check& c, const json& student, Outcome o);
// "; the program recorded "x", which the exercise does not name: …" for the
// labels the program recorded that the reference never does ("" if none).
std::string unknown_labels(const json& student, const json& reference);
Outcome check_error(const Check& c, const json& student, const json& reference);
Outcome check_no_error(const Check& c, const json& student, const json& reference);
Outcome check_probe(const Check& c, const json& student, const json& reference);
Outcome check_gradcheck(const Check& c, const json& student, const json& reference);
// A probe's result made by another node than the reference's, in words.
std::string node_text(const json& node);
std::string node_differs(const std::string& fn, const std::string& where, const json& mine, const json& ref);

// The program's own function on the grader's inputs (a probe of kind call
// or walk), case by case against the reference's (checks_probes.cpp).
Outcome check_probe_cases(const Check& c, const Rubric& rubric, const json& student, const json& reference);

// Whether the replay of the program's op tape contradicts a fact the check
// reads, or could not be done: then nothing about it is believed.
bool contradicted(const Check& c, const json& student, Outcome& o);

// The rubric's route kinds (rubric.h's reads_computation).
Outcome check_derives_from(const Check& c, const std::string& name, const json& student, const json& reference);
Outcome check_updated_from_grad(const Check& c, const std::string& name, const json& student, const json& reference);
Outcome check_made_under_no_grad(const std::string& name, const json& student);
Outcome check_reuses_graph(const Check& c, const json& student);

// How the replay saw a named tensor come to be (replay.cpp's provenance), or null.
const json* provenance_of(const json& student, const std::string& name);
// Whether a backward's root, as the provenance names it (the named tensor it
// is, the one it only restates), is the named tensor `from`.
bool root_is(const json& name, const json& restates, const std::string& from);
// A gradient's route (replayer's Route) in words: "X" is a stand-in's.
std::string route_words(const std::string& route);
// The curvature a check asks its gradients' routes to match (rubric
// "curvature": true for the leaf's row of the Hessian, "own" for its own block).
replay::Curvature curvature_asked(const Check& c);

// Why a gradient's route (with its curvature after '@') is not the reference's, in words; X is `x`.
std::string route_mismatch(const std::string& mine, const std::string& ref, const std::string& x);

// The routes every grad and snapshots check also holds to (checks_grad_routes.cpp):
// a gradient set or changed by hand, or from another root; `o` and `hint` say so when it is.
bool grad_route_wrong(const Check& c, const std::string& name, const json& student, const json& reference, Outcome& o,
                      std::string& hint);
// An error check's "on" and a value check's "changed_through" (checks_routes.cpp).
bool error_raised_elsewhere(const Check& c, const json& student, const json& reference, Outcome& o);
bool changed_elsewhere(const Check& c, const std::string& name, const json& student, Outcome& o);
// What the replay knew of the record `label` (provenance.records[label]:
// its gradient routes, the backward passes before it), or null.
const json* record_route(const json& run, const std::string& label);
// A few values of a list, for a message: [0.5, -1.25, 3, …] ("nothing" for null).
std::string cut_values(const json& values);
// For a snapshots check with a "source": whether its records follow the
// source in the shadow replay as the reference's do ("" when they do).
std::string snapshots_shadow_differs(const Check& c, const json& student, const json& reference, json& found);
bool snapshot_taken_elsewhen(const Check& c, const json& student, const json& reference, Outcome& o);
bool snapshot_route_wrong(const Rubric& rubric, const Check& c, const json& student, const json& reference, Outcome& o,
                          std::string& hint);

}  // namespace grader::check_detail
