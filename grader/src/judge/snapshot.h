// The result document the harness writes (grader/harness/harness.cpp), read
// and checked whole before anything else looks at it. The program that wrote
// it is the student's and may have forged it, so every key, type, length,
// shape and edge is held against the harness's exact schema, within bounds and
// without recursion; a document that fails is the student's verdict
// (bad_snapshot), never a crash of the grader nor a fault of the rubric.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "reports/result.h"

namespace grader {

// Bounds on what a result may hold. The course's real results stay far
// below each; what lies beyond is either forged or could not be graded.
inline constexpr size_t kMaxSnapshotBytes = 16u << 20;  // the whole document
inline constexpr size_t kMaxSnapshotNesting = 16;       // brackets deep (the harness writes at most 7)
inline constexpr size_t kMaxValuesSent = 4096;          // the harness's kMaxValues: values beyond are not sent
inline constexpr int64_t kMaxElements = int64_t{1} << 32;  // a shape's product; more than a run's memory holds as doubles
inline constexpr size_t kMaxDims = 64;
inline constexpr size_t kMaxGraphNodes = 10000;       // per graph
inline constexpr size_t kMaxSnapshotNodes = 100000;   // all graphs together
inline constexpr size_t kMaxGraphDepth = 5000;        // the longest path from a graph's root
inline constexpr size_t kMaxEntries = 100000;         // tensors, records, warnings, probes: each
inline constexpr size_t kMaxNameBytes = 1024;         // names, labels, ids, dtypes, grad_fn names
inline constexpr size_t kMaxTextBytes = 64u << 10;    // messages (errors, warnings)

// A document read from the channel: `doc` when `error` is empty.
struct Snapshot {
  json doc;
  std::string error;  // where in the document, what is wrong, with the values involved
  bool ok() const { return error.empty(); }
};

// Parses the channel's text (bounded in size and nesting before the parser,
// itself recursive, sees it) and checks it against the schema and this run's nonce.
Snapshot read_snapshot(std::string_view text, const std::string& nonce);

// Checks a parsed document: "" when the harness could have written it, else where and what.
std::string check_snapshot(const json& doc, const std::string& nonce);

// The deepest nesting of brackets in a JSON text, outside strings, found without parsing.
size_t json_nesting(std::string_view text);

}  // namespace grader
