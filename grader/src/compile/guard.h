// What a student's file may contain and define, checked before and after it
// is compiled. The sandbox contains what the program does when it runs; this
// keeps the compiler and the linker from being turned against the grader:
// an #include "../../solutions/exercise3.cpp" or asm(".incbin \"/etc/…\"") reads
// files at compile time, a pragma or attribute changes how the file is
// built, a definition of main, of a C library function or of an engine
// function replaces the grader's own. grader/SECURITY.md has the threat model.
#pragma once
#include <string>

namespace grader {

// Bumped whenever the rules change, so cached verdicts are recomputed.
inline constexpr int kGuardVersion = 7;

// The source rules. Returns "" or compiler-style diagnostics, one per line:
// "FILE:LINE:COL: error: what (hint)". `shown` is the file's name as the
// student wrote it.
std::string check_source(const std::string& text, const std::string& shown);

// The object's rules, from `nm -P --defined-only -g` (names are demangled
// here for the checks and the messages). Returns "" or diagnostics.
std::string check_symbols(const std::string& nm_output, const std::string& shown);

// The object's sections, from `readelf -SW`: no .preinit_array, whose
// functions run before every library's constructors, the harness's included
// (before it has taken its request and its channel). Returns "" or diagnostics.
std::string check_sections(const std::string& readelf_sections, const std::string& shown);

}  // namespace grader
