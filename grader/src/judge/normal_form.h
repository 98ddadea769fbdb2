// Backward graphs up to the spellings that compute the same thing. A graph
// check judges the concept (which named tensors are nodes, which leaves feed
// what, where no gradient flows), so two graphs that differ only by how a
// student grouped a product or a sum are the same graph:
//   - sums and products are flattened and their operands taken as a multiset
//     ((a + b) + c ≡ a + (b + c) ≡ c + b + a), except across a named tensor,
//     which stays a node of its own;
//   - a power is a power however written: x·x·x ≡ x.pow(3) ≡ x·x.pow(2);
//   - a difference is a sum with a negated operand: 10 - d (rsub) ≡ -d + 10
//     ≡ torch::sub(10, d); a negation is a product with a number
//     (-x ≡ -1.0·x ≡ x·-1), and a sum of a product with a number is that
//     number times the sum: Σ(−x) ≡ −Σx ≡ -1·Σx;
//   - a sum over every dimension of a tensor whose result is a scalar is
//     sum(): next_h.sum({0, 1}) ≡ next_h.sum(), and so is the sum of a sum
//     over some of them: next_h.sum(0).sum() ≡ next_h.sum();
//   - where the rubric's `graph_rules` allow "sum_distributes", the sum of a
//     sum is the sum of the sums: (y + z).sum() ≡ y.sum() + z.sum().
// Values are the value checks' business: x·x·x and x.pow(2) both count as
// "a power of x" here.
#pragma once
#include <string>

#include "judge/rubric.h"

namespace grader {

// A reduction over every dimension is named by how it was spelled:
// t.sum({0, 1}) records SumBackward1 where t.sum() records SumBackward0.
// For a scalar result the two are one operation; this gives its one name.
std::string reduction_name(const std::string& grad_fn, bool scalar_result);

// Whether two backward graphs (the harness's node lists) have one normal
// form. `student_tensors` and `reference_tensors` are the documents'
// "tensors" objects (null when absent): the shapes of named results, which
// say when a sum over dimensions left a scalar.
bool same_normal_form(const json& student, const json& student_tensors, const json& reference,
                      const json& reference_tensors, const Rubric& rubric);

// The normal form as text, for messages and tests: Add{Sum(y), Sum(z=Pow(x))}.
std::string normal_form_text(const json& graph, const json& tensors, const Rubric& rubric);

}  // namespace grader
