// How a backward reached one tensor from its root (the replay's Route): what
// a gradient check compares with the reference's, so that a stand-in built to
// give the same gradient is told from the loss. replayer.cpp records it for
// every gradient a backward writes.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace grader::replay {

// The route from `root` down to `target` (its grad_fn, or the AccumulateGrad
// of a leaf): "" when the graph does not reach it, "?" when it is too large
// or deep to follow.
std::string route_to(const torch::Tensor& target, const std::shared_ptr<gradlab::autograd::Node>& root);

// The nodes of the graph below `root` (itself included), walked without
// recursion, at most `limit` of them (a forged or padded graph costs the
// grader no more than that).
std::unordered_set<const gradlab::autograd::Node*> nodes_under(const gradlab::autograd::Node* root, size_t limit);

// How the root, as a function of `leaves` (every other input held at the
// values it had), curves: four projections of its Hessian-vector product
// onto fixed vectors, per leaf, as "c1,c2,c3,c4#point": numbers that depend
// only on the function, the point and the leaves' shapes (the same in the
// student's replay and the reference's), and where the point was (each
// reached leaf's values, digested). Two roots with the same gradient at this point but not
// the same function of the leaves curve differently: a stand-in
// mse_loss(w, w₀ − g/2) has the curvature 2 where the exercise's loss has
// 2·mean(x²). Computed by a double backward through the root's graph before
// the program's backward runs (its graph kept, gradients a hook of
// retain_grad wrote meanwhile put back); empty when the graph cannot be
// differentiated twice. Of `leaves`, those the root's graph reaches are
// probed. `grads` are the tensors whose .grad must not change.
// Each leaf's values when it was made (values_sketch), for the point to say
// which leaves were moved since.
using MadeAs = std::unordered_map<const gradlab::TensorImpl*, std::string>;
std::string values_sketch(const torch::Tensor& t);

std::unordered_map<const gradlab::TensorImpl*, std::string> curvature_of(const torch::Tensor& root,
                                                                         const torch::Tensor& given,
                                                                         const std::vector<torch::Tensor>& leaves,
                                                                         const std::vector<torch::Tensor>& grads,
                                                                         const MadeAs& made_as = MadeAs{});

// Whether two routes (route_to's, with curvature_of's numbers after '@')
// agree: the same ops, and with `curvature`, where both have them and were
// probed at the reference's point (the program's leaves include the
// reference's, with their values), the same curvature. (Opt-in, per check: a wrong formula curves otherwise too, and
// where the statement names its loss a graph check already says so; where a
// loss is made anew each step, with no name, the curvature is what tells a
// stand-in from it.)
// How curvature counts off the reference's point: not at all (a gradient:
// an honest typo in another leaf moves the point, and the curvature with it),
// or at a looser tolerance (a step of a parameter whose whole trajectory
// matched the reference's, which an honest program follows at its points).
enum class OffPoint { Skip, Compare };
// Which curvature a check compares (rubric "curvature"): none; the leaf's
// row of the Hessian (true: its cross terms with the other leaves count); or
// its own block ("own": the leaf alone moves).
enum class Curvature { Off, Row, Own };
bool routes_agree(const std::string& a, const std::string& b, Curvature curvature,
                  OffPoint off_point = OffPoint::Skip);

}  // namespace grader::replay
