// Errors and warnings. Messages are PyTorch's texts, so that what a student
// reads in C++ is what the lessons show in Python; Error mirrors c10::Error.
#pragma once
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gradlab {

// c10::Error: what() is the message without a backtrace.
class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const char* what_without_backtrace() const noexcept { return msg_.c_str(); }
  const std::string& msg() const { return msg_; }

 private:
  std::string msg_;
};

// Recurring messages, named once.
namespace msg {
extern const char* const kSecondBackward;
extern const char* const kLeafInplace;
extern const char* const kViewOfLeafInplace;
extern const char* const kNoGradFn;
extern const char* const kImplicitScalar;
extern const char* const kNonLeafGrad;
extern const char* const kOnlyFloatGrad;
extern const char* const kUndefinedArg;
extern const char* const kAnomalyHint;
extern const char* const kCreateGraphCycle;
extern const char* const kAnomalyWarn;
}  // namespace msg

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

[[noreturn]] void throw_error(const std::string& m);
#define GRADLAB_CHECK(cond, ...) \
  do {                           \
    if (!(cond)) ::gradlab::throw_error(::gradlab::str_cat(__VA_ARGS__)); \
  } while (0)

// A warning as c10 records it: the text, where it came from, and whether the
// text is to be shown verbatim.
struct SourceLocation {
  const char* function;
  const char* file;
  int line;
};

class Warning {
 public:
  Warning(SourceLocation loc, std::string m, bool verbatim)
      : loc_(loc), msg_(std::move(m)), verbatim_(verbatim) {}
  const std::string& msg() const { return msg_; }
  const SourceLocation& source_location() const { return loc_; }
  bool verbatim() const { return verbatim_; }

 private:
  SourceLocation loc_;
  std::string msg_;
  bool verbatim_;
};

// LibTorch 1.13's handler interface (c10::WarningHandler): a handler written
// for LibTorch compiles unchanged against the engine.
class WarningHandler {
 public:
  virtual ~WarningHandler() = default;
  // The default prints LibTorch's one-line form to stderr.
  virtual void process(const SourceLocation& loc, const std::string& msg, bool verbatim);
};

WarningHandler* get_warning_handler();
void set_warning_handler(WarningHandler* h);  // nullptr restores the default
void warn(SourceLocation loc, const std::string& m, bool verbatim = false);
// TORCH_WARN_ONCE: the first time in the process only, unless warn-always is
// on (c10::Warning::set_warnAlways), as tests turn it on to see every one.
void warn_once(bool& warned, SourceLocation loc, const std::string& m);
void set_warn_always(bool on) noexcept;
bool get_warn_always() noexcept;

// Collects every warning raised while it lives (the grader reports them);
// also forwards them to the handler that was installed before it.
class WarningCollector : public WarningHandler {
 public:
  explicit WarningCollector(bool forward = false);
  ~WarningCollector() override;
  void process(const SourceLocation& loc, const std::string& msg, bool verbatim) override;
  const std::vector<Warning>& warnings() const { return warnings_; }

 private:
  WarningHandler* prev_;
  bool forward_;
  std::vector<Warning> warnings_;
};

}  // namespace gradlab
