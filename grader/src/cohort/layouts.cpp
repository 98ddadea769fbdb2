#include "cohort/layouts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <ctime>
#include <regex>
#include <stdexcept>

#include "common/safe_dir.h"

namespace grader {
namespace {

constexpr const char* kGradescopeMetadata = "submission_metadata.yml";
constexpr uint64_t kMaxMetadataBytes = uint64_t(16) << 20;

// Canvas: "doejane_12345_67890_exercise3.cpp" (name, user id, attachment
// id, the student's file name), late: "doejane_LATE_12345_67890_...". The
// name may hold '_' ("de_lacruzjuan"): the first "_id_id_" after it ends it,
// since what follows is the student's own file name.
const std::regex& canvas_name() {
  static const std::regex r(R"(^(.+?)(_LATE)?_([0-9]+)_([0-9]+)_(.+)$)");
  return r;
}
// Canvas with anonymous grading: "anon_aB3xY_67890_exercise3.cpp", late "LATE_anon_...".
const std::regex& canvas_anonymous() {
  static const std::regex r(R"(^(LATE_)?anon_([A-Za-z0-9]+)_([0-9]+)_(.+)$)");
  return r;
}
// Moodle: "Jane Doe_123456_assignsubmission_file_" (3.x) or "..._file" (4.x),
// a folder, or that prefix on each file. The first match decides: what
// follows is the student's own file name.
const std::regex& moodle_name() {
  static const std::regex r(R"(^(.+?)_([0-9]+)_assignsubmission_([a-z]+)(_(.*))?$)");
  return r;
}

mode_t mode_of(int dirfd, const std::string& name) {
  struct stat st {};
  return fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode : 0;
}

bool is(int dirfd, const std::string& name, bool folder) {
  const mode_t m = mode_of(dirfd, name);
  return m && (folder ? S_ISDIR(m) : S_ISREG(m));
}

}  // namespace

bool marked_late(Layout l, const std::string& entry) {
  std::smatch m;
  if (l != Layout::Canvas) return false;
  if (std::regex_match(entry, m, canvas_anonymous())) return m[1].matched;
  return std::regex_match(entry, m, canvas_name()) && m[2].matched;
}

namespace {

bool canvas_file(const std::string& n) { return std::regex_match(n, canvas_anonymous()) || std::regex_match(n, canvas_name()); }

// The layout most of the top-level entries fit, so that one stray file (or
// one a student named on purpose) cannot turn a whole class's download into
// another layout. Ties go to the LMS, then to plain folders.
Layout detect(int rootfd, const std::vector<std::string>& top) {
  if (mode_of(rootfd, kGradescopeMetadata)) return Layout::Gradescope;
  size_t moodle = 0, canvas = 0, folders = 0, clones = 0;
  for (const auto& n : top) {
    const bool folder = is(rootfd, n, true);
    moodle += std::regex_match(n, moodle_name());
    canvas += !folder && is(rootfd, n, false) && canvas_file(n);
    folders += folder;
    if (folder) {
      Fd f = open_folder(rootfd, n);
      clones += f.fd >= 0 && is(f.fd, ".git", true);
    }
  }
  const size_t most = std::max({moodle, canvas, folders});
  if (most == 0) return Layout::Folders;
  if (moodle == most) return Layout::Moodle;
  if (canvas == most) return Layout::Canvas;
  return clones * 2 > folders ? Layout::GithubClassroom : Layout::Folders;
}

Source whole(std::vector<std::string> folder) { return Source{std::move(folder), true, {}}; }

void note(LayoutPlan& p, const std::string& entry, const std::string& why) { p.notes.push_back({entry, why, true}); }

// GitHub Classroom names each clone "<assignment>-<login>". The assignment
// is known from `gh classroom clone`'s own folder ("<assignment>-submissions"),
// else from the roster (the prefix most clones have before "-<login>"), else
// it is what every clone's name begins with, up to a '-'.
size_t assignment_prefix(const std::vector<std::string>& folders, const LayoutOptions& o) {
  const std::string tail = "-submissions";
  if (o.root_name.size() > tail.size() && o.root_name.compare(o.root_name.size() - tail.size(), tail.size(), tail) == 0) {
    const std::string slug = o.root_name.substr(0, o.root_name.size() - tail.size() + 1);  // "hw3-"
    if (std::all_of(folders.begin(), folders.end(), [&](const std::string& f) { return f.compare(0, slug.size(), slug) == 0; }))
      return slug.size();
  }
  std::map<std::string, int> votes;
  for (const auto& f : folders)
    for (const auto& login : o.logins)
      if (f.size() > login.size() + 1 && f.compare(f.size() - login.size(), login.size(), login) == 0 &&
          f[f.size() - login.size() - 1] == '-')
        ++votes[f.substr(0, f.size() - login.size())];
  std::string best;
  for (const auto& [prefix, n] : votes)
    if (best.empty() || n > votes[best]) best = prefix;
  if (!best.empty() && std::all_of(folders.begin(), folders.end(), [&](const std::string& f) {
        return f.size() > best.size() && f.compare(0, best.size(), best) == 0;
      }))
    return best.size();
  if (folders.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(folders.begin(), folders.end());
  size_t common = 0;
  while (common < lo->size() && common < hi->size() && (*lo)[common] == (*hi)[common]) ++common;
  const size_t dash = common ? lo->rfind('-', common - 1) : std::string::npos;
  return dash == std::string::npos ? 0 : dash + 1;
}

// One submitter per top-level folder (by hand, or GitHub Classroom's clones).
void plan_folders(int rootfd, const std::vector<std::string>& top, const LayoutOptions& o, LayoutPlan& p) {
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
  const size_t prefix = classroom ? assignment_prefix(folders, o) : 0;
  for (const auto& n : folders) {
    Submitter s;
    s.display = s.alias = n.substr(prefix < n.size() ? prefix : 0);
    s.folder = n;
    if (classroom) {
      s.identity.login = s.display;
      // Where the student release puts the files first, then the clone's top.
      Fd repo = open_folder(rootfd, n);
      if (const mode_t m = repo.fd >= 0 ? mode_of(repo.fd, "exercises") : 0; m && !S_ISDIR(m))
        note(p, n + "/exercises", describe(repo.fd, "exercises", m) + ": not read (links are not followed)");
      else if (m)
        s.sources.push_back(whole({n, "exercises"}));
      s.sources.push_back(whole({n}));
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
    std::string display, id, tiebreak;
    if (canvas && std::regex_match(n, m, canvas_anonymous())) {
      display = "anon_" + m[2].str(), tiebreak = m[2];  // no Canvas user id: the anonymous one
    } else if (std::regex_match(n, m, canvas ? canvas_name() : moodle_name())) {
      display = m[1], id = m[canvas ? 3 : 2], tiebreak = id;
    } else {
      note(p, n, std::string("not graded: not named as ") +
                     (canvas ? "Canvas names a submission (lastfirst_userid_attachmentid_file)"
                             : "Moodle names a submission (Full Name_participant_assignsubmission_file_)"));
      continue;
    }
    const mode_t mode = mode_of(rootfd, n);
    if (!S_ISDIR(mode) && !S_ISREG(mode)) {
      note(p, n, describe(rootfd, n, mode) + ": only regular files and folders are read (links are not followed)");
      continue;
    }
    auto [it, fresh] = by_id.emplace(display + "\n" + tiebreak, p.submitters.size());
    if (fresh) {
      Submitter s;
      s.display = s.alias = display;
      s.folder = n;
      s.tiebreak = tiebreak;
      if (canvas) s.identity.id = id;
      else s.identity.name = display, s.identity.participant = id;
      p.submitters.push_back(std::move(s));
    }
    Submitter& s = p.submitters[it->second];
    if (!canvas && S_ISDIR(mode)) {
      s.sources.push_back(whole({n}));
    } else {
      if (s.sources.empty() || !s.sources.front().folder.empty()) s.sources.insert(s.sources.begin(), Source{{}, false, {}});
      s.sources.front().names.push_back(n);
    }
  }
}

}  // namespace

std::string utc_time(int64_t seconds) {
  const time_t t = static_cast<time_t>(seconds);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return "";
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string utc_time(const std::string& lms_time) {
  static const std::regex when(R"(\s*([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?\s*(Z|[+-][0-9]{2}:?[0-9]{2})?\s*)");
  std::smatch m;
  if (!std::regex_match(lms_time, m, when)) return "";
  std::tm tm{};
  tm.tm_year = std::stoi(m[1]) - 1900, tm.tm_mon = std::stoi(m[2]) - 1, tm.tm_mday = std::stoi(m[3]);
  tm.tm_hour = std::stoi(m[4]), tm.tm_min = std::stoi(m[5]), tm.tm_sec = std::stoi(m[6]);
  int64_t t = static_cast<int64_t>(timegm(&tm));
  const std::string zone = m[7].matched ? m[7].str() : "Z";
  if (zone != "Z") {
    const std::string digits = zone.substr(1, 2) + zone.substr(zone.size() - 2);
    const int64_t offset = std::stoi(digits.substr(0, 2)) * 3600 + std::stoi(digits.substr(2, 2)) * 60;
    t -= zone[0] == '+' ? offset : -offset;
  }
  return utc_time(t);
}

namespace {

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
    throw std::invalid_argument(std::string(kGradescopeMetadata) + ": " +
                                (meta.refused.empty() ? "larger than 16 MiB" : meta.refused));
  YAML::Node doc;
  try {
    doc = YAML::Load(meta.text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(std::string(kGradescopeMetadata) +
                                (e.mark.is_null() ? std::string() : ":" + std::to_string(e.mark.line + 1)) +
                                ": not YAML that can be read (" + (e.msg.empty() ? std::string("too deeply nested?") : e.msg) +
                                "): is this Gradescope's export?");
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
      if (!person.IsMap())
        throw std::invalid_argument(std::string(kGradescopeMetadata) + ": " + n +
                                    "'s submitters are not listed as Gradescope lists them (:name:, :sid:, :email:)");
      Submitter s;
      s.identity.name = scalar(person, "name"), s.identity.sis_id = scalar(person, "sid");
      s.identity.email = scalar(person, "email");
      s.display = !s.identity.name.empty() ? s.identity.name : !s.identity.sis_id.empty() ? s.identity.sis_id : s.identity.email;
      if (s.display.empty()) s.display = n;
      s.alias = s.identity.name;
      s.folder = n;
      s.tiebreak = !s.identity.sis_id.empty() ? s.identity.sis_id : n.substr(n.find('_') + 1);
      s.sources.push_back(whole({n}));
      if (it->second.IsMap()) s.submitted_at = utc_time(scalar(it->second, "created_at"));
      p.submitters.push_back(std::move(s));
    }
    submissions.erase(it);
  }
  for (const auto& [key, node] : submissions)
    note(p, key.empty() ? "(an entry that is not a name)" : key,
         std::string("named in ") + kGradescopeMetadata + ", but the export has no such folder");
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

LayoutPlan plan_layout(int rootfd, Layout requested, const LayoutOptions& o) {
  LayoutPlan p;
  std::vector<std::string> top;
  for (const auto& n : entries(rootfd))
    if (n[0] != '.') top.push_back(n);
    else if (n != ".git" && n != ".github" && n != ".DS_Store" && n != ".gitignore")  // not students: said, not dropped
      p.notes.push_back({n, "not graded: a hidden entry (its name begins with '.'); rename it if it is a student's", true});
  p.layout = requested == Layout::Auto ? detect(rootfd, top) : requested;
  switch (p.layout) {
    case Layout::Canvas:
    case Layout::Moodle: plan_prefixed(rootfd, top, p); break;
    case Layout::Gradescope: plan_gradescope(rootfd, top, p); break;
    default: plan_folders(rootfd, top, o, p); break;
  }
  return p;
}

}  // namespace grader
