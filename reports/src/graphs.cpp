// Backward graphs as DOT and as words. Everything in a graph came from the
// submission's process (tensor names, a custom Function's name, even the node
// ids), so nothing here trusts its shape: unknown ids are dropped, text is
// made valid UTF-8 without control characters before it becomes a label.
#include "reports/graphs.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "gradlab/dot_style.h"
#include "reports/escape.h"

namespace reports {
namespace {

using grader::GraphView;
using grader::json;
namespace style = gradlab::dot_style;

constexpr const char* kAccumulate = "torch::autograd::AccumulateGrad";
constexpr const char* kMarkColour = "red3";
// Alt text names at most this many nodes one by one.
constexpr size_t kMaxDescribed = 40;

// Printable text of at most `max` bytes (cut at a character boundary).
std::string clean(const std::string& s, size_t max = 80) {
  std::string v = valid_utf8(s), r;
  for (size_t i = 0; i < v.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (r.size() >= max && (c & 0xC0) != 0x80) return r + "…";
    r += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
  }
  return r;
}

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// One side of a picture: the nodes of one graph, read defensively.
struct Side {
  struct Node {
    std::string name;                // grad_fn name as the engine gives it
    std::vector<std::string> names;  // the named tensors it stands for
    std::string shape;               // "(3, 2)" for a leaf, "" when unknown
    std::vector<int> inputs;         // indices of its next functions (None edges left out)
    bool marked = false;
  };
  std::vector<Node> nodes;
  std::string root, root_shape;
  std::set<std::string> retains;  // named non-leaves that retain their grad
  size_t edges = 0;
};

std::string shape_of(const json& tensors, const std::string& name) {
  if (!tensors.is_object() || !tensors.contains(name)) return "";
  const json& s = tensors[name].is_object() ? tensors[name].value("shape", json()) : json();
  if (!s.is_array()) return "";
  std::vector<long long> v;
  for (const auto& x : s)
    if (x.is_number_integer()) v.push_back(x.get<long long>());
  return style::shape_text(v);
}

Side read_side(const json& nodes, const json& tensors, const std::string& root,
               const std::vector<std::string>& marked) {
  Side s;
  s.root = clean(root);
  s.root_shape = shape_of(tensors, root);
  if (!nodes.is_array()) return s;
  std::map<std::string, int> index;
  for (const auto& n : nodes) {
    const std::string id = str(n, "id");
    if (!id.empty() && !index.count(id) && index.size() < kMaxDrawnNodes)
      index.emplace(id, static_cast<int>(index.size()));
  }
  const std::set<std::string> mark(marked.begin(), marked.end());
  s.nodes.resize(index.size());
  std::set<std::string> done;
  for (const auto& n : nodes) {
    const std::string id = str(n, "id");
    if (!index.count(id) || !done.insert(id).second) continue;
    Side::Node& x = s.nodes[index[id]];
    x.name = clean(str(n, "name"), 120);
    x.marked = mark.count(id) > 0;
    std::string first_name;  // as the snapshot spells it, to look it up
    if (n.contains("tensors") && n["tensors"].is_array())
      for (const auto& t : n["tensors"])
        if (t.is_string()) {
          if (first_name.empty()) first_name = t.get<std::string>();
          x.names.push_back(clean(t.get<std::string>()));
          const json& d = tensors.is_object() && tensors.contains(t.get<std::string>()) ? tensors[t.get<std::string>()]
                                                                                        : json();
          if (d.is_object() && d.value("retains_grad", false) && !d.value("is_leaf", true))
            s.retains.insert(x.names.back());
        }
    if (n.contains("shape") && n["shape"].is_array()) {
      std::vector<long long> v;
      for (const auto& d : n["shape"])
        if (d.is_number_integer()) v.push_back(d.get<long long>());
      x.shape = style::shape_text(v);
    } else if (!x.names.empty()) {
      x.shape = shape_of(tensors, first_name);
    }
    if (n.contains("next") && n["next"].is_array())
      for (const auto& e : n["next"])
        if (e.is_array() && !e.empty() && e[0].is_string() && index.count(e[0].get<std::string>())) {
          x.inputs.push_back(index[e[0].get<std::string>()]);
          ++s.edges;
        }
  }
  return s;
}

bool is_leaf(const Side::Node& n) { return n.name == kAccumulate; }

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? sep : "") + v[i];
  return r;
}

std::string node_label(const Side& s, const Side::Node& n) {
  std::string l;
  if (is_leaf(n)) {
    l = join(n.names, ", ") + "\n " + n.shape;
  } else {
    l = style::short_name(n.name);
    // The root's own name is on its green box already.
    for (const auto& t : n.names)
      if (&n != &s.nodes.front() || t != s.root) l += "\n" + t + (s.retains.count(t) ? " (retains grad)" : "");
  }
  if (n.marked) l += "\n≠ differs";
  return l;
}

void write_side(std::string& out, const Side& s, const std::string& p, const std::string& indent) {
  out += indent + p + "root [label=\"" + style::quoted(s.root + "\n " + s.root_shape) + "\" fillcolor=" +
         style::kRootFill + "]\n";
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Side::Node& n = s.nodes[i];
    out += indent + p + std::to_string(i) + " [label=\"" + style::quoted(node_label(s, n)) + "\"";
    // The fill says what a node is; a mark only outlines it (a filled
    // node's outline colour would otherwise fill it too).
    out += std::string(" fillcolor=") + (is_leaf(n) ? style::kLeafFill : style::kOpFill);
    if (n.marked) out += std::string(" color=") + kMarkColour + " penwidth=3";
    out += "]\n";
  }
  if (!s.nodes.empty()) out += indent + p + "0 -> " + p + "root\n";
  for (size_t i = 0; i < s.nodes.size(); ++i)
    for (int in : s.nodes[i].inputs) out += indent + p + std::to_string(in) + " -> " + p + std::to_string(i) + "\n";
}

Side student_side(const GraphView& g) {
  return read_side(g.student, g.student_tensors, g.tensor, g.student_marked);
}
Side reference_side(const GraphView& g) {
  return read_side(g.reference, g.reference_tensors, g.tensor, g.reference_marked);
}

// "MulBackward0", or "MulBackward0 #2" where one name appears more than once.
std::vector<std::string> spoken_names(const Side& s) {
  std::map<std::string, int> count, seen;
  auto base = [&](const Side::Node& n) {
    if (is_leaf(n)) return n.names.empty() ? std::string("an unnamed leaf") : "leaf " + join(n.names, "/");
    return style::short_name(n.name) + (n.names.empty() ? "" : " (" + join(n.names, ", ") + ")");
  };
  for (const auto& n : s.nodes) ++count[base(n)];
  std::vector<std::string> out;
  for (const auto& n : s.nodes) {
    const std::string b = base(n);
    out.push_back(count[b] > 1 ? b + " #" + std::to_string(++seen[b]) : b);
  }
  return out;
}

std::string describe(const Side& s) {
  if (s.nodes.empty()) return s.root + " has no backward graph.";
  const auto names = spoken_names(s);
  std::string r = "The backward graph of " + s.root + (s.root_shape.empty() ? "" : " " + s.root_shape) + " has " +
                  std::to_string(s.nodes.size() + 1) + " nodes and " + std::to_string(s.edges + 1) + " edges. " +
                  s.root + " comes from " + names[0] + ".";
  size_t described = 0;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    if (s.nodes[i].inputs.empty() || is_leaf(s.nodes[i])) continue;
    if (++described > kMaxDescribed) {
      r += " And more nodes, not described one by one.";
      break;
    }
    // Its inputs, the first few of them: a node may take thousands.
    constexpr size_t kMaxInputsSaid = 12;
    std::vector<std::string> in;
    for (int k : s.nodes[i].inputs)
      if (in.size() < kMaxInputsSaid) in.push_back(names[static_cast<size_t>(k)]);
    if (s.nodes[i].inputs.size() > kMaxInputsSaid)
      in.push_back(std::to_string(s.nodes[i].inputs.size() - kMaxInputsSaid) + " more");
    r += " " + names[i] + " takes " + join(in, " and ") + ".";
  }
  std::vector<std::string> leaves, marked;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    if (is_leaf(s.nodes[i]))
      leaves.push_back((s.nodes[i].names.empty() ? std::string("an unnamed leaf") : join(s.nodes[i].names, "/")) +
                       (s.nodes[i].shape.empty() ? "" : " " + s.nodes[i].shape));
    if (s.nodes[i].marked) marked.push_back(names[i]);
  }
  r += leaves.empty() ? " It has no leaves that require grad." : " Leaves: " + join(leaves, ", ") + ".";
  if (!s.retains.empty())
    r += " Retaining their grad: " + join(std::vector<std::string>(s.retains.begin(), s.retains.end()), ", ") + ".";
  if (!marked.empty()) r += " Outlined as different: " + join(marked, ", ") + ".";
  return r;
}

}  // namespace

size_t node_count(const GraphView& g) {
  size_t n = g.student.is_array() ? g.student.size() : 0;
  if (g.reference.is_array()) n = std::max(n, g.reference.size());
  return n;
}

size_t edge_count(const GraphView& g) {
  auto edges = [](const json& nodes) {
    size_t n = 0;
    if (nodes.is_array())
      for (const auto& node : nodes)
        if (node.is_object() && node.contains("next") && node["next"].is_array()) n += node["next"].size();
    return n;
  };
  return std::max(edges(g.student), edges(g.reference));
}

std::string graph_dot(const GraphView& g) {
  std::string out = "digraph {\n";
  out += style::kGraphAttributes;
  out += style::kNodeAttributes;
  if (g.reference.is_null()) {
    write_side(out, student_side(g), "n", "\t");
  } else {
    const std::string cluster = "\t\tgraph [fontname=sans fontsize=14 labeljust=l style=rounded color=gray40]\n";
    out += "\tsubgraph cluster_student {\n\t\tlabel=\"your graph\"\n" + cluster;
    write_side(out, student_side(g), "s", "\t\t");
    out += "\t}\n\tsubgraph cluster_reference {\n\t\tlabel=\"reference\"\n" + cluster;
    write_side(out, reference_side(g), "r", "\t\t");
    out += "\t}\n";
  }
  return out + "}\n";
}

std::string graph_alt(const GraphView& g) {
  if (g.reference.is_null()) return describe(student_side(g));
  return "Two graphs side by side. Yours: " + describe(student_side(g)) + " The reference: " +
         describe(reference_side(g));
}

std::vector<std::string> graph_file_names(const std::vector<GraphView>& graphs) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::string stem;
    for (char c : graphs[i].tensor)
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') stem += c;
    if (stem.size() > 40) stem.resize(40);
    if (stem.empty()) stem = std::to_string(i + 1);
    const std::string tail = graphs[i].reference.is_null() ? "" : "-vs-reference";
    std::string name = "graph-" + stem + tail + ".png";
    // Two names that reduce to one stem ("a.b", "ab") get numbered apart.
    for (int k = 2; !used.insert(name).second; ++k) name = "graph-" + stem + "-" + std::to_string(k) + tail + ".png";
    out.push_back(name);
  }
  return out;
}

}  // namespace reports
