// Backward graphs for the reports: DOT text in torchviz's style (the
// engine's conventions, gradlab/dot_style.h), a PNG drawn from it with the
// Graphviz C library, and alt text that says in words what the picture shows.
#pragma once
#include <string>
#include <vector>

#include "reports/result.h"

namespace reports {

// Graphs larger than this are not drawn (Graphviz would take seconds and the
// picture would be unreadable); the report says so and shows the DOT text.
inline constexpr size_t kMaxDrawnNodes = 250;
// And the edges: 235 nodes with 28 500 edges between them keep Graphviz's
// ranking busy for minutes, holding the one lock every report draws under.
inline constexpr size_t kMaxDrawnEdges = 1000;

size_t node_count(const grader::GraphView& g);
size_t edge_count(const grader::GraphView& g);

// The student's graph alone, or, beside a failed check, the student's and the
// reference's side by side with the nodes that differ outlined and labelled.
std::string graph_dot(const grader::GraphView& g);

// The picture in words: each node, what it takes as inputs, which tensors are
// leaves and which retain their grad, and what differs from the reference.
std::string graph_alt(const grader::GraphView& g);

// One file name per graph, in order: "graph-loss.png", or
// "graph-loss-vs-reference.png" for a side-by-side picture. The tensor's name
// is reduced to letters, digits, '-' and '_'; names that collide are numbered.
std::vector<std::string> graph_file_names(const std::vector<grader::GraphView>& graphs);

struct Picture {
  std::string png;    // the bytes of the file; empty when drawing failed
  std::string error;  // why it failed, as Graphviz said it
  int width = 0, height = 0;
};
// Draws DOT text as a PNG with libgvc's dot layout, in this process, at
// `dpi` dots per inch (Graphviz's default is 96).
Picture render_png(const std::string& dot, int dpi = 96);
// The same, through a folder of pictures already drawn (empty: none). The
// same DOT text always gives the same picture, and a student who grades
// again after an edit mostly has the same graph: loading Graphviz's plugins
// and fonts is most of a cached grade's time, so a picture drawn once is
// read back. A picture that cannot be cached is still drawn.
Picture render_png(const std::string& dot, int dpi, const std::string& cache_dir);

}  // namespace reports
