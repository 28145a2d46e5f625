#!/bin/sh
# tests/need.sh COMMAND PACKAGE - makes sure COMMAND exists, installing the
# Debian package PACKAGE if it does not (apt-get, through sudo when not
# root). Exits non-zero if COMMAND is still missing afterwards.
#
#   sh tests/need.sh valgrind valgrind
command -v "$1" >/dev/null 2>&1 && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "need.sh: $1 is missing and this is not a Debian-like system: install $2" >&2
    exit 1
fi
SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "need.sh: installing $2 for $1" >&2
$SUDO apt-get install -y --no-install-recommends "$2" >&2 ||
    { $SUDO apt-get update >&2 && $SUDO apt-get install -y --no-install-recommends "$2" >&2; }
command -v "$1" >/dev/null 2>&1
