#!/bin/sh
# tests/portability/install.sh - installs what the portability matrix
# (tests/portability/run.sh) needs, from Debian's packages only, through
# tests/need.sh: nothing for what is there already, one apt-get call for
# the rest. Exits non-zero if something is still missing (the matrix then
# reports the combinations that need it as failing).
#
#   clang, clang++           clang                     C and C++, and the arm64 cross build
#   g++                      g++
#   musl-gcc                 musl-tools                musl libc
#   aarch64-linux-gnu-gcc    gcc-aarch64-linux-gnu     arm64 cross compiler
#   (arm64 libc headers)     libc6-dev-arm64-cross     not pulled in without recommends
#   qemu-aarch64             qemu-user                 runs arm64 programs here
#   x86_64-w64-mingw32-gcc   gcc-mingw-w64-x86-64      Windows cross compiler (+ winpthreads)
#   /usr/lib/wine/wine64     wine64                    runs Windows programs; 64-bit only,
#                                                      no i386 architecture needed
cd "$(dirname "$0")/../.." || exit 2
exec sh tests/need.sh \
    gcc gcc \
    g++ g++ \
    clang clang \
    clang++ clang \
    nm binutils \
    timeout coreutils \
    musl-gcc musl-tools \
    aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu \
    /usr/aarch64-linux-gnu/include/stdio.h libc6-dev-arm64-cross \
    qemu-aarch64 qemu-user \
    x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64 \
    /usr/lib/wine/wine64 wine64
