#!/usr/bin/env bash
# End-to-end test of sharded runs on a real single-node Slurm cluster
# (issue 17): start the cluster (scripts/slurm/up.sh), then
#
#   1. render a small grid as a 3-task array (deploy/slurm/submit.sh →
#      render-array.sbatch + merge.sbatch), and compare with a
#      single-process render of the same spec: the same clip ids, and
#      byte-identical videos and traces (rendering is deterministic);
#   2. evaluate the reference perceiver (`tracegrid serve`) on those clips
#      as a 2-task array with one database per shard, merge the databases,
#      and compare the exported trials with a single-process evaluation
#      (every column but latency_ms, finished_at and attempts, which depend
#      on timing, and request_ids, which the server makes at random);
#   3. check that both merges are idempotent (a second merge changes
#      nothing).
#
# The cluster, the perceiver and the temporary directory are cleaned up on
# exit, also on failure or interrupt (scripts/slurm/down.sh also stops any
# job process that outlives its step). Needs root (slurmd) and installs
# Debian's slurm packages and jq when missing. About 40 s on two cores,
# plus the build when TRACEGRID_BIN is not given (a few seconds with a warm
# Go build cache, ~100 s cold).
#
# The CLI it drives (docs/cluster.md):
#   tracegrid render --spec S --out DIR   (shard from SLURM_ARRAY_* in an
#       array task) writes DIR/shards/I-of-N/manifest.jsonl;
#   tracegrid merge --render DIR          writes DIR/manifest.jsonl;
#   tracegrid eval --config S --db DB     (shard from SLURM_ARRAY_*);
#   tracegrid merge --db OUT IN…;
#   tracegrid export --db X --format jsonl --out F.
#
#   bash scripts/slurm/e2e.sh
#
# Environment: TRACEGRID_BIN (default: built from this tree into the temp
# directory), KEEP_TMP=1 keeps the temporary directory, E2E_TIMEOUT seconds
# per Slurm wait (default 300).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
T0=$(date +%s.%N)
STEP_T=$T0
say() { printf 'slurm/e2e: %s\n' "$*"; }
fail() {
	say "FAIL: $*"
	exit 1
}
step() {
	local now
	now=$(date +%s.%N)
	say "$(awk -v a="$STEP_T" -v b="$now" -v n="$1" 'BEGIN { printf "%-40s %6.1f s", n, b - a }')"
	STEP_T=$now
}

[[ $(id -u) == 0 ]] || fail "needs root (slurmd starts the jobs)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracegrid-slurm-e2e.XXXXXX")
chmod 755 "$TMP"
SERVE_PID=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $SERVE_PID ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
		kill "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
	fi
	"$ROOT/scripts/slurm/down.sh" "$TMP/cluster" || say "down.sh failed (rc $?)"
	if [[ ${KEEP_TMP:-0} == 1 ]]; then
		say "kept $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! command -v jq >/dev/null; then
	command -v apt-get >/dev/null || fail "jq is missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq >"$TMP/apt.log" 2>&1 ||
		{ apt-get update -qq >>"$TMP/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq >>"$TMP/apt.log" 2>&1; } ||
		fail "apt-get install jq failed"
fi

# --- the binary, and the CLI this test needs
BIN=${TRACEGRID_BIN:-}
if [[ -z $BIN ]]; then
	BIN=$TMP/tracegrid
	GOFLAGS=-tags=egl go build -o "$BIN" ./cmd/tracegrid || fail "go build failed"
fi
BIN=$(realpath "$BIN")
"$BIN" merge --help >/dev/null 2>&1 ||
	fail "$BIN has no 'merge' command (is newMergeCmd registered in cmd/tracegrid/main.go?)"
# (help text captured first: grep -q would stop reading early, and
# pipefail would count the writer's SIGPIPE as a failure)
help=$("$BIN" render --help 2>&1) || true
grep -q -- '--shard' <<<"$help" ||
	fail "$BIN render has no --shard flag"
step "build, CLI check"

# --- the cluster
eval "$("$ROOT/scripts/slurm/up.sh" "$TMP/cluster")"
step "slurm up"

WAIT=${E2E_TIMEOUT:-300}
# wait_jobs ID…: poll squeue until none of the jobs (array tasks included)
# is pending or running.
wait_jobs() {
	local ids deadline=$(($(date +%s) + WAIT))
	ids=$(
		IFS=,
		echo "$*"
	)
	while [[ -n $(squeue -h -r -j "$ids" -o %i 2>/dev/null) ]]; do
		if (($(date +%s) >= deadline)); then
			squeue -r -j "$ids" || true
			fail "jobs $ids still queued after $WAIT s"
		fi
		sleep 0.25
	done
}
# job_states ID: "N STATE" counts over the job's tasks (scontrol keeps
# finished jobs for MinJobAge; sacct needs accounting, which is off).
job_states() { scontrol -o show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort | uniq -c | xargs; }
# expect_completed ID TASKS: every task COMPLETED, else print the logs.
expect_completed() {
	local got
	got=$(job_states "$1")
	if [[ $got != "$2 COMPLETED" ]]; then
		for f in "$TMP"/jobs/*"$1"*.out; do
			[[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; }
		done
		fail "job $1: states '$got', want '$2 COMPLETED'"
	fi
}

# Jobs run from $TMP/jobs (their .out files land there), with the test's
# binary, on the CPU (the test cluster has no GPU resource).
mkdir -p "$TMP/jobs"
export TRACEGRID=$BIN TRACEGRID_REQUIRE_GPU=0
CPU_ONLY=(-- --gres=none --cpus-per-task=1)

# --- 1. render: 3-task array vs one process
cat >"$TMP/spec.yaml" <<'EOF'
grid: default
domains: [blinking, bounce_ball, state_machine]
counts: [0, 2, 4]
frequencies: [2.0]
seeds: 1
duration: 4
fps: 30
width: 320
height: 180
EOF
"$BIN" render --spec "$TMP/spec.yaml" --out "$TMP/single" >"$TMP/single-render.log" 2>&1 ||
	{
		tail -20 "$TMP/single-render.log"
		fail "single-process render failed"
	}
step "render, one process"

read -r rjob rmerge < <(cd "$TMP/jobs" && "$ROOT/deploy/slurm/submit.sh" render "$TMP/spec.yaml" "$TMP/sharded" 3 "${CPU_ONLY[@]}")
[[ -n ${rmerge:-} ]] || fail "submitting the render array failed"
wait_jobs "$rjob" "$rmerge"
expect_completed "$rjob" 3
expect_completed "$rmerge" 1
step "render, 3-task array + merge"

for i in 1 2 3; do
	[[ -f $TMP/sharded/shards/$i-of-3/manifest.jsonl ]] || fail "no shards/$i-of-3/manifest.jsonl"
done
ids() { jq -r .id "$1" | sort; }
diff <(ids "$TMP/single/manifest.jsonl") <(ids "$TMP/sharded/manifest.jsonl") ||
	fail "clip ids differ: one process (<) vs merged shards (>)"
nclips=$(ids "$TMP/single/manifest.jsonl" | wc -l)
[[ $nclips == 9 ]] || fail "$nclips clips, want 9"
# Each clip in exactly one shard.
diff <(ids "$TMP/single/manifest.jsonl") <(cat "$TMP"/sharded/shards/*-of-3/manifest.jsonl | jq -r .id | sort) ||
	fail "the shard manifests do not hold every clip exactly once"
hashes() { (cd "$1/clips" && sha256sum -- *.mp4 *.trace.json); }
diff <(hashes "$TMP/single") <(hashes "$TMP/sharded") ||
	fail "videos or traces differ: one process (<) vs shards (>)"
# The merged manifest's video hashes are the files'.
diff <(jq -r '.id + " " + .sha256' "$TMP/single/manifest.jsonl" | sort) \
	<(jq -r '.id + " " + .sha256' "$TMP/sharded/manifest.jsonl" | sort) ||
	fail "manifest sha256 differ"
step "render compared ($nclips clips)"

# --- 2. eval: the reference perceiver, 2-task array vs one process
port=18089
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
"$BIN" serve --addr "127.0.0.1:$port" >"$TMP/serve.log" 2>&1 &
SERVE_PID=$!
up=0
for ((i = 0; i < 100; i++)); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && {
		up=1
		break
	}
	kill -0 "$SERVE_PID" 2>/dev/null || {
		cat "$TMP/serve.log"
		fail "tracegrid serve exited"
	}
	sleep 0.1
done
((up)) || fail "tracegrid serve does not listen on 127.0.0.1:$port after 10 s"
study() { # study MANIFEST
	cat <<EOF
name: e2e
manifest: $1
repetitions: 1
models:
  - name: reference
    base_url: http://127.0.0.1:$port/v1
    model_id: reference
    concurrency: 2
conditions:
  - policy: fps:4
    prompt: structured_trace
  - policy: keyframes
    prompt: direct
EOF
}
study "$TMP/single/manifest.jsonl" >"$TMP/study-single.yaml"
study "$TMP/sharded/manifest.jsonl" >"$TMP/study-sharded.yaml"
step "perceiver up"

"$BIN" eval --config "$TMP/study-single.yaml" --db "$TMP/single.sqlite" >"$TMP/single-eval.log" 2>&1 ||
	{
		tail -20 "$TMP/single-eval.log"
		fail "single-process eval failed"
	}
step "eval, one process"

read -r ejob emerge < <(cd "$TMP/jobs" && "$ROOT/deploy/slurm/submit.sh" eval "$TMP/study-sharded.yaml" "$TMP/dbs" 2 "${CPU_ONLY[@]}")
[[ -n ${emerge:-} ]] || fail "submitting the eval array failed"
wait_jobs "$ejob" "$emerge"
expect_completed "$ejob" 2
expect_completed "$emerge" 1
step "eval, 2-task array + merge"

# Timing-dependent columns out; everything else must be equal. The input
# audit's verdict is one of them when its rule is learned from the run's
# first two answered trials (no probe, no image_tokens.audit): which two
# answer first depends on timing, and each shard learns its own
# (docs/study.md, "Input audit").
trials() {
	"$BIN" export --db "$1" --format jsonl --out "$2.raw" 2>/dev/null || fail "export of $1 failed"
	jq -c 'del(.latency_ms, .finished_at, .attempts, .request_ids, .input_audit, .expected_prompt_tokens, .audit_note)' "$2.raw" >"$2"
}
trials "$TMP/single.sqlite" "$TMP/single.jsonl"
trials "$TMP/dbs/results.sqlite" "$TMP/sharded.jsonl"
ntrials=$(wc -l <"$TMP/single.jsonl")
[[ $ntrials == $((nclips * 2)) ]] || fail "$ntrials trials, want $((nclips * 2))"
diff "$TMP/single.jsonl" "$TMP/sharded.jsonl" >"$TMP/trials.diff" || {
	head -c 4000 "$TMP/trials.diff"
	fail "exported trials differ: one process (<) vs merged shards (>)"
}
# The shard databases split the trials: no trial in both, none missing.
n1=$("$BIN" export --db "$TMP/dbs/results.1-of-2.sqlite" --format jsonl --out - 2>/dev/null | wc -l)
n2=$("$BIN" export --db "$TMP/dbs/results.2-of-2.sqlite" --format jsonl --out - 2>/dev/null | wc -l)
((n1 > 0 && n2 > 0 && n1 + n2 == ntrials)) || fail "shard databases hold $n1 + $n2 trials, want two non-empty parts of $ntrials"
step "eval compared ($ntrials trials: $n1 + $n2)"

# --- 3. merges are idempotent
before=$(sha256sum <"$TMP/sharded/manifest.jsonl")
"$BIN" merge --render "$TMP/sharded" >"$TMP/remerge.log" 2>&1 || fail "second merge --render failed: $(tail -3 "$TMP/remerge.log")"
[[ $(sha256sum <"$TMP/sharded/manifest.jsonl") == "$before" ]] || fail "a second merge --render changed manifest.jsonl"
"$BIN" merge --db "$TMP/dbs/results.sqlite" "$TMP"/dbs/results.*-of-2.sqlite >"$TMP/remerge-db.log" 2>&1 ||
	fail "second merge --db failed: $(tail -3 "$TMP/remerge-db.log")"
trials "$TMP/dbs/results.sqlite" "$TMP/sharded2.jsonl"
cmp -s "$TMP/sharded.jsonl" "$TMP/sharded2.jsonl" || fail "a second merge --db changed the trials"
step "merges idempotent"

say "PASS ($(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s in all)"
