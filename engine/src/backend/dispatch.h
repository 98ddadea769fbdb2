// Calls a generic lambda with the C++ type of a ScalarType.
#pragma once
#include <cstdint>

#include "gradlab/error.h"
#include "gradlab/types.h"

namespace gradlab {
template <class T>
struct TypeTag {
  using type = T;
};

template <class F>
decltype(auto) dispatch_all(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Bool: return f(TypeTag<bool>{});
    case ScalarType::Int: return f(TypeTag<int32_t>{});
    case ScalarType::Long: return f(TypeTag<int64_t>{});
    case ScalarType::Float: return f(TypeTag<float>{});
    case ScalarType::Double: return f(TypeTag<double>{});
  }
  throw Error("unknown dtype");
}

template <class F>
decltype(auto) dispatch_floating(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Float: return f(TypeTag<float>{});
    case ScalarType::Double: return f(TypeTag<double>{});
    default: throw Error(str_cat("\"", op, "\" not implemented for '", c10_name(t), "'"));
  }
}

template <class T>
ScalarType scalar_type_of();
template <> inline ScalarType scalar_type_of<bool>() { return ScalarType::Bool; }
template <> inline ScalarType scalar_type_of<int32_t>() { return ScalarType::Int; }
template <> inline ScalarType scalar_type_of<int64_t>() { return ScalarType::Long; }
template <> inline ScalarType scalar_type_of<float>() { return ScalarType::Float; }
template <> inline ScalarType scalar_type_of<double>() { return ScalarType::Double; }
}  // namespace gradlab
