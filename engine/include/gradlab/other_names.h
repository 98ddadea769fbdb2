// PyTorch's other names for ops the engine has, as data: each line makes the
// Tensor method(s) and the torch:: function(s), which run the op they name
// and record its node (x.absolute() records AbsBackward0), as LibTorch's
// aliases do. Included by tensor.h (methods) and torch/torch.h (functions),
// each defining the macros first; the names whose arguments differ (clip,
// subtract, swapaxes, ravel, concat) are written out beside the includes.
//
// GRADLAB_OTHER_UNARY(name, op, free_inplace): x.name(), x.name_(), torch::name(x),
//   and torch::name_(x) when `free_inplace` is 1 (LibTorch has no torch::absolute_).
// GRADLAB_OTHER_BINARY(name, op, inplace): x.name(y) and x.name(number),
//   in place too when `inplace` is 1; torch::name(x, y), torch::name(x, number).
// (No include guard: each includer expands it with its own macros.)
#ifndef GRADLAB_WHEN_0
#define GRADLAB_WHEN_0(...)
#define GRADLAB_WHEN_1(...) __VA_ARGS__
#endif
GRADLAB_OTHER_UNARY(absolute, abs, 0)
GRADLAB_OTHER_UNARY(arccos, acos, 1)
GRADLAB_OTHER_UNARY(arcsin, asin, 1)
GRADLAB_OTHER_UNARY(arctan, atan, 1)
GRADLAB_OTHER_UNARY(arccosh, acosh, 1)
GRADLAB_OTHER_UNARY(arcsinh, asinh, 1)
GRADLAB_OTHER_UNARY(arctanh, atanh, 1)
GRADLAB_OTHER_UNARY(negative, neg, 1)
GRADLAB_OTHER_UNARY(fix, trunc, 1)
GRADLAB_OTHER_BINARY(multiply, mul, 1)
GRADLAB_OTHER_BINARY(divide, div, 1)
GRADLAB_OTHER_BINARY(true_divide, div, 1)
GRADLAB_OTHER_BINARY(greater, gt, 0)
GRADLAB_OTHER_BINARY(greater_equal, ge, 0)
GRADLAB_OTHER_BINARY(less, lt, 0)
GRADLAB_OTHER_BINARY(less_equal, le, 0)
GRADLAB_OTHER_BINARY(not_equal, ne, 0)
