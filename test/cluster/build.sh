#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, etcd and kubectl (versions pinned by go.mod / VERSION) into
#   ${KOBUN_CLUSTER_CACHE:-$HOME/.cache/kobun/cluster}/<k8s version>/{kube-apiserver,kube-controller-manager,etcd,kubectl}
# Idempotent: does nothing if all four binaries exist and run. Prints the directory on the last line of stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
if ! command -v go >/dev/null 2>&1; then export PATH="$PATH:/usr/local/go/bin"; fi

K8S_VERSION="$(cat VERSION)"                       # e.g. v1.37.2
cache="${KOBUN_CLUSTER_CACHE:-$HOME/.cache/kobun/cluster}"
out="$cache/$K8S_VERSION"
log() { echo "[build.sh] $*" >&2; }

runnable() {
  [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ] && [ -x "$out/etcd" ] && [ -x "$out/kubectl" ] &&
    "$out/kube-apiserver" --version 2>/dev/null | grep -q "$K8S_VERSION" &&
    "$out/kube-controller-manager" --version 2>/dev/null | grep -q "$K8S_VERSION" &&
    "$out/etcd" --version >/dev/null 2>&1 &&
    # not piped into grep -q: kubectl prints two lines, and an early-exiting grep fails the pipe
    [[ "$("$out/kubectl" version --client 2>/dev/null)" == *"Client Version: $K8S_VERSION"* ]]
}

if [ "${1:-}" != "--force" ] && runnable; then
  log "up to date: $("$out/kube-apiserver" --version), etcd $("$out/etcd" --version | sed -n 's/^etcd Version: //p'), kube-controller-manager and kubectl $K8S_VERSION"
  echo "$out"
  exit 0
fi

start=$(date +%s)
[ -f go.sum ] || { log "go.sum missing, running go mod tidy"; go mod tidy; }

major="${K8S_VERSION#v}"; major="${major%%.*}"
minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
# Release time of the module (from the module cache / proxy) as buildDate; the git commit is not known here.
build_date="$(go list -m -json k8s.io/kubernetes | sed -n 's/^[[:space:]]*"Time": "\(.*\)",*$/\1/p')"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit= -X $pkg.buildDate=${build_date:-1970-01-01T00:00:00Z}"
done

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "building kube-apiserver $K8S_VERSION, kube-controller-manager, etcd and kubectl into $out (cold builds take a while; GOCACHE=$(go env GOCACHE))"
# -o dir/ with several main packages writes one binary per package, named after its last path element.
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl ./etcd
mkdir -p "$out"
mv -f "$tmp/kube-apiserver" "$tmp/kube-controller-manager" "$tmp/etcd" "$tmp/kubectl" "$out/"
runnable || { log "built binaries do not run"; exit 1; }
log "done in $(( $(date +%s) - start ))s: $("$out/kube-apiserver" --version), etcd $("$out/etcd" --version | sed -n 's/^etcd Version: //p'), kube-controller-manager and kubectl $K8S_VERSION"
echo "$out"
