#include "layouts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>

#include "safe_dir.h"

namespace grader {
namespace {

constexpr const char* kGradescopeMetadata = "submission_metadata.yml";
constexpr uint64_t kMaxMetadataBytes = uint64_t(16) << 20;

// Canvas: "doejane_12345_67890_exercise3.cpp", late: "doejane_LATE_12345_67890_exercise3.cpp".
const std::regex& canvas_name() {
  static const std::regex r(R"(^([^_]+)(_LATE)?_([0-9]+)_([0-9]+)_(.+)$)");
  return r;
}
// Moodle: "Jane Doe_123456_assignsubmission_file_" (a folder) or that prefix on a file.
const std::regex& moodle_name() {
  static const std::regex r(R"(^(.+)_([0-9]+)_assignsubmission_([a-z]+)_(.*)$)");
  return r;
}

bool is(int dirfd, const std::string& name, bool folder) {
  struct stat st {};
  return fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && (folder ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

Layout detect(int rootfd, const std::vector<std::string>& top) {
  if (is(rootfd, kGradescopeMetadata, false)) return Layout::Gradescope;
  for (const auto& n : top)
    if (std::regex_match(n, moodle_name())) return Layout::Moodle;
  for (const auto& n : top)
    if (is(rootfd, n, false) && std::regex_match(n, canvas_name())) return Layout::Canvas;
  size_t folders = 0, clones = 0;
  for (const auto& n : top) {
    if (!is(rootfd, n, true)) continue;
    ++folders;
    Fd f = open_folder(rootfd, n);
    if (f.fd >= 0 && is(f.fd, ".git", true)) ++clones;
  }
  return folders && clones == folders ? Layout::GithubClassroom : Layout::Folders;
}

Source whole(std::vector<std::string> folder) { return Source{std::move(folder), true, {}}; }

void note(LayoutPlan& p, const std::string& entry, const std::string& why) { p.notes.push_back({entry, why, true}); }

// One submitter per top-level folder (by hand, or GitHub Classroom's clones).
void plan_folders(int rootfd, const std::vector<std::string>& top, LayoutPlan& p) {
  const bool classroom = p.layout == Layout::GithubClassroom;
  std::vector<std::string> folders;
  for (const auto& n : top) {
    struct stat st {};
    if (fstatat(rootfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile: nothing to list
    if (!S_ISDIR(st.st_mode)) {
      note(p, n, describe(rootfd, n, st.st_mode) + ": a student is a folder (links are not followed)");
      continue;
    }
    folders.push_back(n);
  }
  // GitHub Classroom names each clone "<assignment>-<login>": the prefix all
  // share is the assignment's, the rest the student's login.
  size_t prefix = 0;
  if (classroom && folders.size() > 1) {
    const auto [lo, hi] = std::minmax_element(folders.begin(), folders.end());
    while (prefix < lo->size() && prefix < hi->size() && (*lo)[prefix] == (*hi)[prefix]) ++prefix;
    const size_t dash = lo->rfind('-', prefix ? prefix - 1 : 0);
    prefix = dash == std::string::npos || prefix == 0 ? 0 : dash + 1;
  }
  for (const auto& n : folders) {
    Submitter s;
    s.display = n.substr(std::min(prefix, n.size() - 1));
    s.folder = n;
    if (classroom) {
      s.identity.login = s.display;
      Fd repo = open_folder(rootfd, n);
      const bool release_layout = repo.fd >= 0 && is(repo.fd, "exercises", true);
      s.sources.push_back(whole(release_layout ? std::vector<std::string>{n, "exercises"} : std::vector<std::string>{n}));
    } else {
      s.sources.push_back(whole({n}));
    }
    p.submitters.push_back(std::move(s));
  }
}

// Canvas and Moodle: submitters named by a prefix on each entry, grouped by their LMS id.
void plan_prefixed(int rootfd, const std::vector<std::string>& top, LayoutPlan& p) {
  const bool canvas = p.layout == Layout::Canvas;
  std::map<std::string, size_t> by_id;
  for (const auto& n : top) {
    std::smatch m;
    if (!std::regex_match(n, m, canvas ? canvas_name() : moodle_name())) {
      note(p, n, std::string("not graded: not named as ") +
                     (canvas ? "Canvas names a submission (lastfirst_userid_submissionid_file)"
                             : "Moodle names a submission (Full Name_participant_assignsubmission_file_)"));
      continue;
    }
    const std::string id = m[canvas ? 3 : 2];
    auto [it, fresh] = by_id.emplace(id, p.submitters.size());
    if (fresh) {
      Submitter s;
      s.display = m[1];
      s.folder = n;
      s.tiebreak = id;
      if (canvas) s.identity.id = id;
      else s.identity.name = m[1], s.identity.participant = id;
      p.submitters.push_back(std::move(s));
    }
    Submitter& s = p.submitters[it->second];
    const bool folder = is(rootfd, n, true);
    if (!canvas && folder) {
      s.sources.push_back(whole({n}));
    } else {
      if (s.sources.empty() || !s.sources.front().folder.empty()) s.sources.insert(s.sources.begin(), Source{{}, false, {}});
      s.sources.front().names.push_back(n);
    }
  }
}

std::string scalar(const YAML::Node& map, const std::string& key) {
  for (const std::string& k : {":" + key, key})
    if (const YAML::Node v = map[k]; v && v.IsScalar()) return v.as<std::string>();
  return "";
}

// Gradescope's "Export Submissions": a folder per submission, and
// submission_metadata.yml naming its submitters (several for a group).
void plan_gradescope(int rootfd, const std::vector<std::string>& top, LayoutPlan& p) {
  const Read meta = read_regular(rootfd, kGradescopeMetadata, kMaxMetadataBytes);
  if (!meta.refused.empty() || meta.text.size() > kMaxMetadataBytes)
    throw std::invalid_argument(std::string(kGradescopeMetadata) + " " +
                                (meta.refused.empty() ? "is larger than 16 MiB" : meta.refused));
  YAML::Node doc;
  try {
    doc = YAML::Load(meta.text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(std::string(kGradescopeMetadata) + ":" + std::to_string(e.mark.line + 1) +
                                ": not YAML that can be read (" + e.msg + "): is this Gradescope's export?");
  }
  if (!doc.IsMap()) throw std::invalid_argument(std::string(kGradescopeMetadata) + ": expected one entry per submission");
  std::map<std::string, YAML::Node> submissions;
  for (const auto& kv : doc) {
    std::string key = kv.first.IsScalar() ? kv.first.as<std::string>() : "";
    if (!key.empty() && key[0] == ':') key.erase(0, 1);
    submissions[key] = kv.second;
  }
  for (const auto& n : top) {
    if (n == kGradescopeMetadata) continue;
    auto it = submissions.find(n);
    if (it == submissions.end() || !is(rootfd, n, true)) {
      note(p, n, std::string("not graded: not a submission folder that ") + kGradescopeMetadata + " names");
      continue;
    }
    YAML::Node who = it->second.IsMap() ? it->second[":submitters"] : YAML::Node();
    if (!who && it->second.IsMap()) who = it->second["submitters"];
    if (!who || !who.IsSequence() || who.size() == 0) {
      note(p, n, std::string("not graded: ") + kGradescopeMetadata + " names no submitter for it");
      continue;
    }
    for (const auto& person : who) {
      Submitter s;
      s.identity.name = scalar(person, "name"), s.identity.sis_id = scalar(person, "sid");
      s.identity.email = scalar(person, "email");
      s.display = !s.identity.name.empty() ? s.identity.name : !s.identity.sis_id.empty() ? s.identity.sis_id : s.identity.email;
      if (s.display.empty()) s.display = n;
      s.folder = n;
      s.tiebreak = !s.identity.sis_id.empty() ? s.identity.sis_id : n.substr(n.find('_') + 1);
      s.sources.push_back(whole({n}));
      p.submitters.push_back(std::move(s));
    }
    submissions.erase(it);
  }
  for (const auto& [key, node] : submissions)
    note(p, key, std::string("named in ") + kGradescopeMetadata + ", but the export has no such folder");
}

}  // namespace

Layout parse_layout(const std::string& name) {
  for (Layout l : {Layout::Auto, Layout::Folders, Layout::Canvas, Layout::Moodle, Layout::Gradescope, Layout::GithubClassroom})
    if (layout_name(l) == name) return l;
  throw std::invalid_argument("--layout: \"" + name + "\" is not one of auto, folders, canvas, moodle, gradescope, github-classroom");
}

std::string layout_name(Layout l) {
  switch (l) {
    case Layout::Auto: return "auto";
    case Layout::Folders: return "folders";
    case Layout::Canvas: return "canvas";
    case Layout::Moodle: return "moodle";
    case Layout::Gradescope: return "gradescope";
    case Layout::GithubClassroom: return "github-classroom";
  }
  return "folders";
}

LayoutPlan plan_layout(int rootfd, Layout requested) {
  std::vector<std::string> top;
  for (const auto& n : entries(rootfd))
    if (n[0] != '.') top.push_back(n);  // .git, .DS_Store: not students
  LayoutPlan p;
  p.layout = requested == Layout::Auto ? detect(rootfd, top) : requested;
  switch (p.layout) {
    case Layout::Canvas:
    case Layout::Moodle: plan_prefixed(rootfd, top, p); break;
    case Layout::Gradescope: plan_gradescope(rootfd, top, p); break;
    default: plan_folders(rootfd, top, p); break;
  }
  return p;
}

}  // namespace grader
