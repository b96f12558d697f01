#!/usr/bin/env bash
# One prepared run for the GPU machine the device tool lends (no Go, no
# FFmpeg 5.1, no network there): build .gpurun/bundle.tar.xz here with
# scripts/gpu-bundle.sh, then run this with .gpurun carried:
#   run(command="bash .gpurun/run.sh", carry=[".gpurun"])
# It prints which EGL device and GL_RENDERER tracegrid picks and which
# encoders open, render and readback frames/s (the 854x480 scenes, the
# 1920x1080 objects frames), and the default grid and the objects benchmark
# clips with libx264 and h264_nvenc (each with a preset it accepts). Its
# files under $OUT come back; BENCHMARKS.gpu.md is written from them.
set -u
b=/tmp/tracegrid-bundle
mkdir -p "$b" && tar -C "$b" -xJf .gpurun/bundle.tar.xz
nv=""
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && nv="$nv:$d"; done
export LD_LIBRARY_PATH="$b/lib$nv"
for j in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
	[ -f "$j" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$j" && break
done
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
{
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	echo "cores: $(nproc)"
	"$b/tracegrid" info
} 2>&1 | tee "$out/info.txt"
(cd gpu && timeout 150 "$b/gpu.test" -test.run '^$' -test.bench 'BenchmarkRender' -test.benchtime 300x 2>&1 | grep -E '^Benchmark|FAIL|panic') | tee "$out/gpubench.txt"
(cd pipeline && timeout 120 "$b/pipeline.test" -test.run '^$' -test.bench 'BenchmarkRender' -test.benchtime 100x 2>&1 | grep -E '^Benchmark|FAIL|panic') | tee "$out/pipebench.txt"
for cp in "libx264 veryfast" "h264_nvenc p4"; do
	set -- $cp
	for job in "default:grid: default" "objects:$(cat scripts/bench-objects.yaml)"; do
		printf '%s\nencoder: {codec: %s, preset: %s, threads: 0}\n' "${job#*:}" "$1" "$2" > /tmp/gpu-spec.yaml
		rm -rf /tmp/gpu-out
		s=$(date +%s%N)
		timeout 100 "$b/tracegrid" render --spec /tmp/gpu-spec.yaml --out /tmp/gpu-out --workers "$(nproc)" > /tmp/gpu-render.log 2>&1
		rc=$?
		e=$(date +%s%N)
		echo "${job%%:*} $1 $2: rc=$rc wall_ms=$(((e - s) / 1000000)) $(tail -1 /tmp/gpu-render.log)"
	done
done 2>&1 | tee "$out/render.txt"
