// Where a root grader lays out what its sandboxed runs must reach.
//
// A root grader runs each compile and program as a uid leased for that run
// (fence.h). That uid must reach, by path, its work folders and what the
// compiler reads (the headers, the precompiled header, the engine's
// library). A checkout in /root or behind any 0700 folder, a private TMPDIR
// (`mktemp -d`, libpam-tmpdir's /tmp/user/0) or a 0700 HOME holding the
// cache puts them out of its reach: every compile failed there.
//
// So a root grader keeps them in a folder of its own whose whole path anyone
// may traverse: /var/tmp/gradlab-0 (0711, owned by root: others may pass
// through, not list or write), or $GRADLAB_STAGING. The work folders are
// made there; a course path the leased uid cannot reach is copied there
// once per version of it and bound, inside the namespaces fence, at its own
// path, so the compiler and the precompiled header see the paths they were
// built with. A folder of the wrong owner or mode is refused, never used.
#pragma once
#include <string>

namespace grader {

// The staging folder ("" with `error` set when it cannot be had safely).
// Only a root grader uses one.
std::string staging_root(std::string& error);

// Whether a uid with no rights of its own can reach `path`: every folder on
// the way searchable by others, and the path itself readable by them.
bool reachable_by_anyone(const std::string& path);

// A copy of `path` (a file or a folder) inside the staging folder, readable
// by anyone, made once for each version of it (its files' names, sizes and
// times); "" with `error` set when it cannot be made.
std::string staged_copy(const std::string& path, std::string& error);

}  // namespace grader
