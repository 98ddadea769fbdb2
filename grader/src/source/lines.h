// The student's lines in a compiled program: which line of their file an
// offset into the program belongs to, from the line table GCC wrote (-g1)
// and objdump read inside the build's fence. Kept beside the cached program,
// it turns the frames of an escaped exception into "exercise3.cpp:15".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace grader {

// objdump --dwarf=decodedline's output, reduced to "ADDRESS LINE" rows
// sorted by address, LINE 0 for rows of other files (headers) and ends of
// sequences. `file` is the name the student's file was compiled under.
std::string line_table(const std::string& objdump_output, const std::string& file);

// The student's line for each offset (0 where an offset is not in their
// file), from a table line_table() made.
std::vector<int> student_lines(const std::string& table, const std::vector<uint64_t>& offsets);

}  // namespace grader
