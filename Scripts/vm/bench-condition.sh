#!/bin/bash
# Accuracy of `condition` beside tcconfig (tcset/tcdel), inside the VM, on the same veth link in the same run.
# Runs INSIDE the VM as root (Scripts/bench-condition boots it):
#   bench-condition.sh [--bin DIR] [--probes N] [--scale F] [--tcconfig-commands DIR] [--tools LIST] CASE...
# Cases: rate:KBIT (rate:max = half the unconditioned upload goodput, rounded down to two digits),
#        delay:MS, loss:PCT, jitter:MS (20 ms delay with MS of normal jitter, each way); delay, loss and jitter
#        may add @KBIT, a bandwidth in both directions too (delay:100@32: 100 ms at 32 kbit/s); throughput:MS@KBIT
#        is the rate case through MS of delay each way (what keeps the user-space engine busy, for its CPU).
# Tools (--tools, comma-separated; default condition,engine,tcconfig): condition (`condition apply`, whose engine
# is netem where the kernel has it), engine (`condition apply --engine userspace`: the user-space engine on the same
# kernel, for netem's figures beside it) and tcconfig. --no-tcconfig measures `condition` alone (Scripts/bench-condition
# --here: this kernel, where `condition` is the user-space engine and tcconfig has no netem).
# Each case is applied by each tool in turn (`condition` from a profile file) to the client's end of a veth pair
# (both directions: egress, and ingress through an ifb), and measured from the client:
#   rate    iperf3 goodput up and down, counted at the receiving end interval by interval (server log for the
#           upload, client for the download), after a warm-up (6 s below 100 kbit/s: past TCP's start-up
#           resends, see measure), and the sender's retransmitted segments; the window is long enough at low rates that one
#           segment more or less at either edge is under 3% (32 kbit/s: 18 s); up to 10 Mbit/s the socket
#           buffer is half a second of the rate (see socket_buffer)
#   delay   ping -U RTT min/median over 40 probes at low load, minus the unconditioned median (-U: user to user;
#           ping's default, the kernel's receive time stamp, is taken before netfilter holds an arriving packet,
#           so it would not see the user-space engine's downlink delay that applications see)
#   engine  the CPU the user-space engine's processes used during the measurement, % of one CPU
#   loss    numbered UDP probes one way at a time (probe.py send/sink), N each way (default 2000)
#   jitter  standard deviation of 300 ping RTTs (expected sqrt(2) x jitter for two independent ways)
# tcconfig: with --tcconfig-commands DIR (Scripts/bench-condition makes it), the commands tcset/tcdel print with
# --tc-command on the host, for a veth named as in DIR/device, are run here one by one with that name replaced by
# the lab's (DIR/KIND_VALUE.apply, DIR/delete); without it, tcset and tcdel themselves run here (slow: Python).
# Every step runs under `timeout`, so one stuck measurement (e.g. a deep queue draining at 32 kbit/s) costs
# its own budget and the grid goes on. --scale multiplies every measuring window (0.5 for a quick run).
# Output: "BENCH tool=... case=... key=value ..." lines, one per tool and case as soon as it is measured, and
# "# time ..." lines with the seconds each step took (the VM's time budget); the host script prints a table.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
probe=(python3 -S "$here/probe.py")
bin_dir="$(pwd)/.build/debug"
probes=2000
scale=1
tcconfig_dir=""
tools=condition,engine,tcconfig
cases=()
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin_dir="$2"; shift 2 ;;
        --probes) probes="$2"; shift 2 ;;
        --scale) scale="$2"; shift 2 ;;
        --tcconfig-commands) tcconfig_dir="$2"; shift 2 ;;
        --no-tcconfig) tools=condition; shift ;;
        --tools) tools="$2"; shift 2 ;;
        *) cases+=("$1"); shift ;;
    esac
done
condition="$bin_dir/condition"
export PATH="$PATH:/root/.pyenv/shims:/usr/local/bin"
# Call tcconfig's own entry points, not pyenv's shims: each shim costs a second of shell under emulation.
tcset_cmd=$(python3 -c 'import shutil,sys,os; p=os.path.join(os.path.dirname(os.path.realpath(sys.executable)),"tcset"); print(p if os.path.exists(p) else shutil.which("tcset") or "")' 2>/dev/null)
[ -n "$tcset_cmd" ] || tcset_cmd=$(command -v tcset)
tcdel_cmd="${tcset_cmd%tcset}tcdel"
# Names carry a prefix (BENCH_PREFIX, default tkb) and a random part, so a dry run on a shared host cannot clash.
lab="${BENCH_PREFIX:-tkb}$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')"
C=${lab}c S=${lab}s CI=${lab}c0 SI=${lab}s0 CIP=10.202.0.1 SIP=10.202.0.2
trap 'ip netns del $C 2>/dev/null; ip netns del $S 2>/dev/null; rm -rf "${work:-/nonexistent}"' EXIT
in_c() { ip netns exec $C "$@"; }
in_s() { ip netns exec $S "$@"; }
secs() { awk -v a="$1" -v s="$scale" 'BEGIN { v = a * s; printf "%d", (v < 1 ? 1 : v) }'; }
started=$(date +%s)
ip netns add $C; ip netns add $S
ip link add $CI netns $C type veth peer name $SI netns $S
in_c ip addr add $CIP/24 dev $CI; in_s ip addr add $SIP/24 dev $SI
in_c ip link set $CI up; in_s ip link set $SI up; in_c ip link set lo up; in_s ip link set lo up
in_c ip neigh replace $SIP lladdr "$(in_s cat /sys/class/net/$SI/address)" dev $CI nud permanent
in_s ip neigh replace $CIP lladdr "$(in_c cat /sys/class/net/$CI/address)" dev $SI nud permanent
in_c ping -c1 -W2 -q $SIP >/dev/null || echo "# lab: no ping"
work=$(mktemp -d /tmp/tkb.XXXXXX); profiles=$work
if [ -n "$tcconfig_dir" ]; then
    echo "# tcconfig: $(cat "$tcconfig_dir/version" 2>/dev/null), its commands generated on the host (tcset --tc-command)"
else
    echo "# tcset: ${tcset_cmd:-missing} $([ -n "$tcset_cmd" ] && "$tcset_cmd" --version 2>/dev/null)"
fi
echo "# guest: $(nproc) CPUs, kernel $(uname -r), scale $scale, $probes probes"

rtt_stats() {  # PREFIX COUNT INTERVAL
    in_c timeout $(( $2 + 30 )) ping -U -n -c "$2" -i "$3" -W 3 $SIP 2>/dev/null | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | sort -n | awk -v p="$1" '
        { v[NR] = $1; s += $1; ss += $1 * $1 }
        END { if (NR == 0) { printf "%s_n=0", p; exit }
              m = s / NR; var = ss / NR - m * m; sd = sqrt(var > 0 ? var : 0)
              printf "%s_n=%d %s_min=%.2f %s_median=%.2f %s_p90=%.2f %s_sd=%.2f", p, NR, p, v[1], p, v[int((NR + 1) / 2)], p, v[int(NR * 0.9 + 0.5)], p, sd }'
}

# Sum of the receiving end's interval reports (iperf3 -f k -i 1) from WARM to END seconds, in kbit/s.
interval_goodput() {  # FILE WARM END
    awk -v warm="$2" -v end="$3" '
        /sec/ && !/sender|receiver/ && match($0, /[0-9.]+-[0-9.]+ +sec/) {
            split(substr($0, RSTART, RLENGTH), t, /[- ]+/); from = t[1] + 0; to = t[2] + 0
            if (from < warm - 0.01 || to > end + 0.01) next
            n = split(substr($0, RSTART + RLENGTH), f, " ")
            amount = f[1] + 0; unit = f[2]
            if (unit == "Bytes") amount /= 1000; else if (unit == "MBytes") amount *= 1000; else if (unit == "GBytes") amount *= 1000000
            # iperf3 counts KBytes of 1024 bytes.
            bytes += (unit == "KBytes" ? amount * 1024 : amount * 1000); seconds += to - from
        }
        END { if (seconds > 0) printf "%.1f", bytes * 8 / 1000 / seconds; else printf "nan" }' "$1"
}

port=5300
# The socket buffer iperf3 asks for: half a second of the profile's rate, 8 KB to 192 KB (under the kernel's default
# wmem_max, or iperf3 refuses it); none above 10 Mbit/s.
# Unbounded, TCP fills the 1000-packet queue both tools leave under a rate-only class (netem's and pfifo's
# default), minutes of data at 32 kbit/s: round trips then outgrow the retransmission timer, segments are sent
# twice and goodput falls for a reason that is no part of either tool; and what is queued when a measurement
# ends delays the next one's control connection.
socket_buffer() {  # KBIT
    awk -v r="$1" 'BEGIN { if (r > 10000) exit; b = r * 1000 / 8 / 2; if (b < 8192) b = 8192; if (b > 196608) b = 196608; printf "-w %d", b }'
}
goodput() {  # up|down WARM SECONDS KBIT -> kbit/s at the receiving end
    local direction=$1 warm=$2 window=$3 total=$(( $2 + $3 )) log=$work/iperf.log client=$work/iperf-client.log
    local buffer; buffer=$(socket_buffer "$4")
    port=$((port + 1)); rm -f $log $client
    in_s timeout $((total + 20)) iperf3 -s -1 -B $SIP -p $port -i 1 -f k --forceflush --logfile $log >/dev/null 2>&1 & local server=$!
    sleep 0.5
    if [ "$direction" = up ]; then
        # shellcheck disable=SC2086
        in_c timeout $((total + 6)) iperf3 -c $SIP -p $port -t $total -i 1 -f k --forceflush --connect-timeout 5000 $buffer >$client 2>&1
        sleep 0.5; kill $server 2>/dev/null; wait $server 2>/dev/null
        interval_goodput $log "$warm" "$total"
    else
        # shellcheck disable=SC2086
        in_c timeout $((total + 6)) iperf3 -c $SIP -p $port -t $total -i 1 -f k --forceflush -R --connect-timeout 5000 $buffer >$client 2>&1
        kill $server 2>/dev/null; wait $server 2>/dev/null
        interval_goodput $client "$warm" "$total"
    fi
}

max_kbit=""
if printf '%s\n' "${cases[@]}" | grep -q '^rate:max$'; then
    base=$(goodput up 1 "$(secs 3)" 100000000)
    # The largest of a few round rates (the host made tcconfig's commands for each) at most half of it.
    max_kbit=$(awk -v g="$base" 'BEGIN { n = split("5000 10000 20000 50000 100000 200000 500000 1000000", r, " "); m = r[1]
        for (i = 1; i <= n; i++) if (r[i] <= g / 2) m = r[i]; print m }')
    echo "# unconditioned upload goodput ${base} kbit/s; rate:max is $max_kbit kbit/s"
fi
base_stats=$(rtt_stats base 40 0.05)
base_median=$(echo "$base_stats" | sed 's/.*base_median=\([0-9.]*\).*/\1/')
base_min=$(echo "$base_stats" | sed 's/.*base_min=\([0-9.]*\).*/\1/')
echo "BENCH tool=none case=baseline $base_stats ${max_kbit:+max_kbit=$max_kbit}"

settings() {  # CASE -> kind value rate (rate: "-" when the case sets none)
    local kind=${1%%:*} value=${1#*:} rate=-
    case $value in *@*) rate=${value#*@}; value=${value%@*} ;; esac
    [ "$value" = max ] && value=$max_kbit
    echo "$kind $value $rate"
}

apply_condition() {  # KIND VALUE [ENGINE]
    local body
    case $1 in
        rate) body="\"bandwidthKbit\": $2" ;;
        delay|throughput) body="\"delayMs\": $2" ;;
        loss) body="\"lossPercent\": $2" ;;
        jitter) body="\"delayMs\": 20, \"jitterMs\": $2, \"jitterDistribution\": \"normal\"" ;;
    esac
    [ "$rate" = - ] || body="\"bandwidthKbit\": $rate, $body"
    echo "{\"name\": \"Bench\", \"downlink\": {$body}, \"uplink\": {$body}}" > $profiles/bench.json
    in_c timeout 300 "$condition" apply Bench -i $CI --profiles $profiles --yes --engine "${3:-auto}" >/dev/null
}
off_condition() { in_c timeout 300 "$condition" off -i $CI >/dev/null; }
apply_engine() { apply_condition "$1" "$2" userspace; }
off_engine() { off_condition; }
# The commands in FILE with the host's device name replaced by the lab's, one at a time; stops at a failure
# unless KEEP_GOING is given (undoing: each command removes one thing, whatever happened before).
run_commands() {  # FILE [KEEP_GOING]
    local from line status=0
    from=$(cat "$tcconfig_dir/device")
    [ -s "$1" ] || return 1
    while read -r line; do
        [ -n "$line" ] || continue
        # shellcheck disable=SC2086
        in_c timeout 60 ${line//$from/$CI} >/dev/null 2>&1 && continue
        status=1
        [ -n "${2:-}" ] || { echo "# tcconfig command failed: ${line//$from/$CI}"; return 1; }
    done < "$1"
    return $status
}

apply_tcconfig() {  # KIND VALUE
    if [ -n "$tcconfig_dir" ]; then run_commands "$tcconfig_dir/$1_$2$([ "$rate" = - ] || echo "@$rate").apply"; return; fi
    local args=()
    [ "$rate" = - ] || args=(--rate "${rate}Kbps")
    case $1 in
        rate) args=(--rate "${2}Kbps") ;;
        delay) args+=(--delay "${2}ms") ;;
        loss) args+=(--loss "${2}%") ;;
        jitter) args+=(--delay 20ms --delay-distro "${2}ms" --delay-distribution normal) ;;
    esac
    in_c timeout 300 "$tcset_cmd" $CI "${args[@]}" --direction outgoing >/dev/null 2>&1 \
        && in_c timeout 300 "$tcset_cmd" $CI "${args[@]}" --direction incoming --add >/dev/null 2>&1
}
off_tcconfig() {
    if [ -n "$tcconfig_dir" ]; then run_commands "$tcconfig_dir/delete" keep-going; return 0; fi
    in_c timeout 300 "$tcdel_cmd" $CI --all >/dev/null 2>&1
}

# What is on the link, to show both tools set up the same thing: netem qdiscs and htb rates on every device.
link_summary() {
    in_c tc qdisc show | awk '/netem/ { n++ } END { printf "netem_qdiscs=%d", n }'
}

measure() {  # TOOL CASE KIND VALUE
    local kind=$3 value=$4
    [ "$kind" = throughput ] && value=$rate
    case $kind in
        rate|throughput)
            local warm=2 window
            window=$(secs $(awk -v r="$value" 'BEGIN { print (r < 100 ? 18 : 6) }'))
            # Below 100 kbit/s the warm-up outlasts TCP's start: its first window (10 segments) takes 3.8 s to cross
            # 32 kbit/s, longer than the 1 s initial retransmission timeout, so the sender resends 2-3 segments that
            # were only queued, and those copies cross the link until about 5 s in (measured: the wire carried the
            # rate, the copies 1.9 kbit/s of it; after them new data alone, exactly the goodput frames allow).
            [ "$value" -lt 100 ] && warm=6
            local up down up_retr down_retr
            # The sender's retransmitted segments (iperf3's Retr), so a shortfall from TCP's own resends shows.
            retransmitted() { awk '/ sender$/ { print $(NF - 1) }' $work/iperf-client.log | tail -1; }
            up=$(goodput up $warm "$window" "$value"); up_retr=$(retransmitted)
            down=$(goodput down $warm "$window" "$value"); down_retr=$(retransmitted)
            echo "BENCH tool=$1 case=$2 profile_kbit=$value window_s=$window warm_s=$warm $(socket_buffer "$value" | tr -d ' ' | sed 's/^-w/socket_buffer=/') up_goodput_kbit=$up down_goodput_kbit=$down up_retransmitted=${up_retr:-?} down_retransmitted=${down_retr:-?}"
            ;;
        delay) echo "BENCH tool=$1 case=$2 expected_added_ms=$((2 * value)) rate_kbit=$rate base_median_ms=$base_median base_min_ms=$base_min $(rtt_stats rtt 40 0.1)" ;;
        jitter) echo "BENCH tool=$1 case=$2 expected_sd_ms=$(awk -v j=$value 'BEGIN{printf "%.2f", sqrt(2)*j}') $(rtt_stats rtt "$(secs 300)" 0.02)" ;;
        loss)
            # Probes (84-byte frames) at most half the profile's rate: faster, a rate case's queue would overflow and
            # count as loss (every 42 ms at 32 kbit/s; every 2 ms from 700 kbit/s up).
            local interval; interval=$(awk -v r="$rate" 'BEGIN { i = (r == "-") ? 0.002 : 2 * 84 * 8 / (r * 1000); printf "%.3f", (i < 0.002 ? 0.002 : i) }')
            local up down budget; budget=$(awk -v n=$probes -v i="$interval" 'BEGIN { printf "%d", n * i + 30 }')
            rm -f $work/up.ready $work/down.ready
            in_s timeout $budget "${probe[@]}" sink --bind $SIP --port 9101 --max-seconds $budget --idle-seconds 3 --ready-file $work/up.ready > $work/up.txt & local a=$!
            while [ ! -e $work/up.ready ] && kill -0 $a 2>/dev/null; do sleep 0.05; done
            in_c timeout $budget "${probe[@]}" send --to $SIP --port 9101 --count $probes --interval "$interval" >/dev/null; wait $a
            in_c timeout $budget "${probe[@]}" sink --bind $CIP --port 9102 --max-seconds $budget --idle-seconds 3 --ready-file $work/down.ready > $work/down.txt & local b=$!
            while [ ! -e $work/down.ready ] && kill -0 $b 2>/dev/null; do sleep 0.05; done
            in_s timeout $budget "${probe[@]}" send --to $CIP --port 9102 --count $probes --interval "$interval" >/dev/null; wait $b
            up=$(sed -n 's/.*sink_unique=\([0-9]*\).*/\1/p' $work/up.txt); down=$(sed -n 's/.*sink_unique=\([0-9]*\).*/\1/p' $work/down.txt)
            echo "BENCH tool=$1 case=$2 probes=$probes up_loss_pct=$(awk -v n=$probes -v r=${up:-0} 'BEGIN{printf "%.2f", (n-r)*100/n}') down_loss_pct=$(awk -v n=$probes -v r=${down:-0} 'BEGIN{printf "%.2f", (n-r)*100/n}')"
            ;;
    esac
}

# CPU seconds (user + system) of the user-space engine's processes on the lab's interface so far.
engine_cpu() {
    local pid total=0 ticks
    for pid in $(pgrep -f "__engine -i $CI " 2>/dev/null); do
        ticks=$(awk '{ print $14 + $15 }' /proc/$pid/stat 2>/dev/null || echo 0)
        total=$((total + ticks))
    done
    awk -v t=$total -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz }'
}

run_tool() {  # TOOL CASE KIND VALUE
    local t0=$(date +%s.%N) t1 t2 t3 summary c0 c1
    if "apply_$1" "$3" "$4"; then
        t1=$(date +%s.%N); summary=$(link_summary)
        [ "$1" = tcconfig ] || summary="$summary engine=$(in_c "$condition" status | sed -n 's/^  engine: \([a-z]*\).*/\1/p' | head -1)"
        c0=$(engine_cpu)
        measure "$1" "$2" "$3" "$4" | sed "s/\$/ $summary/" | {
            read -r line; c1=$(engine_cpu)
            echo "$line engine_cpu_pct=$(awk -v a="$c0" -v b="$c1" -v s="$t1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", (b - a) / (e - s) * 100 }')"
        }
    else
        t1=$(date +%s.%N); echo "BENCH tool=$1 case=$2 failed=apply"
    fi
    t2=$(date +%s.%N); "off_$1"; t3=$(date +%s.%N)
    awk -v tool="$1" -v c="$2" -v a="$t0" -v b="$t1" -v m="$t2" -v e="$t3" \
        'BEGIN { printf "# time %s %s: apply %.1fs, measure %.1fs, off %.1fs\n", tool, c, b - a, m - b, e - m }'
}

index=0
for case in "${cases[@]}"; do
    index=$((index + 1))
    read -r kind value rate <<<"$(settings "$case")"
    offset=0
    for tool in ${tools//,/ }; do
        port=$((5300 + 30 * index + offset)); offset=$((offset + 10))
        if [ "$tool" = tcconfig ] && [ -z "$tcset_cmd" ] && [ -z "$tcconfig_dir" ]; then
            echo "BENCH tool=tcconfig case=$case failed=not_installed"; continue
        fi
        run_tool "$tool" "$case" "$kind" "$value"
    done
done
echo "# time total $(( $(date +%s) - started ))s in the guest"
