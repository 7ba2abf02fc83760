#!/usr/bin/env bash
# Builds Jaeger (github.com/jaegertracing/jaeger/cmd/jaeger, the module version in VERSION;
# Jaeger 2.x is tagged v1.7x.y as a Go module and is built on the OpenTelemetry Collector)
# for kobun's e2e trace checks into
#   ${KOBUN_JAEGER_CACHE:-$HOME/.cache/kobun/jaeger}/<version>/jaeger
# The tests run it with in-memory storage, the OTLP HTTP receiver and the query HTTP API
# (test/e2e/harness/jaeger.ts writes its config). The UI assets are not needed.
# A cold build (empty GOMODCACHE and GOCACHE) downloads ~1.7 GB of modules and compiles ~2,200
# packages: 697 s of CPU (user+sys) measured at nice 19 on the shared 2-core machine, i.e. about
# 6 min of wall on two idle cores (estimated from that CPU time); warm, it is a no-op. The binary is 81 MiB.
# Idempotent: does nothing if the binary exists and runs. Prints the directory on the last line of stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
if ! command -v go >/dev/null 2>&1; then export PATH="$PATH:/usr/local/go/bin"; fi

VERSION="$(cat VERSION)"
cache="${KOBUN_JAEGER_CACHE:-$HOME/.cache/kobun/jaeger}"
out="$cache/$VERSION"
log() { echo "[jaeger/build.sh] $*" >&2; }

runnable() { [ -x "$out/jaeger" ] && "$out/jaeger" version >/dev/null 2>&1; }

if [ "${1:-}" != "--force" ] && runnable; then
  log "up to date: $out/jaeger"
  echo "$out"
  exit 0
fi

start=$(date +%s)
[ -f go.sum ] || { log "go.sum missing, running go mod tidy"; go mod tidy; }
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "building jaeger $VERSION into $out (a cold build takes minutes; GOCACHE=$(go env GOCACHE))"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
mkdir -p "$out"
mv -f "$tmp/jaeger" "$out/"
runnable || { log "built binary does not run"; exit 1; }
log "done in $(( $(date +%s) - start ))s"
echo "$out"
