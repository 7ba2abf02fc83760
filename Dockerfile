# kobun in a FROM scratch image: the single binary, the few shared libraries it links, and
# CA certificates. Nothing else: no shell, no package manager, no Bun install, no node_modules.
#
#   docker build -t kobun-operator .
#   docker run --rm kobun-operator version
#
# To put YOUR handlers in: keep them in handlers/ (or change --handlers below).
# test/scratch/chroot.test.ts proves the same image content runs (no Docker engine needed):
# it lays out the root file system with the same test/scratch/rootfs.sh and chroots into it.

# ---- build: npm ci (bun is a pinned devDependency), then bun run build.ts -----------------
FROM node:24-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
# npm ci needs every workspace's package.json; the sandbox's code is not built into the binary.
COPY packages/sandbox/package.json ./packages/sandbox/package.json
RUN npm ci --no-audit --no-fund
COPY tsconfig.json build.ts ./
COPY src ./src
COPY handlers ./handlers
COPY test/scratch/rootfs.sh ./test/scratch/rootfs.sh
RUN npx bun run build.ts --outfile dist/kobun \
 && dist/kobun version \
 && ldd dist/kobun \
 && sh test/scratch/rootfs.sh dist/kobun /rootfs /etc/ssl/certs/ca-certificates.crt

# ---- the image -------------------------------------------------------------------------------
# /rootfs holds, for Bun's linux-x64 glibc build:
#   /kobun
#   /lib/x86_64-linux-gnu/{libc.so.6,libm.so.6,libpthread.so.0,libdl.so.2}
#   /lib64/ld-linux-x86-64.so.2
#   /etc/ssl/certs/ca-certificates.crt
# (Bun's musl target, bun-linux-x64-musl, is not static either: it links musl's loader,
# libstdc++ and libgcc_s, so it would need more files, not fewer.)
FROM scratch
COPY --from=build /rootfs/ /
ENV HOME=/
USER 65532:65532
ENTRYPOINT ["/kobun"]
CMD ["run"]
