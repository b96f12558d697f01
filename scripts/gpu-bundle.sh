#!/usr/bin/env bash
# Builds .gpurun/bundle.tar.xz for scripts/gpu-check.sh: the GPU machine the
# device tool lends has no Go, no FFmpeg 5.1 and no network, so tracegrid and
# the gpu and pipeline benchmark binaries travel built, with the Debian 12
# shared libraries they load. The whole closure is ~236 MB; the large leaves
# no render path calls (libavcodec's other codecs' libraries, avfilter's and
# avdevice's: x265, codec2, aom, SVT-AV1, rsvg, ICU's data, ...) travel as
# stubs with the same soname and symbols (scripts/gpu-stub.py), so the
# bundle packs to ~51 MB, under the tool's 64 MiB. A stub's functions do
# nothing: a run that reached one would be wrong, which no path of the
# check does (it renders with libx264 or h264_nvenc only).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-tags=egl
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
mkdir -p "$w/lib" .gpurun
go build -ldflags='-s -w' -o "$w/tracegrid" ./cmd/tracegrid
go test -c -o "$w/gpu.test" ./gpu
go test -c -o "$w/pipeline.test" ./pipeline
# Kept whole: what renders and encodes, and what loads at start-up
# (constructors), the encoders tracegrid info opens (x265, SVT-AV1);
# everything under 1 MB.
keep='^lib(av|sw|postproc|x264|x265|SvtAv1|yuv|EGL|GLdispatch|z\.|gnutls|xml2|icuuc|stdc\+\+|gcc_s|va|vdpau|drm|crypto|ssl|p11-kit|unistring|gcrypt|glib|db-|gfortran|jxl|slang)'
ldd "$w/tracegrid" "$w/gpu.test" "$w/pipeline.test" | awk '/=>/ {print $3}' | sort -u |
	grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libresolv)\.so' |
	while read -r f; do
		b=$(basename "$f")
		if [ "$(du -kL "$f" | cut -f1)" -lt 1024 ] || [[ $b =~ $keep ]]; then
			cp -L "$f" "$w/lib/"
		else
			python3 scripts/gpu-stub.py "$f" "$w/lib/$b"
		fi
	done
rm -f "$w"/lib/*.c "$w"/lib/*.map
tar -C "$w" -cf - . | xz -T0 -6 > .gpurun/bundle.tar.xz
cp scripts/gpu-check.sh .gpurun/run.sh
ls -la .gpurun
