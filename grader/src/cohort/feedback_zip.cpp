#include "cohort/feedback_zip.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "cohort/class_files.h"
#include "common/files.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

constexpr long kFixedTime = 946684800;  // 2000-01-01: the same class gives the same bytes

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

la_ssize_t append(archive*, void* to, const void* data, size_t n) {
  static_cast<std::string*>(to)->append(static_cast<const char*>(data), n);
  return static_cast<la_ssize_t>(n);
}

// A zip of (name, bytes), in memory.
std::string zip_of(const std::vector<std::pair<std::string, std::string>>& files, std::string& error) {
  std::string bytes;
  std::unique_ptr<archive, int (*)(archive*)> a(archive_write_new(), archive_write_free);
  archive_write_set_format_zip(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open2(a.get(), &bytes, nullptr, &append, nullptr, nullptr) !=
      ARCHIVE_OK)
    return error = "cannot start a zip", "";
  for (const auto& [name, data] : files) {
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname_utf8(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
    archive_entry_set_mtime(e.get(), kFixedTime, 0);
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK ||
        archive_write_data(a.get(), data.data(), data.size()) != static_cast<la_ssize_t>(data.size()))
      return error = std::string("cannot write ") + name + " into the zip: " + archive_error_string(a.get()), "";
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) return error = "cannot finish the zip", "";
  return bytes;
}

}  // namespace

std::string feedback_name(const std::string& layout, const std::string& entry, const std::string& exercise) {
  const std::string file = exercise + "-report.html";
  if (layout == "canvas") {
    // Up to and including the second all-digit part, as Canvas reads it back.
    int digits = 0;
    for (size_t at = 0; at < entry.size();) {
      const size_t end = std::min(entry.find('_', at), entry.size());
      if (all_digits(entry.substr(at, end - at)) && ++digits == 2) return entry.substr(0, end + 1) + file;
      at = end + 1;
    }
    return "";  // anonymous grading: no user id in the name
  }
  if (layout == "moodle") {
    const std::string mark = "_assignsubmission_file";
    const size_t at = entry.find(mark);
    if (at == std::string::npos) return "";
    const size_t end = at + mark.size() + (entry.compare(at + mark.size(), 1, "_") == 0 ? 1 : 0);
    return entry.substr(0, end) + "/" + file;
  }
  return "";
}

std::string write_feedback_zip(const std::string& out, const reports::ClassResults& c) {
  std::error_code ec;
  for (const char* stale : {"feedback-canvas.zip", "feedback-moodle.zip"}) fs::remove(fs::path(out) / stale, ec);
  if (c.layout != "canvas" && c.layout != "moodle") return "";
  std::vector<std::pair<std::string, std::string>> files;  // sorted by (student, exercise): a map's order
  for (const auto& [key, entry] : c.lms_entries) {
    const auto& [student, exercise] = key;
    const std::string name = feedback_name(c.layout, entry, exercise);
    const auto report = read_file((fs::path(slot(out, student, exercise)) / "report.html").string());
    if (name.empty() || !report) continue;
    files.emplace_back(name, *report);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return "";
  std::string error;
  const std::string bytes = zip_of(files, error);
  if (!error.empty()) return error;
  return write_file_atomic((fs::path(out) / ("feedback-" + c.layout + ".zip")).string(), bytes);
}

}  // namespace grader
