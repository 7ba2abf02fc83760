#!/bin/sh
# Lays out the FROM-scratch image's file system for a compiled kobun binary:
#   /kobun                                  the binary (mode 0755)
#   <every shared object `ldd` names>       at the same absolute paths, symlinks resolved;
#                                           for Bun's linux-x64 glibc build that is exactly
#                                           libc.so.6, libm.so.6, libpthread.so.0, libdl.so.2
#                                           (/lib/x86_64-linux-gnu) and /lib64/ld-linux-x86-64.so.2
#   /etc/ssl/certs/ca-certificates.crt      CA certificates for TLS
# The Dockerfile runs this in its builder stage and copies the result into `FROM scratch`;
# test/scratch/chroot.test.ts runs the same script, so both hold exactly the same files.
#
#   sh test/scratch/rootfs.sh BINARY DEST [CA_BUNDLE]
set -eu
bin="$1"
dest="$2"
ca="${3:-/etc/ssl/certs/ca-certificates.crt}"

[ -x "$bin" ] || { echo "rootfs.sh: $bin is not an executable" >&2; exit 1; }
[ -f "$ca" ] || { echo "rootfs.sh: no CA bundle at $ca (install ca-certificates)" >&2; exit 1; }
mkdir -p "$dest"
cp "$bin" "$dest/kobun"
chmod 0755 "$dest/kobun"

# `ldd` prints "name => /path (addr)" and "/path (addr)" (the loader); linux-vdso has no path.
libs=$(ldd "$bin" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | sort -u)
[ -n "$libs" ] || { echo "rootfs.sh: ldd found no libraries for $bin (a static build needs none; check ldd's output)" >&2; }
for lib in $libs; do
  mkdir -p "$dest$(dirname "$lib")"
  cp -L "$lib" "$dest$lib"
  chmod 0755 "$dest$lib"
done

mkdir -p "$dest/etc/ssl/certs"
cp -L "$ca" "$dest/etc/ssl/certs/ca-certificates.crt"
chmod 0644 "$dest/etc/ssl/certs/ca-certificates.crt"

# Files list, for the build log and the test.
(cd "$dest" && find . -type f | sed 's|^\.||' | sort)
