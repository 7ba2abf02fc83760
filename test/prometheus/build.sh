#!/usr/bin/env bash
# Builds Prometheus (github.com/prometheus/prometheus/cmd/prometheus, the module version in
# VERSION; Prometheus 3.x is tagged v0.3xx.y as a Go module) for kobun's e2e scrape checks into
#   ${KOBUN_PROMETHEUS_CACHE:-$HOME/.cache/kobun/prometheus}/<version>/prometheus
# Without the `builtinassets` tag there is no web UI; the HTTP API, which the tests use, is whole.
# Idempotent: does nothing if the binary exists and runs. Prints the directory on the last line of stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
if ! command -v go >/dev/null 2>&1; then export PATH="$PATH:/usr/local/go/bin"; fi

VERSION="$(cat VERSION)"
cache="${KOBUN_PROMETHEUS_CACHE:-$HOME/.cache/kobun/prometheus}"
out="$cache/$VERSION"
log() { echo "[prometheus/build.sh] $*" >&2; }

runnable() { [ -x "$out/prometheus" ] && "$out/prometheus" --version >/dev/null 2>&1; }

if [ "${1:-}" != "--force" ] && runnable; then
  log "up to date: $("$out/prometheus" --version 2>&1 | head -1)"
  echo "$out"
  exit 0
fi

start=$(date +%s)
[ -f go.sum ] || { log "go.sum missing, running go mod tidy"; go mod tidy; }
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "building prometheus $VERSION into $out (a cold build takes minutes; GOCACHE=$(go env GOCACHE))"
# remove_all_sd: no service discovery plugins (the tests use static targets): far fewer modules to compile.
CGO_ENABLED=0 go build -trimpath -tags remove_all_sd -ldflags "-s -w -X github.com/prometheus/common/version.Version=$VERSION" \
  -o "$tmp/prometheus" github.com/prometheus/prometheus/cmd/prometheus
mkdir -p "$out"
mv -f "$tmp/prometheus" "$out/"
runnable || { log "built binary does not run"; exit 1; }
log "done in $(( $(date +%s) - start ))s: $("$out/prometheus" --version 2>&1 | head -1)"
echo "$out"
