// DOT text to PNG with the Graphviz C library, linked into the grader: no
// `dot` process per picture, and a failure is a message, not a lost report.
#include <graphviz/cgraph.h>
#include <graphviz/graphviz_version.h>
#include <graphviz/gvc.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "reports/graphs.h"

namespace reports {
namespace {

// Graphviz keeps global state (its error callback, cgraph's dictionaries,
// the plugin registry) and is not safe to call from two threads at once;
// `grade batch` writes reports from several. One drawing at a time.
std::mutex graphviz_lock;
// Graphviz reports problems through a global callback; each drawing
// collects them for its own error message.
std::string graphviz_errors;

int collect(char* message) {
  if (graphviz_errors.size() < 2000) graphviz_errors += message;
  return 0;
}

int be32(const std::string& s, size_t at) {
  int v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

Picture with_size(std::string png) {
  Picture p;
  if (png.size() <= 24 || png.compare(1, 3, "PNG") != 0) return p;
  p.png = std::move(png);
  // The PNG header's IHDR chunk: width and height, big-endian.
  p.width = be32(p.png, 16);
  p.height = be32(p.png, 20);
  return p;
}

// A cached picture is one file: the DOT text's length and the text itself,
// then the PNG. A hit needs the whole text to match, so a collision of the
// 64-bit name can only miss; one file renamed into place is never half seen.
std::string cache_key(const std::string& dot, int dpi) {
  const std::string what = std::string("gradlab-png-1;graphviz-" PACKAGE_VERSION ";dpi-") + std::to_string(dpi) + ";" + dot;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : what) h = (h ^ c) * 1099511628211ull;
  std::ostringstream name;
  name << std::hex << h << "-" << dpi << ".picture";
  return name.str();
}

std::string cached_png(const std::filesystem::path& file, const std::string& dot) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t newline = bytes.find('\n');
  if (newline == std::string::npos || bytes.compare(0, newline, std::to_string(dot.size())) != 0) return "";
  const size_t start = newline + 1;
  if (bytes.size() < start + dot.size() || bytes.compare(start, dot.size(), dot) != 0) return "";
  return bytes.substr(start + dot.size());
}

void store_png(const std::filesystem::path& file, const std::string& dot, const std::string& png) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  static std::atomic<unsigned> serial{0};  // `grade batch` stores from several threads
  const std::filesystem::path tmp = file.string() + ".tmp" + std::to_string(getpid()) + "-" + std::to_string(serial++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << dot.size() << '\n' << dot << png;
    if (!out.flush()) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

Picture render_png(const std::string& dot, int dpi, const std::string& cache_dir) {
  if (cache_dir.empty()) return render_png(dot, dpi);
  const std::filesystem::path file = std::filesystem::path(cache_dir) / cache_key(dot, dpi);
  if (Picture hit = with_size(cached_png(file, dot)); !hit.png.empty()) return hit;
  Picture p = render_png(dot, dpi);
  if (!p.png.empty()) store_png(file, dot, p.png);
  return p;
}

Picture render_png(const std::string& dot, int dpi) {
  Picture p;
  std::lock_guard<std::mutex> lock(graphviz_lock);
  graphviz_errors.clear();
  agseterrf(collect);
  agseterr(AGERR);  // warnings (a font substituted) do not make a picture wrong
  GVC_t* gvc = gvContext();
  if (!gvc) {
    p.error = "Graphviz could not start";
    return p;
  }
  Agraph_t* g = agmemread(dot.c_str());
  if (!g) {
    p.error = "Graphviz could not read the graph: " + graphviz_errors;
  } else if (agsafeset(g, const_cast<char*>("dpi"), const_cast<char*>(std::to_string(dpi).c_str()),
                       const_cast<char*>("")),
             gvLayout(gvc, g, "dot") != 0) {
    p.error = "Graphviz could not lay out the graph: " + graphviz_errors;
    agclose(g);
  } else {
    char* data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc, g, "png", &data, &length) == 0 && data && length > 24) {
      p = with_size(std::string(data, length));
      if (p.png.empty()) p.error = "Graphviz's picture is not a PNG";
    } else {
      p.error = "Graphviz could not draw a PNG (is its cairo plugin installed?): " + graphviz_errors;
    }
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
    agclose(g);
  }
  gvFreeContext(gvc);
  while (!p.error.empty() && (p.error.back() == '\n' || p.error.back() == ' ')) p.error.pop_back();
  return p;
}

}  // namespace reports
