// The one header a gradlab exercise includes. It brings in LibTorch's C++ API
// (<torch/torch.h>) and lab::Lab, the notebook the exercise function writes
// its answer into: the tensors it names, snapshots taken along the way, and
// the errors it caught. The grader reads the notebook after the function
// returns; the function itself does no I/O and has no main().
//
//   #include <gradlab/lab.h>
//   void exercise3(lab::Lab& lab) {
//     torch::Tensor x, f;
//     lab::Names names(lab, {{"x", x}, {"f", f}});  // the grader reads x and f by these names
//     x = torch::tensor(-2.0, torch::requires_grad());
//     ...
//     lab.snapshot("x.grad after step 1", x.grad());
//     lab.attempt("second backward", [&] { f.backward(); });
//   }
//
// Everything here is written against the torch:: API only, so a student file
// builds unchanged against gradlab's engine or against LibTorch.
#ifndef GRADLAB_LAB_H
#define GRADLAB_LAB_H
// (An include guard, not #pragma once: this header is also precompiled.)
#include <torch/torch.h>

#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <iostream>  // std::cout without a second #include: this is the only header an exercise needs
#include <string>
#include <utility>
#include <vector>

namespace lab {

class Lab {
 public:
  // Names a tensor for the grader, like torchviz's params map. The grader
  // reads its state when the exercise function returns, and draws the
  // backward graph of every named tensor that has a grad_fn. Naming the same
  // name again replaces the earlier tensor.
  void name(const std::string& name, const torch::Tensor& t);

  // Records a tensor's state (values, grad, flags, version) as it is now,
  // under a label. Snapshots are kept in the order they were taken, so a
  // gradient can be recorded once per iteration. An undefined tensor (say,
  // x.grad() before any backward) is recorded as undefined.
  void snapshot(const std::string& label, const torch::Tensor& t);

  // The number the exercise's statement gives under `name` ("x" in "at
  // x = -2, y = 2"): the lesson's own, or this student's when the course
  // hands each student numbers of their own (a variant). The starter shows
  // the same numbers, so a student may type them in or ask for them here.
  // Throws std::out_of_range when the statement gives no such number.
  double given(const std::string& name) const;

  // Records a plain number (a loss, a count) under a label, in order.
  void value(const std::string& label, double v);

  // Runs `body` and records what happened under `label`: the error's text
  // when it throws, or that it finished without an error.
  template <class F>
  void attempt(const std::string& label, F&& body) {
    begin_attempt(label);
    try {
      body();
    } catch (const std::exception& e) {
      error(label, e);
      return;
    }
    no_error(label);
  }

  // Where an attempt's body begins: what it records is what the body did.
  void begin_attempt(const std::string& label);
  // Records an error the exercise caught itself.
  void error(const std::string& label, const std::exception& e);
  void no_error(const std::string& label);

  // Makes a function of one tensor available to the grader, which may check
  // its gradient numerically (gradcheck) and run it on inputs of its own
  // choosing, after the exercise.
  void function(const std::string& name, std::function<torch::Tensor(const torch::Tensor&)> f);
  // The same for a walker of backward graphs (node, depth), which the grader
  // runs on graphs of its own, reading what it prints.
  void function(const std::string& name,
                std::function<void(const std::shared_ptr<torch::autograd::Node>&, int)> walker);

  struct State;
  explicit Lab(State* s) : s_(s) {}

 private:
  State* s_;
};

// Names tensors for the grader when the exercise function ends, however it
// ends: at its closing brace, at a `return`, or while an exception leaves it.
// The starters make one right after declaring their tensors, so that a
// program which throws halfway is still read tensor by tensor (what it did
// before the throw earns its points), not as a program with no names at all.
//
//   torch::Tensor x, y;
//   lab::Names names(lab, {{"x", x}, {"y", y}});
//
// It holds the variables, not the tensors: `y = x * 2` after it is the y
// the grader reads. Naming the same name with lab.name later replaces it
// until the function ends, when this names it again.
class Names {
 public:
  struct Entry {
    const char* name;
    const torch::Tensor& tensor;
  };
  Names(Lab& lab, std::initializer_list<Entry> entries) : lab_(lab) {
    for (const Entry& e : entries) entries_.emplace_back(e.name, &e.tensor);
  }
  // A destructor may run during an exception's unwinding, where a second
  // exception would end the program: naming is best effort there.
  ~Names() {
    for (const auto& [name, tensor] : entries_) try {
        lab_.name(name, *tensor);
      } catch (...) {
      }
  }
  Names(const Names&) = delete;
  Names& operator=(const Names&) = delete;

 private:
  Lab& lab_;
  std::vector<std::pair<std::string, const torch::Tensor*>> entries_;
};

// The harness's entry point; the grader links a two-line main that calls it
// with the exercise's function.
int harness_main(int argc, char** argv, void (*exercise)(Lab&));

}  // namespace lab

#endif  // GRADLAB_LAB_H
