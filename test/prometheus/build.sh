#!/usr/bin/env bash
# Builds Prometheus (github.com/prometheus/prometheus/cmd/prometheus, the module version in
# VERSION; Prometheus 3.x is tagged v0.3xx.y as a Go module) for kobun's e2e scrape checks into
#   ${KOBUN_PROMETHEUS_CACHE:-$HOME/.cache/kobun/prometheus}/<version>/prometheus
# Without the `builtinassets` tag there is no web UI; the HTTP API, which the tests use, is whole.
# Idempotent (test/go-tool.sh): does nothing if the binary exists and runs. Prints the directory on the last line of stdout.
set -euo pipefail
name=prometheus
version_flag=--version
cache="${KOBUN_PROMETHEUS_CACHE:-$HOME/.cache/kobun/prometheus}"
# remove_all_sd: no service discovery plugins (the tests use static targets): far fewer modules to compile.
build() {
  CGO_ENABLED=0 go build -trimpath -tags remove_all_sd -ldflags "-s -w -X github.com/prometheus/common/version.Version=$VERSION" \
    -o "$1" github.com/prometheus/prometheus/cmd/prometheus
}
source "$(dirname "$0")/../go-tool.sh"
