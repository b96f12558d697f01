#!/usr/bin/env bash
# make bench: measures, in one run on this machine, frames/s for render only,
# render+readback, colour conversion, encode only and the whole pipeline, and
# as the reference the ffmpeg CLI encoding the same frames (dumped raw
# beforehand, not timed) with the same encoder settings; and sampling-density
# variants (tracegrid variants) against the ffmpeg CLI extracting and
# re-encoding the same frames. Writes BENCHMARKS.md.
#
# BENCH_ONLY=tail runs only the render's-tail case (three 1080p objects
# clips, scripts/bench-objects-tail.yaml) and prints its section.
# BENCH_ONLY=variants renders the grid and runs only the variants rows,
# printing their section (BENCHMARKS.md is left alone). BENCH_BIN names
# another tracegrid binary (default bin/tracegrid).
#
# The objects (CountVideoBench, 1920x1080) rows are repeated, the pipeline
# and its reference interleaved, because the machine is shared: see
# objects_bench. BENCH_ONLY=objects runs only them and prints their
# section; BENCH_OBJECTS_RUNS sets the repeats (3); BENCH_BEFORE=DIR, a
# checkout of older code (`git archive OLD | tar -x -C DIR`), measures its
# objects rows, 854x480 render rows and default-grid pipeline in the same
# run, interleaved with this code's, for before/after rows.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-tags=egl
BIN=${BENCH_BIN:-bin/tracegrid}
GRID=${BENCH_GRID:-default}
# The hand-written section objects_section prints again, read now: the
# full run truncates BENCHMARKS.md when it starts writing it.
KEPT=$(awk '$0 == "<!-- keep: objects-steps -->" { on = 1 } on { print } on && $0 == "<!-- /keep -->" { exit }' BENCHMARKS.md 2> /dev/null || true)
WORK=$(mktemp -d "${BENCH_TMP:-/dev/shm}/tracegrid-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
now() { date +%s.%N; }
calc() { awk "BEGIN { print $1 }"; }

# Sampling-density variants (docs/variants.md): every clip of the grid ×
# fps:1,2,4,8,16, by tracegrid variants in one process (GL context start
# included), against the ffmpeg CLI on the clips' MP4s, one process per
# clip × K, two in parallel (the machine's two cores), as a user runs it.
# JPEG: --quality 93 is mjpeg qscale 2, exactly what -q:v 2 asks ffmpeg's
# mjpeg for (encode.NewImageEncoder's mapping). Video: the clips' encoder
# settings on both sides (bench-settings), ffmpeg re-encoding its decoded
# frames after -vf fps=K.
VAR_K="1 2 4 8 16"
VAR_QUALITY=93
variants_bench() { # render directory → var_* variables
	local dir=$1 m="$1/manifest.jsonl"
	local pols id k t0 t1
	pols=$(printf 'fps:%s,' $VAR_K)
	pols=${pols%,}
	var_clips=$(wc -l < "$m")
	local jobs="$WORK/var-jobs.txt"
	: > "$jobs"
	for id in $(sed -E 's/.*"id":"([^"]+)".*/\1/' "$m"); do
		for k in $VAR_K; do echo "$id $k" >> "$jobs"; done
	done
	var_variants=$(wc -l < "$jobs")
	local codec preset crf fps size threads
	read -r codec preset crf fps size threads <<<"$($BIN bench-settings --grid "$GRID")"
	var_codec=$codec var_preset=$preset var_crf=$crf var_threads=$threads

	echo "== variants as frames: tracegrid variants --policies $pols --quality $VAR_QUALITY" >&2
	t0=$(now)
	$BIN variants --manifest "$m" --policies "$pols" --quality "$VAR_QUALITY" --out "$WORK/var-frames" > "$WORK/var-frames.txt" 2> "$WORK/var-frames.log"
	t1=$(now)
	var_tg_frames_s=$(calc "$t1 - $t0")
	var_frames=$(find "$WORK/var-frames" -name '*.jpg' | wc -l)
	var_pictures=$(sed -n 's/.* frames from \([0-9]*\) pictures.*/\1/p' "$WORK/var-frames.txt")
	rm -rf "$WORK/var-frames"
	echo "== reference: ffmpeg -vf fps=K -q:v 2, one process per clip x K, 2 in parallel" >&2
	t0=$(now)
	env DIR="$dir" OUT="$WORK/var-ff" xargs -P 2 -L 1 sh -c 'mkdir -p "$OUT/$1_$0" && exec ffmpeg -nostdin -loglevel error -y -i "$DIR/clips/$0.mp4" -vf "fps=$1" -q:v 2 "$OUT/$1_$0/%05d.jpg"' < "$jobs"
	t1=$(now)
	var_ff_frames_s=$(calc "$t1 - $t0")
	var_ff_frames=$(find "$WORK/var-ff" -name '*.jpg' | wc -l)
	rm -rf "$WORK/var-ff"

	echo "== variants as video: tracegrid variants --as video --policies $pols" >&2
	t0=$(now)
	$BIN variants --as video --manifest "$m" --policies "$pols" --out "$WORK/var-video" > "$WORK/var-video.txt" 2> "$WORK/var-video.log"
	t1=$(now)
	var_tg_video_s=$(calc "$t1 - $t0")
	rm -rf "$WORK/var-video"
	echo "== reference: ffmpeg -vf fps=K -c:v $codec -preset $preset -crf $crf -threads $threads, 2 in parallel" >&2
	mkdir -p "$WORK/var-ffv"
	t0=$(now)
	env DIR="$dir" OUT="$WORK/var-ffv" CODEC="$codec" PRESET="$preset" CRF="$crf" THREADS="$threads" xargs -P 2 -L 1 sh -c 'exec ffmpeg -nostdin -loglevel error -y -i "$DIR/clips/$0.mp4" -vf "fps=$1" -c:v "$CODEC" -preset "$PRESET" -crf "$CRF" -threads "$THREADS" -pix_fmt yuv420p "$OUT/$1_$0.mp4"' < "$jobs"
	t1=$(now)
	var_ff_video_s=$(calc "$t1 - $t0")
	rm -rf "$WORK/var-ffv"
	var_ratio_frames=$(calc "$var_tg_frames_s / $var_ff_frames_s")
	var_ratio_video=$(calc "$var_tg_video_s / $var_ff_video_s")
	echo "   frames: tracegrid $(printf %.2f "$var_tg_frames_s") s, ffmpeg $(printf %.2f "$var_ff_frames_s") s ($(printf %.3f "$var_ratio_frames")x); video: tracegrid $(printf %.2f "$var_tg_video_s") s, ffmpeg $(printf %.2f "$var_ff_video_s") s ($(printf %.3f "$var_ratio_video")x)" >&2
}

variants_section() {
	local k pols
	k=$(echo $VAR_K | tr ' ' ',')
	pols=$(printf 'fps:%s,' $VAR_K)
	pols=${pols%,}
	echo "## Variants (sampling-density variants for other harnesses)"
	echo
	echo "Grid \`$GRID\` ($var_clips clips) × fps:$k: $var_variants variants, $var_frames frames ($var_pictures distinct pictures rendered and encoded;"
	echo "ffmpeg wrote $var_ff_frames). Process start included on both sides; ffmpeg one process per clip × K, two at a time."
	echo
	echo "| how | time | frames/s |"
	echo "|---|---|---|"
	echo "| \`tracegrid variants --policies $pols --quality $VAR_QUALITY\` (JPEG, mjpeg qscale 2) | $(printf %.2f "$var_tg_frames_s") s | $(fmt "$(calc "$var_frames / $var_tg_frames_s")") |"
	echo "| reference: \`ffmpeg -i clip.mp4 -vf fps=K -q:v 2 %05d.jpg\` | $(printf %.2f "$var_ff_frames_s") s | $(fmt "$(calc "$var_ff_frames / $var_ff_frames_s")") |"
	echo "| \`tracegrid variants --as video --policies $pols\` ($var_codec $var_preset crf $var_crf, $var_threads thread per encoder) | $(printf %.2f "$var_tg_video_s") s | $(fmt "$(calc "$var_frames / $var_tg_video_s")") |"
	echo "| reference: \`ffmpeg -i clip.mp4 -vf fps=K -c:v $var_codec -preset $var_preset -crf $var_crf -threads $var_threads\` | $(printf %.2f "$var_ff_video_s") s | $(fmt "$(calc "$var_frames / $var_ff_video_s")") |"
	echo
	echo "tracegrid ÷ ffmpeg time: frames **$(printf %.3f "$var_ratio_frames")×** (goal ≤ 0.20×), video **$(printf %.2f "$var_ratio_video")×** (goal ≤ 0.5×)."
}

fmt() { printf "%.0f" "$1"; }

# stats: the numbers on stdin → "median min max".
stats() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan nan nan"; exit } m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'; }
# fps_values FILE REGEX: frames/s of every benchmark line matching REGEX.
fps_values() {
	awk -v re="$2" '$1 ~ re { ns = ""; for (i = 2; i <= NF; i++) { if ($(i+1) == "frames/s") { print $i; next } if ($(i+1) == "ns/op") ns = $i } if (ns != "") print 1e9 / ns }' "$1"
}
# fps_cell FILE REGEX: "median (min–max)" frames/s, or "–" if none ran.
fps_cell() {
	local m lo hi
	read -r m lo hi <<<"$(fps_values "$1" "$2" | stats)"
	if [ "$m" = nan ]; then echo "–"; return; fi
	if [ "$lo" = "$hi" ]; then printf "%.1f" "$m"; else printf "%.1f (%.1f–%.1f)" "$m" "$lo" "$hi"; fi
}
# cpu_cell FILE REGEX: "median (min–max)" CPU ms a frame (the benchmarks'
# cpu-ms/frame metric: every thread of the process), or "–".
cpu_cell() {
	local m lo hi
	read -r m lo hi <<<"$(awk -v re="$2" '$1 ~ re { for (i = 2; i < NF; i++) if ($(i+1) == "cpu-ms/frame") print $i }' "$1" | stats)"
	if [ "$m" = nan ]; then echo "–"; return; fi
	if [ "$lo" = "$hi" ]; then printf "%.1f" "$m"; else printf "%.1f (%.1f–%.1f)" "$m" "$lo" "$hi"; fi
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

# The objects (CountVideoBench) rows. Render only and render+readback: Go
# benchmarks, BENCH_OBJECTS_RUNS rounds of 30 frames (with BENCH_BEFORE,
# the old code's round after each of this code's). The whole pipeline on
# scripts/bench-objects.yaml and reference A (the ffmpeg CLI, one clip at a
# time, its own threading, on raw yuv420p of the same frames, dumped once
# and not timed) alternate BENCH_OBJECTS_RUNS times, so the load other
# work puts on the machine falls on both alike; the ratio is taken per
# run. Reference B (-threads of the pipeline, as many processes as cores)
# runs once.
OBJ_SPEC=scripts/bench-objects.yaml
OBJ_RUNS=${BENCH_OBJECTS_RUNS:-3}
BEFORE=${BENCH_BEFORE:-}
objects_bench() {
	local i id t0 t1 ids=""
	obj_load0=$(load)
	if [ -n "$BEFORE" ]; then
		echo "== building the code in $BEFORE" >&2
		(cd "$BEFORE" && go build -o "$WORK/tracegrid-before" ./cmd/tracegrid)
	fi
	local objbench='BenchmarkRenderObjects|BenchmarkRenderWorld1920x1080$|BenchmarkRenderWorldNoReadback|BenchmarkObjectsPaths'
	: > "$WORK/objbench.txt"
	: > "$WORK/objbench-before.txt"
	for i in $(seq "$OBJ_RUNS"); do
		echo "== objects Go benchmarks, round $i of $OBJ_RUNS" >&2
		go test -run '^$' -bench "$objbench" -benchtime 30x -count 1 ./gpu ./pipeline | tee -a "$WORK/objbench.txt" >&2
		if [ -n "$BEFORE" ]; then
			(cd "$BEFORE" && go test -run '^$' -bench "$objbench" -benchtime 30x -count 1 ./gpu ./pipeline) | tee -a "$WORK/objbench-before.txt" >&2
		fi
	done
	local codec preset crf fps size threads
	read -r codec preset crf fps size threads <<<"$($BIN bench-settings --spec "$OBJ_SPEC")"
	obj_codec=$codec obj_preset=$preset obj_crf=$crf obj_threads=$threads obj_size=$size
	: > "$WORK/obj-pipe.txt"
	: > "$WORK/obj-pipe-before.txt"
	: > "$WORK/obj-refa.txt"
	: > "$WORK/obj-ratio.txt"
	: > "$WORK/obj-ratio-before.txt"
	for i in $(seq "$OBJ_RUNS"); do
		echo "== objects run $i of $OBJ_RUNS: tracegrid render --spec $OBJ_SPEC (load $(load))" >&2
		rm -rf "$WORK/obj-out"
		t0=$(now)
		$BIN render --spec "$OBJ_SPEC" --out "$WORK/obj-out" 2> "$WORK/obj-render.log"
		t1=$(now)
		local pipe_s
		pipe_s=$(calc "$t1 - $t0")
		echo "$pipe_s" >> "$WORK/obj-pipe.txt"
		if [ "$i" = 1 ]; then
			obj_clips=$(wc -l < "$WORK/obj-out/manifest.jsonl")
			obj_frames=$(awk -F'"frames":' '{ split($2, a, ","); s += a[1] } END { print s }' "$WORK/obj-out/manifest.jsonl")
			ids=$(sed -E 's/.*"id":"([^"]+)".*/\1/' "$WORK/obj-out/manifest.jsonl")
			echo "== dumping the objects clips' frames as raw yuv420p (not timed)" >&2
			for id in $ids; do
				$BIN bench-dump --spec "$OBJ_SPEC" --clip "$id" --out "$WORK/$id.rgba"
				ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt rgba -s "$size" -r "$fps" -i "$WORK/$id.rgba" \
					-f rawvideo -pix_fmt yuv420p "$WORK/$id.yuv"
				rm -f "$WORK/$id.rgba"
			done
		fi
		echo "== objects run $i: reference A, ffmpeg $codec -preset $preset -crf $crf, one clip at a time" >&2
		local ref_s=0
		for id in $ids; do
			t0=$(now)
			ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt yuv420p -s "$size" -r "$fps" -i "$WORK/$id.yuv" \
				-c:v "$codec" -preset "$preset" -crf "$crf" -threads 0 -pix_fmt yuv420p "$WORK/$id.ref.mp4"
			t1=$(now)
			ref_s=$(calc "$ref_s + $t1 - $t0")
			rm -f "$WORK/$id.ref.mp4"
		done
		echo "$ref_s" >> "$WORK/obj-refa.txt"
		calc "$pipe_s / $ref_s" >> "$WORK/obj-ratio.txt"
		echo "   pipeline $(printf %.2f "$pipe_s") s, reference A $(printf %.2f "$ref_s") s: $(printf %.2f "$(calc "$pipe_s / $ref_s")")x" >&2
		if [ -n "$BEFORE" ]; then
			echo "== objects run $i: the code in $BEFORE" >&2
			rm -rf "$WORK/obj-out-before"
			t0=$(now)
			"$WORK/tracegrid-before" render --spec "$OBJ_SPEC" --out "$WORK/obj-out-before" 2> "$WORK/obj-render-before.log"
			t1=$(now)
			calc "$t1 - $t0" >> "$WORK/obj-pipe-before.txt"
			calc "($t1 - $t0) / $ref_s" >> "$WORK/obj-ratio-before.txt"
			echo "   before: pipeline $(printf %.2f "$(calc "$t1 - $t0")") s" >&2
		fi
	done
	rm -rf "$WORK/obj-out" "$WORK/obj-out-before"
	echo "== objects: reference B, $(nproc) ffmpeg processes in parallel, -threads $threads" >&2
	local -a rest=($ids) batch
	obj_refb_s=0
	while [ ${#rest[@]} -gt 0 ]; do
		batch=("${rest[@]:0:$(nproc)}")
		rest=("${rest[@]:$(nproc)}")
		t0=$(now)
		for id in "${batch[@]}"; do
			ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt yuv420p -s "$size" -r "$fps" -i "$WORK/$id.yuv" \
				-c:v "$codec" -preset "$preset" -crf "$crf" -threads "$threads" -pix_fmt yuv420p "$WORK/$id.refb.mp4" &
		done
		wait
		t1=$(now)
		obj_refb_s=$(calc "$obj_refb_s + $t1 - $t0")
	done
	for id in $ids; do rm -f "$WORK/$id.yuv" "$WORK/$id.refb.mp4"; done
	read -r obj_pipe_s obj_pipe_lo obj_pipe_hi <<<"$(stats < "$WORK/obj-pipe.txt")"
	read -r obj_ref_s obj_ref_lo obj_ref_hi <<<"$(stats < "$WORK/obj-refa.txt")"
	read -r obj_ratio obj_ratio_lo obj_ratio_hi <<<"$(stats < "$WORK/obj-ratio.txt")"
	obj_ratios=$(awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $1 }' "$WORK/obj-ratio.txt")
	if [ -n "$BEFORE" ]; then
		local x
		read -r objb_pipe_s x x <<<"$(stats < "$WORK/obj-pipe-before.txt")"
		read -r objb_ratio x x <<<"$(stats < "$WORK/obj-ratio-before.txt")"
		objb_ratios=$(awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $1 }' "$WORK/obj-ratio-before.txt")
		events_before
	fi
	obj_load1=$(load)
}

# events_before (with BENCH_BEFORE): the 854x480 render rows and the
# default-grid pipeline, this code and the code in $BEFORE alternately,
# BENCH_OBJECTS_RUNS times.
events_before() {
	local i t0 t1 evbench='^Benchmark(RenderOnly|Render854x480|RenderScenes)$'
	: > "$WORK/ev.txt"
	: > "$WORK/ev-before.txt"
	: > "$WORK/ev-grid.txt"
	: > "$WORK/ev-grid-before.txt"
	for i in $(seq "$OBJ_RUNS"); do
		# The order alternates from round to round: whichever runs second
		# in a round tends to find the machine busier.
		echo "== 854x480 render rows and grid $GRID, round $i of $OBJ_RUNS" >&2
		if [ $((i % 2)) = 1 ]; then
			go test -run '^$' -bench "$evbench" -benchtime 300x -count 1 ./gpu ./pipeline | tee -a "$WORK/ev.txt" >&2
			(cd "$BEFORE" && go test -run '^$' -bench "$evbench" -benchtime 300x -count 1 ./gpu ./pipeline) | tee -a "$WORK/ev-before.txt" >&2
		else
			(cd "$BEFORE" && go test -run '^$' -bench "$evbench" -benchtime 300x -count 1 ./gpu ./pipeline) | tee -a "$WORK/ev-before.txt" >&2
			go test -run '^$' -bench "$evbench" -benchtime 300x -count 1 ./gpu ./pipeline | tee -a "$WORK/ev.txt" >&2
		fi
		rm -rf "$WORK/ev-out"
		t0=$(now)
		$BIN render --grid "$GRID" --out "$WORK/ev-out" 2> /dev/null
		t1=$(now)
		calc "$t1 - $t0" >> "$WORK/ev-grid.txt"
		rm -rf "$WORK/ev-out"
		t0=$(now)
		"$WORK/tracegrid-before" render --grid "$GRID" --out "$WORK/ev-out" 2> /dev/null
		t1=$(now)
		calc "$t1 - $t0" >> "$WORK/ev-grid-before.txt"
		echo "   grid $GRID: this code $(printf %.2f "$(tail -1 "$WORK/ev-grid.txt")") s, before $(printf %.2f "$(tail -1 "$WORK/ev-grid-before.txt")") s" >&2
	done
	rm -rf "$WORK/ev-out"
}

objects_section() {
	local ob="$WORK/objbench.txt" obb="$WORK/objbench-before.txt"
	echo "## Objects (CountVideoBench) at $obj_size"
	echo
	echo "Go benchmark cells are the median of $OBJ_RUNS rounds of 30 frames (the range in parentheses); the pipeline and reference A"
	echo "alternate $OBJ_RUNS times, and the ratio is taken run by run. Load average (1, 5, 15 min): $obj_load0 at the start, $obj_load1 at the end."
	echo
	echo "| stage | frames/s | how |"
	echo "|---|---|---|"
	echo "| render only (GL, glFinish), real frames, N=50 cubes / spheres | $(fps_cell "$ob" '^BenchmarkRenderObjectsNoReadback/N50_cube') / $(fps_cell "$ob" '^BenchmarkRenderObjectsNoReadback/N50_sphere') (CPU $(cpu_cell "$ob" '^BenchmarkRenderObjectsNoReadback/N50_cube') / $(cpu_cell "$ob" '^BenchmarkRenderObjectsNoReadback/N50_sphere') ms a frame) | \`go test -bench BenchmarkRenderObjectsNoReadback ./gpu\` |"
	echo "| render only, synthetic: 50 lit noisy objects on a ground up to the horizon | $(fps_cell "$ob" '^BenchmarkRenderWorldNoReadback') | \`go test -bench BenchmarkRenderWorldNoReadback ./gpu\` |"
	echo "| render + readback RGBA, same synthetic frame | $(fps_cell "$ob" '^BenchmarkRenderWorld1920x1080') | \`go test -bench BenchmarkRenderWorld1920x1080 ./gpu\` |"
	echo "| render + readback RGBA, real frames, N=50 cubes / spheres | $(fps_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_cube') / $(fps_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_sphere') (CPU $(cpu_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_cube') / $(cpu_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_sphere') ms a frame) | \`go test -bench BenchmarkRenderObjects1920x1080 ./pipeline\` |"
	echo "| whole pipeline, $OBJ_SPEC ($obj_clips clips, $obj_frames frames) | $(fmt "$(calc "$obj_frames / $obj_pipe_s")") | \`tracegrid render --spec $OBJ_SPEC\`: median $(printf %.2f "$obj_pipe_s") s ($(printf %.2f "$obj_pipe_lo")–$(printf %.2f "$obj_pipe_hi")) |"
	echo "| reference A: \`ffmpeg\` encode only, same frames | $(fmt "$(calc "$obj_frames / $obj_ref_s")") | one clip at a time, ffmpeg's own threading: median $(printf %.2f "$obj_ref_s") s ($(printf %.2f "$obj_ref_lo")–$(printf %.2f "$obj_ref_hi")) |"
	echo "| reference B: \`ffmpeg\` encode only, same frames, same settings | $(fmt "$(calc "$obj_frames / $obj_refb_s")") | \`-threads $obj_threads\`, $(nproc) processes in parallel: $(printf %.2f "$obj_refb_s") s |"
	echo
	echo "Whole objects pipeline ÷ ffmpeg encode-only time against A, run by run: $obj_ratios; median **$(printf %.2f "$obj_ratio")×** (goal ≤ 1.3×)."
	echo "Against B (median pipeline time): **$(printf %.2f "$(calc "$obj_pipe_s / $obj_refb_s")")×**."
	echo
	echo "How the world is drawn, step by step (render only, real frames, N=50, \`go test -bench BenchmarkObjectsPaths ./gpu\`;"
	echo "gpu/doc.go describes the paths; each step is forced on the same frames):"
	echo
	echo "| step | cubes (frames/s) | cubes (CPU ms a frame) | spheres (frames/s) | spheres (CPU ms a frame) |"
	echo "|---|---|---|---|---|"
	local step
	for step in "depth_msaa|depth path: cube and 32×16 sphere meshes, depth buffer, 4× MSAA, resolve blit (how every world was drawn before)" \
		"painter_groundshader|painter path: one impostor octagon an object with analytic edge coverage, far to near; ground shaded per pixel" \
		"painter_raster|painter path with the ground and its grid lines painted on the CPU (package raster), uploaded under the objects (what these frames take)"; do
		local name=${step%%|*}
		echo "| ${step#*|} | $(fps_cell "$ob" "^BenchmarkObjectsPaths/N50_cube-red/$name") | $(cpu_cell "$ob" "^BenchmarkObjectsPaths/N50_cube-red/$name") | $(fps_cell "$ob" "^BenchmarkObjectsPaths/N50_sphere-blue/$name") | $(cpu_cell "$ob" "^BenchmarkObjectsPaths/N50_sphere-blue/$name") |"
	done
	if [ -n "$BEFORE" ]; then
		echo
		echo "### Before and after, this run"
		echo
		echo "\"Before\" is the code in \`BENCH_BEFORE\`, measured in this run alternately with this code (the same rounds; its pipeline"
		echo "right after each run's reference A and divided by it: the frames differ only in how edges and grid lines are filtered)."
		echo
		echo "| stage | before | after |"
		echo "|---|---|---|"
		echo "| render only, synthetic world (frames/s) | $(fps_cell "$obb" '^BenchmarkRenderWorldNoReadback') | $(fps_cell "$ob" '^BenchmarkRenderWorldNoReadback') |"
		echo "| render + readback, synthetic world (frames/s) | $(fps_cell "$obb" '^BenchmarkRenderWorld1920x1080') | $(fps_cell "$ob" '^BenchmarkRenderWorld1920x1080') |"
		echo "| render + readback, real frames, N=50 cubes (frames/s) | $(fps_cell "$obb" '^BenchmarkRenderObjects1920x1080/N50_cube') | $(fps_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_cube') |"
		echo "| render + readback, real frames, N=50 spheres (frames/s) | $(fps_cell "$obb" '^BenchmarkRenderObjects1920x1080/N50_sphere') | $(fps_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_sphere') |"
		echo "| render + readback, real frames, N=50 cubes / spheres (CPU ms a frame, all threads; – where the code does not report it) | $(cpu_cell "$obb" '^BenchmarkRenderObjects1920x1080/N50_cube') / $(cpu_cell "$obb" '^BenchmarkRenderObjects1920x1080/N50_sphere') | $(cpu_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_cube') / $(cpu_cell "$ob" '^BenchmarkRenderObjects1920x1080/N50_sphere') |"
		echo "| whole objects pipeline ($obj_frames frames), median time | $(printf %.2f "$objb_pipe_s") s | $(printf %.2f "$obj_pipe_s") s |"
		echo "| whole objects pipeline ÷ reference A, per run | $objb_ratios (median **$(printf %.2f "$objb_ratio")×**) | $obj_ratios (median **$(printf %.2f "$obj_ratio")×**) |"
		local d
		for d in bounce_ball blinking state_machine; do
			echo "| 854x480 render + readback, real frames, $d (frames/s) | $(fps_cell "$WORK/ev-before.txt" "^BenchmarkRenderScenes/$d") | $(fps_cell "$WORK/ev.txt" "^BenchmarkRenderScenes/$d") |"
		done
		echo "| 854x480 render only, synthetic (frames/s) | $(fps_cell "$WORK/ev-before.txt" '^BenchmarkRenderOnly') | $(fps_cell "$WORK/ev.txt" '^BenchmarkRenderOnly') |"
		echo "| 854x480 render + readback, synthetic (frames/s) | $(fps_cell "$WORK/ev-before.txt" '^BenchmarkRender854x480') | $(fps_cell "$WORK/ev.txt" '^BenchmarkRender854x480') |"
		local gb ga gblo gbhi galo gahi
		read -r gb gblo gbhi <<<"$(stats < "$WORK/ev-grid-before.txt")"
		read -r ga galo gahi <<<"$(stats < "$WORK/ev-grid.txt")"
		echo "| whole pipeline, grid \`$GRID\`, median time | $(printf %.2f "$gb") s ($(printf %.2f "$gblo")–$(printf %.2f "$gbhi")) | $(printf %.2f "$ga") s ($(printf %.2f "$galo")–$(printf %.2f "$gahi")) |"
	fi
	# How the rows got here: kept from BENCHMARKS.md between its markers
	# (written by hand from measurements made once, not by this script),
	# read in KEPT before BENCHMARKS.md is rewritten.
	if [ -n "$KEPT" ]; then
		echo
		echo "$KEPT"
	fi
}

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

# The render's tail (scripts/bench-objects-tail.yaml): three 1920x1080
# objects clips, N = 50, on this machine's cores. With one encoder thread a
# clip (encoder.threads 1: the bytes do not depend on the core count), the
# third clip runs alone after the first two, its x264 on one core; A is
# ffmpeg with its own threading one clip at a time, B our settings with
# as many processes as cores (what the render does). One run each.
OBJ_TAIL_SPEC=scripts/bench-objects-tail.yaml
tail_section() {
	echo "### The render's tail: $tail_clips clips on $(nproc) cores"
	echo
	echo "\`tracegrid render --spec $OBJ_TAIL_SPEC\` ($tail_clips clips, $tail_frames frames at $tail_size, $tail_codec $tail_preset crf $tail_crf, -threads $tail_threads a clip) and the"
	echo "ffmpeg CLI encoding the same frames (raw yuv420p dumped first, not timed); one run each, right after one another."
	echo
	echo "| how | time |"
	echo "|---|---|"
	echo "| whole pipeline | $(printf %.2f "$tail_pipe_s") s |"
	echo "| reference A: ffmpeg, its own threading (\`-threads 0\`), one clip at a time | $(printf %.2f "$tail_ref_s") s |"
	echo "| reference B: ffmpeg \`-threads $tail_threads\`, $tail_par processes in parallel | $(printf %.2f "$tail_refp_s") s |"
	echo
	echo "Pipeline ÷ A: **$(printf %.2f "$(calc "$tail_pipe_s / $tail_ref_s")")×**; pipeline ÷ B: **$(printf %.2f "$(calc "$tail_pipe_s / $tail_refp_s")")×**."
}

if [ "${BENCH_ONLY:-}" = objects ]; then
	objects_bench
	pipeline_bench tail --spec "$OBJ_TAIL_SPEC"
	objects_section
	echo
	tail_section
	exit 0
fi

if [ "${BENCH_ONLY:-}" = tail ]; then
	pipeline_bench tail --spec "$OBJ_TAIL_SPEC"
	tail_section
	exit 0
fi

if [ "${BENCH_ONLY:-}" = variants ]; then
	echo "== tracegrid render --grid $GRID (not timed)" >&2
	$BIN render --grid "$GRID" --out "$WORK/pipe-main" 2> "$WORK/render-variants.log"
	variants_bench "$WORK/pipe-main"
	variants_section
	exit 0
fi

echo "== Go benchmarks" >&2
go test -run '^$' -bench '^Benchmark(RenderOnly|Render854x480|RenderScenes|Convert|Encode|Image)' -benchtime 300x -count 1 ./gpu ./encode ./pipeline | tee "$WORK/gobench.txt" >&2
# A stream is 384 frames: a few streams are enough.
go test -run '^$' -bench 'BenchmarkStream' -benchtime 5x -count 1 ./eval/frames | tee -a "$WORK/gobench.txt" >&2
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

pipeline_bench main --grid "$GRID"
pipe_s=$main_pipe_s ref_s=$main_ref_s refp_s=$main_refp_s clips=$main_clips frames=$main_frames size=$main_size par=$main_par
codec=$main_codec preset=$main_preset crf=$main_crf fps=$main_fps threads=$main_threads
objects_bench
pipeline_bench tail --spec "$OBJ_TAIL_SPEC"

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
variants_bench "$WORK/pipe-main"

ratio=$(calc "$pipe_s / $ref_s")
ratiop=$(calc "$pipe_s / $refp_s")
gl=$($BIN info 2>/dev/null | sed -n 's/^GL_RENDERER *//p')
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)

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
	objects_section
	echo
	tail_section
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
	echo
	variants_section
	if [ -f BENCHMARKS.gpu.md ]; then echo; cat BENCHMARKS.gpu.md; fi
} > BENCHMARKS.md
cat BENCHMARKS.md
