#!/bin/bash
# bench/lab-cpu-plan.sh: what the built-in lab's CPU plan changes. Shared
# mode (`--dut-cpus all`: generator, DUT and receiver on every CPU, no
# steering) against isolated mode (the default plan: the DUT's receive work
# on CPUs of its own), each with the DUT forwarding plainly and with a
# stateful nftables ruleset (the built-in `forwarding` and `nft-stateful`
# configurations). In isolated mode the forwarded rate should be the DUT's
# and the stateful ruleset should cost it something; in shared mode both
# are the whole machine's speed.
#
#   cargo build --release && bench/lab-cpu-plan.sh        (as root)
#   ROUNDS=5 DURATION=6 bench/lab-cpu-plan.sh
#
# Method: one lab of its own, `lcp<pid>`, removed on exit (also on error or
# Ctrl-C). Each round runs one `pktlab bench` per mode, the modes taking
# turns (shared isolated shared isolated ...); each bench runs both
# configurations once, interleaved, DURATION seconds each at full speed
# with the lab's default generator (XDP live frames; IO=afpacket to change
# it). A run's value is pktlab's (median of the per-second forwarded
# rates, warm-up and tail left out). Per mode and configuration: the median
# over rounds of forwarded, offered and lost; then the stateful cost as
# the ratio nft-stateful / forwarding of the medians, per mode.
#
# Settings: ROUNDS (3), DURATION (5), IO (the lab's default).
set -u
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-5} IO=${IO:-}
PKTLAB=$PWD/target/release/pktlab
P=lcp$$
TMP=$(mktemp -d /tmp/lab-cpu-plan.XXXXXX)

die() { echo "bench/lab-cpu-plan.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces)"
[ -x "$PKTLAB" ] || die "no $PKTLAB: run cargo build --release first"
command -v python3 >/dev/null || die "no python3 (it reads the results' JSON)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs or more: with one, isolated mode is shared mode"

cleanup() {
    "$PKTLAB" lab down --prefix $P >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

io_args=()
[ -n "$IO" ] && io_args=(--io "$IO")
for round in $(seq 1 "$ROUNDS"); do
    for mode in shared isolated; do
        cpus=()
        [ $mode = shared ] && cpus=(--dut-cpus all)
        out=$TMP/$mode.$round
        echo "round $round/$ROUNDS, $mode mode" >&2
        "$PKTLAB" bench --prefix $P "${cpus[@]}" "${io_args[@]}" \
            --configs forwarding,nft-stateful -N 1 -t "$DURATION" -o "$out" >"$TMP/out" 2>"$TMP/err" \
            || die "pktlab bench failed: $(cat "$TMP/err")"
    done
done

python3 - "$TMP" "$ROUNDS" <<'EOF'
import glob, json, os, statistics, sys

tmp, rounds = sys.argv[1], int(sys.argv[2])
def runs(mode, config):
    out = []
    for r in range(1, rounds + 1):
        for path in glob.glob(os.path.join(tmp, f"{mode}.{r}", "runs", f"{config}.*.jsonl")):
            lines = [json.loads(l) for l in open(path)]
            head, res = lines[0], lines[-1]
            out.append((res["forwarded_pps"], res["offered_pps"], res["lost"],
                        res.get("dut_backlog_drops") or 0, head["generator"]))
    return out

print(f"{'mode':<9} {'configuration':<13} {'forwarded':>11} {'offered':>11} {'lost':>11} "
      f"{'DUT drops':>11}  generator  (medians of {rounds} runs)")
for mode in ("shared", "isolated"):
    med = {}
    for config in ("forwarding", "nft-stateful"):
        r = runs(mode, config)
        if not r:
            sys.exit(f"no runs of {config} in {mode} mode")
        m = [statistics.median(x[i] for x in r) for i in range(4)]
        med[config] = m[0]
        print(f"{mode:<9} {config:<13} {m[0]:>11.0f} {m[1]:>11.0f} {m[2]:>11.0f} {m[3]:>11.0f}  {r[0][4]}")
    ratio = med["nft-stateful"] / med["forwarding"]
    print(f"{mode:<9} stateful cost: nft-stateful / forwarding = {ratio:.3f}")
EOF
