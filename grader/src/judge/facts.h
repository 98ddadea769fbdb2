// Recorded facts: the reference solution's snapshot kept as a file beside
// its rubric (NAME.facts.json), so that grading needs no reference build.
// The course records them with `grade record` and `grade check` holds them
// against a fresh run of the solution; a student release ships only the
// part its visible checks read, and no solution at all.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "source/blanks.h"
#include "judge/replay.h"
#include "judge/rubric.h"

namespace grader {

// The questions of numerical dependence the rubric's route checks ask
// (replay.h's Shadow): a copy that must follow its source, a parameter whose
// updates must follow its gradients.
std::vector<Shadow> shadows_of(const Rubric& rubric);

// What the replay of a run was asked: the rubric's probes, its shadows,
// whether it probes curvature and whether the exercise has Functions of its
// own. Recorded facts, and cached reference runs, are good only for the
// rubric's questions as they are now (a check that turns on curvature needs
// the reference's routes with it).
std::string replay_key(const Rubric& rubric);

// The facts document for a reference snapshot (the run's nonce and usage
// left out: they change from run to run). `solution_sha256` is empty in a
// student release, which has no solution to compare with. `starter_source`
// is the course's starter file for the exercise: what its blanks hold is
// kept too (blanks.h), since the file a student grades is that starter,
// edited in place.
// `variant`: the numbers the reference ran at (variants.h), kept as "given".
json facts_document(const Rubric& rubric, const json& snapshot, const std::string& solution_sha256,
                    bool visible_only, const std::optional<std::string>& starter_source, int variant = 0);

// The starter's blanks as a facts file records them; nullopt when the file
// is missing, unreadable or recorded before starters were.
std::optional<StarterBlanks> recorded_starter(const std::string& facts_path);

// Whether the facts were recorded from the starter as it is now: "" when
// so, else what differs.
std::string starter_difference(const std::string& facts_path, const std::optional<std::string>& starter_source);

// The part of a reference snapshot that the rubric's visible checks read:
// the tensors they name (and those named in the graphs they compare), those
// graphs, their probes and records, and the output when a check compares it.
json visible_facts(const Rubric& rubric, const json& snapshot);

// What recorded facts are tied to: the solution's sha256, or "" where there
// is no solution to read (a student release or an autograder), and then no
// solution is compared.
std::string solution_key(const std::optional<std::string>& solution_text);
std::string solution_file_key(const std::string& solution_path);

// The snapshot a facts file holds, when it was recorded for this rubric's
// probes, at the numbers of `variant`, and, where `solution_sha256` is
// given, for this solution. Else nullopt, and `why` says what stands in the way.
std::optional<json> read_facts(const std::string& path, const Rubric& rubric, const std::string& solution_sha256,
                               std::string& why, int variant = 0);

// Where two snapshots differ ("" when they agree): every key and string
// the same, numbers within the rubrics' default tolerance (atol 1e-6, rtol
// 1e-5): the last bits of a float sum depend on the CPU's vector width, so
// facts recorded on one machine are checked on another.
std::string facts_difference(const json& recorded, const json& fresh);

}  // namespace grader
