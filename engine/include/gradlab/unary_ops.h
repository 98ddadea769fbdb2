// The plain unary ops, one line each. Everything the engine knows of such an
// op is on its line, and the rest is generated from it: the kernel's enum
// value and its formula (CPU and CUDA alike), the backward, the method, the
// free function, the in-place form and the torch:: name. A file that wants a
// view of the table defines GRADLAB_UNARY, includes this file (it is made to
// be included more than once: no include guard) and undefines it.
//
//   GRADLAB_UNARY(name, Kind, "GradFn", saves, ints, free, inplace, fused, (formula), (derivative))
//     saves       what the backward reads: kNone, kSelf (x()) or kResult (y())
//     ints        1: an integer tensor stays integer; 0: it becomes float first
//     free        1: also torch::name(t);  inplace  1: also t.name_()
//     fused       1: the backward is one pass of the binary kernel
//                 Binary::<Kind>Grad(g, the saved tensor), an op of its own
//                 under create_graph (PyTorch's tanh_backward and the like,
//                 engine/src/ops/unary.cpp). The kernel must compute the
//                 derivative column with the same roundings: the column is its
//                 specification (tests/engine/test_gradcheck.cpp holds every
//                 such kernel to it)
//     formula     of one element v, of the computing type C (double for integers)
//     derivative  the input's gradient, from g (the output's), x() and y()
//
// Ops with parameters (pow, clamp) are written by hand in engine/src/ops/unary.cpp.
#ifndef GRADLAB_WHEN_0
#define GRADLAB_WHEN_0(...)
#define GRADLAB_WHEN_1(...) __VA_ARGS__
#define GRADLAB_WHEN_NOT_0(...) __VA_ARGS__
#define GRADLAB_WHEN_NOT_1(...)
#endif

GRADLAB_UNARY(neg, Neg, "NegBackward0", kNone, 1, 1, 1, 0, (-v), (g.neg()))
GRADLAB_UNARY(exp, Exp, "ExpBackward0", kResult, 0, 1, 1, 0, (std::exp(v)), (g * y()))
GRADLAB_UNARY(log, Log, "LogBackward0", kSelf, 0, 1, 1, 0, (std::log(v)), (g.div(x())))
GRADLAB_UNARY(abs, Abs, "AbsBackward0", kSelf, 1, 1, 1, 0, (std::abs(v)), (g * x().sgn()))
GRADLAB_UNARY(sqrt, Sqrt, "SqrtBackward0", kResult, 0, 1, 1, 0, (std::sqrt(v)), (g.div(y() * 2)))
GRADLAB_UNARY(sin, Sin, "SinBackward0", kSelf, 0, 1, 1, 0, (std::sin(v)), (g * x().cos()))
GRADLAB_UNARY(cos, Cos, "CosBackward0", kSelf, 0, 1, 1, 0, (std::cos(v)), (g * x().sin().neg()))
GRADLAB_UNARY(tan, Tan, "TanBackward0", kResult, 0, 1, 1, 0, (std::tan(v)), (g * (1 + y().pow(2))))
GRADLAB_UNARY(sign, Sign, "SignBackward0", kNone, 1, 1, 1, 0, ((C(0) < v) - (v < C(0))), (zeros_like(g)))
// sgn is sign for real numbers (PyTorch's abs backward uses it).
GRADLAB_UNARY(sgn, Sgn, "SgnBackward0", kNone, 1, 1, 1, 0, ((C(0) < v) - (v < C(0))), (zeros_like(g)))
GRADLAB_UNARY(floor, Floor, "FloorBackward0", kNone, 1, 1, 1, 0, (std::floor(v)), (zeros_like(g)))
GRADLAB_UNARY(reciprocal, Reciprocal, "ReciprocalBackward0", kResult, 0, 1, 1, 0, (C(1) / v), (g.neg() * (y() * y())))
GRADLAB_UNARY(rsqrt, Rsqrt, "RsqrtBackward0", kResult, 0, 1, 1, 0, (C(1) / std::sqrt(v)), (g * -0.5 * y().pow(3)))
GRADLAB_UNARY(log1p, Log1p, "Log1PBackward0", kSelf, 0, 1, 1, 0, (std::log1p(v)), (g.div(x() + 1)))
GRADLAB_UNARY(expm1, Expm1, "Expm1Backward0", kResult, 0, 1, 1, 0, (std::expm1(v)), (g * (y() + 1)))
GRADLAB_UNARY(log2, Log2, "Log2Backward0", kSelf, 0, 1, 1, 0, (std::log2(v)), (g.div(x() * M_LN2)))
GRADLAB_UNARY(log10, Log10, "Log10Backward0", kSelf, 0, 1, 1, 0, (std::log10(v)), (g.div(x() * M_LN10)))
GRADLAB_UNARY(ceil, Ceil, "CeilBackward0", kNone, 1, 1, 1, 0, (std::ceil(v)), (zeros_like(g)))
GRADLAB_UNARY(trunc, Trunc, "TruncBackward0", kNone, 1, 1, 1, 0, (std::trunc(v)), (zeros_like(g)))
// Halves to even, as PyTorch rounds (the default rounding mode).
GRADLAB_UNARY(round, Round, "RoundBackward0", kNone, 1, 1, 1, 0, (std::nearbyint(v)), (zeros_like(g)))
GRADLAB_UNARY(sinh, Sinh, "SinhBackward0", kSelf, 0, 1, 1, 0, (std::sinh(v)), (g * x().cosh()))
GRADLAB_UNARY(cosh, Cosh, "CoshBackward0", kSelf, 0, 1, 1, 0, (std::cosh(v)), (g * x().sinh()))
GRADLAB_UNARY(asin, Asin, "AsinBackward0", kSelf, 0, 1, 1, 0, (std::asin(v)), (g * (-x() * x() + 1).rsqrt()))
GRADLAB_UNARY(acos, Acos, "AcosBackward0", kSelf, 0, 1, 1, 0, (std::acos(v)), (g * -((-x() * x() + 1).rsqrt())))
GRADLAB_UNARY(atan, Atan, "AtanBackward0", kSelf, 0, 1, 1, 0, (std::atan(v)), (g / (x() * x() + 1)))
GRADLAB_UNARY(erf, Erf, "ErfBackward0", kSelf, 0, 1, 1, 0, (std::erf(v)), (2.0 / std::sqrt(M_PI) * (-(x().pow(2))).exp() * g))
GRADLAB_UNARY(erfc, Erfc, "ErfcBackward0", kSelf, 0, 1, 1, 0, (std::erfc(v)), (-2.0 / std::sqrt(M_PI) * (-(x().pow(2))).exp() * g))
GRADLAB_UNARY(acosh, Acosh, "AcoshBackward0", kSelf, 0, 1, 1, 0, (std::acosh(v)), (g * (x().pow(2) - 1).rsqrt()))
GRADLAB_UNARY(asinh, Asinh, "AsinhBackward0", kSelf, 0, 1, 1, 0, (std::asinh(v)), (g * (x().pow(2) + 1).rsqrt()))
GRADLAB_UNARY(atanh, Atanh, "AtanhBackward0", kSelf, 0, 1, 1, 0, (std::atanh(v)), (g * 1 / (1 - x().pow(2))))
GRADLAB_UNARY(exp2, Exp2, "Exp2Backward0", kResult, 0, 1, 1, 0, (std::exp2(v)), (g * y() * M_LN2))
// frac keeps the sign: v − trunc(v) (-2.25 gives -0.25); its gradient passes through.
GRADLAB_UNARY(frac, Frac, "FracBackward0", kNone, 0, 1, 1, 0, (v - std::trunc(v)), (g))
// PyTorch multiplies by its constants M_PI_180 and M_180_PI, which are these doubles.
GRADLAB_UNARY(deg2rad, Deg2Rad, "Deg2RadBackward0", kNone, 0, 1, 1, 0, (v * C(M_PI / 180)), (g * (M_PI / 180)))
GRADLAB_UNARY(rad2deg, Rad2Deg, "Rad2DegBackward0", kNone, 0, 1, 1, 0, (v * C(180 / M_PI)), (g * (180 / M_PI)))
GRADLAB_UNARY(tanh, Tanh, "TanhBackward0", kResult, 0, 1, 1, 1, (std::tanh(v)), (g * (1 - y() * y())))
GRADLAB_UNARY(sigmoid, Sigmoid, "SigmoidBackward0", kResult, 0, 1, 1, 1, (C(1) / (C(1) + std::exp(-v))), (g * (1 - y()) * y()))
// NaN passes through relu, and so does its gradient (PyTorch's clamp_min and threshold_backward).
GRADLAB_UNARY(relu, Relu, "ReluBackward0", kResult, 1, 1, 1, 1, (v <= C(0) ? T(0) : x), (g.masked_fill(y() <= 0, 0)))
