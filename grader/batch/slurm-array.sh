#!/usr/bin/env bash
# A Slurm job array that grades a class in 8 shards, then merges them.
#   sbatch grader/batch/slurm-array.sh /path/to/submissions /path/to/results
# Each task grades its own share of the students (`--shard K/N`, chosen by a
# hash of the student's name) into its own folder; the merge job, which runs
# once every task has ended, combines them into one gradebook and summary.
# A task that is preempted or fails can simply be resubmitted: it resumes.
#SBATCH --job-name=gradlab
#SBATCH --array=1-8
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
#SBATCH --time=00:30:00
set -euo pipefail
submissions=$1 results=$2
shards=8
# Task 1 submits the merge first, before it grades anything: it then runs
# once every task has ended (afterany), even when some failed. A failed
# task leaves its shard missing or incomplete, and `grade merge` refuses to
# merge without it and names it (its log is gradlab-merge-JOBID.out).
# Resubmit that task (it resumes), then run the merge again. (Resubmitting
# task 1 also submits a second merge: cancel the older one, or let it fail.)
# The paths are quoted for the shell that runs --wrap: a results folder with
# a blank in its name still merges. A merge that cannot be submitted (some
# clusters refuse sbatch from compute nodes) does not stop this task's
# grading: it says what to run by hand.
if [ "$SLURM_ARRAY_TASK_ID" = 1 ]; then
  merge="./grade merge"
  for k in $(seq 1 "$shards"); do merge+=" $(printf %q "$results/shard-$k")"; done
  merge+=" --out $(printf %q "$results/class")"
  sbatch --dependency="afterany:$SLURM_ARRAY_JOB_ID" --job-name=gradlab-merge --output="gradlab-merge-%j.out" \
    --cpus-per-task=1 --mem=2G --time=00:30:00 --wrap "$merge" ||
    echo "gradlab: could not submit the merge job; once every task has ended, run: $merge" >&2
fi
export GRADLAB_CACHE=${GRADLAB_CACHE:-$results/cache-$SLURM_ARRAY_TASK_ID}
./grade batch "$submissions" --shard "$SLURM_ARRAY_TASK_ID/$shards" --jobs "$SLURM_CPUS_PER_TASK" \
  --out "$results/shard-$SLURM_ARRAY_TASK_ID"
