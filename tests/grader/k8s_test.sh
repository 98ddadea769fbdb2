#!/usr/bin/env bash
# grader/batch's Kubernetes manifests, without a cluster:
# 1. Both are checked against Kubernetes' own object models (Debian's
#    python3-kubernetes) and the API server's rules the models leave out
#    (k8s_validate.py); six broken copies must each be refused, so the check
#    can fail.
# 2. Their pods are run as the kubelet would start them: the Indexed Job's 8
#    pods (JOB_COMPLETION_INDEX 0..7, the argv after the kubelet's $(VAR)
#    expansion, the working dir, the claims mapped to folders here), then the
#    merge pod. The merged class files must be the same bytes as one
#    unsharded `grade batch` of the class.
#   k8s_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
# Skipped (77) without python3-kubernetes (./run-tests installs it).
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
export NO_COLOR=1 CI=1
. "$(dirname "$0")/common.sh"
validate=$src/tests/grader/k8s_validate.py
jobs_yaml=$src/grader/batch/k8s-indexed-job.yaml merge_yaml=$src/grader/batch/k8s-merge-job.yaml
rm -rf "$scratch" && mkdir -p "$scratch"

out=$(/usr/bin/python3 "$validate" "$jobs_yaml" "$merge_yaml" 2>&1); rc=$?
[ "$rc" = 77 ] && { echo "$out"; exit 77; }
[ "$rc" = 0 ] && ok "$out" || fail "the manifests are not valid:"$'\n'"$out"

# Broken copies: EDIT (a sed script on the Indexed Job) and the refusal expected.
broken() {
  local name=$1 edit=$2 want=$3 copy=$scratch/broken-$1.yaml
  sed -e "$edit" "$jobs_yaml" >"$copy"
  cmp -s "$copy" "$jobs_yaml" && { fail "broken copy '$name': the edit changed nothing"; return; }
  out=$(/usr/bin/python3 "$validate" "$copy" 2>&1); rc=$?
  [ "$rc" = 1 ] && grep -qF -- "$want" <<<"$out" && ok "refused: $name ($want)" ||
    fail "broken copy '$name' was not refused with '$want' (exit $rc): $out"
}
broken "a misspelt field" 's/^  parallelism:/  parallelizm:/' "V1JobSpec has no field 'parallelizm'"
broken "a count as a string" 's/^  completions: 8/  completions: "8"/' "spec.completions: expected int, got str '8'"
broken "a container without a name" 's/- name: grade$/- stdin: false/' "V1Container requires 'name'"
broken "a Job whose pods restart Always" 's/restartPolicy: Never/restartPolicy: Always/' "must restart Never or OnFailure"
broken "a mount of no volume" 's/{name: results, mountPath/{name: result, mountPath/' "no volume 'result' in the pod"
broken "memory in gigabytes" 's/memory: 8Gi/memory: 8GB/' "'8GB' is not a quantity"

# The pods, as the kubelet starts them. The image's /gradlab is a folder whose
# ./grade runs the grader under test on this course (as the slurm test's).
class=$scratch/class results=$scratch/results app=$scratch/gradlab
sample_class "$class" "$src"
mkdir -p "$results" "$app"
iso_flag=""
bubblewrap_works || iso_flag=" --no-isolation"
cat >"$app/grade" <<EOF
#!/usr/bin/env bash
export GRADLAB_COURSE=$(printf %q "$src")
[ "\$1" = batch ] && exec $(printf %q "$grade") "\$@"$iso_flag
exec $(printf %q "$grade") "\$@"
EOF
chmod +x "$app/grade"
(cd "$app" && GRADLAB_CACHE="$scratch/cache" ./grade batch "$class" --jobs 2 --out "$scratch/unsharded") \
  >"$scratch/unsharded.log" 2>&1 || { fail "the unsharded run exited $?"; cat "$scratch/unsharded.log"; }

# run_pod INDEX MANIFEST LOG: the pod's one container, its env and working dir
# as given, its own /tmp (so its own GRADLAB_CACHE, as a pod has).
run_pod() {
  local spec
  spec=$(/usr/bin/python3 "$validate" --pod "$1" "$2" course-submissions="$class" course-results="$results" \
    /gradlab="$app") || { fail "no pod $1 from $2: $spec"; return 1; }
  /usr/bin/python3 - "$spec" "$scratch/tmp-$1-$(basename "$2")" "$scratch" >"$3" 2>&1 <<'EOF'
import json, os, subprocess, sys
pod, tmp, scratch = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)
# The pod's own /tmp paths move to its tmp; the volumes, already host paths
# under the scratch folder (itself under /tmp in a checkout there), stay.
env = {k: tmp + v[4:] if v.startswith("/tmp/") and not v.startswith(scratch) else v for k, v in pod["env"].items()}
env.update(PATH=os.environ["PATH"], HOME=tmp, TMPDIR=tmp, NO_COLOR="1", CI="1")
sys.exit(subprocess.run(pod["argv"], cwd=pod["cwd"], env=env).returncode)
EOF
}
bad=0
for k in 0 1 2 3 4 5 6 7; do
  run_pod "$k" "$jobs_yaml" "$scratch/pod-$k.log" || { fail "pod $k exited $?:"; tail -5 "$scratch/pod-$k.log"; bad=1; }
  shard=$((k + 1))
  grep -q "(shard $shard/8); .* with 4 jobs$" "$scratch/pod-$k.log" ||
    { fail "pod $k's log lacks shard $shard/8 and --jobs 4:"; cat "$scratch/pod-$k.log"; bad=1; }
  [ -f "$results/shard-$shard/batch.json" ] || { fail "pod $k wrote no shard-$shard/batch.json"; bad=1; }
done
[ "$bad" = 0 ] && ok "the Indexed Job's 8 pods graded shards 1/8 to 8/8 into /results/shard-1..8"
if run_pod 0 "$merge_yaml" "$scratch/merge.log"; then
  grep -q "^grade merge: 7 students from 8 folders$" "$scratch/merge.log" &&
    ok "the merge pod merged 7 students from 8 folders" || { fail "the merge pod's log:"; cat "$scratch/merge.log"; }
else
  fail "the merge pod exited $?:"; cat "$scratch/merge.log"
fi
bad=0
for f in gradebook.csv canvas.csv moodle.csv checks.csv summary.json summary.html batch.json; do
  [ -f "$scratch/unsharded/$f" ] || continue   # a layout's file the class does not get
  cmp -s "$results/class/$f" "$scratch/unsharded/$f" ||
    { fail "$f differs from the unsharded run's"; diff "$results/class/$f" "$scratch/unsharded/$f" | head -10; bad=1; }
done
[ "$bad" = 0 ] && [ -f "$results/class/gradebook.csv" ] && ok "the merged class files are the same bytes as one unsharded run"
[ "$failures" = 0 ] && echo "k8s: all passed" || echo "k8s: $failures failed"
[ "$failures" = 0 ]
