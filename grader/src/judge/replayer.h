// The replay of one op tape, event by event, in the grader's own engine
// (replay.h is its interface; this header is shared by replay.cpp and
// replayer.cpp only): the tensors it rebuilds, how each came to be, and the
// records the program made along the way.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../../harness/facts_of.h"
#include "judge/replay.h"
#include "judge/replay_ops.h"
#include "judge/replay_route.h"
#include "judge/tensor_set.h"

namespace grader::replay {

using torch::Tensor;

// What a forged tape may ask of the grader: no tensor beyond this, and no
// more time than this for the whole replay.
constexpr size_t kMaxTensorBytes = size_t{256} << 20;
constexpr double kMaxSeconds = 20;

struct Failure {
  std::string why;
};

inline std::string cut(const std::string& s) { return s.size() <= 200 ? s : s.substr(0, 200) + "…"; }

class Replayer final : public replay::Tensors {
 public:
  bool probe_curvature = false;  // the rubric asks for it (verify's `curvature`)
  Tensor at(const json& id) override {
    if (!id.is_number_integer()) throw Failure{"a tensor id that is not an integer: " + cut(id.dump())};
    auto it = tensors_.find(id.get<int64_t>());
    if (it == tensors_.end()) throw Failure{"the tape uses tensor " + id.dump() + ", which was never made on it"};
    if (tainted_.count(id.get<int64_t>())) taint_now_ = true;
    inputs_.push_back(it->second);
    return it->second;
  }

  void event(const json& e);

  // In a shadow replay (replay.h's Shadow), the tensor whose values, or whose
  // gradients, are given other values as the tape makes them (tape ids; -1:
  // none). The base replay keeps each name's tape id for it.
  // With `grad_of`, only its gradient number `grad_write` (in the order they
  // were given) is changed, and `observed` is what the tensor held right after
  // the in-place update that came next (null: none came).
  // With `tensor`, `after_changes` > 0 gives it other values right after
  // its n-th in-place change instead of as it is made.
  struct Perturbation {
    int64_t tensor = -1;
    int after_changes = 0;
    int64_t grad_of = -1;
    int grad_write = 0;
  } perturb;
  json observed;
  std::map<std::string, int64_t> named_ids;
  // How many gradients backward and autograd::grad gave each tensor, and
  // which of them (by number) an in-place update of the tensor followed
  // before the next came: its steps.
  std::unordered_map<const gradlab::TensorImpl*, int> grad_writes;
  std::unordered_map<const gradlab::TensorImpl*, std::vector<int>> steps;

  lab::facts::Named named;
  json records = json::array();
  std::vector<Mismatch> problems;
  std::vector<std::string> unverified;
  std::unordered_set<std::string> tainted_names;
  bool grads_tainted = false;
  Tensor undefined_grad_of_;  // the tensor whose .grad the last op read, undefined (or none)
  // The tensors upstream of a custom Function's inputs: their gradients went
  // through the program's own backward, and only theirs are taken as claimed.
  std::set<const gradlab::TensorImpl*> custom_upstream;
  bool vouched_by_program(const Tensor& t) const {
    return t.defined() && custom_upstream.count(t.unsafeGetTensorImpl()) > 0;
  }
  bool grad_of_upstream(const Tensor& g) const;
  bool stands_in_for_program_grad(const std::string& op) const;

  // How each tensor's .grad came to hold what it holds (the provenance the
  // grade asks of a gradient): written by a backward (from `root`), set or
  // changed by the program's own hand, or zeroed.
  struct Origin {
    std::string how;
    Tensor root;
    json seed;  // of a backward: the root's shape and the gradient it started from
    // The root's node when the backward ran: a tensor rebuilt in place since
    // (detach_(), then copy_) is no longer the root that ran.
    std::shared_ptr<gradlab::autograd::Node> root_node;
    // The roots of the earlier passes this gradient adds up, oldest first:
    // c's 2 from e and f is not c's 2 from c itself and f (red team 16).
    std::vector<std::pair<Tensor, std::shared_ptr<gradlab::autograd::Node>>> earlier = {};
  };
  // How each gradient autograd::grad gave came to be: the tensor it is the
  // gradient of, and its origin as a backward's would be.
  std::unordered_map<const gradlab::TensorImpl*, std::pair<const gradlab::TensorImpl*, Origin>> given_origin;
  Origin reached_from(const std::vector<std::pair<Tensor, Tensor>>& roots,
                      const std::vector<std::unordered_map<const gradlab::TensorImpl*, std::string>>& curvature,
                      const Tensor& t) const;
  std::unordered_map<const gradlab::TensorImpl*, Origin> grad_origin;

  // Where each tensor's values came from: the tensors it was computed from
  // (itself included), the ops on the way, the gradients it was computed
  // from, what made it and whether grad mode was off then; and the in-place
  // changes made to it afterwards. Sets stop growing at kMaxLineage.
  struct Lineage {
    TensorSet from;
    // What its graph reaches: `from` less what a detach() (or an op under
    // no_grad) cut off. An error about a graph is an error about these.
    TensorSet graph_from;
    std::set<std::string> ops;
    std::set<const gradlab::TensorImpl*> grad_of;
    std::set<const gradlab::TensorImpl*> given_grads;  // the outputs of autograd::grad it was computed from
    // What the roots of the backward passes that wrote those gradients were
    // computed from: w's steps follow the data its loss read. Kept apart
    // from `from`, which says which tensors a value is a version of.
    TensorSet via_grad;
    std::string made_by;
    bool no_grad = false;
    // Whether any op on the way recorded a graph (ran with grad mode on, on
    // a tensor that requires grad): (x * w).detach() under a guard did, though
    // its last op ran there.
    bool built_graph = false;
    // Whether it comes from a tensor made to require grad (a parameter, even
    // one whose requires_grad was switched off later), and whether an op on
    // the way ran on such a tensor with grad mode on: a prediction computed
    // with w.requires_grad_(false) records no graph either, but no_grad it
    // is not.
    bool from_param = false;
    bool grad_mode_on_param = false;
    // What each detach() and clone() on the way was applied to: the
    // parameter itself (G_w.detach() * z, a fake rebuilt) or a result
    // computed from it (fake.detach()).
    std::map<std::string, std::set<const gradlab::TensorImpl*>> applied_to;
  };
  struct Update {
    std::string op;
    bool no_grad = false;        // recorded no graph: grad mode off, or through data() / a detached alias
    bool grad_mode_off = false;  // made with grad mode off (NoGradGuard), whatever it went through
    bool from_own_grad = false;
    bool by_number = false;  // no tensor but the target: a number worked out in C++
    // How the gradient it read came to be (its origin then: a backward, its
    // root and route, or set by hand), when it read one of the target's.
    Origin grad;
  };
  std::unordered_map<const gradlab::TensorImpl*, Lineage> lineage;
  // The tensor whose memory an alias (data(), a detached copy, a view) shares:
  // a change made through the alias is a change of it (optim::SGD steps
  // p.data(), and p then follows what the step read).
  std::unordered_map<const gradlab::TensorImpl*, const gradlab::TensorImpl*> alias_of;
  std::vector<std::pair<const gradlab::TensorImpl*, Update>> updates;  // in the order they were made
  // The numbers item() gave, which a value record must be one of; and how
  // each snapshot's tensor came to be when it is a gradient.
  struct Item {
    double value;
    TensorSet from;  // what the tensor it was read from was computed from
  };
  std::vector<Item> items;
  // Value records whose item() must come from the exercise's tensors, held
  // to the names known at the end: (label, the lineages of the items that gave the number).
  struct ValueRecord {
    std::string label, value;
    std::vector<TensorSet> sources;
  };
  std::vector<ValueRecord> values_to_check;
  // For each value record in order, the item() it was read from (the latest
  // that gave its number; -1: none). A shadow replay is given the base's
  // (`items_of_values`) and records what that item gives there instead.
  std::vector<int> value_items;
  const std::vector<int>* items_of_values = nullptr;
  // For each value or snapshot record in order, what its number or tensor
  // was computed from, each with its place on the tape then: when it was
  // made (its order among the tensors made) and how many in-place changes it
  // had had. A records shadow (replay.cpp) changes the version of the source
  // each record was computed from, as it was then.
  struct Then {
    size_t made = 0;
    int changes = 0;
  };
  std::vector<std::unordered_map<const gradlab::TensorImpl*, Then>> record_sources;
  std::unordered_map<const gradlab::TensorImpl*, Then> then_;
  size_t made_count_ = 0;
  void note_record_source(const TensorSet& from);
  // The tape id of the first name the tape gave this tensor (-1: none).
  int64_t id_of(const gradlab::TensorImpl* impl) const;
  // The tensors that were `source` before it was last replaced out of place:
  // itself, and the leaves that require grad, of its shape, it was computed
  // from (w = (w - lr * w.grad()).detach().requires_grad_()), not the
  // gradients and steps on the way.
  std::set<const gradlab::TensorImpl*> versions_of(const Tensor& source) const;
  void check_values();
  json record_routes = json::object();
  // The roots of the backward passes that wrote each snapshot's gradient, in
  // order (undefined where none did): named once the program has named them.
  std::map<std::string, std::vector<std::pair<Tensor, std::shared_ptr<gradlab::autograd::Node>>>> record_roots;
  // The roots a backward went through again (a graph retain_graph kept), since
  // the last record, and by the record that followed them.
  std::vector<std::pair<Tensor, std::shared_ptr<gradlab::autograd::Node>>> reused_roots_;
  // Inside an attempt's body (lab.attempt): the passes before it began, and
  // the kept graphs its body went through again. -1: no attempt open.
  int attempt_from_ = -1;
  bool reused_in_attempt_ = false;
  std::vector<std::pair<Tensor, std::shared_ptr<gradlab::autograd::Node>>> attempt_reused_;
  std::map<std::string, std::vector<std::pair<Tensor, std::shared_ptr<gradlab::autograd::Node>>>> record_reused_;
  // The program's reads of the backward graph (the tape's "node" events),
  // followed on the replay's own graph: each number the tape gave a node,
  // and the nodes whose name() the program read. A walk that printed a
  // graph read that graph; typed text, or another graph's walk, did not.
  void node_read(const json& e);
  static constexpr size_t kMaxReadNodes = 100000;
  std::unordered_map<int64_t, std::shared_ptr<gradlab::autograd::Node>> read_nodes_;
  std::unordered_set<const gradlab::autograd::Node*> names_read_;
  json walked(const Tensor& t) const;
  // The named tensor a backward's root only restates, or "" (replayer.cpp).
  std::string restated(const Tensor& root, const std::shared_ptr<gradlab::autograd::Node>& node) const;
  json root_name(const Tensor& root, const std::shared_ptr<gradlab::autograd::Node>& node) const;
  json provenance() const;

 private:
  void made(const json& e, bool taint);
  void refill(const json& e);
  void op(const json& e);
  // Per leaf, how a backward's root curves in the leaves (replay_route.h).
  using Curvatures = std::unordered_map<const gradlab::TensorImpl*, std::string>;
  std::vector<std::pair<Tensor, Tensor>> backward_roots(const json& args, size_t given_at) const;
  // What a backward's error is about: the leaves and tensors under the node
  // that found a saved tensor changed in place (the tensor it saved came
  // from them), or else the backward's roots.
  std::vector<Tensor> backward_error_about(const json& args, size_t given_at, const std::string& error) const;
  std::vector<Curvatures> curvature_before_backward(
      const json& args, size_t given_at, const std::vector<std::tuple<Tensor, const gradlab::TensorImpl*, int64_t>>& before);
  static constexpr int kMaxCurvatureProbes = 200;  // the backwards probed in one replay (a long loop: the first)
  int curvature_probes_ = 0;
  replay::MadeAs made_as_;  // each tensor's values as made (curvature's point: which leaves moved)
  void lab(const json& e);
  void bind(const json& id, const Tensor& t, bool taint) {
    if (!id.is_number_integer()) throw std::runtime_error("an output id that is not an integer");
    if (id.get<int64_t>() == perturb.tensor && !tensors_.count(perturb.tensor) && perturb.after_changes == 0) shake(t);
    if (then_.emplace(t.unsafeGetTensorImpl(), Then{made_count_, 0}).second) ++made_count_;
    tensors_[id.get<int64_t>()] = t;
    if (taint) tainted_.insert(id.get<int64_t>());
    else tainted_.erase(id.get<int64_t>());
  }
  void note_unverified(const std::string& why) {
    for (const auto& u : unverified)
      if (u == why) return;
    unverified.push_back(why);
  }

  void trace(const std::string& name, const json& e, const replay::Outcome& out);
  void shake(const Tensor& t);
  void gradient_given(const Tensor& owner, const Tensor& g);
  void gradients_given(const json& e, replay::Outcome& out);
  void watch_update(const Tensor& target);
  int shaken_ = 0;         // how many tensors shake() changed: each gets its own numbers
  bool watching_ = false;  // the changed gradient is out; the next update of its tensor is observed
  std::unordered_map<const gradlab::TensorImpl*, int> pending_;  // the latest gradient of each, not yet followed
  const Origin* grad_route_of(const Tensor& t) const;
  // Whose .grad a snapshot holds (grad_route_of's tensor), or null.
  const gradlab::TensorImpl* grad_owner_of(const Tensor& t) const;
  // Per label, the owner of each snapshot's gradient, in order (null: none).
  std::map<std::string, std::vector<const gradlab::TensorImpl*>> record_owners_;
  Tensor grad_memory_owner(const Tensor& t) const;

  std::unordered_map<int64_t, Tensor> tensors_;
  std::vector<Tensor> inputs_;  // the tensors the current op read, in order
  // The root nodes backward passes started from, held so that no later node
  // takes one's address.
  std::map<const void*, std::shared_ptr<gradlab::autograd::Node>> backward_roots_;
  int backwards_since_record_ = 0;
  int backwards_ = 0;  // backward passes through a graph, in all
  bool reused_since_record_ = false;
  std::unordered_set<int64_t> tainted_;
  bool taint_now_ = false;
  std::string last_error_;  // the error the latest op raised, until a record takes it
  // What the op that raised it read was computed from; and, for each error
  // record's label, that of the error it took (named at the end).
  std::set<const gradlab::TensorImpl*> error_from_;
  std::map<std::string, std::set<const gradlab::TensorImpl*>> error_sources_;
  // Whether the error came from a backward whose every root was a leaf
  // (w.backward() on the parameter itself); by label too.
  bool error_from_leaf_ = false;
  std::map<std::string, bool> error_leaf_roots_;
};

}  // namespace grader::replay
