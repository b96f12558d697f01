#!/usr/bin/env bash
# Submit a sharded render or evaluation to Slurm: an N-task array and, after
# it, the merge (a dependent job). Prints the two job ids on stdout
# ("ARRAY_ID MERGE_ID") and a sentence on stderr.
#
#   deploy/slurm/submit.sh render SPEC.yaml OUTDIR N [-- SBATCH-OPTION…]   # merged: OUTDIR/manifest.jsonl
#   deploy/slurm/submit.sh eval STUDY.yaml DBDIR N [-- SBATCH-OPTION…]     # merged: DBDIR/results.sqlite
#
# Paths are made absolute (the jobs run elsewhere, from the shared file
# system). Options after -- go to the array's sbatch and override its
# #SBATCH lines, e.g. -- --partition=gpu --time=12:00:00, or for a CPU
# partition -- --gres=none --cpus-per-task=2 (then TRACEGRID_REQUIRE_GPU=0).
# Slurm's SBATCH_* variables work too and reach both jobs. The submitting
# shell's environment (TRACEGRID, API keys) is passed on.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

usage() {
	echo "usage: $0 render|eval SPEC-OR-STUDY.yaml DIR N [-- SBATCH-OPTION…]" >&2
	exit 2
}
(($# >= 4)) || usage
kind=$1 input=$2 dir=$3 n=$4
shift 4
if (($#)); then
	[[ $1 == -- ]] || usage
	shift
fi
extra=("$@")
[[ $n =~ ^[1-9][0-9]*$ ]] || {
	echo "submit: N=$n: want a number of shards ≥ 1" >&2
	exit 2
}
abs() { realpath -m -- "$1"; }
input=$(abs "$input")
dir=$(abs "$dir")
[[ -f $input ]] || {
	echo "submit: $input: no such file" >&2
	exit 2
}
case $kind in
render) script=$HERE/render-array.sbatch merge_kind=render ;;
eval) script=$HERE/eval-array.sbatch merge_kind=db ;;
*) usage ;;
esac
mkdir -p "$dir"

array=$(sbatch --parsable --array="0-$((n - 1))" "${extra[@]}" "$script" "$input" "$dir")
array=${array%%;*} # "jobid;cluster" on multi-cluster setups
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
	"$HERE/merge.sbatch" "$merge_kind" "$dir")
merge=${merge%%;*}
echo "submit: array job $array ($n tasks), merge job $merge (runs after every task succeeded)" >&2
echo "$array $merge"
