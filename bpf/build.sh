#!/bin/sh
# Builds bpf/xsk_redirect.o, the XDP object that pktlab-io embeds, from
# bpf/xsk_redirect.c with Debian 12's clang and libbpf headers
# (apt-get install -y clang llvm libbpf-dev; scripts/deps installs them).
#
#   bpf/build.sh          rebuild the committed object
#   bpf/build.sh --check  rebuild into a temporary file and fail unless it is
#                         byte-identical to the committed object
#
# The object is committed so that building pktlab needs no clang. The build
# is reproducible: it runs from bpf/ with relative paths, and DWARF (which
# records the build directory) is stripped, and the source path in the BTF
# line info is made relative with -fdebug-prefix-map; the BTF that the loader needs
# for the map definitions is kept.
set -eu
cd "$(dirname "$0")"
out=xsk_redirect.o
check=0
if [ "${1:-}" = "--check" ]; then
    check=1
    out=$(mktemp /tmp/xsk_redirect.XXXXXX.o)
    trap 'rm -f "$out"' EXIT
fi
clang -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu \
    -fdebug-prefix-map="$PWD"=. \
    -c xsk_redirect.c -o "$out"
llvm-strip --strip-debug "$out"
if [ $check = 1 ]; then
    if cmp -s "$out" xsk_redirect.o; then
        echo "bpf/xsk_redirect.o matches bpf/xsk_redirect.c"
    else
        echo "bpf/xsk_redirect.o is stale: run bpf/build.sh and commit it" >&2
        exit 1
    fi
fi
