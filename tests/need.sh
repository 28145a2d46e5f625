#!/bin/sh
# tests/need.sh COMMAND PACKAGE [COMMAND PACKAGE ...] - makes sure each
# COMMAND exists, installing the Debian PACKAGE of every missing one (one
# apt-get call for all of them, through sudo when not root). A COMMAND
# that starts with / is a file that must exist (a header, a program off
# PATH). Exits non-zero if any COMMAND is still missing afterwards.
#
#   sh tests/need.sh valgrind valgrind
#   sh tests/need.sh musl-gcc musl-tools qemu-aarch64 qemu-user
have() {
    case "$1" in
    /*) [ -e "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
    esac
}
missing=
packages=
args="$*"
while [ $# -ge 2 ]; do
    have "$1" || { missing="$missing $1"; packages="$packages $2"; }
    shift 2
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "need.sh:$missing missing and this is not a Debian-like system: install$packages" >&2
    exit 1
fi
SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "need.sh: installing$packages for$missing" >&2
# shellcheck disable=SC2086  # a list of package names
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $packages >&2 ||
    { $SUDO apt-get update >&2 &&
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $packages >&2; }
set -- $args
status=0
while [ $# -ge 2 ]; do
    have "$1" || { echo "need.sh: $1 still missing after installing $2" >&2; status=1; }
    shift 2
done
exit $status
