#!/usr/bin/env bash
# make bench: measures, in one run on this machine, frames/s for render only,
# render+readback, colour conversion, encode only and the whole pipeline, and
# as the reference the ffmpeg CLI encoding the same frames (dumped raw
# beforehand, not timed) with the same encoder settings. Writes BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-tags=egl
BIN=bin/tracegrid
GRID=${BENCH_GRID:-default}
WORK=$(mktemp -d "${BENCH_TMP:-/dev/shm}/tracegrid-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
now() { date +%s.%N; }
calc() { awk "BEGIN { print $1 }"; }

echo "== Go benchmarks" >&2
go test -run '^$' -bench 'BenchmarkRender|BenchmarkConvert|BenchmarkEncode' -benchtime 300x -count 1 ./gpu ./encode | tee "$WORK/gobench.txt" >&2
metric() { # benchmark name regex → frames/s (from the frames/s metric or ns/op)
	awk -v re="$1" '$1 ~ re { for (i = 2; i <= NF; i++) { if ($(i+1) == "frames/s") { print $i; exit } if ($(i+1) == "ns/op") ns = $i } } END { if (ns != "") printf "%.0f\n", 1e9 / ns }' "$WORK/gobench.txt" | head -1
}
render_only=$(metric '^BenchmarkRenderOnly')
render_read=$(metric '^BenchmarkRender854x480')
convert=$(metric '^BenchmarkConvertRGBA854x480')
encode_only=$(metric '^BenchmarkEncode854x480')

echo "== whole pipeline: tracegrid render --grid $GRID" >&2
t0=$(now)
$BIN render --grid "$GRID" --out "$WORK/pipe" 2> "$WORK/render.log"
t1=$(now)
pipe_s=$(calc "$t1 - $t0")
clips=$(wc -l < "$WORK/pipe/manifest.jsonl")
frames=$(awk -F'"frames":' '{ split($2, a, ","); s += a[1] } END { print s }' "$WORK/pipe/manifest.jsonl")
read -r codec preset crf fps size <<<"$($BIN bench-settings --grid "$GRID")"

echo "== reference: ffmpeg $codec -preset $preset -crf $crf on the same frames (raw dump not timed)" >&2
ref_s=0
for id in $(sed -E 's/.*"id":"([^"]+)".*/\1/' "$WORK/pipe/manifest.jsonl"); do
	$BIN bench-dump --grid "$GRID" --clip "$id" --out "$WORK/raw.rgba"
	ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt rgba -s "$size" -r "$fps" -i "$WORK/raw.rgba" \
		-f rawvideo -pix_fmt yuv420p "$WORK/raw.yuv"
	rm -f "$WORK/raw.rgba"
	t0=$(now)
	ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt yuv420p -s "$size" -r "$fps" -i "$WORK/raw.yuv" \
		-c:v "$codec" -preset "$preset" -crf "$crf" -pix_fmt yuv420p "$WORK/ref.mp4"
	t1=$(now)
	ref_s=$(calc "$ref_s + $t1 - $t0")
	rm -f "$WORK/raw.yuv" "$WORK/ref.mp4"
done
ratio=$(calc "$pipe_s / $ref_s")
gl=$($BIN info 2>/dev/null | sed -n 's/^GL_RENDERER *//p')
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)

fmt() { printf "%.0f" "$1"; }
{
	echo "# Benchmarks"
	echo
	echo "Measured by \`make bench\` (scripts/bench.sh) on $(date -u +%Y-%m-%d): $(nproc) cores ($cpu), GL_RENDERER \`$gl\`."
	echo "Frames are $size at $fps fps; encoder $codec preset $preset crf $crf. One run: the machine is shared and"
	echo "noisy, so compare rows of the same run (the ratio), not runs."
	echo
	echo "| stage | frames/s | how |"
	echo "|---|---|---|"
	echo "| render only (GL, glFinish) | $render_only | \`go test -bench BenchmarkRenderOnly ./gpu\` |"
	echo "| render + readback RGBA | $render_read | \`go test -bench BenchmarkRender854x480 ./gpu\` |"
	echo "| colour conversion RGBA→yuv420p | $convert | \`go test -bench BenchmarkConvert ./encode\` |"
	echo "| encode only ($codec $preset crf $crf) | $encode_only | \`go test -bench BenchmarkEncode ./encode\` |"
	echo "| whole pipeline, grid \`$GRID\` ($clips clips, $frames frames) | $(fmt "$(calc "$frames / $pipe_s")") | \`tracegrid render --grid $GRID\`: $(printf %.2f "$pipe_s") s |"
	echo "| reference: \`ffmpeg\` encode only, same frames | $(fmt "$(calc "$frames / $ref_s")") | raw yuv420p in, \`-c:v $codec -preset $preset -crf $crf\`, one clip at a time: $(printf %.2f "$ref_s") s |"
	echo
	echo "Whole render ÷ ffmpeg encode-only time: **$(printf %.2f "$ratio")×** (goal ≤ 1.25×)."
	if [ -f BENCHMARKS.gpu.md ]; then echo; cat BENCHMARKS.gpu.md; fi
} > BENCHMARKS.md
cat BENCHMARKS.md
