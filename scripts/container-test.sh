#!/usr/bin/env bash
# Build the container image (Dockerfile), run `tracegrid info` and a 2-clip
# render inside it, and check that the videos and traces are byte-identical
# to a render of the same spec on the host.
#
#   bash scripts/container-test.sh
#
# Where no container engine can run here, it prints "SKIP: <why>" and exits
# 0; a broken image or a hash mismatch exits 1. Before anything else it
# checks that the Dockerfile agrees with go.mod (Go version) and the
# Makefile (DEB_PACKAGES); that check needs no engine and never skips.
#
# Engine: podman (Debian's; installed with apt-get when missing and run as
# root), else docker. The base image debian:bookworm is pulled when a
# registry answers, else made locally with mmdebstrap and `podman import`.
#
# Environment:
#   CONTAINER_ENGINE       podman or docker (default: the first that works)
#   CONTAINER_RUN_FLAGS    extra `run` flags. Default for podman on this
#                          sandbox kind: --runtime runc and explicit ulimits
#                          (crun cannot set RLIMIT_NOFILE here); they belong
#                          to this test, not to the image or the user docs.
#   CONTAINER_TEST_IMAGE   tag to build (default tracegrid:container-test);
#                          kept afterwards so a rerun reuses the layers
#   CONTAINER_TEST_INSTALL 0 to never apt-get install podman
#   CONTAINER_BUILD_CA     CA bundle handed to the build as secret ca_bundle
#                          for its two downloads (Go toolchain, modules);
#                          default: the host's own ($SSL_CERT_FILE, else
#                          /etc/ssl/certs/ca-certificates.crt), so a build
#                          behind a TLS-intercepting proxy trusts what the
#                          host trusts. Empty: none.
#   HOST_TRACEGRID         host binary to compare with (default: built from
#                          this tree with `go build -tags=egl` into the temp dir)
#   KEEP_TMP               1 keeps the temporary directory
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

IMAGE=${CONTAINER_TEST_IMAGE:-tracegrid:container-test}
BASE=debian:bookworm
T0=$(date +%s.%N)
STEP_T=$T0

say() { printf 'container-test: %s\n' "$*"; }
# step NAME: report the time since the previous step boundary.
step() {
	local now
	now=$(date +%s.%N)
	say "$(awk -v a="$STEP_T" -v b="$now" -v n="$1" 'BEGIN { printf "%-28s %7.1f s", n, b - a }')"
	STEP_T=$now
}
skip() {
	say "SKIP: $*"
	exit 0
}
fail() {
	say "FAIL: $*"
	exit 1
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracegrid-container-test.XXXXXX")
cleanup() {
	if [[ ${KEEP_TMP:-0} == 1 ]]; then
		say "kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT

# --- 1. The Dockerfile agrees with go.mod and the Makefile (no engine needed).
# join_continued FILE: the file with backslash-continued lines joined.
join_continued() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1"; }
gomod_version=$(awk '$1 == "go" {print $2; exit}' go.mod)
docker_go=$(join_continued Dockerfile | sed -n 's/^ARG GO_VERSION=\(.*\)$/\1/p' | head -1)
[[ -n $docker_go ]] || fail "Dockerfile: no ARG GO_VERSION=…"
[[ $docker_go == "$gomod_version" ]] ||
	fail "Dockerfile GO_VERSION=$docker_go but go.mod says go $gomod_version (update GO_VERSION and GO_SHA256 together)"
make_pkgs=$(make -s --no-print-directory --eval '_container_test_pkgs: ; @echo $(DEB_PACKAGES)' _container_test_pkgs)
# Test- and benchmark-only packages the image leaves out (see the Dockerfile).
container_pkgs=$(make -s --no-print-directory --eval '_container_test_pkgs: ; @echo $(CONTAINER_PACKAGES)' _container_test_pkgs)
[[ -n $container_pkgs ]] || fail "Makefile: no CONTAINER_PACKAGES (what this test needs, installed by make deps)"
excluded="chromium ffmpeg libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev libxi-dev libxxf86vm-dev libgl-dev xvfb xauth slurmctld slurmd slurm-client munge jq $container_pkgs"
want=$(for p in $make_pkgs; do [[ " $excluded " == *" $p "* ]] || echo "$p"; done | sort)
have=$(join_continued Dockerfile | sed -n 's/^ARG BUILD_PACKAGES="\(.*\)"$/\1/p' | tr -s ' \t' '\n' | sed '/^$/d' | sort)
if [[ $want != "$have" ]]; then
	say "Makefile DEB_PACKAGES minus {$excluded} and the Dockerfile's BUILD_PACKAGES differ:"
	diff <(echo "$want") <(echo "$have") | sed 's/^/  /' || true
	fail "the Makefile's DEB_PACKAGES and the Dockerfile's BUILD_PACKAGES must name the same build packages: update whichever is behind (or the exclusions here)"
fi
# The Go toolchain follows the target architecture (amd64, arm64: GH200 /
# Grace nodes): run the go stage's own selection for each architecture,
# with its pinned sums, and check the zip and sum it picks.
dockerfile_joined=$(join_continued Dockerfile)
select_snippet=$(sed -n 's/.*\(arch=\${TARGETARCH.*esac;\).*/\1/p' <<<"$dockerfile_joined")
[[ -n $select_snippet ]] || fail "Dockerfile: the go stage does not choose its toolchain by arch=\${TARGETARCH:-\$(dpkg --print-architecture)} … esac"
[[ $select_snippet == *'$(dpkg --print-architecture)'* ]] ||
	fail "Dockerfile: without TARGETARCH the toolchain must follow dpkg --print-architecture"
grep -q 'linux-\${arch}\.zip' <<<"$dockerfile_joined" || fail "Dockerfile: the toolchain zip's name must use the chosen \${arch}"
for arch in amd64 arm64; do
	var=GO_SHA256_${arch^^}
	pinned=$(sed -n "s/^ARG $var=\([0-9a-f]\{64\}\)\$/\1/p" <<<"$dockerfile_joined" | head -1)
	[[ -n $pinned ]] || fail "Dockerfile: no ARG $var=<64 hex digits> (the $arch toolchain's sum)"
	got=$(TARGETARCH=$arch GO_SHA256_AMD64=$(sed -n 's/^ARG GO_SHA256_AMD64=//p' <<<"$dockerfile_joined") \
		GO_SHA256_ARM64=$(sed -n 's/^ARG GO_SHA256_ARM64=//p' <<<"$dockerfile_joined") \
		bash -c "set -eu; $select_snippet"' echo "$arch $sum"') || fail "Dockerfile: the go stage's selection fails for $arch"
	[[ $got == "$arch $pinned" ]] || fail "Dockerfile: TARGETARCH=$arch selects '$got', want '$arch $pinned'"
done
say "Dockerfile agrees with go.mod (go $gomod_version) and the Makefile's DEB_PACKAGES; Go toolchain pinned for amd64 and arm64"

# --- 2. A container engine that can run.
install_podman() {
	[[ ${CONTAINER_TEST_INSTALL:-1} == 1 ]] || return 1
	[[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || return 1
	# The Makefile's CONTAINER_PACKAGES, which make deps installs too.
	say "installing $container_pkgs (apt-get)"
	# shellcheck disable=SC2086 # a list of package names
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$container_pkgs >"$TMP/apt.log" 2>&1 ||
		{ apt-get update -qq >>"$TMP/apt.log" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				$container_pkgs >>"$TMP/apt.log" 2>&1; } ||
		{ tail -5 "$TMP/apt.log"; return 1; }
}
ENGINE=${CONTAINER_ENGINE:-}
if [[ -z $ENGINE ]]; then
	if command -v podman >/dev/null; then
		ENGINE=podman
	elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then
		ENGINE=docker
	elif install_podman; then
		ENGINE=podman
	else
		skip "no container engine: neither podman nor a running docker, and podman could not be installed (not root, no apt-get, or CONTAINER_TEST_INSTALL=0)"
	fi
fi
command -v "$ENGINE" >/dev/null || skip "CONTAINER_ENGINE=$ENGINE is not installed"
"$ENGINE" info >"$TMP/engine-info.txt" 2>&1 || skip "$ENGINE info fails: $(tail -1 "$TMP/engine-info.txt")"
if [[ -n ${CONTAINER_RUN_FLAGS+x} ]]; then
	read -r -a RUN_FLAGS <<<"$CONTAINER_RUN_FLAGS"
elif [[ $ENGINE == podman ]] && command -v runc >/dev/null; then
	RUN_FLAGS=(--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
else
	RUN_FLAGS=()
fi
BUILD_FLAGS=()
[[ $ENGINE == podman ]] && BUILD_FLAGS=(--isolation chroot)
CA=${CONTAINER_BUILD_CA-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
if [[ -n $CA && -r $CA ]]; then
	BUILD_FLAGS+=(--secret "id=ca_bundle,src=$CA")
fi
say "engine: $("$ENGINE" --version); build flags: ${BUILD_FLAGS[*]:-(none)}; run flags: ${RUN_FLAGS[*]:-(none)}"
step "checks, engine"

# --- 3. The base image.
image_exists() {
	if [[ $ENGINE == podman ]]; then podman image exists "$1"; else docker image inspect "$1" >/dev/null 2>&1; fi
}
if image_exists "$BASE"; then
	say "base image $BASE present"
elif curl -s -o /dev/null -m 5 https://registry-1.docker.io/v2/ && "$ENGINE" pull "docker.io/library/$BASE" >"$TMP/pull.log" 2>&1; then
	say "pulled $BASE"
	step "base image (pull)"
else
	command -v mmdebstrap >/dev/null || skip "no registry reachable and no mmdebstrap to make $BASE locally"
	say "no registry reachable: making $BASE with mmdebstrap --variant=minbase"
	mmdebstrap --quiet --variant=minbase bookworm "$TMP/rootfs.tar" >"$TMP/mmdebstrap.log" 2>&1 ||
		{ tail -20 "$TMP/mmdebstrap.log"; skip "mmdebstrap cannot make a root file system here"; }
	"$ENGINE" import "$TMP/rootfs.tar" "$BASE" >"$TMP/import.log" 2>&1 ||
		{ cat "$TMP/import.log"; fail "$ENGINE import of the mmdebstrap root failed"; }
	rm -f "$TMP/rootfs.tar"
	step "base image (mmdebstrap)"
fi
# Can this engine run a container at all? If not, the sandbox is at fault,
# not the image: skip.
if ! "$ENGINE" run --rm "${RUN_FLAGS[@]}" "$BASE" true >"$TMP/probe.log" 2>&1; then
	skip "$ENGINE cannot run a container here: $(tail -2 "$TMP/probe.log" | tr '\n' ' ')"
fi
step "engine run probe"

# --- 4. Build the image.
say "building $IMAGE (log: build.log)"
if ! "$ENGINE" build "${BUILD_FLAGS[@]}" -t "$IMAGE" -f Dockerfile . >"$TMP/build.log" 2>&1; then
	tail -40 "$TMP/build.log"
	fail "image build failed"
fi
step "image build"
"$ENGINE" image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -F "${IMAGE%%:*}" | sed 's/^/container-test: image /' || true

# --- 5. tracegrid info inside.
"$ENGINE" run --rm "${RUN_FLAGS[@]}" "$IMAGE" info >"$TMP/info.txt" 2>&1 || {
	cat "$TMP/info.txt"
	fail "tracegrid info failed in the container"
}
sed 's/^/container-test: info | /' "$TMP/info.txt"
grep -q '^GL_RENDERER ' "$TMP/info.txt" || fail "tracegrid info printed no GL_RENDERER"
# info --json as a prolog reads it: stdout alone is one object.
"$ENGINE" run --rm "${RUN_FLAGS[@]}" "$IMAGE" info --json >"$TMP/info.json" 2>"$TMP/info-json.err" || {
	cat "$TMP/info-json.err"
	fail "tracegrid info --json failed in the container"
}
if command -v jq >/dev/null; then
	jq -e '(.gl_renderer | length > 0) and (.encoders | map(select(.name == "libx264" and .usable)) | length == 1)' \
		"$TMP/info.json" >/dev/null || fail "tracegrid info --json: no GL renderer or no usable libx264: $(cat "$TMP/info.json")"
else
	grep -q '"gl_renderer": "[^"]' "$TMP/info.json" || fail "tracegrid info --json: no GL renderer"
fi
# What NVIDIA hosts rely on: the EGL vendor file and the driver capabilities.
"$ENGINE" run --rm "${RUN_FLAGS[@]}" --entrypoint cat "$IMAGE" /usr/share/glvnd/egl_vendor.d/10_nvidia.json 2>&1 |
	grep -q '"libEGL_nvidia.so.0"' || fail "the image has no glvnd EGL vendor file for NVIDIA"
caps=$("$ENGINE" image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMAGE" | sed -n 's/^NVIDIA_DRIVER_CAPABILITIES=//p')
[[ ,$caps, == *,graphics,* && ,$caps, == *,video,* ]] ||
	fail "NVIDIA_DRIVER_CAPABILITIES=$caps: want graphics and video (EGL and NVENC)"
say "NVIDIA: 10_nvidia.json present, NVIDIA_DRIVER_CAPABILITIES=$caps"
step "tracegrid info (container)"

# --- 6. A 2-clip render inside and on the host; compare.
cat >"$TMP/spec.yaml" <<'EOF'
grid: default
domains: [blinking, bounce_ball]
counts: [3]
frequencies: [2.0]
seeds: 1
duration: 4
fps: 30
width: 320
height: 180
EOF
mkdir -p "$TMP/ctr"
"$ENGINE" run --rm "${RUN_FLAGS[@]}" --user "$(id -u):$(id -g)" -v "$TMP:/data" "$IMAGE" \
	render --spec /data/spec.yaml --out /data/ctr >"$TMP/ctr.log" 2>&1 || {
	tail -20 "$TMP/ctr.log"
	fail "render failed in the container"
}
step "2-clip render (container)"

HOST=${HOST_TRACEGRID:-}
if [[ -z $HOST ]]; then
	HOST=$TMP/tracegrid-host
	GOFLAGS=-tags=egl go build -o "$HOST" ./cmd/tracegrid || fail "host build failed"
	step "host build"
fi
"$HOST" render --spec "$TMP/spec.yaml" --out "$TMP/host" >"$TMP/host.log" 2>&1 || {
	tail -20 "$TMP/host.log"
	fail "host render failed"
}
step "2-clip render (host)"

hashes() { (cd "$1/clips" && sha256sum -- *.mp4 *.trace.json); }
hashes "$TMP/host" >"$TMP/host.sha256"
hashes "$TMP/ctr" >"$TMP/ctr.sha256"
n=$(grep -c '\.mp4$' "$TMP/host.sha256" || true)
[[ $n == 2 ]] || fail "host render made $n videos, want 2"
if ! diff -u "$TMP/host.sha256" "$TMP/ctr.sha256"; then
	fail "container and host renders differ (above: host vs container sha256)"
fi
sed 's/^/container-test: same | /' "$TMP/ctr.sha256"
say "PASS: image $IMAGE renders the same bytes as the host ($(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s in all)"
