// DOT text to PNG with the Graphviz C library, linked into the grader: no
// `dot` process per picture, and a failure is a message, not a lost report.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <mutex>
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

}  // namespace

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
      p.png.assign(data, length);
      // The PNG header's IHDR chunk: width and height, big-endian.
      p.width = be32(p.png, 16);
      p.height = be32(p.png, 20);
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
