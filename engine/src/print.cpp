// std::cout << t prints what Python's repr(t) prints (PyTorch 1.13's
// _tensor_str): the lessons show Python output, and students compare.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "backend/dispatch.h"
#include "gradlab/autograd.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
constexpr int kPrecision = 4;
constexpr int kThreshold = 1000;
constexpr int kEdgeItems = 3;
constexpr int kLineWidth = 80;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, kPrecision, v);
  return buf;
}
std::string fmt0(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}
std::string py_float_special(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// PyTorch's _Formatter: one width and one style for every element.
struct Formatter {
  bool floating = false, is_bool = false, int_mode = true, sci_mode = false;
  size_t max_width = 1;

  Formatter(const std::vector<double>& vals, ScalarType t) {
    floating = is_floating(t);
    is_bool = t == ScalarType::Bool;
    if (!floating) {
      for (double v : vals) max_width = std::max(max_width, format_raw(v).size());
      return;
    }
    std::vector<double> nz;
    for (double v : vals)
      if (std::isfinite(v) && v != 0) nz.push_back(v);
    if (nz.empty()) return;
    double mn = std::abs(nz[0]), mx = std::abs(nz[0]);
    for (double v : nz) {
      mn = std::min(mn, std::abs(v));
      mx = std::max(mx, std::abs(v));
      if (v != std::ceil(v)) int_mode = false;
    }
    if (int_mode) {
      if (mx / mn > 1000. || mx > 1.e8) {
        sci_mode = true;
        for (double v : nz) max_width = std::max(max_width, fmt("%.*e", v).size());
      } else {
        for (double v : nz) max_width = std::max(max_width, fmt0(v).size() + 1);
      }
    } else {
      if (mx / mn > 1000. || mx > 1.e8 || mn < 1.e-4) {
        sci_mode = true;
        for (double v : nz) max_width = std::max(max_width, fmt("%.*e", v).size());
      } else {
        for (double v : nz) max_width = std::max(max_width, fmt("%.*f", v).size());
      }
    }
  }

  std::string format_raw(double v) const {
    if (is_bool) return v != 0 ? "True" : "False";
    if (!floating) return std::to_string(static_cast<long long>(v));
    if (!std::isfinite(v)) return py_float_special(v);
    if (sci_mode) return fmt("%.*e", v);
    if (int_mode) return fmt0(v) + ".";
    return fmt("%.*f", v);
  }
  std::string format(double v) const {
    std::string r = format_raw(v);
    return r.size() < max_width ? std::string(max_width - r.size(), ' ') + r : r;
  }
  size_t width() const { return max_width; }
};

// A CPU double copy of a tensor, walked by index.
struct HostView {
  std::vector<double> data;
  DimVector sizes;
  DimVector strides;
  explicit HostView(const Tensor& t) : sizes(t.sizes()), strides(contiguous_strides(t.sizes())) {
    Tensor c = t.detach().to(Device(DeviceType::CPU)).to(ScalarType::Double).contiguous();
    const double* p = c.data_ptr<double>();
    data.assign(p, p + c.numel());
  }
};

struct Walker {
  const HostView& v;
  const Formatter& f;
  bool summarize;

  std::string scalar(int64_t off) const { return f.format(v.data[static_cast<size_t>(off)]); }

  std::string vec(int64_t off, size_t d, int indent) const {
    const int64_t n = v.sizes[d], st = v.strides[d];
    const size_t element_length = f.width() + 2;
    const size_t per_line = std::max<size_t>(1, static_cast<size_t>(std::floor(
                                                    static_cast<double>(kLineWidth - indent) / static_cast<double>(element_length))));
    std::vector<std::string> items;
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) items.push_back(scalar(off + i * st));
      items.push_back(" ...");
      for (int64_t i = n - kEdgeItems; i < n; ++i) items.push_back(scalar(off + i * st));
    } else {
      for (int64_t i = 0; i < n; ++i) items.push_back(scalar(off + i * st));
    }
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(static_cast<size_t>(indent + 1), ' ') : ", ";
      out += items[i];
    }
    return out + "]";
  }

  std::string any(int64_t off, size_t d, int indent) const {
    const size_t nd = v.sizes.size();
    if (nd == 0) return scalar(off);
    if (d == nd - 1) return vec(off, d, indent);
    const int64_t n = v.sizes[d], st = v.strides[d];
    std::vector<std::string> slices;
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) slices.push_back(any(off + i * st, d + 1, indent + 1));
      slices.push_back("...");
      for (int64_t i = n - kEdgeItems; i < n; ++i) slices.push_back(any(off + i * st, d + 1, indent + 1));
    } else {
      for (int64_t i = 0; i < n; ++i) slices.push_back(any(off + i * st, d + 1, indent + 1));
    }
    const std::string sep = "," + std::string(nd - d - 1, '\n') + std::string(static_cast<size_t>(indent + 1), ' ');
    std::string out = "[";
    for (size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
    return out + "]";
  }
};

// The values the formatter looks at when the tensor is summarised: the edge items only.
void summarized_values(const HostView& v, int64_t off, size_t d, std::vector<double>& out) {
  if (v.sizes.empty()) {
    out.push_back(v.data[static_cast<size_t>(off)]);
    return;
  }
  const int64_t n = v.sizes[d], st = v.strides[d];
  std::vector<int64_t> idx;
  if (n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  for (int64_t i : idx) {
    if (d + 1 == v.sizes.size()) out.push_back(v.data[static_cast<size_t>(off + i * st)]);
    else summarized_values(v, off + i * st, d + 1, out);
  }
}

std::string grad_fn_display_name(const autograd::Node& n) {
  std::string name = n.name();
  const auto pos = name.rfind("::");
  // Python shows hand-written nodes by their bare class name.
  if (pos != std::string::npos && name.find('<') == std::string::npos) name = name.substr(pos + 2);
  return name;
}

std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, size_t indent) {
  std::string out = body;
  const auto nl = body.rfind('\n');
  size_t last_line_len = body.size() - (nl == std::string::npos ? static_cast<size_t>(-1) : nl) + 1;
  if (nl == std::string::npos) last_line_len = body.size() + 2;
  for (const auto& s : suffixes) {
    if (last_line_len + s.size() + 2 > static_cast<size_t>(kLineWidth)) {
      out += ",\n" + std::string(indent, ' ') + s;
      last_line_len = indent + s.size();
    } else {
      out += ", " + s;
      last_line_len += s.size() + 2;
    }
  }
  return out + ")";
}
}  // namespace

std::string python_repr(const Tensor& t) {
  if (!t.defined()) return "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  std::string body;
  const ScalarType st = t.scalar_type();
  const bool default_dtype = st == ScalarType::Float || st == ScalarType::Long || st == ScalarType::Bool;
  if (t.numel() == 0) {
    if (t.dim() != 1) {
      std::string s = "size=(";
      for (int64_t d = 0; d < t.dim(); ++d) s += std::to_string(t.size(d)) + (t.dim() == 1 || d + 1 < t.dim() ? ", " : "");
      if (t.dim() > 1) s = s.substr(0, s.size());
      suffixes.push_back(s + ")");
    }
    if (!default_dtype) suffixes.push_back(std::string("dtype=") + python_name(st));
    body = "[]";
  } else {
    HostView hv(t);
    const bool summarize = t.numel() > kThreshold;
    std::vector<double> fvals;
    if (summarize) summarized_values(hv, 0, 0, fvals);
    Formatter f(summarize ? fvals : hv.data, st);
    body = Walker{hv, f, summarize}.any(0, 0, indent);
    if (!default_dtype) suffixes.push_back(std::string("dtype=") + python_name(st));
  }
  if (t.device().is_cuda()) suffixes.insert(suffixes.begin(), "device='" + t.device().str() + "'");
  if (t.grad_fn()) {
    suffixes.push_back("grad_fn=<" + grad_fn_display_name(*t.grad_fn()) + ">");
  } else if (t.requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return add_suffixes(prefix + body, suffixes, static_cast<size_t>(indent));
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << python_repr(t); }

}  // namespace gradlab
