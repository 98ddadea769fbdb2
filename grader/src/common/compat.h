// Spellings that differ between the compilers of the distributions gradlab
// builds on (Debian 12's GCC 12, Debian 13's GCC 14, Ubuntu 24.04's GCC 13).
#pragma once

// A function that returns a reference to one of its arguments (a JSON
// value checked and handed back) and takes a temporary for another (the
// place named in its error): GCC 13 and later warn -Wdangling-reference at
// every call; the attribute tells them the result refers to no temporary.
// GCC 12 knows no such attribute and does not warn.
#if defined(__has_cpp_attribute) && __has_cpp_attribute(gnu::no_dangling)
#define GRADLAB_NO_DANGLING [[gnu::no_dangling]]
#else
#define GRADLAB_NO_DANGLING
#endif
