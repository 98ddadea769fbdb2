// report.json: to_json(result), pretty-printed, with invalid UTF-8 from the
// submission replaced rather than thrown on.
#include "reports/escape.h"
#include "reports/writer.h"

namespace reports {
namespace {

class JsonWriter : public Writer {
 public:
  std::string format() const override { return "json"; }
  std::string file_name() const override { return "report.json"; }
  std::string render(const grader::Result& r) const override { return json_text(grader::to_json(r), 2) + "\n"; }
};

}  // namespace

std::unique_ptr<Writer> json_writer() { return std::make_unique<JsonWriter>(); }

}  // namespace reports
