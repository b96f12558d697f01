# tracegrid — build, test, bench. `make deps` needs root (apt-get).
SHELL := /bin/bash
# go-gl must be built with the egl tag (it then links libEGL, not libGL/X11);
# the same tag for build, test and vet, or go-gl is compiled twice.
export GOFLAGS := -tags=egl
BIN := bin/tracegrid

DEB_PACKAGES := gcc libc6-dev pkg-config libegl-dev libegl-mesa0 libgl1-mesa-dri \
	libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libswresample-dev \
	libavfilter-dev libavdevice-dev ffmpeg

.PHONY: deps build test vet fmt bench demo clean

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (apt-get)"; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all Debian packages present"; fi

build:
	go build -o $(BIN) ./cmd/tracegrid

vet:
	go vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

test: vet
	go test -count=1 -timeout 20m ./...

bench: build
	bash scripts/bench.sh

demo: deps build
	./$(BIN) render --grid default --out out/default

clean:
	rm -rf bin out
