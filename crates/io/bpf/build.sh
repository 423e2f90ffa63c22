#!/bin/sh
# Builds the XDP objects that pktlab-io embeds, with Debian 12's clang and
# libbpf headers (apt-get install -y clang llvm libbpf-dev; scripts/deps
# installs them), in this directory:
#   xsk_redirect.o  from xsk_redirect.c (AF_XDP receive, XDP_DROP sink)
#   xdpgen.o        from xdpgen.c (the live-frame generator, gen --io xdp)
#   xdprecv.o       from xdprecv.c (the in-kernel receiver, recv --io xdp)
#   droptrace.o     from droptrace.c (the drop tracer at skb:kfree_skb)
#   xdpfwd.o        from xdpfwd.c (the xdp-forward DUT configuration)
#   tcfwd.o         from tcfwd.c (the tc-forward DUT configuration)
#   xdpdrops.o      from xdpdrops.c (frames XDP drops, at the xdp tracepoints)
#
#   crates/io/bpf/build.sh          rebuild the committed objects
#   crates/io/bpf/build.sh --check  rebuild into temporary files and fail
#                                   unless they are byte-identical to the
#                                   committed objects
#
# The objects are committed so that building pktlab needs no clang. The
# build is reproducible: it runs from this directory with relative paths,
# DWARF (which records the build directory) is stripped, and the source
# path in the BTF line info is made relative with -fdebug-prefix-map; the
# BTF that the loader needs for the map definitions (and xdpgen's CO-RE relocations)
# is kept.
set -eu
cd "$(dirname "$0")"
check=0
if [ "${1:-}" = "--check" ]; then
    check=1
fi
status=0
for name in xsk_redirect xdpgen xdprecv droptrace xdpfwd tcfwd xdpdrops; do
    out=$name.o
    if [ $check = 1 ]; then
        out=$(mktemp /tmp/$name.XXXXXX.o)
    fi
    clang -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu \
        -fdebug-prefix-map="$PWD"=. \
        -c $name.c -o "$out"
    llvm-strip --strip-debug "$out"
    if [ $check = 1 ]; then
        if cmp -s "$out" $name.o; then
            echo "crates/io/bpf/$name.o matches crates/io/bpf/$name.c"
        else
            echo "crates/io/bpf/$name.o is stale: run crates/io/bpf/build.sh and commit it" >&2
            status=1
        fi
        rm -f "$out"
    fi
done
exit $status
