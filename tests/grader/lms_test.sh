#!/usr/bin/env bash
# `grade batch` on downloads named as Canvas, Moodle, Gradescope and GitHub
# Classroom name them, with a roster, end to end (issue 22). Checks: each
# layout is recognised and every file reaches its student; the exports
# (gradebook.csv, canvas.csv, moodle.csv) read back with Python's csv module
# under each LMS's documented columns, with a verdict beside each score;
# --bom; who handed in nothing is listed in the terminal and the summary and
# left out of the statistics; a sharded run with a roster merges to the same
# bytes; container mode (no user namespaces) takes and names the fallback
# fence; bad flags and a bad roster are usage errors that say what is wrong.
#   lms_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
rm -rf "$scratch" && mkdir -p "$scratch"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1 CI=1
. "$(dirname "$0")/common.sh"
sol=$src/solutions fx=$src/tests/fixtures
batch() { "$grade" batch "$@" "${iso[@]}" --exercises exercise3,exercise5 --jobs 2; }

# Canvas: one flat folder, lastfirst[_LATE]_userid_submissionid_file.
d=$scratch/canvas && mkdir -p "$d"
cp "$sol/exercise3.cpp" "$d/doejane_1001_5001_exercise3.cpp"
cp "$sol/exercise5.cpp" "$d/doejane_1001_5001_exercise5.cpp"
cp "$fx/exercise3/wrong-sign.cpp" "$d/martinelodie_LATE_1002_5002_Exercise3-1.cpp"
cp "$fx/exercise3/compile-error.cpp" "$d/smithbob_1003_5003_exercise3.cpp"
touch -d '2026-11-03 09:15:00 UTC' "$d/doejane_1001_5001_exercise3.cpp"  # the time a download keeps
printf 'Student,ID,SIS User ID,SIS Login ID,Section\r\n    Points Possible,,,,\r\n"Doe, Jane",1001,000101,jdoe,A\r\n"Martin, Élodie",1002,S2,emartin,B\r\n"Smith, Bob",1003,S3,bsmith,A\r\n"Quiet, Carl",1004,S4,cquiet,B\r\n' \
  >"$scratch/canvas-roster.csv"
batch "$d" --roster "$scratch/canvas-roster.csv" --bom --lms-assignment "Homework 3 (77)" --out "$scratch/c" \
  >"$scratch/c.log" 2>&1 || fail "canvas batch exited $?: $(cat "$scratch/c.log")"
grep -q "read as a canvas download" "$scratch/c.log" && grep -q "no submission from 1 student: cquiet" "$scratch/c.log" &&
  ok "Canvas's download is recognised; the terminal names who handed in nothing" || fail "canvas log: $(cat "$scratch/c.log")"

python3 - "$scratch/c" <<'PY' && ok "canvas.csv and gradebook.csv read back under their documented columns (BOM, verdicts); no moodle.csv for a Canvas class" || fail "the Canvas class's exports"
import csv, json, sys
out = sys.argv[1]
def rows(name):
    raw = open(f"{out}/{name}", "rb").read()
    assert raw.startswith(b"\xef\xbb\xbf"), f"{name} has no BOM"
    return list(csv.DictReader(open(f"{out}/{name}", encoding="utf-8-sig", newline="")))
canvas = rows("canvas.csv")
assert list(canvas[0].keys()) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 3 (77)"], canvas[0].keys()
assert canvas[0]["Student"] == "Points Possible" and canvas[0]["Homework 3 (77)"] == "31", canvas[0]
by_id = {r["ID"]: r for r in canvas[1:]}
assert by_id["1001"]["Homework 3 (77)"] == "31" and by_id["1001"]["SIS Login ID"] == "jdoe", by_id["1001"]
assert by_id["1001"]["SIS User ID"] == "000101", by_id["1001"]  # the roster's leading zeros, kept
assert by_id["1002"]["Student"] == "Martin, Élodie" and by_id["1002"]["Section"] == "B"
assert by_id["1003"]["Homework 3 (77)"] == "0", by_id["1003"]   # does not compile: a real 0
assert by_id["1004"]["Homework 3 (77)"] == "", by_id["1004"]    # nothing handed in: left to Canvas
g = {r["student"]: r for r in rows("gradebook.csv")}
assert g["bsmith"]["exercise3 verdict"] == "compile_error" and g["bsmith"]["exercise5 verdict"] == "missing", g["bsmith"]
assert g["emartin"]["exercise3 verdict"] == "failed" and g["emartin"]["email"] == "", g["emartin"]
assert g["cquiet"]["total"] == "" and g["cquiet"]["section"] == "B", g["cquiet"]
# When each file was handed in, as the download keeps it, beside the verdict.
assert g["jdoe"]["exercise3 submitted"] == "2026-11-03T09:15:00Z" and g["cquiet"]["exercise3 submitted"] == "", g["jdoe"]
# Canvas's _LATE_ mark is kept beside the score (issue 44), and only there.
assert g["emartin"]["exercise3 late"] == "late" and g["emartin"]["exercise5 late"] == "", g["emartin"]
assert all(r["exercise3 late"] == "" for k, r in g.items() if k != "emartin"), g
import os
assert not os.path.exists(f"{out}/moodle.csv"), "a Canvas class got moodle.csv (no Moodle participant to name)"
s = json.load(open(f"{out}/summary.json"))
assert s["layout"] == "canvas" and s["submitted_nothing"] == ["cquiet"], s
assert s["late"] == [{"student": "emartin", "exercise": "exercise3"}], s["late"]
assert {"student": "jdoe", "exercise": "exercise3", "at": "2026-11-03T09:15:00Z"} in s["submitted_at"], s["submitted_at"]
assert s["total"]["students"] == 3 and s["exercises"][0]["missing"] == 1, s["total"]
assert sum(s["fences"].values()) == 3, s["fences"]  # 4 files, one does not compile
PY
grep -q 'id="nothing"' "$scratch/c/summary.html" && grep -q 'cquiet (Quiet, Carl)' "$scratch/c/summary.html" &&
  grep -q '<span class="sub">late</span>' "$scratch/c/summary.html" &&
  grep -q 'id="fence">Student code ran in ' "$scratch/c/summary.html" &&
  ok "summary.html lists who handed in nothing, marks the late file and names the fence" ||
  fail "summary.html: no list of the missing, no late mark or no fence"

# Canvas's own gradebook export as the roster: its one assignment column is
# canvas.csv's by default, and its Points Possible must be the rubrics' total
# (exercise3 + exercise5 = 31), or canvas.csv is not written (issue 44).
pp_roster() {  # POINTS FILE
  printf 'Student,ID,SIS User ID,SIS Login ID,Section,Homework 3 (77),Current Score\r\n    Points Possible,,,,,%s,(read only)\r\n"Doe, Jane",1001,S1,jdoe,A,,\r\n"Martin, Élodie",1002,S2,emartin,B,,\r\n"Smith, Bob",1003,S3,bsmith,A,,\r\n' "$1" >"$2"
}
pp_roster 31.00 "$scratch/pp31.csv" && pp_roster 30.00 "$scratch/pp30.csv"
batch "$d" --roster "$scratch/pp31.csv" --out "$scratch/pp1" >"$scratch/pp1.log" 2>&1
code=$?
[ $code = 0 ] && grep -q 'the roster.s one assignment column, "Homework 3 (77)"' "$scratch/pp1.log" &&
  head -1 "$scratch/pp1/canvas.csv" | grep -q ',Homework 3 (77)' &&
  ok "the roster's one assignment column is canvas.csv's, its points possible agree" ||
  fail "a Canvas export as roster (exit $code): $(cat "$scratch/pp1.log")"
batch "$d" --roster "$scratch/pp30.csv" --out "$scratch/pp2" >"$scratch/pp2.log" 2>&1
code=$?
[ $code = 1 ] && [ ! -e "$scratch/pp2/canvas.csv" ] && [ -f "$scratch/pp2/gradebook.csv" ] &&
  grep -q 'points possible for "Homework 3 (77)" (the roster) is 30, the rubrics total 31: canvas.csv not written' "$scratch/pp2.log" &&
  grep -q 'id="points"' "$scratch/pp2/summary.html" &&
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["lms_points"]; assert p["mismatch"] and not p["canvas_csv_written"] and p["points_possible"] == 30 and p["rubrics_total"] == 31, p' "$scratch/pp2/summary.json" &&
  ok "a points-possible mismatch stops canvas.csv, with both numbers (exit 1)" ||
  fail "points possible 30 against 31 (exit $code): $(cat "$scratch/pp2.log")"
batch "$d" --roster "$scratch/pp30.csv" --accept-points-mismatch --out "$scratch/pp2" >"$scratch/pp3.log" 2>&1
code=$?
[ $code = 0 ] && [ -f "$scratch/pp2/canvas.csv" ] && grep -q "canvas.csv written anyway" "$scratch/pp3.log" &&
  grep -q "written anyway, as asked" "$scratch/pp2/summary.html" &&
  ok "--accept-points-mismatch exports anyway, and the summary says so" ||
  fail "--accept-points-mismatch (exit $code): $(cat "$scratch/pp3.log")"

# Feedback through Canvas's "Re-Upload Submissions": each report named so that
# Canvas's own reading (the first two all-digit parts between '_' are the
# user and the attachment) lands it on the file it grades.
python3 - "$scratch/c" "$d" <<'PY' && ok "feedback-canvas.zip: each student's reports, named as Canvas's re-upload matches them to their files" || fail "feedback-canvas.zip"
import csv, os, sys, zipfile
out, download = sys.argv[1], sys.argv[2]
def ids(name):
    digits = [p for p in name.split("_") if p.isdigit()]
    return tuple(digits[:2])
uploads = {}
for n in os.listdir(download):
    uploads.setdefault(ids(n), []).append(n.lower())
login = {r["id"]: r["student"] for r in csv.DictReader(open(f"{out}/gradebook.csv", encoding="utf-8-sig"))}
z = zipfile.ZipFile(f"{out}/feedback-canvas.zip")
names = z.namelist()
assert len(names) == 4 and names == sorted(names), names
for n in names:
    assert ids(n) in uploads, (n, "matches no uploaded file")
    exercise = n.rsplit("_", 1)[1][: -len("-report.html")]
    assert any(exercise in u for u in uploads[ids(n)]), (n, uploads[ids(n)])
    student = login[ids(n)[0]]
    assert z.read(n) == open(f"{out}/students/{student}/{exercise}/report.html", "rb").read(), n
PY

# The same class in 2 shards, merged: the same bytes as one run, roster and all.
for k in 1 2; do
  batch "$d" --roster "$scratch/canvas-roster.csv" --bom --lms-assignment "Homework 3 (77)" --shard $k/2 \
    --out "$scratch/cs$k" >/dev/null 2>&1 || fail "shard $k exited $?"
done
"$grade" merge "$scratch/cs1" "$scratch/cs2" --out "$scratch/cm" >/dev/null 2>&1 || fail "merge exited $?"
same=1
for f in gradebook.csv canvas.csv checks.csv summary.json summary.html; do
  cmp -s "$scratch/cm/$f" "$scratch/c/$f" || { same=0; fail "merged $f differs from one run"; }
done
# Each shard graded its students itself (its reports carry their own times): the
# merge's feedback zip holds the same names, each the merged folder's report.
python3 - "$scratch/c" "$scratch/cm" <<'PY' || { same=0; fail "the merged feedback-canvas.zip"; }
import sys, zipfile
one, merged = (zipfile.ZipFile(f"{d}/feedback-canvas.zip") for d in sys.argv[1:])
assert one.namelist() == merged.namelist(), (one.namelist(), merged.namelist())
PY
[ $same = 1 ] && ok "2 shards with a roster merge to the same files as one run"

# Shards of one class only: one graded with another option is refused, naming it.
batch "$d" --roster "$scratch/canvas-roster.csv" --bom --lms-assignment "Homework 4 (78)" --shard 2/2 \
  --out "$scratch/cs2x" >/dev/null 2>&1
"$grade" merge "$scratch/cs1" "$scratch/cs2x" --out "$scratch/cmx" >"$scratch/cmx.log" 2>&1
[ $? = 64 ] && grep -q "graded with other options than .* (--lms-assignment)" "$scratch/cmx.log" &&
  ok "shards graded with other options are not merged (the option is named)" || fail "mixed shards: $(cat "$scratch/cmx.log")"

# Moodle: a folder per participant (and a file-prefixed one); the worksheet carries "Participant N".
d=$scratch/moodle
mkdir -p "$d/Jane Doe_123456_assignsubmission_file_" "$d/Élodie Martin_123457_assignsubmission_file_"
cp "$sol/exercise3.cpp" "$d/Jane Doe_123456_assignsubmission_file_/exercise3.cpp"
cp "$fx/exercise5/one-expression.cpp" "$d/Jane Doe_123456_assignsubmission_file_/Exercise5 (1).cpp"
cp "$fx/exercise3/wrong-sign.cpp" "$d/Élodie Martin_123457_assignsubmission_file_/exercise3.cpp"
# Élodie uploaded a fix: Moodle kept both, renaming the later one. The later one is graded.
cp "$sol/exercise3.cpp" "$d/Élodie Martin_123457_assignsubmission_file_/exercise3 (1).cpp"
cp "$sol/exercise3.cpp" "$d/Bob Flat_123458_assignsubmission_file_exercise3.cpp"
batch "$d" --out "$scratch/m" >"$scratch/m.log" 2>&1 || fail "moodle batch exited $?"
python3 - "$scratch/m" <<'PY' && ok "Moodle's download: each participant graded, the worksheet reads back with Participant N" || fail "the Moodle class"
import csv, sys
m = {r["Identifier"]: r for r in csv.DictReader(open(sys.argv[1] + "/moodle.csv", encoding="utf-8", newline=""))}
assert set(m) == {"Participant 123456", "Participant 123457", "Participant 123458"}, m.keys()
jane = m["Participant 123456"]
assert jane["Full name"] == "Jane Doe" and jane["Maximum Grade"] == "31" and jane["Status"] == "Submitted for grading", jane
assert "exercise5: " in jane["Feedback comments"] and "(passed)" in jane["Feedback comments"], jane
assert m["Participant 123458"]["Feedback comments"].endswith("exercise5: missing"), m["Participant 123458"]
assert m["Participant 123457"]["Grade"] == "18", m["Participant 123457"]  # the later upload, "exercise3 (1).cpp"
PY
python3 - "$scratch/m" <<'PY' && ok "feedback-moodle.zip: each participant's reports in their folder, as Moodle's feedback-zip import reads it; no canvas.csv" || fail "feedback-moodle.zip"
import csv, os, sys, zipfile
out = sys.argv[1]
assert not os.path.exists(f"{out}/canvas.csv"), "a Moodle class got canvas.csv"
who = {r["Identifier"].split()[-1]: r["Full name"] for r in csv.DictReader(open(f"{out}/moodle.csv", encoding="utf-8"))}
student = {r["name"]: r["student"] for r in csv.DictReader(open(f"{out}/gradebook.csv", encoding="utf-8"))}
z = zipfile.ZipFile(f"{out}/feedback-moodle.zip")
seen = set()
for n in z.namelist():
    # Moodle's importer: a path part "fullname_participant_plugintype_pluginname[_rest]".
    info = n.split("/")[0].split("_", 4)
    assert len(info) >= 4 and info[1].isdigit() and (info[2], info[3]) == ("assignsubmission", "file"), n
    exercise = n.split("/")[-1][: -len("-report.html")]
    name = who[info[1]]
    assert z.read(n) == open(f"{out}/students/{student[name]}/{exercise}/report.html", "rb").read(), n
    seen.add((info[1], exercise))
assert seen == {("123456", "exercise3"), ("123456", "exercise5"), ("123457", "exercise3"), ("123458", "exercise3")}, seen
PY
grep -q "exercise3.cpp: not graded: .*exercise3 (1).cpp was taken for exercise3" "$scratch/m.log" &&
  ok "Moodle's renamed later upload is graded, and the log says which file was passed over" ||
  fail "Moodle's two uploads: $(grep -i "not graded" "$scratch/m.log")"

# Two participants with one name, and Moodle's own worksheet as the roster:
# each is matched by the participant number in their folder's name, never
# by the name (no duplicate row, nobody "missing").
d=$scratch/moodle-same && mkdir -p "$d/Sam Lee_200001_assignsubmission_file_" "$d/Sam Lee_200002_assignsubmission_file_"
cp "$sol/exercise3.cpp" "$d/Sam Lee_200001_assignsubmission_file_/exercise3.cpp"
cp "$fx/exercise3/wrong-sign.cpp" "$d/Sam Lee_200002_assignsubmission_file_/exercise3.cpp"
printf 'Identifier,"Full name","Email address",Status,Grade,"Maximum Grade","Grade can be changed","Last modified (submission)","Last modified (grade)","Feedback comments"\n' >"$scratch/moodle-worksheet.csv"
printf '"Participant 200001","Sam Lee",sam.lee@example.edu,"Submitted for grading",,100.00,Yes,,,\n' >>"$scratch/moodle-worksheet.csv"
printf '"Participant 200002","Sam Lee",slee2@example.edu,"Submitted for grading",,100.00,Yes,,,\n' >>"$scratch/moodle-worksheet.csv"
printf '"Participant 200003","Ana Ruiz",ana@example.edu,"No submission",,100.00,Yes,,,\n' >>"$scratch/moodle-worksheet.csv"
"$grade" batch "$d" --roster "$scratch/moodle-worksheet.csv" "${iso[@]}" --exercises exercise3 --jobs 2 --out "$scratch/ms" \
  >"$scratch/ms.log" 2>&1 || fail "moodle same-name batch exited $?: $(cat "$scratch/ms.log")"
python3 - "$scratch/ms" <<'PY' && ok "two participants with one name are told apart by their participant numbers, against Moodle's worksheet as roster" || fail "same-name Moodle participants: $(cat "$scratch/ms.log")"
import csv, sys
g = list(csv.DictReader(open(sys.argv[1] + "/gradebook.csv", encoding="utf-8")))
by_mail = {r["email"]: r for r in g}
assert len(g) == 3, [r["student"] for r in g]
assert by_mail["sam.lee@example.edu"]["exercise3"] == "18", by_mail
assert by_mail["slee2@example.edu"]["exercise3"] not in ("", "18"), by_mail
assert by_mail["ana@example.edu"]["exercise3 verdict"] == "missing", by_mail
m = {r["Identifier"]: r for r in csv.DictReader(open(sys.argv[1] + "/moodle.csv", encoding="utf-8"))}
assert m["Participant 200001"]["Grade"] == "18" and m["Participant 200001"]["Email address"] == "sam.lee@example.edu", m
assert m["Participant 200002"]["Grade"] == by_mail["slee2@example.edu"]["exercise3"], m
assert m["Participant 200003"]["Status"] == "No submission", m
PY

# Gradescope's export: the metadata names each folder's submitters (a pair shares one).
d=$scratch/gradescope && mkdir -p "$d/submission_111" "$d/submission_222"
cp "$sol/exercise3.cpp" "$d/submission_111/exercise3.cpp"
cp "$fx/exercise3/wrong-sign.cpp" "$d/submission_222/exercise3.cpp"
cat >"$d/submission_metadata.yml" <<'YML'
---
:submission_111:
  :submitters:
  - :name: Jane Doe
    :sid: '1001'
    :email: jane@example.edu
  :created_at: 2026-11-01 10:00:00.000000000 -07:00
  :score: 0.0
  :history: []
:submission_222:
  :submitters:
  - :name: "\u00C9lodie Martin"
    :sid: '1002'
    :email: elodie@example.edu
  - :name: Bob Partner
    :sid:
    :email: bob@example.edu
YML
batch "$d" --out "$scratch/g" >"$scratch/g.log" 2>&1 || fail "gradescope batch exited $?"
python3 - "$scratch/g" <<'PY' && ok "Gradescope's export: both members of a pair get the pair's score, with name, SID and email" || fail "the Gradescope class"
import csv, sys
g = {r["student"]: r for r in csv.DictReader(open(sys.argv[1] + "/gradebook.csv", encoding="utf-8", newline=""))}
assert set(g) == {"Jane Doe", "Élodie Martin", "Bob Partner"}, g.keys()
assert g["Élodie Martin"]["exercise3"] == g["Bob Partner"]["exercise3"] != "", g
assert g["Jane Doe"]["sis_id"] == "1001" and g["Bob Partner"]["email"] == "bob@example.edu", g
# Gradescope's created_at (-07:00), in UTC; none for a submission whose metadata gives none.
assert g["Jane Doe"]["exercise3 submitted"] == "2026-11-01T17:00:00Z" and g["Bob Partner"]["exercise3 submitted"] == "", g
PY

# GitHub Classroom: a clone per student, "<assignment>-<login>", files in exercises/.
d=$scratch/classroom
for who in jdoe emartin; do mkdir -p "$d/hw3-$who/.git" "$d/hw3-$who/exercises"; done
cp "$sol/exercise3.cpp" "$d/hw3-jdoe/exercises/exercise3.cpp"
cp "$fx/exercise3/forgot-retain-grad.cpp" "$d/hw3-emartin/exercises/exercise3.cpp"
printf '"identifier","github_username","github_id","name"\n"jane@example.edu","jdoe","1","Jane Doe"\n"elodie@example.edu","emartin","2","Élodie Martin"\n"carl@example.edu","","","Carl Quiet"\n' >"$scratch/classroom_roster.csv"
batch "$d" --roster "$scratch/classroom_roster.csv" --out "$scratch/h" >"$scratch/h.log" 2>&1 || fail "classroom batch exited $?"
python3 - "$scratch/h" <<'PY' && ok "GitHub Classroom's clones and roster: logins, names, and the student with no repository" || fail "the GitHub Classroom class"
import csv, sys
g = {r["student"]: r for r in csv.DictReader(open(sys.argv[1] + "/gradebook.csv", encoding="utf-8", newline=""))}
assert set(g) == {"jdoe", "emartin", "carl@example.edu"}, g.keys()
assert g["jdoe"]["name"] == "Jane Doe" and g["jdoe"]["exercise3 verdict"] == "passed", g["jdoe"]
assert g["carl@example.edu"]["exercise3 verdict"] == "missing" and g["carl@example.edu"]["total"] == "", g
PY

# Files where students put them (issue 44): a zip made on macOS in a Canvas
# download, a file in src/ of a Gradescope submission, one two folders down
# in a GitHub Classroom clone, one in "Exercise 3/" of a Moodle folder; a
# driver with its own main() and a committed gradlab-reports/ passed over.
d=$scratch/where && mkdir -p "$d/canvas" "$d/gs/submission_333/src" "$d/gh/hw3-kim/lab2b/exercise3" \
  "$d/gh/hw3-kim/gradlab-reports" "$d/moodle/Ann Lee_123459_assignsubmission_file_/Exercise 3"
python3 - "$sol/exercise3.cpp" "$d/canvas/leeann_1005_5005_exercise3.zip" <<'PY'
import sys, zipfile
src = open(sys.argv[1], "rb").read()
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:  # as macOS's Finder compresses a folder
    z.writestr("Übung 3/exercise3.cpp", src)  # a non-ASCII name: the zip's UTF-8 flag
    z.writestr("__MACOSX/Übung 3/._exercise3.cpp", b"\0\5\26\7\0\2\0\0Mac OS X        ")
PY
cp "$sol/exercise3.cpp" "$d/gs/submission_333/src/exercise3.cpp"
printf -- '---\n:submission_333:\n  :submitters:\n  - :name: Kim Park\n    :sid: "1007"\n    :email: kim@example.edu\n:submission_444:\n  :submitters:\n  - :name: Lu Chen\n    :sid: "1008"\n    :email: lu@example.edu\n' \
  >"$d/gs/submission_metadata.yml"
cp "$sol/exercise3.cpp" "$d/gh/hw3-kim/lab2b/exercise3/exercise3.cpp"
printf 'int main() { return 0; }\n' >"$d/gh/hw3-kim/exercise3.cpp"
cp "$fx/exercise3/wrong-sign.cpp" "$d/gh/hw3-kim/gradlab-reports/exercise3.cpp"
cp "$sol/exercise3.cpp" "$d/moodle/Ann Lee_123459_assignsubmission_file_/Exercise 3/exercise3.cpp"
# Archives holding a decoy: a Moodle participant's zip with an old copy in old/, a
# Gradescope submission's tarball with a driver of its own beside the file.
mkdir -p "$d/moodle/Bo Li_123460_assignsubmission_file_" "$d/gs/submission_444"
python3 - "$sol/exercise3.cpp" "$fx/exercise3/wrong-sign.cpp" "$d" <<'PY'
import io, sys, tarfile, zipfile
right, wrong, d = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3]
with zipfile.ZipFile(f"{d}/moodle/Bo Li_123460_assignsubmission_file_/hw3.zip", "w") as z:
    z.writestr("hw3/old/exercise3.cpp", wrong)
    z.writestr("hw3/exercise3.cpp", right)
with tarfile.open(f"{d}/gs/submission_444/upload.tar.gz", "w:gz") as t:
    for name, data in [("work/main_test/exercise3.cpp", b"#include <cstdio>\nint main() { return 0; }\n"),
                       ("work/exercise3.cpp", right)]:
        info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
PY
where_ok=1
for l in canvas gs gh moodle; do
  batch "$d/$l" --out "$d/out-$l" >"$d/$l.log" 2>&1 || { where_ok=0; fail "$l batch exited $?: $(cat "$d/$l.log")"; }
  python3 -c 'import csv,sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8-sig")))
assert rows and all(r["exercise3"] == "18" for r in rows), rows' "$d/out-$l/gradebook.csv" ||
    { where_ok=0; fail "$l: the file below the top was not graded 18/18: $(cat "$d/$l.log")"; }
done
grep -q "hw3-kim/exercise3.cpp: not graded: hw3-kim/lab2b/exercise3/exercise3.cpp was taken for exercise3 (it defines its own main()" \
  "$d/gh.log" && grep -q "hw3-kim/gradlab-reports: not read" "$d/gh.log" || { where_ok=0; fail "the clone's passed-over files: $(cat "$d/gh.log")"; }
grep -q "hw3.zip/hw3/old/exercise3.cpp: not graded: .*hw3.zip/hw3/exercise3.cpp was taken for exercise3 (it is at the submission's top)" "$d/moodle.log" &&
  grep -q "upload.tar.gz/work/main_test/exercise3.cpp: not graded: .* (it defines its own main()" "$d/gs.log" ||
  { where_ok=0; fail "the archives' decoys: $(grep 'not graded' "$d/moodle.log" "$d/gs.log")"; }
[ $where_ok = 1 ] && ok "files below the top and inside archives (a macOS zip, a Moodle zip and a Gradescope tarball holding decoys) are graded in Canvas, Gradescope, GitHub Classroom and Moodle downloads; a driver with main(), an old copy and gradlab-reports/ are passed over, and said"

# Container mode: inside a user namespace that may not make another (Docker's
# default seccomp profile, a Kubernetes pod), as an unprivileged user, grade
# batch takes the fallback fence by itself, says so, and every report and
# the summary name it.
if bubblewrap_works && bwrap --dev-bind / / --unshare-user --disable-userns --uid 1000 -- true 2>/dev/null; then
  c=$scratch/container && mkdir -p "$c/class/alice" && cp "$sol/exercise3.cpp" "$c/class/alice/" && chmod -R a+rwX "$c"
  bwrap --dev-bind / / --unshare-user --disable-userns --uid 1000 --gid 1000 --setenv GRADLAB_CACHE "$c/cache" \
    --setenv HOME "$c" -- "$grade" batch "$c/class" --exercises exercise3 --out "$c/out" >"$c/log" 2>&1
  if grep -q "runs in the fallback fence" "$c/log" && grep -q '"isolation": "fallback"' "$c/out/students/alice/exercise3/report.json" &&
     grep -q 'the fallback fence' "$c/out/students/alice/exercise3/report.html" &&
     grep -q 'id="fence">Student code ran in the fallback fence' "$c/out/summary.html" &&
     python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["fences"] == {"fallback": 1}' "$c/out/summary.json"; then
    ok "in a container without user namespaces the fallback fence is taken by itself and named in the log, the report and the summary"
  else
    fail "container mode: $(tail -5 "$c/log")"
  fi
else
  echo "skipped: container mode (bubblewrap cannot make the user namespace that stands for a container here)"
fi

# Usage errors say what is wrong.
"$grade" batch "$scratch/canvas" --layout blackboard >"$scratch/u1.log" 2>&1
[ $? = 64 ] && grep -q "blackboard" "$scratch/u1.log" && ok "an unknown --layout is a usage error naming it" || fail "--layout blackboard: $(cat "$scratch/u1.log")"
printf 'score,comment\n3,ok\n' >"$scratch/bad-roster.csv"
"$grade" batch "$scratch/canvas" "${iso[@]}" --roster "$scratch/bad-roster.csv" --out "$scratch/u2" >"$scratch/u2.log" 2>&1
[ $? = 64 ] && grep -q "bad-roster.csv:1: no column names a student" "$scratch/u2.log" &&
  ok "a roster with no identity column is a usage error that says which columns would do" || fail "bad roster: $(cat "$scratch/u2.log")"
"$grade" batch "$scratch/canvas" --roster "$scratch/nowhere.csv" >"$scratch/u3.log" 2>&1
[ $? = 64 ] && ok "a missing roster file is a usage error" || fail "missing roster: $(cat "$scratch/u3.log")"

echo "$failures failures"
[ "$failures" = 0 ]
