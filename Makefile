# tracegrid — build, test, bench. `make deps` needs root (apt-get).
SHELL := /bin/bash
# go-gl must be built with the egl tag (it then links libEGL, not libGL/X11);
# the same tag for build, test and vet, or go-gl is compiled twice.
export GOFLAGS := -tags=egl
BIN := bin/tracegrid
# tracegrid-preview (docs/preview.md): a GLFW window over X11/GLX, a second
# binary so that tracegrid itself never links GLFW; its tests run under Xvfb.
PREVIEW_BIN := bin/tracegrid-preview
# A single-node Slurm cluster for the sharding end-to-end test (scripts/slurm).
CLUSTER_PACKAGES := slurmctld slurmd slurm-client munge jq
# The container test (scripts/container-test.sh, run by make test): podman
# with runc, and mmdebstrap to make the debian:bookworm base where no
# registry answers.
CONTAINER_PACKAGES := podman mmdebstrap runc uidmap fuse-overlayfs slirp4netns
PREVIEW_PACKAGES := libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev libxi-dev libxxf86vm-dev libgl-dev xvfb xauth

# Build and run: GL through EGL (Mesa's llvmpipe where there is no GPU
# driver; libgl1-mesa-dri is only a Recommends, so it is named), libav and
# the ffmpeg CLI (benchmark reference), libyuv (the encoder's RGBA→yuv420p
# conversion, encode/libyuv_cgo.go). Tests also need chromium (the report
# screenshot) and Node with npm (the official OpenAI client talks to
# `tracegrid serve`).
DEB_PACKAGES := gcc libc6-dev pkg-config libegl-dev libegl-mesa0 libgl1-mesa-dri \
	libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libswresample-dev \
	libavfilter-dev libavdevice-dev libyuv-dev ffmpeg chromium $(PREVIEW_PACKAGES) $(CLUSTER_PACKAGES) $(CONTAINER_PACKAGES)
# Node is taken as found when `npm` is on PATH (machines often carry a
# NodeSource build whose nodejs conflicts with Debian's npm package);
# otherwise Debian's nodejs and npm are installed.
NODE_PACKAGES := nodejs npm

.PHONY: deps build build-headless test vet fmt bench demo clean

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	command -v npm >/dev/null 2>&1 || missing="$$missing $(NODE_PACKAGES)"; \
	missing=$$(echo $$missing); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (apt-get)"; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all Debian packages present"; fi

build: build-headless
	go build -o $(PREVIEW_BIN) ./cmd/tracegrid-preview

# build-headless builds tracegrid alone (the container image: EGL only, no X11).
build-headless:
	go build -o $(BIN) ./cmd/tracegrid

vet:
	go vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

test: vet
	go test -count=1 -timeout 20m ./...
	# The scoring and report packages build and pass without cgo (no GL, no libav).
	CGO_ENABLED=0 go test -count=1 ./eval/score ./eval/parse ./eval/report ./eval/results
	$(MAKE) report-check
	# Sharded render and eval as Slurm job arrays on a real single-node
	# cluster, merged and compared with one process (docs/cluster.md).
	TRACEGRID_BIN=$(CURDIR)/$(BIN) bash scripts/slurm/e2e.sh
	# The container image built and its render compared with the host's
	# (it prints SKIP and its reason where no container engine can run).
	HOST_TRACEGRID=$(CURDIR)/$(BIN) bash scripts/container-test.sh

bench: build
	bash scripts/bench.sh

demo: deps build
	./$(BIN) run --out out/run

clean:
	rm -rf bin out

# report-check: build a report from a synthetic results database, screenshot
# its index.html in headless Chromium (Debian package chromium) and check the
# screenshot is a real page, not a blank one. The screenshot stays in
# out/report-check/screenshot.png for a person to look at.
REPORT_CHECK := out/report-check
CHROMIUM_FLAGS := --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync --window-size=1400,3000

.PHONY: report-check
report-check: build
	rm -rf $(REPORT_CHECK) && mkdir -p $(REPORT_CHECK)
	./$(BIN) report-demo-db --out $(REPORT_CHECK)/demo.sqlite
	./$(BIN) report --db $(REPORT_CHECK)/demo.sqlite --out $(REPORT_CHECK)/report
	@profile=$$(mktemp -d) && \
	timeout 120 chromium $(CHROMIUM_FLAGS) --user-data-dir=$$profile \
		--screenshot=$(CURDIR)/$(REPORT_CHECK)/screenshot.png file://$(CURDIR)/$(REPORT_CHECK)/report/index.html 2>$(REPORT_CHECK)/chromium.log; \
	rc=$$?; rm -rf $$profile; \
	if [ $$rc != 0 ]; then cat $(REPORT_CHECK)/chromium.log; echo "report-check: chromium failed ($$rc)"; exit 1; fi
	REPORT_SCREENSHOT=$(CURDIR)/$(REPORT_CHECK)/screenshot.png go test -count=1 -run '^TestScreenshot$$' -v ./eval/report/
	# A small real study end to end, for the Cases section's contact sheets
	# (cases.html) and the n/a keyframes controls.
	./$(BIN) run --spec scripts/report-check.yaml --out $(REPORT_CHECK)/run
	@profile=$$(mktemp -d) && \
	timeout 120 chromium $(CHROMIUM_FLAGS) --user-data-dir=$$profile \
		--screenshot=$(CURDIR)/$(REPORT_CHECK)/cases.png file://$(CURDIR)/$(REPORT_CHECK)/run/report/cases.html 2>$(REPORT_CHECK)/chromium-cases.log; \
	rc=$$?; rm -rf $$profile; \
	if [ $$rc != 0 ]; then cat $(REPORT_CHECK)/chromium-cases.log; echo "report-check: chromium failed ($$rc)"; exit 1; fi
	REPORT_RUN_DIR=$(CURDIR)/$(REPORT_CHECK)/run/report REPORT_CASES_SCREENSHOT=$(CURDIR)/$(REPORT_CHECK)/cases.png \
		go test -count=1 -run '^TestRunReportCases$$' -v ./eval/report/
