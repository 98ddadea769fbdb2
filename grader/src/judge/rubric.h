// A rubric: one declarative JSON file per exercise, beside its solution
// (solutions/exerciseN.rubric.json). It names the exercise function, the run's
// limits, the probes to run in the student's process, and the checks with
// their points, tolerances, hints and visibility. The format is documented in
// exercises/README.md; adding an exercise needs no change here.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "common/limits.h"

namespace grader {

using json = nlohmann::ordered_json;

// A rubric that cannot be used: says which file and which field.
struct RubricError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
  // The rubric's "one_element_is_scalar": where the reference holds a
  // scalar, a one-element tensor (shape [1], [1, 1], ...) with its value is
  // accepted too, for exercises whose statement is about graphs, not shapes.
  bool one_element_is_scalar = false;
};

struct Check {
  std::string id, name, kind, hint;
  double points = 1;
  bool hidden = false;
  Tolerance tol;
  json spec;  // the check's own JSON object, for its kind-specific fields
};

// A mistake recognised from the recorded facts: when `check` fails and every
// condition in `when` holds, the student reads `hint` instead of the
// check's general one. Conditions: {"probe": ID, "ok": BOOL} (a probe ran
// without error, or raised one), {"check": ID, "status": "passed"|"failed"},
// {"tensor": NAME, "field": F, "equals": VALUE} (a field of the named
// tensor as recorded: requires_grad, is_leaf, retains_grad, grad_fn,
// version, shape, dtype, or "grad_defined").
struct Diagnosis {
  std::string check;
  json when = json::array();
  std::string hint;
};

// The numbers an exercise's statement gives, when each student may have
// their own (variants.h): per name, the lesson's value first, then the
// others a variant may take; and the starter's lines that show them, as
// templates ("// at x = ${x}, y = ${y}, where df/dx = ${grad:x}").
struct Variants {
  std::vector<std::pair<std::string, std::vector<double>>> given;
  std::vector<std::string> starter;
  bool empty() const { return given.empty(); }
};

struct Rubric {
  std::string path;  // where it was read from, for messages
  std::string exercise, title, function;
  Limits limits;
  std::vector<std::vector<std::string>> alternatives;  // grad_fn names accepted for one another
  std::vector<std::string> graph_rules;  // optional equivalences of graph checks (kGraphRules)
  // Whether the exercise asks for a custom autograd Function: only then is
  // what the program's own backward gives taken as its account. Elsewhere a
  // Function of its own around the tensors it is graded on hides them from
  // the replay, and nothing computed through one is believed.
  bool custom_functions = false;
  // Some check holds gradients to their root's curvature ("curvature": true):
  // the replay then probes every backward's root twice over (replay_route.h).
  bool curvature = false;
  json probes = json::array();
  Variants variants;
  std::vector<Diagnosis> diagnoses;  // in order: the first that matches a failed check wins
  std::vector<Check> checks;
  // In a student release (release.h), the hidden checks it left out: they
  // run only when the work is submitted.
  int hidden_count = 0;
  double hidden_points = 0;

  double max_points() const;
  // Are two grad_fn names the same or accepted alternatives?
  bool equivalent(const std::string& a, const std::string& b) const;
};

// Does a check of this kind read the program's replayed computation (how a
// tensor came to be) rather than its results? Only gradlab's engine writes
// the op tape those checks read.
bool reads_computation(const std::string& kind);

// The optional rules a rubric's "graph_rules" may name, for its graph checks:
// "sum_distributes" accepts y.sum() + z.sum() for (y + z).sum().
inline const std::set<std::string> kGraphRules = {"sum_distributes"};

// The check kinds the grader knows, for validation and documentation.
const std::vector<std::string>& check_kinds();

Rubric parse_rubric(const json& j, const std::string& path);
Rubric load_rubric(const std::string& path);

}  // namespace grader
