# Sourced by test/<tool>/build.sh (Prometheus, Jaeger): builds one Go command from the module
# proxy into $cache/<the folder's VERSION>/$name, once. The caller sets name, cache, version_flag
# (what makes the binary print its version) and a build function taking the output path; the
# folder holds VERSION, go.mod and go.sum. Idempotent: does nothing if the binary exists and runs
# (unless --force). Prints the directory on the last line of stdout.
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
cd "$here"
if ! command -v go >/dev/null 2>&1; then export PATH="$PATH:/usr/local/go/bin"; fi

VERSION="$(cat VERSION)"
out="$cache/$VERSION"
log() { echo "[$name/build.sh] $*" >&2; }
runnable() { [ -x "$out/$name" ] && "$out/$name" "$version_flag" >/dev/null 2>&1; }

if [ "${1:-}" != "--force" ] && runnable; then
  log "up to date: $out/$name"
  echo "$out"
  exit 0
fi

start=$(date +%s)
[ -f go.sum ] || { log "go.sum missing, running go mod tidy"; go mod tidy; }
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "building $name $VERSION into $out (a cold build takes minutes; GOCACHE=$(go env GOCACHE))"
build "$tmp/$name"
mkdir -p "$out"
mv -f "$tmp/$name" "$out/"
runnable || { log "built binary does not run"; exit 1; }
log "done in $(( $(date +%s) - start ))s"
echo "$out"
