#!/usr/bin/env bash
# TEST-ONLY stand-in for the issue 17 CLI (--shard, merge), so that
# scripts/slurm/e2e.sh and the job files in deploy/slurm can be exercised
# before tracegrid itself has them. Delete it once the CLI exists.
#
#   TRACEGRID_REAL=bin/tracegrid TRACEGRID_BIN=scripts/slurm/contract-stub.sh bash scripts/slurm/e2e.sh
#
# It wraps the real binary (TRACEGRID_REAL) and emulates only the contract:
#   render … --out DIR   in a Slurm array task: renders the whole plan into a
#                        private directory, keeps clips i with i mod N = I−1
#                        (by manifest line; NOT the cost-balanced partition
#                        of internal/shard), copies them to DIR/clips and
#                        writes DIR/shards/I-of-N/manifest.jsonl;
#   merge --render DIR   DIR/manifest.jsonl = the shard manifests, sorted by id;
#   eval --config S …    in a Slurm array task: the study restricted to its
#                        clips (study field `clips`), same rule;
#   merge --db OUT IN…   OUT = the union of the IN trials tables (sqlite3);
# everything else goes to the real binary unchanged.
set -euo pipefail
REAL=${TRACEGRID_REAL:?set TRACEGRID_REAL to the real tracegrid binary}

shard() { # sets I and N from the Slurm array environment
	I=$(((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / ${SLURM_ARRAY_TASK_STEP:-1} + 1))
	N=$SLURM_ARRAY_TASK_COUNT
}
opt() { # opt NAME ARGS…: the value after --NAME
	local name=$1
	shift
	while (($#)); do
		[[ $1 == "--$name" ]] && {
			echo "$2"
			return
		}
		shift
	done
}

case ${1:-} in
merge)
	if [[ ${2:-} == --help ]]; then
		echo "merge --render DIR | merge --db OUT IN… (contract stub)"
		exit 0
	fi
	if [[ ${2:-} == --render ]]; then
		dir=$3
		cat "$dir"/shards/*/manifest.jsonl | jq -c -s 'sort_by(.id)[]' >"$dir/manifest.jsonl.tmp"
		mv "$dir/manifest.jsonl.tmp" "$dir/manifest.jsonl"
		exit 0
	fi
	[[ ${2:-} == --db ]] || exit 2
	out=$3
	shift 3
	cp "$1" "$out.tmp"
	shift
	for in in "$@"; do
		[[ $in -ef $out ]] && continue
		sqlite3 "$out.tmp" "ATTACH '$in' AS o; INSERT OR IGNORE INTO trials SELECT * FROM o.trials;"
	done
	mv "$out.tmp" "$out"
	;;
render)
	if [[ ${2:-} == --help ]]; then
		"$REAL" "$@"
		echo "      --shard I/N   (contract stub)"
		exit 0
	fi
	[[ -n ${SLURM_ARRAY_TASK_ID:-} ]] || exec "$REAL" "$@"
	shard
	out=$(opt out "$@")
	args=()
	skip=0
	for a in "$@"; do
		if ((skip)); then
			skip=0
			args+=("$out/.stub-$I")
			continue
		fi
		[[ $a == --out ]] && skip=1
		args+=("$a")
	done
	"$REAL" "${args[@]}"
	mkdir -p "$out/clips" "$out/shards/$I-of-$N"
	jq -c --argjson n "$N" --argjson i "$I" -s 'to_entries[] | select(.key % $n == $i - 1) | .value' \
		"$out/.stub-$I/manifest.jsonl" >"$out/shards/$I-of-$N/manifest.jsonl"
	for id in $(jq -r .id "$out/shards/$I-of-$N/manifest.jsonl"); do
		cp "$out/.stub-$I/clips/$id".* "$out/clips/"
	done
	rm -rf "$out/.stub-$I"
	;;
eval)
	[[ -n ${SLURM_ARRAY_TASK_ID:-} ]] || exec "$REAL" "$@"
	shard
	cfg=$(opt config "$@")
	manifest=$(sed -n 's/^manifest: *//p' "$cfg")
	clips=$(jq -r -s --argjson n "$N" --argjson i "$I" '[to_entries[] | select(.key % $n == $i - 1) | .value.id] | join(", ")' "$manifest")
	sub=$(mktemp --suffix=.yaml)
	{
		cat "$cfg"
		echo "clips: [$clips]"
	} >"$sub"
	args=()
	skip=0
	for a in "$@"; do
		if ((skip)); then
			skip=0
			args+=("$sub")
			continue
		fi
		[[ $a == --config ]] && skip=1
		args+=("$a")
	done
	rc=0
	"$REAL" "${args[@]}" || rc=$?
	rm -f "$sub"
	exit $rc
	;;
*) exec "$REAL" "$@" ;;
esac
