#!/usr/bin/env bash
# Smoke test of scripts/slurm/up.sh and down.sh: start the single-node
# cluster in a temporary directory, run a trivial 3-task array (each task
# records its SLURM_ARRAY_* variables), wait by polling squeue, check that
# every task completed with the variables internal/shard expects, and stop
# the cluster (also on failure). Needs root; see up.sh.
#
#   bash scripts/slurm/smoke.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
say() { printf 'slurm/smoke: %s\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracegrid-slurm-smoke.XXXXXX")
cleanup() {
	"$HERE/down.sh" "$TMP/cluster" || say "down.sh failed"
	rm -rf "$TMP"
}
trap cleanup EXIT

t=$(now)
eval "$("$HERE/up.sh" "$TMP/cluster")"
say "up: $(since "$t") s"

# wait_job JOB TIMEOUT: poll squeue until the job (all array tasks) left it.
wait_job() {
	local job=$1 deadline=$(($(date +%s) + $2))
	while [[ -n $(squeue -h -r -j "$job" -o %i 2>/dev/null) ]]; do
		(($(date +%s) < deadline)) || {
			squeue -r -j "$job"
			return 1
		}
		sleep 0.2
	done
}

mkdir -p "$TMP/out"
cat >"$TMP/task.sbatch" <<'EOF'
#!/bin/bash
env | grep '^SLURM_ARRAY_' | sort >"$OUT/task-$SLURM_ARRAY_TASK_ID.env"
EOF
t=$(now)
job=$(OUT=$TMP/out sbatch --parsable --export=ALL --array=0-2 --output="$TMP/out/%A_%a.log" "$TMP/task.sbatch")
wait_job "$job" 60
say "3-task array $job: submit to last task gone $(since "$t") s"

# Each task's final state (sacct needs accounting; scontrol keeps finished
# jobs for MinJobAge).
states=$(scontrol -o show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort | uniq -c | xargs)
[[ $states == "3 COMPLETED" ]] || {
	scontrol -o show job "$job"
	say "FAIL: task states: $states"
	exit 1
}
for id in 0 1 2; do
	f=$TMP/out/task-$id.env
	[[ -s $f ]] || {
		say "FAIL: task $id wrote nothing"
		exit 1
	}
	for want in "SLURM_ARRAY_TASK_ID=$id" SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 "SLURM_ARRAY_JOB_ID=$job"; do
		grep -qx "$want" "$f" || {
			cat "$f"
			say "FAIL: task $id: no $want"
			exit 1
		}
	done
done
say "task 1 saw: $(grep -v JOB_ID "$TMP/out/task-1.env" | xargs)"

# Arrays with a step and with gaps: record what Slurm sets (internal/shard
# accepts the first and refuses the second).
rm -f "$TMP"/out/task-*.env
j2=$(OUT=$TMP/out sbatch --parsable --export=ALL --array=0-4:2 --output=/dev/null "$TMP/task.sbatch")
wait_job "$j2" 60
say "--array=0-4:2, task 2 saw: $(grep -v JOB_ID "$TMP/out/task-2.env" | xargs)"
rm -f "$TMP"/out/task-*.env
j3=$(OUT=$TMP/out sbatch --parsable --export=ALL --array=1,3,7 --output=/dev/null "$TMP/task.sbatch")
wait_job "$j3" 60
say "--array=1,3,7, task 3 saw: $(grep -v JOB_ID "$TMP/out/task-3.env" | xargs)"
say "PASS"
