#!/usr/bin/env bash
# One prepared run for a GPU machine (the device tool): which EGL device and
# GL_RENDERER tracegrid picks, render and readback frames/s (the 854x480
# scenes and the 1920x1080 objects frames, with the path those take), the
# default grid and the objects benchmark clips with libx264 and with
# h264_nvenc when it opens. Writes
# BENCHMARKS.gpu.md, which `make bench` appends to BENCHMARKS.md.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-tags=egl
make deps >/dev/null && make build >/dev/null || exit 1
BIN=bin/tracegrid
out=BENCHMARKS.gpu.md
{
	echo "## GPU machine ($(nproc) cores, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1))"
	echo
	echo '```'
	$BIN info 2>&1
	echo '```'
	echo
	echo '```'
	go test -run '^$' -bench 'BenchmarkRender' -benchtime 1000x ./gpu ./pipeline 2>&1 | grep -E '^Benchmark'
	echo '```'
	echo
	echo "Objects (1920x1080) rows above: BenchmarkRenderObjectsNoReadback (render only, real CountVideoBench frames; its"
	echo "\`painter\` metric is 1 when they take the painter path, as on llvmpipe), BenchmarkRenderObjects1920x1080 (render +"
	echo "readback), BenchmarkRenderWorld* (the synthetic world). The path is chosen from the scene alone, never the driver."
	for codec in libx264 h264_nvenc; do
		printf "grid: default\nencoder: {codec: %s, threads: 0}\n" "$codec" > /tmp/gpu-spec.yaml
		rm -rf /tmp/gpu-out
		t0=$(date +%s.%N)
		if $BIN render --spec /tmp/gpu-spec.yaml --out /tmp/gpu-out --workers "$(nproc)" 2>/tmp/gpu-render.log; then
			t1=$(date +%s.%N)
			echo "- \`render --grid default\` with $codec: $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s for 28,080 frames"
		else
			echo "- $codec: $(tail -1 /tmp/gpu-render.log)"
		fi
		# The objects benchmark: six 1920x1080 CountVideoBench clips (900 frames).
		{ cat scripts/bench-objects.yaml; printf "encoder: {codec: %s, threads: 0}\n" "$codec"; } > /tmp/gpu-obj.yaml
		rm -rf /tmp/gpu-obj
		t0=$(date +%s.%N)
		if $BIN render --spec /tmp/gpu-obj.yaml --out /tmp/gpu-obj --workers "$(nproc)" 2>/tmp/gpu-obj.log; then
			t1=$(date +%s.%N)
			echo "- \`render --spec scripts/bench-objects.yaml\` (1920x1080) with $codec: $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s for 900 frames"
		else
			echo "- objects, $codec: $(tail -1 /tmp/gpu-obj.log)"
		fi
	done
} > "$out" 2>&1
cat "$out"
