// Matrix products. matmul picks dot, mv, mm or a batched product by the
// operands' dimensions, as PyTorch does (so the grad_fn names match).
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
void check_same_dtype(const Tensor& a, const Tensor& b) {
  GRADLAB_CHECK(a.scalar_type() == b.scalar_type(), "expected scalar type ", c10_name(a.scalar_type()),
                " but found ", c10_name(b.scalar_type()));
  GRADLAB_CHECK(a.device() == b.device(), "Expected all tensors to be on the same device, but found at least two devices, ",
                a.device().is_cuda() ? a.device().str() : b.device().str(), " and cpu!");
}

Tensor gemm_out(const Tensor& a, const Tensor& b) {
  Tensor out = gradlab::new_empty({a.size(0), b.size(1)}, a.scalar_type(), a.device());
  backend::of(a).gemm(out, a, b, 0);
  return out;
}
// a (or aᵀ) @ b (or bᵀ), straight to the kernel.
Tensor gemm_t(const Tensor& a, bool ta, const Tensor& b, bool tb) {
  Tensor out = gradlab::new_empty({a.size(ta ? 1 : 0), b.size(tb ? 0 : 1)}, a.scalar_type(), a.device());
  backend::of(a).gemm_transposed(out, a, ta, b, tb, 0);
  return out;
}

// G feeds both products of a matrix product's backward. When both run and a
// GEMM library cannot read G in place (the expanded gradient sum() sends
// back, a strided slice), G is made dense once here: each product would
// otherwise copy it again. `work` is one product's multiply-adds; small ones
// run in the CPU loop, which reads any strides. Under create_graph G is
// left as it is, so the recorded graph is the products' alone.
Tensor gemm_ready(const Tensor& g, const OpNode& n, int64_t work) {
  const int64_t d = g.dim();
  if (detail::grad_mode() || !n.should_compute_output(0) || !n.should_compute_output(1) || work <= backend::kBlasMinWork ||
      backend::gemm_readable(g.stride(d - 2), g.stride(d - 1), g.size(d - 2), g.size(d - 1)))
    return g;
  return g.contiguous();
}

// Which operands were column-major (a transpose's layout): under
// create_graph PyTorch then computes that operand's gradient transposed, so
// it comes out in the operand's layout, and records the graph that way.
struct ColumnMajor {
  bool a, b;
};
bool column_major(const Tensor& t) { return t.stride(0) == 1 && t.stride(1) == t.size(0); }
// d(AB) = (G Bᵀ, Aᵀ G)
GradList mm_bw(Op<ColumnMajor>& n, Grads& g) {
  GradList r(2);
  size_t i = 0;
  Tensor a = n.should_compute_output(1) ? n.saved_at(i++) : Tensor();
  Tensor b = n.should_compute_output(0) ? n.saved_at(i++) : Tensor();
  if (detail::grad_mode()) {  // create_graph: the products are recorded
    if (n.should_compute_output(0)) r[0] = n.a ? b.mm(g[0].t()).t() : g[0].mm(b.t());
    if (n.should_compute_output(1)) r[1] = n.b ? g[0].t().mm(a).t() : a.t().mm(g[0]);
    return r;
  }
  // Otherwise straight to the kernel, which reads the transposes in place.
  // A column-major operand's gradient is computed transposed and handed back
  // as a transpose, in the operand's layout, as PyTorch does: the gradient
  // of w through w.t() is then contiguous and AccumulateGrad takes it as is.
  const Tensor gd = gemm_ready(g[0], n, b.defined() ? g[0].numel() * b.size(0) : 0);
  if (n.should_compute_output(0)) r[0] = n.a ? gemm_t(b, false, gd, true).t() : gemm_t(gd, false, b, true);
  if (n.should_compute_output(1)) r[1] = n.b ? gemm_t(gd, true, a, false).t() : gemm_t(a, true, gd, false);
  return r;
}
// d(Av) = (g vᵀ, Aᵀ g)
GradList mv_bw(PlainOp& n, Grads& g) {
  GradList r(2);
  size_t i = 0;
  Tensor a = n.should_compute_output(1) ? n.saved_at(i++) : Tensor();
  Tensor v = n.should_compute_output(0) ? n.saved_at(i++) : Tensor();
  if (n.should_compute_output(0)) r[0] = g[0].reshape({-1, 1}) * v;  // the outer product, as PyTorch's ger
  if (n.should_compute_output(1)) r[1] = a.t().mv(g[0]);
  return r;
}
// d(a·b) = (g b, g a)
GradList dot_bw(PlainOp& n, Grads& g) {
  GradList r(2);
  size_t i = 0;
  Tensor a = n.should_compute_output(1) ? n.saved_at(i++) : Tensor();
  Tensor b = n.should_compute_output(0) ? n.saved_at(i++) : Tensor();
  if (n.should_compute_output(0)) r[0] = g[0] * b;
  if (n.should_compute_output(1)) r[1] = g[0] * a;
  return r;
}
// batched: d(A B) = (G Bᵀ, Aᵀ G) per batch
GradList bmm_bw(PlainOp& n, Grads& g) {
  GradList r(2);
  size_t i = 0;
  Tensor a = n.should_compute_output(1) ? n.saved_at(i++) : Tensor();
  Tensor b = n.should_compute_output(0) ? n.saved_at(i++) : Tensor();
  const Tensor gd = gemm_ready(g[0], n, b.defined() ? g[0].size(1) * g[0].size(2) * b.size(1) : 0);
  if (n.should_compute_output(0)) r[0] = bmm(gd, b.transpose(1, 2));
  if (n.should_compute_output(1)) r[1] = bmm(a.transpose(1, 2), gd);
  return r;
}
GradList view_back_bw(Op<InputSizes>& n, Grads& g) { return {g[0].reshape(n.sizes)}; }

void save_pair(OpNode& fn, const Tensor& a, const Tensor& b) {
  if (fn.should_compute_output(1)) fn.save(a);
  if (fn.should_compute_output(0)) fn.save(b);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("mm", mm(a, b), a, b);
  check_defined(a, 0, "self");
  check_defined(b, 1, "mat2");
  GRADLAB_CHECK(a.dim() == 2, "self must be a matrix");
  GRADLAB_CHECK(b.dim() == 2, "mat2 must be a matrix");
  GRADLAB_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1),
                " and ", b.size(0), "x", b.size(1), ")");
  check_same_dtype(a, b);
  Tensor out = gemm_out(a, b);
  if (auto fn = record("MmBackward0", {&a, &b}, mm_bw, [&] { return ColumnMajor{column_major(a), column_major(b)}; })) {
    save_pair(*fn, a, b);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor mv(const Tensor& a, const Tensor& v) {
  GRADLAB_TAPE("mv", mv(a, v), a, v);
  check_defined(a, 0, "self");
  check_defined(v, 1, "vec");
  GRADLAB_CHECK(a.dim() == 2 && v.dim() == 1, "vector + matrix @ vector expected, got ", 1, ", ", a.dim(), ", ", v.dim());
  GRADLAB_CHECK(a.size(1) == v.size(0), "size mismatch, got ", a.size(0), ", ", a.size(0), "x", a.size(1), ",",
                v.size(0));
  check_same_dtype(a, v);
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = gemm_out(a, v.unsqueeze(1)).reshape({a.size(0)});
  }
  out = out.tensor_data();
  if (auto fn = record("MvBackward0", {&a, &v}, mv_bw)) {
    save_pair(*fn, a, v);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("dot", dot(a, b), a, b);
  check_defined(a, 0, "self");
  check_defined(b, 1, "tensor");
  GRADLAB_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(), "D tensors");
  GRADLAB_CHECK(a.size(0) == b.size(0), "inconsistent tensor size, expected tensor [", a.size(0),
                "] and src [", b.size(0), "] to have the same number of elements, but got ", a.size(0), " and ",
                b.size(0), " elements respectively");
  GRADLAB_CHECK(a.scalar_type() == b.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
                c10_name(a.scalar_type()), " and ", c10_name(b.scalar_type()));
  check_same_dtype(a, b);
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = gemm_out(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
  }
  out = out.tensor_data();
  if (auto fn = record("DotBackward0", {&a, &b}, dot_bw)) {
    save_pair(*fn, a, b);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("bmm", bmm(a, b), a, b);
  check_defined(a, 0, "self");
  check_defined(b, 1, "mat2");
  GRADLAB_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  GRADLAB_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  GRADLAB_CHECK(a.size(0) == b.size(0), "batch1 and batch2 must have same number of batches, got ", a.size(0), " and ", b.size(0));
  GRADLAB_CHECK(a.size(2) == b.size(1), "Expected size for first two dimensions of batch2 tensor to be: [", a.size(0),
                ", ", a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "].");
  check_same_dtype(a, b);
  Tensor out = gradlab::new_empty({a.size(0), a.size(1), b.size(2)}, a.scalar_type(), a.device());
  for (int64_t i = 0; i < a.size(0); ++i) {
    Tensor ai = alias_with_geometry(a, {a.size(1), a.size(2)}, {a.stride(1), a.stride(2)}, a.storage_offset() + i * a.stride(0));
    Tensor bi = alias_with_geometry(b, {b.size(1), b.size(2)}, {b.stride(1), b.stride(2)}, b.storage_offset() + i * b.stride(0));
    Tensor oi = alias_with_geometry(out, {out.size(1), out.size(2)}, {out.stride(1), out.stride(2)}, i * out.stride(0));
    backend::of(a).gemm(oi, ai, bi, 0);
  }
  if (auto fn = record("BmmBackward0", {&a, &b}, bmm_bw)) {
    save_pair(*fn, a, b);
    finish(std::move(fn), out);
  }
  return out;
}

namespace {
// LibTorch 1.13's choice between folding a batched operand into one mm (or
// mv) and a bmm: fold, unless the 3-D operand is laid out batch-major with
// its last two dims transposed, where folding would need a copy.
bool should_fold(const Tensor& t, int64_t other_dim) {
  if (t.dim() < 3 || other_dim > 2) return false;
  if (t.dim() == 3 && other_dim == 2 && t.stride(2) != 1 && t.stride(0) == t.size(1) * t.size(2)) return false;
  return true;
}

// matmul's result is an "unsafe view" of the product: UnsafeViewBackward0.
Tensor unsafe_view(const Tensor& t, IntArrayRef shape) {
  Tensor out = alias_with_geometry(t, shape, contiguous_strides(shape), t.storage_offset());
  if (auto fn = record("UnsafeViewBackward0", {&t}, view_back_bw, sizes_of(t)))
    finish(std::move(fn), out);
  return out;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("matmul", matmul(a, b), a, b);
  check_defined(a, 0, "self");
  check_defined(b, 1, "other");
  const int64_t da = a.dim(), db = b.dim();
  GRADLAB_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db, "D");
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) {
    Tensor r = mm(a.unsqueeze(0), b);
    r.squeeze_(0);
    return r;
  }
  if (da == 2 && db == 2) return mm(a, b);
  if (should_fold(a, db) || should_fold(b, da)) {
    // Fold the batch into the rows of one matrix product (mm, or mv for a
    // vector). A batched right operand is folded as its transpose, and the
    // result transposed back: (Bᵀ Aᵀ)ᵀ.
    const bool transpose = da < db;
    Tensor t1 = transpose ? b.transpose(-2, -1) : a;
    Tensor t2 = !transpose ? b : (da == 2 ? a.t() : a);
    DimVector out_shape(t1.sizes());
    const int64_t k = out_shape.back();
    out_shape.resize(out_shape.size() - 1);
    Tensor folded = t1.reshape({numel_of(out_shape), k});
    if (t2.dim() == 1) return unsafe_view(folded.mv(t2), out_shape);
    out_shape.push_back(t2.size(1));
    Tensor out = unsafe_view(folded.mm(t2), out_shape);
    return transpose ? out.transpose(-2, -1).contiguous() : out;
  }
  // General batched case: broadcast the batch dims, multiply per batch.
  Tensor a3 = da == 1 ? a.unsqueeze(0) : a;
  Tensor b3 = db == 1 ? b.unsqueeze(1) : b;
  const int64_t m = a3.size(-2), k = a3.size(-1), k2 = b3.size(-2), n = b3.size(-1);
  GRADLAB_CHECK(k == k2, "Expected size for first two dimensions of batch2 tensor to be: [", 1, ", ", k, "] but got: [", 1, ", ", k2, "].");
  DimVector ba(a3.sizes()), bb(b3.sizes());
  ba.resize(ba.size() - 2);
  bb.resize(bb.size() - 2);
  DimVector batch = broadcast_shapes(ba, bb);
  const int64_t nb = numel_of(batch);
  DimVector ea(batch), eb(batch);
  ea.push_back(m);
  ea.push_back(k);
  eb.push_back(k);
  eb.push_back(n);
  Tensor r = bmm(a3.expand(ea).reshape({nb, m, k}), b3.expand(eb).reshape({nb, k, n}));
  DimVector out_shape(batch);
  if (da > 1) out_shape.push_back(m);
  if (db > 1) out_shape.push_back(n);
  return unsafe_view(r, out_shape);
}

namespace {
// addmm: beta·bias + alpha·(m1 m2). The bias's gradient is beta·g (the engine
// sums it back to the bias's shape); the products' are mm's, scaled by alpha.
struct Addmm {
  ColumnMajor layout;
  double beta, alpha;
};
Tensor scaled(const Tensor& t, double by) { return by == 1 ? t : t * by; }
GradList addmm_bw(Op<Addmm>& n, Grads& g) {
  GradList r(3);
  if (n.should_compute_output(0)) r[0] = scaled(g[0], n.beta);
  if (n.should_compute_output(1)) {
    const Tensor b = n.saved_at(1);
    r[1] = scaled(n.layout.a ? b.mm(g[0].t()).t() : g[0].mm(b.t()), n.alpha);
  }
  if (n.should_compute_output(2)) {
    const Tensor a = n.saved_at(0);
    r[2] = scaled(n.layout.b ? g[0].t().mm(a).t() : a.t().mm(g[0]), n.alpha);
  }
  return r;
}
}  // namespace

Tensor addmm(const Tensor& bias, const Tensor& m1, const Tensor& m2, Scalar beta, Scalar alpha) {
  GRADLAB_TAPE("addmm", addmm(bias, m1, m2, beta, alpha), bias, m1, m2, beta, alpha);
  check_defined(bias, 0, "self");
  check_defined(m1, 1, "mat1");
  check_defined(m2, 2, "mat2");
  GRADLAB_CHECK(m1.dim() == 2, "mat1 must be a matrix, got ", m1.dim(), "-D tensor");
  GRADLAB_CHECK(m2.dim() == 2, "mat2 must be a matrix, got ", m2.dim(), "-D tensor");
  GRADLAB_CHECK(m1.size(1) == m2.size(0), "mat1 and mat2 shapes cannot be multiplied (", m1.size(0), "x",
                m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")");
  // addmm names its operands in its dtype errors (mm reports the type it expected).
  GRADLAB_CHECK(m1.scalar_type() == m2.scalar_type(), "mat1 and mat2 must have the same dtype");
  GRADLAB_CHECK(bias.scalar_type() == m2.scalar_type(), "self and mat2 must have the same dtype");
  check_same_dtype(m1, m2);
  const double b = beta.toDouble(), a = alpha.toDouble();
  Tensor out;
  {
    autograd::NoGradGuard ng;
    GRADLAB_CHECK(is_expandable_to(bias.sizes(), {m1.size(0), m2.size(1)}), "The expanded size of the tensor (",
                  m2.size(1), ") must match the existing size (", bias.size(-1), ") at non-singleton dimension 1");
    out = scaled(bias, b) + scaled(gemm_out(m1, m2), a);
  }
  if (auto fn = record("AddmmBackward0", {&bias, &m1, &m2}, addmm_bw,
                       [&] { return Addmm{{column_major(m1), column_major(m2)}, b, a}; })) {
    if (fn->should_compute_output(2)) fn->save(m1);
    else fn->save(Tensor());
    if (fn->should_compute_output(1)) fn->save(m2);
    else fn->save(Tensor());
    finish(std::move(fn), out);
  }
  return out;
}
Tensor outer(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("outer", outer(a, b), a, b);
  check_defined(a, 0, "self");
  check_defined(b, 1, "vec2");
  GRADLAB_CHECK(a.dim() == 1, "outer: Expected 1-D argument self, but got ", a.dim(), "-D");
  GRADLAB_CHECK(b.dim() == 1, "outer: Expected 1-D argument vec2, but got ", b.dim(), "-D");
  return a.reshape({a.size(0), 1}) * b;  // as ATen writes it, so the graph is PyTorch's
}
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, Scalar beta, Scalar alpha) const {
  return gradlab::addmm(*this, m1, m2, beta, alpha);
}
Tensor Tensor::outer(const Tensor& v) const { return gradlab::outer(*this, v); }
Tensor Tensor::mm(const Tensor& o) const { return gradlab::mm(*this, o); }
Tensor Tensor::matmul(const Tensor& o) const { return gradlab::matmul(*this, o); }
Tensor Tensor::mv(const Tensor& v) const { return gradlab::mv(*this, v); }
Tensor Tensor::dot(const Tensor& o) const { return gradlab::dot(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return gradlab::bmm(*this, o); }

}  // namespace gradlab
