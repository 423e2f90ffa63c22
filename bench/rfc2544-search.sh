#!/usr/bin/env bash
# bench/rfc2544-search.sh: the trial time of pktlab rfc2544's search against
# a plain RFC 2544 binary search (one trial per load, halving the interval,
# as TRex's ndr_bench and VSPerf do) that reaches the same width, on the
# same DUT: an nftables policer in the built-in lab's DUT namespace. A
# benchmark, not a test: it asserts nothing and never runs in scripts/test.
#
#   cargo build --release && sudo bench/rfc2544-search.sh
#   sudo ROUNDS=5 RATE=3000 WIDTH=1 bench/rfc2544-search.sh
#
# Both searches look for the NDR with exceed ratio 0 and one full trial of
# TRIAL seconds deciding each load (--goal 0:0 --preceding-targets 0
# --duration-sum TRIAL), from MAX pps down, to WIDTH percent. The plain
# search's trials are `pktlab bench` fixed-rate runs of TRIAL seconds (a
# trial with any lost frame fails). Rounds are interleaved (ours, plain,
# ours, plain, ...); a round's figure is the seconds of traffic its trials
# took (the tools' own start-up is left out). Prints every round, the
# medians and the ratio plain / ours.
#
# Settings (environment):
#   ROUNDS  rounds, at least 1 (default 3)
#   RATE    the policer's frames per second (default 3000)
#   BURST   the policer's burst in frames (default 300)
#   MAX     the highest load, pps (default 10000)
#   WIDTH   relative width in percent (default 2)
#   TRIAL   seconds per trial (default 1)
#   PKTLAB  the pktlab binary (default target/release/pktlab)
set -euo pipefail

ROUNDS=${ROUNDS:-3}
RATE=${RATE:-3000}
BURST=${BURST:-300}
MAX=${MAX:-10000}
WIDTH=${WIDTH:-2}
TRIAL=${TRIAL:-1}
PKTLAB=${PKTLAB:-target/release/pktlab}
PREFIX="rs$$"
WORK=$(mktemp -d /tmp/pktlab-rfc2544-search.XXXXXX)

cleanup() {
    "$PKTLAB" lab down --prefix "$PREFIX" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

campaign() { # campaign FILE [RATE]: the policer DUT, optionally at a fixed rate
    {
        echo "name = \"pol\""
        echo "[lab]"
        echo "prefix = \"$PREFIX\""
        echo "[[traffic]]"
        echo "name = \"inet4\""
        [ -n "${2:-}" ] && echo "rate = \"$2\""
        echo "[[config]]"
        echo "name = \"police\""
        echo "apply = [\"nft add table inet pktlabpol\", \"nft add chain inet pktlabpol c '{ type filter hook forward priority 0; }'\", \"nft add rule inet pktlabpol c limit rate over $RATE/second burst $BURST packets drop\"]"
        echo "revert = [\"nft delete table inet pktlabpol\"]"
    } >"$1"
}

ours() { # prints the trial seconds and the NDR of one search
    local out="$WORK/ours.$1"
    campaign "$WORK/search.toml"
    "$PKTLAB" rfc2544 -f "$WORK/search.toml" -o "$out" --max-rate "$MAX" --goal 0:0 \
        --preceding-targets 0 --duration-sum "${TRIAL}s" --final-trial "${TRIAL}s" \
        --initial-trial "${TRIAL}s" --width "$WIDTH" --quiet >/dev/null 2>&1
    python3 - "$out/rfc2544.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["throughput"][0]
print(t["trial_seconds"], t["trials"], t["goals"][0]["lower_intended_pps"])
PY
}

plain() { # prints the trial seconds and the NDR of one binary search
    local lo=0 hi=$MAX n=0 load out
    # hi is the lowest failed load; lo the highest passed one. MAX is tried
    # first, as RFC 2544 starts at the maximum.
    load=$MAX
    while :; do
        n=$((n + 1))
        out="$WORK/plain.$1.$n"
        campaign "$WORK/fixed.toml" "$load"
        "$PKTLAB" bench -f "$WORK/fixed.toml" -o "$out" -N 1 --duration "${TRIAL}s" \
            --warmup 0s --tail 0s --quiet >/dev/null 2>&1
        if python3 - "$out/runs/police.inet4.1.jsonl" <<'PY'
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sys.exit(0 if last["tx"]["packets"] == last["rx"]["packets"] else 1)
PY
        then lo=$load; else hi=$load; fi
        [ "$lo" = "$MAX" ] && break
        if python3 -c "import sys; lo,hi,w=map(float,sys.argv[1:]); sys.exit(0 if (hi-lo)/hi <= w/100 else 1)" "$lo" "$hi" "$WIDTH"; then
            break
        fi
        load=$(python3 -c "import sys; print(round((float(sys.argv[1])+float(sys.argv[2]))/2, 3))" "$lo" "$hi")
    done
    echo "$(python3 -c "print($n * $TRIAL)") $n $lo"
}

"$PKTLAB" lab up --prefix "$PREFIX" >/dev/null
echo "policer $RATE/s burst $BURST, max $MAX pps, width $WIDTH %, trials of $TRIAL s, $ROUNDS rounds"
printf '%-6s %-6s %10s %7s %10s\n' round search seconds trials ndr_pps
: >"$WORK/ours.txt"
: >"$WORK/plain.txt"
for r in $(seq 1 "$ROUNDS"); do
    read -r s n ndr < <(ours "$r")
    printf '%-6s %-6s %10s %7s %10.0f\n' "$r" ours "$s" "$n" "$ndr"
    echo "$s" >>"$WORK/ours.txt"
    read -r s n ndr < <(plain "$r")
    printf '%-6s %-6s %10s %7s %10.0f\n' "$r" plain "$s" "$n" "$ndr"
    echo "$s" >>"$WORK/plain.txt"
done
python3 - "$WORK/ours.txt" "$WORK/plain.txt" <<'PY'
import statistics, sys
ours = [float(x) for x in open(sys.argv[1])]
plain = [float(x) for x in open(sys.argv[2])]
mo, mp = statistics.median(ours), statistics.median(plain)
print(f"median trial seconds: ours {mo:g}, plain binary search {mp:g}")
print(f"ratio plain / ours: {mp / mo:.2f}")
PY
