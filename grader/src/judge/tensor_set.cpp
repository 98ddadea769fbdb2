#include "judge/tensor_set.h"

#include <unordered_set>

namespace grader::replay {

TensorSet::Part::~Part() {
  std::vector<std::shared_ptr<const Part>> doomed = std::move(over);
  while (!doomed.empty()) {
    std::shared_ptr<const Part> p = std::move(doomed.back());
    doomed.pop_back();
    // The last holder of a part takes its parts before it goes, so that
    // freeing it frees nothing further down.
    if (p.use_count() == 1) {
      auto& under = const_cast<Part&>(*p).over;  // made non-const by make_shared
      for (auto& u : under) doomed.push_back(std::move(u));
      under.clear();
    }
  }
}

TensorSet::Part& TensorSet::writable() {
  if (!part_) {
    part_ = std::make_shared<Part>();
  } else if (part_.use_count() > 1) {
    auto fresh = std::make_shared<Part>();
    fresh->over.push_back(part_);
    part_ = std::move(fresh);
  }
  part_->all.reset();  // it is about to change
  return *part_;
}

void TensorSet::insert(Elem e) { writable().own.push_back(e); }

void TensorSet::merge(const TensorSet& other) {
  // x.add_(x): a set merged into itself holds what it held.
  if (!other.part_ || other.part_ == part_) return;
  auto theirs = other.part_;  // held before writable() may make a new part
  writable().over.push_back(std::move(theirs));
}

const std::set<TensorSet::Elem>& TensorSet::items() const {
  static const std::set<Elem> none;
  if (!part_) return none;
  if (part_->all) return *part_->all;
  // Iterative: a chain of parts is as deep as the program's longest chain of
  // ops, which no call stack should have to hold.
  auto all = std::make_shared<std::set<Elem>>();
  std::unordered_set<const Part*> seen = {part_.get()};
  std::vector<const Part*> todo = {part_.get()};
  while (!todo.empty()) {
    const Part* p = todo.back();
    todo.pop_back();
    if (p != part_.get() && p->all) {  // walked before: take its answer whole
      all->insert(p->all->begin(), p->all->end());
      continue;
    }
    all->insert(p->own.begin(), p->own.end());
    for (const auto& o : p->over)
      if (seen.insert(o.get()).second) todo.push_back(o.get());
  }
  part_->all = std::move(all);
  return *part_->all;
}

}  // namespace grader::replay
