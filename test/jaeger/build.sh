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
# Idempotent (test/go-tool.sh): does nothing if the binary exists and runs. Prints the directory on the last line of stdout.
set -euo pipefail
name=jaeger
version_flag=version
cache="${KOBUN_JAEGER_CACHE:-$HOME/.cache/kobun/jaeger}"
build() { CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$1" github.com/jaegertracing/jaeger/cmd/jaeger; }
source "$(dirname "$0")/../go-tool.sh"
