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
go test -run '^$' -bench 'BenchmarkRender|BenchmarkConvert|BenchmarkEncode|BenchmarkImage' -benchtime 300x -count 1 ./gpu ./encode ./pipeline | tee "$WORK/gobench.txt" >&2
# A stream is 384 frames: a few streams are enough.
go test -run '^$' -bench 'BenchmarkStream' -benchtime 5x -count 1 ./eval/frames | tee -a "$WORK/gobench.txt" >&2
# Objects frames at 1920x1080 are ~100x the work of a 2D frame.
go test -run '^$' -bench 'BenchmarkRenderObjects|BenchmarkRenderWorld' -benchtime 30x -count 1 ./gpu ./pipeline | tee -a "$WORK/gobench.txt" >&2
metric() { # benchmark name regex → frames/s (from the frames/s metric or ns/op)
	awk -v re="$1" '$1 ~ re { for (i = 2; i <= NF; i++) { if ($(i+1) == "frames/s") { print $i; exit } if ($(i+1) == "ns/op") ns = $i } } END { if (ns != "") printf "%.0f\n", 1e9 / ns }' "$WORK/gobench.txt" | head -1
}
render_only=$(metric '^BenchmarkRenderOnly')
render_read=$(metric '^BenchmarkRender854x480')
convert=$(metric '^BenchmarkConvertRGBA854x480')
encode_only=$(metric '^BenchmarkEncode854x480')
scene_bounce=$(metric '^BenchmarkRenderScenes/bounce_ball')
scene_blink=$(metric '^BenchmarkRenderScenes/blinking')
scene_sm=$(metric '^BenchmarkRenderScenes/state_machine')
obj_cube=$(metric '^BenchmarkRenderObjects1920x1080/N50_cube')
obj_sphere=$(metric '^BenchmarkRenderObjects1920x1080/N50_sphere')
obj_noread=$(metric '^BenchmarkRenderWorldNoReadback')

# pipeline_bench PREFIX SPEC-FLAGS...: the whole pipeline on a grid or spec,
# then references A and B on the same frames; sets PREFIX_{pipe,ref,refp}_s,
# PREFIX_clips, PREFIX_frames, PREFIX_size and the encoder settings.
pipeline_bench() {
	local pfx=$1; shift
	local out="$WORK/pipe-$pfx"
	echo "== whole pipeline: tracegrid render $*" >&2
	local t0 t1
	t0=$(now)
	$BIN render "$@" --out "$out" 2> "$WORK/render-$pfx.log"
	t1=$(now)
	local pipe_s clips frames
	pipe_s=$(calc "$t1 - $t0")
	clips=$(wc -l < "$out/manifest.jsonl")
	frames=$(awk -F'"frames":' '{ split($2, a, ","); s += a[1] } END { print s }' "$out/manifest.jsonl")
	local codec preset crf fps size threads
	read -r codec preset crf fps size threads <<<"$($BIN bench-settings "$@")"
	local ids
	ids=$(sed -E 's/.*"id":"([^"]+)".*/\1/' "$out/manifest.jsonl")
	dump_yuv() { # clip id → $WORK/<id>.yuv, not timed
		$BIN bench-dump "$@" --clip "$CLIP" --out "$WORK/$CLIP.rgba"
		ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt rgba -s "$size" -r "$fps" -i "$WORK/$CLIP.rgba" \
			-f rawvideo -pix_fmt yuv420p "$WORK/$CLIP.yuv"
		rm -f "$WORK/$CLIP.rgba"
	}
	ffenc() { # clip id, threads
		ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt yuv420p -s "$size" -r "$fps" -i "$WORK/$1.yuv" \
			-c:v "$codec" -preset "$preset" -crf "$crf" -threads "$2" -pix_fmt yuv420p "$WORK/$1.ref.mp4"
	}
	# Reference A: the ffmpeg CLI one clip at a time with its own threading.
	echo "== reference A: ffmpeg $codec -preset $preset -crf $crf, one clip at a time (raw dump not timed)" >&2
	local ref_s=0 id
	for id in $ids; do
		CLIP=$id dump_yuv "$@"
		t0=$(now)
		ffenc "$id" 0
		t1=$(now)
		ref_s=$(calc "$ref_s + $t1 - $t0")
		rm -f "$WORK/$id.yuv" "$WORK/$id.ref.mp4"
	done
	# Reference B: exactly our encoder settings (one thread per clip), as
	# many ffmpeg processes in parallel as tracegrid has workers.
	local par
	par=$(nproc)
	echo "== reference B: $par ffmpeg processes in parallel, -threads $threads (raw dump not timed)" >&2
	local refp_s=0
	local -a rest=($ids) batch
	while [ ${#rest[@]} -gt 0 ]; do
		batch=("${rest[@]:0:$par}")
		rest=("${rest[@]:$par}")
		for id in "${batch[@]}"; do CLIP=$id dump_yuv "$@"; done
		t0=$(now)
		for id in "${batch[@]}"; do ffenc "$id" "$threads" & done
		wait
		t1=$(now)
		refp_s=$(calc "$refp_s + $t1 - $t0")
		for id in "${batch[@]}"; do rm -f "$WORK/$id.yuv" "$WORK/$id.ref.mp4"; done
	done
	printf -v "${pfx}_pipe_s" %s "$pipe_s"
	printf -v "${pfx}_ref_s" %s "$ref_s"
	printf -v "${pfx}_refp_s" %s "$refp_s"
	printf -v "${pfx}_clips" %s "$clips"
	printf -v "${pfx}_frames" %s "$frames"
	printf -v "${pfx}_size" %s "$size"
	printf -v "${pfx}_par" %s "$par"
	local v
	for v in codec preset crf fps threads; do printf -v "${pfx}_$v" %s "${!v}"; done
}

pipeline_bench main --grid "$GRID"
pipe_s=$main_pipe_s ref_s=$main_ref_s refp_s=$main_refp_s clips=$main_clips frames=$main_frames size=$main_size par=$main_par
codec=$main_codec preset=$main_preset crf=$main_crf fps=$main_fps threads=$main_threads
pipeline_bench obj --spec scripts/bench-objects.yaml

# Frame streams (evaluation): fps:16 JPEG frames of 24 s clips, rendered
# from the scene by tracegrid, against extracting them from the MP4 with the
# ffmpeg CLI, each as a user runs it (process start included on both sides).
echo "== frame streams: tracegrid frames --policy fps:16 vs ffmpeg -vf fps=16" >&2
stream_clips="bounce_ball_N06_F1.5_s00 blinking_N06_F1.5_s00 state_machine_N06_F1.5_s00 bounce_ball_N12_F0.5_s00"
tg_s=0; ff_s=0; nframes=0
for id in $stream_clips; do
	t0=$(now)
	$BIN frames --manifest "$WORK/pipe-main/manifest.jsonl" --clip "$id" --policy fps:16 --format jpg --quality 90 --out "$WORK/tg-$id" > /dev/null
	t1=$(now)
	mkdir -p "$WORK/ff-$id"
	ffmpeg -nostdin -loglevel error -y -i "$WORK/pipe-main/clips/$id.mp4" -vf fps=16 -q:v 2 "$WORK/ff-$id/%04d.jpg"
	t2=$(now)
	tg_s=$(calc "$tg_s + $t1 - $t0"); ff_s=$(calc "$ff_s + $t2 - $t1")
	nframes=$((nframes + $(ls "$WORK/tg-$id" | grep -c jpg)))
	echo "   $id: tracegrid $(calc "$t1 - $t0") s, ffmpeg $(calc "$t2 - $t1") s ($(ls "$WORK/ff-$id" | wc -l) frames)" >&2
	rm -rf "$WORK/tg-$id" "$WORK/ff-$id"
done
stream_fps=$(metric '^BenchmarkStreamFPS16/bounce_ball_N12')
stream_fps_typ=$(metric '^BenchmarkStreamFPS16/bounce_ball_N06')
jpeg_fps=$(metric '^BenchmarkImageJPEG854x480')

ratio=$(calc "$pipe_s / $ref_s")
ratiop=$(calc "$pipe_s / $refp_s")
gl=$($BIN info 2>/dev/null | sed -n 's/^GL_RENDERER *//p')
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)

fmt() { printf "%.0f" "$1"; }
{
	echo "# Benchmarks"
	echo
	echo "Measured by \`make bench\` (scripts/bench.sh) on $(date -u +%Y-%m-%d): $(nproc) cores ($cpu), GL_RENDERER \`$gl\`."
	echo "Frames are $size at $fps fps (objects: $obj_size); encoder $codec preset $preset crf $crf. One run: the machine is shared and"
	echo "noisy, so compare rows of the same run (the ratio), not runs."
	echo
	echo "| stage | frames/s | how |"
	echo "|---|---|---|"
	echo "| render only (GL, glFinish), synthetic frame with an 87 % panel | $render_only | \`go test -bench BenchmarkRenderOnly ./gpu\` |"
	echo "| render + readback RGBA, same synthetic frame | $render_read | \`go test -bench BenchmarkRender854x480 ./gpu\` |"
	echo "| render + readback RGBA, real frames: bounce_ball / blinking / state_machine | $scene_bounce / $scene_blink / $scene_sm | \`go test -bench BenchmarkRenderScenes ./pipeline\` |"
	echo "| colour conversion RGBA→yuv420p | $convert | \`go test -bench BenchmarkConvert ./encode\` |"
	echo "| encode only ($codec $preset crf $crf) | $encode_only | \`go test -bench BenchmarkEncode ./encode\` |"
	echo "| whole pipeline, grid \`$GRID\` ($clips clips, $frames frames) | $(fmt "$(calc "$frames / $pipe_s")") | \`tracegrid render --grid $GRID\`: $(printf %.2f "$pipe_s") s |"
	echo "| reference A: \`ffmpeg\` encode only, same frames | $(fmt "$(calc "$frames / $ref_s")") | raw yuv420p in, \`-c:v $codec -preset $preset -crf $crf\`, ffmpeg's own threading, one clip at a time: $(printf %.2f "$ref_s") s |"
	echo "| reference B: \`ffmpeg\` encode only, same frames, same settings | $(fmt "$(calc "$frames / $refp_s")") | as A with \`-threads $threads\`, $par processes in parallel: $(printf %.2f "$refp_s") s |"
	echo
	echo "Whole render ÷ ffmpeg encode-only time: **$(printf %.2f "$ratio")×** against A, **$(printf %.2f "$ratiop")×** against B (goal ≤ 1.25×)."
	echo
	echo "## Objects (CountVideoBench) at $obj_size"
	echo
	echo "| stage | frames/s | how |"
	echo "|---|---|---|"
	echo "| render only (GL, glFinish), 50 lit noisy objects, 4× MSAA | $obj_noread | \`go test -bench BenchmarkRenderWorldNoReadback ./gpu\` |"
	echo "| render + readback RGBA, real frames, N=50 cubes / spheres | $obj_cube / $obj_sphere | \`go test -bench BenchmarkRenderObjects ./pipeline\` |"
	echo "| whole pipeline, scripts/bench-objects.yaml ($obj_clips clips, $obj_frames frames) | $(fmt "$(calc "$obj_frames / $obj_pipe_s")") | \`tracegrid render --spec scripts/bench-objects.yaml\`: $(printf %.2f "$obj_pipe_s") s |"
	echo "| reference A: \`ffmpeg\` encode only, same frames | $(fmt "$(calc "$obj_frames / $obj_ref_s")") | one clip at a time, ffmpeg's own threading: $(printf %.2f "$obj_ref_s") s |"
	echo "| reference B: \`ffmpeg\` encode only, same frames, same settings | $(fmt "$(calc "$obj_frames / $obj_refp_s")") | \`-threads $threads\`, $obj_par processes in parallel: $(printf %.2f "$obj_refp_s") s |"
	echo
	echo "Whole objects render ÷ ffmpeg encode-only time: **$(printf %.2f "$(calc "$obj_pipe_s / $obj_ref_s")")×** against A, **$(printf %.2f "$(calc "$obj_pipe_s / $obj_refp_s")")×** against B."
	echo
	echo "Here rendering, not encoding, sets the pace: a 1080p world frame with 4× MSAA is drawn, resolved"
	echo "and read back by llvmpipe on the same two cores the encoders use (compare the render rows with"
	echo "reference B). On a GPU the render rows are what scripts/gpu-check.sh measures."
	echo
	echo "## Frame streams for evaluation"
	echo
	echo "fps:16 JPEG frames (quality 90) of four 24 s clips ($stream_clips): $nframes frames."
	echo
	echo "| how | time | frames/s |"
	echo "|---|---|---|"
	echo "| \`tracegrid frames --policy fps:16\` (rendered from the scene; process start and EGL init included) | $(printf %.2f "$tg_s") s | $(fmt "$(calc "$nframes / $tg_s")") |"
	echo "| reference: \`ffmpeg -i clip.mp4 -vf fps=16 -q:v 2 %04d.jpg\` (decode + extract) | $(printf %.2f "$ff_s") s | $(fmt "$(calc "$nframes / $ff_s")") |"
	echo "| steady state, one GL context: \`go test -bench BenchmarkStreamFPS16 ./eval/frames\`, bounce_ball N=6 F=1.5 / N=12 F=0.5 (moving all clip) | | $stream_fps_typ / $stream_fps |"
	echo "| JPEG encoding alone, 854x480 | | $jpeg_fps |"
	echo
	echo "tracegrid ÷ ffmpeg time: **$(printf %.2f "$(calc "$tg_s / $ff_s")")×** (goal: 5× faster, i.e. ≤ 0.20×)."
	if [ -f BENCHMARKS.gpu.md ]; then echo; cat BENCHMARKS.gpu.md; fi
} > BENCHMARKS.md
cat BENCHMARKS.md
