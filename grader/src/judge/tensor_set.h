// The set of tensors a replayed tensor was computed from, built without
// copying: a tensor's set is the tensor itself plus its inputs' sets, held by
// reference, so a chain of n ops costs n small parts, not n copies of a set
// that grows along it (a 600-op padding chain made that quadratic: seconds of
// replay per shadow). What a set holds is walked when asked, and kept.
//
// A set shared by another is never changed: an in-place op that adds to its
// tensor's set gives that tensor a new part over the old one, so what was
// computed from the tensor before the change keeps what it had then.
#pragma once
#include <cstddef>
#include <memory>
#include <set>
#include <vector>

namespace gradlab {
struct TensorImpl;
}

namespace grader::replay {

class TensorSet {
 public:
  using Elem = const gradlab::TensorImpl*;

  void insert(Elem e);
  // Adds everything `other` holds now.
  void merge(const TensorSet& other);
  bool contains(Elem e) const { return items().count(e) > 0; }
  bool empty() const { return !part_; }
  // Every tensor it holds, in pointer order (walked once, then kept until it
  // changes).
  const std::set<Elem>& items() const;

 private:
  struct Part {
    Part() = default;
    Part(const Part&) = delete;
    Part& operator=(const Part&) = delete;
    ~Part();  // iterative: a chain of 100 000 parts would overflow the stack freed recursively
    std::vector<Elem> own;
    std::vector<std::shared_ptr<const Part>> over;
    mutable std::shared_ptr<const std::set<Elem>> all;  // the walk's result, once asked
  };
  // The part this set may change: its own when no other set holds it, else
  // a new one over it.
  Part& writable();
  std::shared_ptr<Part> part_;
};

}  // namespace grader::replay
