#!/usr/bin/env bash
# grader/batch/slurm-array.sh, as written, on a real Slurm cluster of one
# machine: munged, slurmctld and slurmd started here from a scratch folder
# (no systemd), the node declared with 8 CPUs and 32000 MB so that the
# script's own `--cpus-per-task=4 --mem=8G --array=1-8` fit, two tasks at a
# time. The array grades a generated class in 8 shards (two of them empty),
# task 1's merge job waits for them (afterany) and merges.
#   slurm_cluster_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
# Checks: the 8 tasks and the merge end COMPLETED, each task with 4 CPUs and
# 8 GiB as the script asks, and the merge started after the last task; the
# merged class files are the same bytes as one unsharded `grade batch` of the
# class, and the students' reports the same but for times and cache flags.
# The jobs' ./grade is a wrapper in the scratch folder that runs
# GRADE_BINARY on SOURCE_DIR's course, never the repository's ./grade (which
# rebuilds). Skipped (77) where Slurm cannot run here: not root, the packages
# missing and not installable (as root it installs slurmd, slurmctld,
# slurm-client and munge), or munged, slurmctld or slurmd not starting.
# Every daemon and job is stopped on every way out.
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
export PATH="$PATH:/usr/sbin:/sbin" NO_COLOR=1 CI=1
cluster=$scratch/cluster conf=$scratch/cluster/slurm.conf
. "$(dirname "$0")/common.sh"
skip() { echo "skipped: $*"; exit 77; }
# The test's own shell never exports SLURM_CONF: only the daemons, the Slurm
# commands and the jobs carry it, which is how teardown finds a straggler.
sl() { env SLURM_CONF="$conf" "$@"; }
sweep() {  # SIGNAL: every process started with this cluster's SLURM_CONF
  local p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = $$ ] && continue
    tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$conf" && kill "-$1" "${p#/proc/}" 2>/dev/null
  done
}

daemons=()  # munged, slurmctld, slurmd: in the foreground, started without a subshell, so $! is theirs
teardown() {
  local pid i
  if [ "${#daemons[@]}" -ge 2 ] && kill -0 "${daemons[1]}" 2>/dev/null; then  # slurmctld is up
    sl scancel --user="$(id -un)" 2>/dev/null
    for i in $(seq 1 40); do [ -z "$(sl squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do kill -TERM "${daemons[i]}" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for i in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  daemons=()
  sweep KILL  # a slurmstepd or a job's process left behind
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A run killed before its teardown (kill -9) may have left its daemons.
[ -d "$cluster" ] && sweep KILL
rm -rf "$scratch" && mkdir -p "$scratch"

# Slurm, or why not.
[ "$(id -u)" = 0 ] || skip "not root: slurmd runs the jobs as root here"
tools="munged munge unmunge slurmctld slurmd sbatch squeue scontrol sinfo scancel"
missing_tools() { local t m=""; for t in $tools; do command -v "$t" >/dev/null || m="$m $t"; done; echo "$m"; }
if [ -n "$(missing_tools)" ]; then
  echo "Slurm or MUNGE is missing ($(missing_tools) ); installing slurmd slurmctld slurm-client munge"
  command -v apt-get >/dev/null || skip "no$(missing_tools), and no apt-get to install them"
  . "$src/scripts/deps.sh"
  gradlab_install_deps slurmd slurmctld slurm-client munge || skip "could not install Slurm and MUNGE"
  [ -z "$(missing_tools)" ] || skip "still missing after installing:$(missing_tools)"
fi
command -v python3 >/dev/null || skip "no python3 to pick free ports"

# The cluster: a MUNGE key and socket, slurm.conf, everything under $cluster.
mkdir -p "$cluster"/{key,socket,state,spool,log} && chmod 700 "$cluster/key" && chmod 755 "$cluster" "$cluster/socket"
dd if=/dev/urandom of="$cluster/key/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$cluster/key/munge.key"
socket=$cluster/socket/munge.sock
SLURM_CONF="$conf" munged --foreground --force --socket="$socket" --key-file="$cluster/key/munge.key" \
  --log-file="$cluster/log/munged.log" --pid-file="$cluster/munged.pid" --seed-file="$cluster/key/munged.seed" \
  >"$cluster/log/munged.out" 2>&1 &
daemons+=($!)
for _ in $(seq 1 40); do [ -S "$socket" ] || ! kill -0 "${daemons[0]}" 2>/dev/null && break; sleep 0.25; done
if ! munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1; then
  tail -n 5 "$cluster/log/munged.out" "$cluster/log/munged.log" 2>/dev/null
  skip "munged did not start here (above)"
fi

host=$(hostname -s 2>/dev/null); [ -n "$host" ] || host=localhost
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
mkdir -p "$cluster/spool/$host"
cat >"$conf" <<EOF
# One machine, as a container allows: no cgroups, no accounting database.
ClusterName=gradlabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool/%n
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/log/slurmctld.log
SlurmdLogFile=$cluster/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=3600
NodeName=$host NodeHostname=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=32000 State=UNKNOWN
PartitionName=gradlab Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
SLURM_CONF="$conf" slurmctld -D -f "$conf" >"$cluster/log/slurmctld.out" 2>&1 &
daemons+=($!)
SLURM_CONF="$conf" slurmd -D -N "$host" -f "$conf" >"$cluster/log/slurmd.out" 2>&1 &
daemons+=($!)
state=""
for _ in $(seq 1 120); do
  state=$(sl sinfo -h -n "$host" -o %t 2>/dev/null)
  [ "$state" = idle ] && break
  kill -0 "${daemons[1]}" 2>/dev/null && kill -0 "${daemons[2]}" 2>/dev/null || break
  sleep 0.5
done
if [ "$state" != idle ]; then
  for f in slurmctld.out slurmd.out; do echo "--- $f"; grep -v pmix "$cluster/log/$f" | tail -n 8; done
  sl scontrol show node "$host" 2>/dev/null | grep -i reason
  skip "the Slurm node is not up (state '${state:-none}'; the daemons' logs above)"
fi
ok "a one-machine Slurm cluster is up (node $host idle, 8 CPUs, 32000 MB as configured)"

# The class (batch_test.sh's): 7 students, 9 submissions, a name that needs
# CSV quoting, one student with nothing; 2 of the 8 shards are empty.
class=$scratch/class
sample_class "$class" "$src"

# The jobs run in $job, where ./grade is the grader under test on this
# course (plus --no-isolation for `batch` where bubblewrap cannot start).
iso_flag=""
bubblewrap_works || iso_flag=" --no-isolation"
# A blank and a comma in the results folder: the merge job's command must quote it.
job=$scratch/job results="$scratch/results, graded"
mkdir -p "$job"
cat >"$job/grade" <<EOF
#!/usr/bin/env bash
# The jobs' ./grade: the grader under test, on the course at SOURCE_DIR.
export GRADLAB_COURSE=$(printf %q "$src")
[ "\$1" = batch ] && exec $(printf %q "$grade") "\$@"$iso_flag
exec $(printf %q "$grade") "\$@"
EOF
chmod +x "$job/grade"

# The reference: one unsharded run, as the script's tasks run (no --exercises).
(cd "$job" && GRADLAB_CACHE="$scratch/cache" ./grade batch "$class" --jobs 2 --out "$scratch/unsharded") \
  >"$scratch/unsharded.log" 2>&1 || { fail "the unsharded run exited $?"; cat "$scratch/unsharded.log"; }

# The array, submitted as its comment says, from the folder holding ./grade;
# GRADLAB_CACHE unset so that each task takes the script's own cache-K.
array=$(cd "$job" && env -u GRADLAB_CACHE SLURM_CONF="$conf" sbatch --parsable \
  "$src/grader/batch/slurm-array.sh" "$class" "$results" 2>"$scratch/sbatch.err")
array=${array%%;*}
[[ "$array" =~ ^[0-9]+$ ]] || { fail "sbatch refused the script: $(cat "$scratch/sbatch.err")"; exit 1; }
ok "sbatch took grader/batch/slurm-array.sh as written (array job $array)"

# Until no job is left (the merge is queued by task 1 before it grades, so
# the queue empties only after the merge). 10 minutes at most.
merge="" merge_waited=0 queue=""
deadline=$((SECONDS + 600))
while [ "$SECONDS" -lt "$deadline" ]; do
  queue=$(sl squeue -h -o '%i %j %T %r' 2>"$scratch/squeue.err") || { fail "squeue failed: $(cat "$scratch/squeue.err")"; break; }
  [ -z "$queue" ] && break
  grep -q '^[0-9]* gradlab-merge PENDING Dependency' <<<"$queue" && merge_waited=1
  sleep 1
done
if [ -n "$queue" ]; then
  fail "the jobs did not end within 10 minutes:"; echo "$queue"
  for f in "$job"/slurm-*.out; do echo "--- $f"; tail -n 5 "$f"; done
  exit 1
fi

# The tasks: 8, each COMPLETED with exit 0, with 4 CPUs and 8 GiB.
tasks=$(sl scontrol -o show job "$array" 2>/dev/null | grep "ArrayJobId=$array ")
n_done=$(grep -c 'JobState=COMPLETED .*ExitCode=0:0' <<<"$tasks")
n_size=$(grep -c 'TRES=cpu=4,mem=8G,' <<<"$tasks")
[ "$n_done" = 8 ] && ok "the 8 array tasks ended COMPLETED, exit 0" ||
  { fail "$n_done of 8 tasks completed:"; grep -o 'ArrayTaskId=[^ ]*\|JobState=[^ ]*\|ExitCode=[^ ]*' <<<"$tasks" | paste - - -; }
[ "$n_size" = 8 ] && ok "each task had the script's 4 CPUs and 8G" || fail "$n_size of 8 tasks had cpu=4,mem=8G"
for k in 1 2 3 4 5 6 7 8; do
  out=$job/slurm-${array}_$k.out
  grep -q "(shard $k/8); .* with 4 jobs$" "$out" 2>/dev/null ||
    { fail "task $k's log lacks its shard and --jobs 4:"; cat "$out" 2>/dev/null; }
  # Its own compile cache, the script's default (an empty shard compiles nothing).
  if [ ! -f "$results/shard-$k/batch.json" ]; then
    fail "task $k wrote no shard-$k/batch.json"
  elif ! grep -q '"students": \[\]' "$results/shard-$k/batch.json" && [ ! -d "$results/cache-$k" ]; then
    fail "task $k graded without its own cache-$k/"
  fi
done

# The merge: submitted by task 1, waited for every task, completed.
merge=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$job/slurm-${array}_1.out" 2>/dev/null)
if [ -z "$merge" ]; then
  fail "task 1 submitted no merge job:"; cat "$job/slurm-${array}_1.out"
else
  rec=$(sl scontrol -o show job "$merge" 2>/dev/null)
  grep -q 'JobState=COMPLETED .*ExitCode=0:0' <<<"$rec" && ok "task 1's merge job $merge ended COMPLETED, exit 0" ||
    { fail "the merge job: $(grep -o 'JobState=[^ ]*\|ExitCode=[^ ]*' <<<"$rec" | tr '\n' ' ')"; cat "$job/gradlab-merge-$merge.out"; }
  start=$(grep -o ' StartTime=[^ ]*' <<<"$rec") last_end=$(grep -o ' EndTime=[^ ]*' <<<"$tasks" | sort | tail -1)
  [ "$merge_waited" = 1 ] && [[ ! "${start#*=}" < "${last_end#*=}" ]] &&
    ok "the merge waited on its dependency and started after the last task (${start#*=})" ||
    fail "the merge did not wait: seen pending on its dependency: $merge_waited, started ${start#*=}, last task ended ${last_end#*=}"
  grep -q "^grade merge: 7 students from 8 folders$" "$job/gradlab-merge-$merge.out" 2>/dev/null &&
    ok "its log, gradlab-merge-$merge.out beside ./grade, says 7 students from 8 folders" ||
    { fail "the merge's log:"; cat "$job/gradlab-merge-$merge.out" 2>/dev/null; }
fi

# The merged class = the unsharded run (batch_test.sh's comparison).
class_files="gradebook.csv canvas.csv moodle.csv checks.csv summary.json summary.html batch.json"
bad=0
for f in $class_files; do
  if ! cmp -s "$results/class/$f" "$scratch/unsharded/$f"; then
    fail "$f differs from the unsharded run's"; diff "$results/class/$f" "$scratch/unsharded/$f" | head -10; bad=1
  fi
done
[ "$bad" = 0 ] && ok "the merged class files are the same bytes as one unsharded run ($class_files)"
# The students' reports: the same files, equal but for times and the cache flag.
normalise() {
  sed -E -e 's/("(seconds|wall_seconds|cpu_seconds|peak_memory_kb)": )[0-9.e+-]+/\10/' \
         -e 's/("cached": )(true|false)/\1false/' -e 's/("created": )"[^"]*"/\1""/' \
         -e 's/<span data-volatile>[^<]*<\/span>/<span data-volatile><\/span>/g' "$1"
}
listing() { (cd "$1/students" 2>/dev/null && find . -type f | LC_ALL=C sort); }
bad=0
if ! diff <(listing "$results/class") <(listing "$scratch/unsharded"); then
  fail "the merged students/ holds other files than the unsharded run's"; bad=1
else
  while IFS= read -r f; do
    a=$results/class/students/$f b=$scratch/unsharded/students/$f
    case "$f" in
      *.json | *.html) cmp -s <(normalise "$a") <(normalise "$b") ;;
      *) cmp -s "$a" "$b" ;;
    esac || { fail "students/$f differs"; diff <(normalise "$a") <(normalise "$b") | head -6; bad=1; }
  done < <(listing "$scratch/unsharded")
fi
[ "$bad" = 0 ] && [ -n "$(listing "$scratch/unsharded")" ] &&
  ok "the merged students' reports equal the unsharded run's (times and the cache flag aside)"

[ "$failures" = 0 ]
