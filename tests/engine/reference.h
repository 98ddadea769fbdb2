// Access to the copied PyTorch/LibTorch facts and the comparisons the engine
// tests make against them.
#pragma once
#include "catch_compat.h"
#include <nlohmann/json.hpp>
#include <string>
#include <gradlab/dot.h>
#include <torch/torch.h>

namespace ref {

using json = nlohmann::json;

// The C++ (LibTorch) facts, loaded once.
const json& cpp();
// The Python facts (printed reprs, random values).
const json& py();
// One fact of a case; fails the test when the case or label is missing.
const json& fact(const json& db, const std::string& case_id, const std::string& label);

// Flattened values of a nested JSON list, with "nan"/"inf" strings decoded.
std::vector<double> flat(const json& v);
std::vector<double> flat(const torch::Tensor& t);
bool close(double got, double want, double rtol = 1e-5, double atol = 1e-6);

// Compares a tensor with a recorded tensor fact, field by field.
void check_tensor(const json& rec, const torch::Tensor& t);
// Compares the outcome of running `fn` with a recorded run fact (raised or not, type, message).
void check_run(const json& rec, const std::function<void()>& fn);
// The node names of next_edges as the oracle records them: [[name|null, input_nr], ...].
json next_edges_record(const std::shared_ptr<torch::autograd::Node>& fn);
// The lessons' walk_graph of t's graph, one string per line.
json walk_lines(const torch::Tensor& t);

}  // namespace ref
