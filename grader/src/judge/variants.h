// Numbers of each student's own, as PrairieLearn's variants give them. An
// exercise whose rubric declares "variants" can hand each student other
// numbers than the lesson's, the same ones every time: their login picks the
// variant, the starter's statement shows its numbers, the reference solution
// runs at them (lab.given), and the checks' names and hints say them. A file
// copied from a classmate holds the classmate's numbers and fails. Variant 0
// is the lesson's own.
#pragma once
#include <stdexcept>
#include <string>

#include "judge/rubric.h"

namespace grader {

// A variant that cannot be made: past what the rubric's numbers allow, or a
// template that matches no line of the starter.
struct VariantError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How many variants the rubric's numbers allow besides the lesson's.
long variant_capacity(const Rubric& rubric);

// The numbers of variant `v` (0: the lesson's), in the rubric's order:
// {"x": -2, "y": 2, "z": 3}. Every variant differs from every other.
json given_at(const Rubric& rubric, int v);

// The variant a student gets among `count` (1..count), from their login or
// roster id: the same each time, spread evenly.
int variant_for(const std::string& who, int count);

// A number as a statement writes it: -12, 0.5, 1.25e-05.
std::string number_text(double v);

// A variant's numbers as a statement writes them: "x = -2, y = 2, z = 3".
std::string given_text(const json& given);

// `text` with its placeholders filled: ${x} from `given`, ${value:T} and
// ${grad:T} from the reference's facts (a named tensor's values, its
// gradient's). Throws VariantError naming a placeholder it cannot fill.
std::string fill(const std::string& text, const json& given, const json& facts);

// The rubric as one grade shows it: title, check names, hints and diagnoses filled.
Rubric filled(const Rubric& rubric, const json& given, const json& facts);

// The starter as the student of variant `v` gets it: each line the rubric's
// templates describe shows v's numbers, and (for v > 0) a first line says
// which variant the file is. Works on a file already written for another
// variant too, blanks and all: only those lines change.
std::string starter_at(const std::string& source, const Rubric& rubric, int v, const json& given, const json& facts);

// The variant a file says it was written for (its first line), or 0.
int variant_in(const std::string& source);

}  // namespace grader
