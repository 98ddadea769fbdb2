// Every student program's main, the same for every exercise and compiled
// once with the build: the link points gradlab_exercise at the exercise's
// own function (ld's --defsym, grader/src/compile/build.cpp), so that a student's
// first grade compiles the student's file and nothing else.
namespace lab {
class Lab;
int harness_main(int, char**, void (*)(Lab&));
}  // namespace lab
void gradlab_exercise(lab::Lab&);
int main(int argc, char** argv) { return lab::harness_main(argc, argv, &gradlab_exercise); }
