#!/bin/bash
# bench/d1-gro.sh: does GRO on d1 change the forward direction's rate?
# Traffic both ways with the XDP live-frame generator would send from r0
# into d1, which a veth accepts only with a NAPI on d1 (GRO on, as d0 has
# for the forward generator). This measures what turning it on costs the
# forward direction alone, one way: the built-in `forwarding`
# configuration against the same with `ethtool -K d1 gro on` on the DUT.
#
#   cargo build --release && bench/d1-gro.sh          (as root)
#   ROUNDS=8 DURATION=6 IO=afpacket bench/d1-gro.sh
#
# Method: one lab of its own, `dg<pid>`, removed on exit (also on error or
# Ctrl-C). One `pktlab bench` runs both configurations ROUNDS times,
# interleaved (A B A B ...), DURATION seconds each at full speed with the
# lab's default generator (XDP live frames; IO=afpacket or afxdp to change
# it). A run's value is pktlab's (median of the per-second forwarded
# rates, warm-up and tail left out). Printed: per configuration the median
# forwarded and offered rate and the lost frames over the rounds, the
# ratio d1-gro / forwarding of the forwarded medians, and pktlab's ministat
# comparison. Check `uptime` first: the machine's load moves the figures.
#
# Settings: ROUNDS (5), DURATION (5), IO (the lab's default).
set -u
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5} DURATION=${DURATION:-5} IO=${IO:-}
PKTLAB=$PWD/target/release/pktlab
P=dg$$
TMP=$(mktemp -d /tmp/d1-gro.XXXXXX)

die() { echo "bench/d1-gro.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces)"
[ -x "$PKTLAB" ] || die "no $PKTLAB: run cargo build --release first"
command -v python3 >/dev/null || die "no python3 (it reads the results' JSON)"

cleanup() {
    "$PKTLAB" lab down --prefix $P >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

io_line=""
[ -n "$IO" ] && io_line="io = \"$IO\""
cat >"$TMP/campaign.toml" <<EOF
name = "d1-gro"
[lab]
prefix = "$P"
[run]
iterations = $ROUNDS
duration = "${DURATION}s"
order = "interleaved"
$io_line
[[traffic]]
name = "inet4"
[[config]]
name = "forwarding"
[[config]]
name = "d1-gro"
apply = ["ethtool -K d1 gro on"]
revert = ["ethtool -K d1 gro off"]
EOF

echo "load: $(uptime)" >&2
"$PKTLAB" bench -f "$TMP/campaign.toml" -o "$TMP/out" --no-report --no-history \
    >"$TMP/stdout" 2>"$TMP/stderr" || die "pktlab bench failed: $(cat "$TMP/stderr")"
grep -E '^(CPU plan|Campaign)' "$TMP/stdout" || true

python3 - "$TMP/out" <<'EOF'
import glob, json, os, statistics, sys

out = sys.argv[1]
med = {}
print(f"{'configuration':<12} {'forwarded':>11} {'offered':>11} {'lost':>9}  runs")
for config in ("forwarding", "d1-gro"):
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "runs", f"{config}.inet4.*.jsonl"))):
        res = [json.loads(l) for l in open(path)][-1]
        runs.append((res["forwarded_pps"], res["offered_pps"], res["lost"]))
    if not runs:
        sys.exit(f"no runs of {config}")
    fwd = statistics.median(r[0] for r in runs)
    med[config] = fwd
    print(f"{config:<12} {fwd:>11.0f} {statistics.median(r[1] for r in runs):>11.0f} "
          f"{statistics.median(r[2] for r in runs):>9.0f}  {len(runs)}: "
          + " ".join(f"{r[0]:.0f}" for r in runs))
print(f"ratio d1-gro / forwarding (forwarded medians): {med['d1-gro'] / med['forwarding']:.3f}")
EOF
echo
cat "$TMP/out/ministat.txt" 2>/dev/null
