#!/usr/bin/env bash
# Grades a class on Kubernetes: the Indexed Job (8 shards), then, once it
# has ended whichever way, the merge Job, whose log says what is missing if
# an index failed. Needs kubectl pointed at the cluster, the image built from
# grader/batch/Dockerfile, and the PersistentVolumeClaims course-submissions
# and course-results.
#   grader/batch/k8s-run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kubectl delete job gradlab-class gradlab-merge --ignore-not-found
kubectl apply -f "$here/k8s-indexed-job.yaml"
# Complete, or Failed (an index past its retries): either way the merge
# runs, and a missing shard is said there.
until kubectl get job gradlab-class -o jsonpath='{.status.conditions[*].type}' | grep -qE 'Complete|Failed'; do
  sleep 10
done
kubectl apply -f "$here/k8s-merge-job.yaml"
kubectl wait --for=condition=complete --timeout=30m job/gradlab-merge || true
kubectl logs job/gradlab-merge
