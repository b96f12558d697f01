# tracegrid container image: headless rendering through EGL and evaluation.
#
#   podman build -t tracegrid .        (or: docker build -t tracegrid .)
#   podman build --platform linux/arm64 -t tracegrid .   (GH200/Grace nodes;
#                                      or build natively on an arm64 host)
#   podman run --rm tracegrid info     (prints the GL renderer EGL picked)
#
# Three stages:
#   go      — the Go toolchain of go.mod's version (Debian 12's golang is
#             too old), fetched from the Go module proxy and checked against
#             a pinned SHA-256;
#   build   — Debian 12 with the Makefile's DEB_PACKAGES (minus the test-
#             and benchmark-only ones) and `make build-headless` (GOFLAGS=-tags=egl);
#   runtime — Debian 12 with the shared libraries the binary loads, Mesa
#             (llvmpipe) for hosts without a GPU, and the glvnd EGL vendor
#             file for NVIDIA's driver (mounted by the NVIDIA container
#             toolkit on GPU hosts).
#
# docs/cluster.md explains how to run it (plain containers, Slurm,
# Kubernetes); scripts/container-test.sh builds it, renders two clips inside
# and compares the video and trace hashes with a host render.
#
# Build arguments:
#   GO_VERSION, GO_SHA256_AMD64, GO_SHA256_ARM64
#                          the toolchain; all three change together. Each
#                          sum is that of the module proxy's zip for its
#                          architecture (ARCH = amd64, arm64):
#                          curl -sSfL $GO_PROXY/golang.org/toolchain/@v/v0.0.1-go$GO_VERSION.linux-ARCH.zip | sha256sum
#   GO_PROXY               where the toolchain zip comes from
#   GOPROXY                where modules come from (go env GOPROXY syntax)
#
# Behind a TLS-intercepting proxy, hand the build its CA bundle as a build
# secret; it is used for the two downloads and kept out of every layer:
#   podman build --secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt -t tracegrid .

ARG GO_VERSION=1.26.8

# --- go: the toolchain --------------------------------------------------------
FROM debian:bookworm AS go
ARG GO_VERSION
ARG GO_SHA256_AMD64=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7
ARG GO_SHA256_ARM64=02b36b6787b3ac767668f630e2998df45a3b1f9ffee08d1bf3ef6487cd658d99
ARG GO_PROXY=https://proxy.golang.org
# TARGETARCH is set by BuildKit and podman (the --platform being built);
# a builder that leaves it empty builds for the architecture it runs on,
# which dpkg names the same way (amd64, arm64).
ARG TARGETARCH
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates curl unzip \
 && rm -rf /var/lib/apt/lists/*
# The proxy serves each Go release as module golang.org/toolchain, version
# v0.0.1-go<release>.<os>-<arch> (the zip the go command itself fetches for
# GOTOOLCHAIN); its files sit under one directory named after the module.
# The zip and its pinned sum are chosen by the target architecture.
RUN --mount=type=secret,id=ca_bundle,required=false \
    set -eu; \
    if [ -s /run/secrets/ca_bundle ]; then export CURL_CA_BUNDLE=/run/secrets/ca_bundle; fi; \
    arch=${TARGETARCH:-$(dpkg --print-architecture)}; \
    case "$arch" in \
        amd64) sum=$GO_SHA256_AMD64 ;; \
        arm64) sum=$GO_SHA256_ARM64 ;; \
        *) echo "no Go toolchain sum for architecture $arch (amd64 and arm64 are pinned)" >&2; exit 1 ;; \
    esac; \
    zip=/tmp/go.zip; \
    curl -sSfL -o "$zip" "$GO_PROXY/golang.org/toolchain/@v/v0.0.1-go${GO_VERSION}.linux-${arch}.zip"; \
    echo "$sum  $zip" | sha256sum -c -; \
    unzip -q "$zip" -d /tmp/go; \
    mv "/tmp/go/golang.org/toolchain@v0.0.1-go${GO_VERSION}.linux-${arch}" /usr/local/go; \
    rm -rf /tmp/go "$zip"; \
    /usr/local/go/bin/go version

# --- build: make build-headless-------------------------------------------------------
FROM debian:bookworm AS build
# The Makefile's DEB_PACKAGES without chromium (the report screenshot test)
# and ffmpeg (the CLI is the benchmark's reference, not used by tracegrid);
# Node/npm are test-only too. scripts/container-test.sh checks that this list
# and the Makefile's agree.
ARG BUILD_PACKAGES="gcc libc6-dev pkg-config libegl-dev libegl-mesa0 libgl1-mesa-dri \
    libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libswresample-dev \
    libavfilter-dev libavdevice-dev libyuv-dev"
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates make $BUILD_PACKAGES \
 && rm -rf /var/lib/apt/lists/*
COPY --from=go /usr/local/go /usr/local/go
ARG GOPROXY=https://proxy.golang.org,direct
# GOTOOLCHAIN=local: never switch to another toolchain behind our back.
# The Makefile exports GOFLAGS=-tags=egl itself; set here too for any other
# go command run in this stage.
ENV PATH=/usr/local/go/bin:$PATH \
    GOTOOLCHAIN=local \
    GOFLAGS=-tags=egl \
    CGO_ENABLED=1 \
    GOPROXY=$GOPROXY
WORKDIR /src
COPY . .
# Cache mounts keep the module and build caches between image builds (the
# first build compiles go-gl, go-astiav and SQLite: minutes on 2 cores).
RUN --mount=type=cache,target=/root/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    --mount=type=secret,id=ca_bundle,required=false \
    set -eu; \
    if [ -s /run/secrets/ca_bundle ]; then export SSL_CERT_FILE=/run/secrets/ca_bundle; fi; \
    make build-headless; \
    ./bin/tracegrid --help >/dev/null

# --- runtime ---------------------------------------------------------------------
FROM debian:bookworm AS runtime
# The libraries bin/tracegrid links (ldd: libEGL, libavcodec/-format/-util/
# -filter/-device, libswscale, libswresample, libyuv; libjpeg, which libyuv
# and libavdevice load) and, for hosts without a GPU,
# Mesa's EGL driver with llvmpipe (libgl1-mesa-dri is only a Recommends of
# libegl-mesa0, so it is named). ca-certificates: eval talks HTTPS to model
# APIs. No ffmpeg: only the benchmark uses the CLI.
ARG RUNTIME_PACKAGES="ca-certificates libegl1 libegl-mesa0 libgl1-mesa-dri \
    libavcodec59 libavformat59 libavutil57 libswscale6 libswresample4 \
    libavfilter8 libavdevice59 libyuv0 libjpeg62-turbo"
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $RUNTIME_PACKAGES \
 && rm -rf /var/lib/apt/lists/*

# NVIDIA GPUs. The NVIDIA container toolkit (docker/podman --gpus, the
# Kubernetes device plugin) mounts the host driver's user-space libraries
# into the container, chosen by NVIDIA_DRIVER_CAPABILITIES:
#   graphics  libEGL_nvidia.so.0 and libnvidia-eglcore/-glsi: OpenGL via EGL
#   video     libnvidia-encode / libnvcuvid: NVENC (h264_nvenc, hevc_nvenc)
#   compute   libcuda.so.1, which libavcodec's NVENC wrapper loads
#   utility   nvidia-smi, NVML
# NVIDIA_VISIBLE_DEVICES is left to the runtime (--gpus, the device plugin),
# so an image started without a GPU request gets none.
ENV NVIDIA_DRIVER_CAPABILITIES=graphics,video,compute,utility
# glvnd's libEGL.so.1 finds vendor drivers through JSON files in
# /usr/share/glvnd/egl_vendor.d, tried in name order. The toolkit mounts
# libEGL_nvidia.so.0 but, depending on its version, not this file, so the
# image carries it: 10_nvidia.json (NVIDIA, tried first) beside Mesa's
# 50_mesa.json. Without an NVIDIA driver the library is absent, glvnd skips
# the vendor and Mesa's llvmpipe renders.
COPY deploy/container/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json

COPY --from=build /src/bin/tracegrid /usr/local/bin/tracegrid
# A fixed unprivileged user; mount output volumes writable by it (Kubernetes:
# securityContext.fsGroup 10001) or run with --user "$(id -u):$(id -g)".
# Mesa's shader cache goes to XDG_CACHE_HOME, writable for any uid.
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /work tracegrid \
 && mkdir -p /work && chown 10001:10001 /work
ENV XDG_CACHE_HOME=/tmp/.cache
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["tracegrid"]
CMD ["info"]
