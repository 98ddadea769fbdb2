// The replayer's part in the shadow replays (replay.h's Shadow): giving a
// tensor, or one of its gradients, other values as the tape makes it; the
// steps a parameter took; and what each record was computed from, so that a
// records shadow can change the source as it stood then.
#include <cmath>

#include "judge/replayer.h"

namespace grader::replay {

namespace facts = lab::facts;

// Other values for a floating tensor, in place: each element moves by half
// its size and a half again, up or down, by numbers that depend only on its
// place and on how many tensors were changed before (the same in the
// student's shadow and the reference's). Its version stays, so the graphs
// that saved it still run.
void Replayer::shake(const Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return;
  const Tensor now = t.detach().to(torch::kDouble).contiguous();
  const double* v = now.data_ptr<double>();
  std::vector<double> delta(static_cast<size_t>(now.numel()));
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(++shaken_);
  for (size_t i = 0; i < delta.size(); ++i) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = 0.5 + 0.5 * static_cast<double>(z >> 11) / 9007199254740992.0;  // in [0.5, 1)
    delta[i] = (z & 1 ? u : -u) * (0.5 * std::abs(v[i]) + 0.5);
  }
  const uint32_t version = t.unsafeGetTensorImpl()->version();
  {
    gradlab::autograd::NoGradGuard no_graph;
    t.detach().add_(torch::tensor(delta, torch::dtype(torch::kDouble)).reshape(t.sizes()).to(t.scalar_type()));
  }
  t.unsafeGetTensorImpl()->version() = version;
}

// A gradient for `owner` has just been given (written into its .grad by a
// backward, or returned by autograd::grad): counted, and in a shadow of its
// gradients, changed when it is the one the shadow asks about.
void Replayer::gradient_given(const Tensor& owner, const Tensor& g) {
  const int n = grad_writes[owner.unsafeGetTensorImpl()]++;
  pending_[owner.unsafeGetTensorImpl()] = n;
  auto it = tensors_.find(perturb.grad_of);
  if (perturb.grad_of < 0 || it == tensors_.end() || !it->second.is_same(owner) || n != perturb.grad_write) return;
  shake(g);
  watching_ = true;
}

// The gradients autograd::grad just gave, one per input (those a backward
// writes into .grad: op()).
void Replayer::gradients_given(const json& e, replay::Outcome& out) {
  if (e.at("op") != "autograd::grad") return;
  const json& args = e.at("args");
  const json& ins = args.is_array() && args.size() > 1 ? args[1] : json();
  for (size_t i = 0; ins.is_array() && i < ins.size() && i < out.tensors.size(); ++i)
    if (ins[i].is_number_integer() && tensors_.count(ins[i].get<int64_t>()))
      gradient_given(tensors_.at(ins[i].get<int64_t>()), out.tensors[i]);
}

// An in-place change of `target` just ran: a step of the tensor over the same
// memory when a gradient of it came before; and the change a gradient shadow
// observes when it is the first on the shaken tensor's memory since the
// shaken gradient.
void Replayer::watch_update(const Tensor& target) {
  const auto* storage = target.unsafeGetTensorImpl()->storage.get();
  for (auto p = pending_.begin(); p != pending_.end();)
    if (p->first->storage.get() == storage) {
      steps[p->first].push_back(p->second);
      p = pending_.erase(p);
    } else {
      ++p;
    }
  auto it = tensors_.find(perturb.grad_of);
  if (!watching_ || it == tensors_.end()) return;
  if (target.unsafeGetTensorImpl()->storage.get() != it->second.unsafeGetTensorImpl()->storage.get()) return;
  observed = facts::values_of(it->second);
  watching_ = false;
}

void Replayer::note_record_source(const TensorSet& from) {
  std::unordered_map<const gradlab::TensorImpl*, Then> now;
  for (const gradlab::TensorImpl* impl : from.items())
    if (auto it = then_.find(impl); it != then_.end()) now.emplace(impl, it->second);
  record_sources.push_back(std::move(now));
}

int64_t Replayer::id_of(const gradlab::TensorImpl* impl) const {
  int64_t best = -1;
  for (const auto& [id, t] : tensors_)
    if (t.unsafeGetTensorImpl() == impl && (best < 0 || id < best)) best = id;
  return best;
}

std::set<const gradlab::TensorImpl*> Replayer::versions_of(const Tensor& source) const {
  std::set<const gradlab::TensorImpl*> out = {source.unsafeGetTensorImpl()};
  auto l = lineage.find(source.unsafeGetTensorImpl());
  if (l == lineage.end()) return out;
  // A tensor the lab names otherwise is a tensor of its own, not an earlier
  // w: b feeds a step of w worked out by hand, but it is not a version of w.
  auto named_otherwise = [&](const Tensor& t) {
    for (const auto& [n, nt] : named)
      if (nt.defined() && nt.unsafeGetTensorImpl() == t.unsafeGetTensorImpl() &&
          nt.unsafeGetTensorImpl() != source.unsafeGetTensorImpl())
        return true;
    return false;
  };
  for (const auto& [id, t] : tensors_)
    if (l->second.from.contains(t.unsafeGetTensorImpl()) && t.is_leaf() && t.requires_grad() && t.sizes() == source.sizes() &&
        !named_otherwise(t))
      out.insert(t.unsafeGetTensorImpl());
  return out;
}

}  // namespace grader::replay
