#!/bin/bash
# Measures the link conditioner on a real kernel. Runs INSIDE the VM, as root:
#
#   Scripts/vm-run -f Scripts/vm/conditioner-lab.sh [--driver cli|raw] [--bin DIR] SCENARIO...
#
# Scenarios (sharing one lab, each leaving it as it found it):
#   slow       Slow Net: ping/UDP round-trip time, DNS lookup time vs other UDP traffic
#   nasty      Nasty Net: one-way loss over 1000 UDP probes in each direction
#   blackhole  Black Hole: what the server still receives (tcpdump there) and what comes back
#   neighbours Black Hole with the neighbour tables flushed (no permanent entries): ARP and NDP must still
#              resolve, so the server receives every ping (IPv4, IPv6) and every HTTP request; nothing returns
#   switch     Slow Net -> Black Hole -> off during one TCP download and a steady UDP probe series
#   sandbox    `condition run PROFILE -- curl ...` (issue 5; cli driver only)
#   landing    one `condition apply --schedule` switching Slow Net <-> 3G every 10 s (issue 11; cli driver only):
#              when each switch was complete relative to its time, and how many tc processes it took
#   engine     `condition apply --engine userspace` on this netem kernel (issue 24; cli driver only): 40 ms each
#              way by the user-space engine, ping -U round trips, no netem qdisc, `status` naming the engine, and
#              `off` leaving the client's qdiscs, links and nft ruleset byte-equal to before
#   faults     connection faults (issue 24; cli driver only), switched in place on tkc, as a Python client sees
#              them: reset after N bytes, stall after N bytes, refusal by RST, ICMP and silence, a share of
#              connections reset, reset after a time under netem delay and rate; then DNS faults in a
#              `condition run` sandbox with netem delay on its veth pair and the profile's DNS delay (dig, getent)
#
# The lab: namespaces tk-cli and tk-srv joined by a veth pair (tkc 10.200.0.1 <-> tks 10.200.0.2).
# The profile is applied to the client's interface tkc, as a developer would on their machine:
# uplink is tkc's egress, downlink its ingress (an ifb with the cli driver's design).
# Drivers: `cli` runs the real `condition` binary from --bin (default .build/debug);
# `raw` applies equivalent tc/netem trees by hand, to prove the lab itself.
#
# Output: human notes start with "# "; figures are lines
#   RESULT <scenario> key=value key=value ...
# The script judges nothing: the Swift tests (Tests/ConditionerVMTests) hold the thresholds.
set -u

here="$(cd "$(dirname "$0")" && pwd)"
# -S: no site packages. Python starts slowly over the guest's 9p root; every bit helps.
probe=(python3 -S "$here/probe.py")
driver=cli
bin_dir="$(pwd)/.build/debug"
scenarios=()
while [ $# -gt 0 ]; do
    case "$1" in
        --driver) driver="$2"; shift 2 ;;
        --bin) bin_dir="$2"; shift 2 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        slow|nasty|blackhole|neighbours|switch|sandbox|landing|engine|faults) scenarios+=("$1"); shift ;;
        *) echo "conditioner-lab: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$driver" in cli|raw) ;; *) echo "conditioner-lab: --driver must be cli or raw" >&2; exit 2 ;; esac
[ ${#scenarios[@]} -gt 0 ] || { echo "conditioner-lab: name at least one scenario (see --help)" >&2; exit 2; }
condition="$bin_dir/condition"
if [ "$driver" = cli ] && [ ! -x "$condition" ]; then
    echo "conditioner-lab: no condition binary at $condition (build first, or pass --bin)" >&2; exit 2
fi

CLI=tk-cli SRV=tk-srv C_IF=tkc S_IF=tks C_IP=10.200.0.1 S_IP=10.200.0.2 C_IP6=fd00:200::1 S_IP6=fd00:200::2
ECHO_PORT=7777 HTTP_PORT=8080
lab=/tmp/tk-lab
pids=()       # background processes of the current scenario
lab_pids=()   # the lab's own (echo server), for the whole run
scenario=""

note() { echo "# $*"; }
result() { echo "RESULT $scenario $*"; }
now() { date +%s.%N; }
in_cli() { ip netns exec "$CLI" "$@"; }
in_srv() { ip netns exec "$SRV" "$@"; }
background() { "$@" & pids+=($!); }

wait_for_file() {  # FILE SECONDS
    local i
    for ((i = 0; i < $2 * 20; i++)); do [ -e "$1" ] && return 0; sleep 0.05; done
    echo "# timed out waiting for $1" >&2; return 1
}

lab_up() {
    rm -rf "$lab"; mkdir -p "$lab/www"
    ip netns add "$CLI" && ip netns add "$SRV" || return 1
    ip link add "$C_IF" netns "$CLI" type veth peer name "$S_IF" netns "$SRV" || return 1
    in_cli ip addr add "$C_IP/24" dev "$C_IF"; in_srv ip addr add "$S_IP/24" dev "$S_IF"
    in_cli ip addr add "$C_IP6/64" dev "$C_IF" nodad; in_srv ip addr add "$S_IP6/64" dev "$S_IF" nodad
    in_cli ip link set lo up; in_srv ip link set lo up
    in_cli ip link set "$C_IF" up; in_srv ip link set "$S_IF" up
    # Fixed neighbour entries: under 90-100% loss ARP itself would fail and hide netem's figures.
    in_cli ip neigh replace "$S_IP" lladdr "$(in_srv cat /sys/class/net/$S_IF/address)" dev "$C_IF" nud permanent
    in_srv ip neigh replace "$C_IP" lladdr "$(in_cli cat /sys/class/net/$C_IF/address)" dev "$S_IF" nud permanent
    in_srv "${probe[@]}" echo-server --bind "$S_IP" --port $ECHO_PORT --ready-file "$lab/echo.ready" &
    lab_pids+=($!)
    wait_for_file "$lab/echo.ready" 20 || return 1
    # Wait for the link itself (veth carrier, IPv6 DAD does not matter for IPv4).
    local i
    for ((i = 0; i < 50; i++)); do in_cli ping -c1 -W1 -q "$S_IP" >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "# lab: no ping reply from $S_IP" >&2; return 1
}

start_dns() {
    # dnsmasq when it is installed (Scripts/setup --test installs it); else probe.py's responder.
    if command -v dnsmasq >/dev/null; then
        background in_srv dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
            --bind-interfaces --listen-address="$S_IP" --address="/lab.test/$S_IP" \
            --pid-file="$lab/dnsmasq.pid" --user=root --log-facility="$lab/dnsmasq.log"
        dns_server=dnsmasq
    else
        background in_srv "${probe[@]}" dns-server --bind "$S_IP" --answer "$S_IP"
        dns_server=probe.py
    fi
    local i
    for ((i = 0; i < 100; i++)); do
        in_srv ss -lun | grep -q "$S_IP:53 " && return 0
        sleep 0.1
    done
    echo "# lab: the DNS server ($dns_server) does not answer" >&2; return 1
}

stop_scenario_processes() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
    pids=()
}

lab_down() {
    stop_scenario_processes
    local pid
    for pid in "${lab_pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    lab_pids=()
    ip netns del "$CLI" 2>/dev/null; ip netns del "$SRV" 2>/dev/null
    ip link del tk-ifb 2>/dev/null
    true
}

# --- driver -----------------------------------------------------------------------------------

# raw: the same shapes the conditioner is specified to build (issue 4), written by hand.
raw_off() {
    in_cli tc qdisc del dev "$C_IF" root 2>/dev/null
    in_cli tc qdisc del dev "$C_IF" ingress 2>/dev/null
    in_cli ip link del tk-ifb 2>/dev/null
    true
}

raw_downlink() {  # NETEM-ARGS... (on an ifb that receives tkc's ingress)
    in_cli ip link show tk-ifb >/dev/null 2>&1 || {
        in_cli ip link add tk-ifb type ifb && in_cli ip link set tk-ifb up
        in_cli tc qdisc add dev "$C_IF" handle ffff: ingress
        in_cli tc filter add dev "$C_IF" parent ffff: protocol all u32 match u32 0 0 \
            action mirred egress redirect dev tk-ifb
    }
    in_cli tc qdisc replace dev tk-ifb root "$@"
}

raw_apply() {  # PROFILE
    case "$1" in
        "Slow Net")
            in_cli tc qdisc replace dev "$C_IF" root handle 1: htb default 10
            in_cli tc class add dev "$C_IF" parent 1: classid 1:1 htb rate 32kbit burst 1600b quantum 1514
            in_cli tc class add dev "$C_IF" parent 1:1 classid 1:10 htb rate 32kbit burst 1600b quantum 1514
            in_cli tc class add dev "$C_IF" parent 1:1 classid 1:53 htb rate 32kbit burst 1600b quantum 1514
            in_cli tc qdisc add dev "$C_IF" parent 1:10 handle 10: netem delay 100ms
            in_cli tc qdisc add dev "$C_IF" parent 1:53 handle 53: netem delay 300ms
            in_cli tc filter add dev "$C_IF" parent 1: protocol ip prio 1 u32 \
                match ip protocol 17 0xff match ip dport 53 0xffff flowid 1:53
            in_cli tc filter add dev "$C_IF" parent 1: protocol ip prio 1 u32 \
                match ip protocol 6 0xff match ip dport 53 0xffff flowid 1:53
            in_cli ip link show tk-ifb >/dev/null 2>&1 && in_cli tc qdisc del dev tk-ifb root 2>/dev/null
            raw_downlink handle 1: htb default 10 \
                && in_cli tc class add dev tk-ifb parent 1: classid 1:10 htb rate 32kbit burst 1600b quantum 1514 \
                && in_cli tc qdisc add dev tk-ifb parent 1:10 handle 10: netem delay 100ms
            ;;
        "Nasty Net")
            in_cli tc qdisc replace dev "$C_IF" root netem loss 90%
            raw_downlink netem loss 90%
            ;;
        "Black Hole")
            in_cli tc qdisc del dev "$C_IF" root 2>/dev/null
            raw_downlink netem loss 100%
            ;;
        *) echo "raw driver: no hand-written tree for '$1'" >&2; return 2 ;;
    esac
}

apply() {  # PROFILE
    local status
    if [ "$driver" = raw ]; then
        raw_apply "$1"; status=$?
    else
        in_cli "$condition" apply "$1" -i "$C_IF" --yes > "$lab/apply.out" 2>&1; status=$?
        sed 's/^/#   apply: /' "$lab/apply.out"
    fi
    [ $status -eq 0 ] || note "apply '$1' failed with status $status"
    return $status
}

off() {
    local status
    if [ "$driver" = raw ]; then
        raw_off; status=$?
    else
        in_cli "$condition" off -i "$C_IF" > "$lab/off.out" 2>&1; status=$?
        sed 's/^/#   off: /' "$lab/off.out"
    fi
    [ $status -eq 0 ] || note "off failed with status $status"
    return $status
}

# A normalised list of the client's qdiscs and links, to compare before apply and after off.
tc_state() {
    { in_cli tc qdisc show; in_cli ip -o link show | awk '{print $2}'; } | sed 's/ refcnt [0-9]*//' | sort
}

ping_figures() {  # PREFIX PING-ARGS... (run in the client namespace)
    local prefix="$1"; shift
    in_cli ping -n -q "$@" "$S_IP" 2>&1 | awk -v p="$prefix" '
        / packets transmitted/ { sent = $1; got = $4 }
        /^(rtt|round-trip)/ { split($4, v, "/"); min = v[1]; avg = v[2]; max = v[3] }
        END { printf "%s_sent=%d %s_received=%d", p, sent, p, got
              if (avg != "") printf " %s_min_ms=%s %s_avg_ms=%s %s_max_ms=%s", p, min, p, avg, p, max
              printf "\n" }'
}

# --- scenarios --------------------------------------------------------------------------------

scenario_slow() {
    start_dns || return 1
    result "driver=$driver dns_server=$dns_server"
    result "$(ping_figures base_ping -c 5 -i 0.2) $(in_cli "${probe[@]}" rtt --to "$S_IP" --port $ECHO_PORT --prefix base_udp) $(in_cli "${probe[@]}" dns --server "$S_IP" --prefix base_dns)"
    local before; before="$(tc_state)"
    apply "Slow Net" || { result "apply_status=failed"; return 1; }
    result "apply_status=0"
    result "$(ping_figures ping -c 10 -i 0.3)"
    result "$(in_cli "${probe[@]}" rtt --to "$S_IP" --port $ECHO_PORT --count 8 --interval 0.1 --prefix udp)"
    result "$(in_cli "${probe[@]}" dns --server "$S_IP" --count 8 --interval 0.1 --prefix dns)"
    off || { result "off_status=failed"; return 1; }
    result "off_status=0 $(ping_figures after_off_ping -c 5 -i 0.2)"
    if [ "$before" = "$(tc_state)" ]; then result "restored=yes"
    else result "restored=no"; note "before:"; echo "$before" | sed 's/^/#   /'; note "after:"; tc_state | sed 's/^/#   /'; fi
}

scenario_engine() {
    [ "$driver" = cli ] || { note "engine: cli driver only"; return 0; }
    echo '{"name": "Engine Lab", "downlink": {"delayMs": 40}, "uplink": {"delayMs": 40}}' > "$lab/engine-lab.json"
    local before ruleset; before="$(tc_state)"; ruleset="$(in_cli nft list ruleset)"
    in_cli "$condition" apply "Engine Lab" -i "$C_IF" --engine userspace --profiles "$lab" > "$lab/apply.out" 2>&1
    result "apply_status=$?"; sed 's/^/#   apply: /' "$lab/apply.out"
    result "netem_qdiscs=$(in_cli tc qdisc show | grep -c netem) status_engine=$(in_cli "$condition" status -i "$C_IF" | sed -n 's/^  engine: \([a-z]*\).*/\1/p' | head -1)"
    # -U: user to user, so the downlink delay the engine adds after the kernel's receive time stamp counts.
    result "$(ping_figures ping -U -c 10 -i 0.2)"
    off || { result "off_status=failed"; return 1; }
    result "off_status=0 $(ping_figures after_off_ping -c 5 -i 0.2)"
    [ "$before" = "$(tc_state)" ] && result "restored=yes" || result "restored=no"
    [ "$ruleset" = "$(in_cli nft list ruleset)" ] && result "ruleset_restored=yes" || {
        result "ruleset_restored=no"; in_cli nft list ruleset | sed 's/^/#   after: /'; }
}

scenario_nasty() {
    local before; before="$(tc_state)"
    apply "Nasty Net" || { result "apply_status=failed"; return 1; }
    result "apply_status=0"
    local count=1000
    # Uplink: client -> server.
    background in_srv "${probe[@]}" sink --bind "$S_IP" --port 9001 --max-seconds 15 --ready-file "$lab/up.ready" > "$lab/up.txt"
    local up_sink=$!
    wait_for_file "$lab/up.ready" 20
    in_cli "${probe[@]}" send --to "$S_IP" --port 9001 --count $count --interval 0.002 > "$lab/up.send"
    wait $up_sink
    # Downlink: server -> client.
    background in_cli "${probe[@]}" sink --bind "$C_IP" --port 9002 --max-seconds 15 --ready-file "$lab/down.ready" > "$lab/down.txt"
    local down_sink=$!
    wait_for_file "$lab/down.ready" 20
    in_srv "${probe[@]}" send --to "$C_IP" --port 9002 --count $count --interval 0.002 > "$lab/down.send"
    wait $down_sink
    local up down
    up=$(sed -n 's/.*sink_unique=\([0-9]*\).*/\1/p' "$lab/up.txt")
    down=$(sed -n 's/.*sink_unique=\([0-9]*\).*/\1/p' "$lab/down.txt")
    result "probes=$count up_received=${up:-0} down_received=${down:-0}" \
        "up_loss_pct=$(awk -v n=$count -v r="${up:-0}" 'BEGIN {printf "%.1f", (n - r) * 100 / n}')" \
        "down_loss_pct=$(awk -v n=$count -v r="${down:-0}" 'BEGIN {printf "%.1f", (n - r) * 100 / n}')"
    off || { result "off_status=failed"; return 1; }
    result "off_status=0 $(ping_figures after_off_ping -c 5 -i 0.2)"
    [ "$before" = "$(tc_state)" ] && result "restored=yes" || result "restored=no"
}

scenario_blackhole() {
    background in_srv tcpdump -i "$S_IF" -n -U -w "$lab/server.pcap" "icmp or udp port $ECHO_PORT" 2> "$lab/tcpdump.err"
    local capture=$!
    local i
    for ((i = 0; i < 100; i++)); do grep -q "listening on" "$lab/tcpdump.err" && break; sleep 0.1; done
    grep -q "listening on" "$lab/tcpdump.err" || { note "tcpdump did not start: $(cat "$lab/tcpdump.err")"; return 1; }
    local before; before="$(tc_state)"
    apply "Black Hole" || { result "apply_status=failed"; return 1; }
    result "apply_status=0"
    result "$(ping_figures ping -c 10 -i 0.2 -W 1)"
    result "$(in_cli "${probe[@]}" rtt --to "$S_IP" --port $ECHO_PORT --count 10 --interval 0.1 --timeout 0.5 --prefix udp)"
    sleep 0.5
    # TERM, not INT: a background job of a script ignores SIGINT.
    kill -TERM $capture; wait $capture 2>/dev/null
    local requests replies udp_in udp_out
    requests=$(tcpdump -r "$lab/server.pcap" -n "icmp[icmptype] = icmp-echo and src $C_IP" 2>/dev/null | wc -l)
    replies=$(tcpdump -r "$lab/server.pcap" -n "icmp[icmptype] = icmp-echoreply and src $S_IP" 2>/dev/null | wc -l)
    udp_in=$(tcpdump -r "$lab/server.pcap" -n "udp and src $C_IP and dst port $ECHO_PORT" 2>/dev/null | wc -l)
    udp_out=$(tcpdump -r "$lab/server.pcap" -n "udp and src $S_IP and src port $ECHO_PORT" 2>/dev/null | wc -l)
    result "server_echo_requests=$requests server_echo_replies=$replies server_udp_in=$udp_in server_udp_out=$udp_out"
    off || { result "off_status=failed"; return 1; }
    result "off_status=0 $(ping_figures after_off_ping -c 5 -i 0.2)"
    [ "$before" = "$(tc_state)" ] && result "restored=yes" || result "restored=no"
}

scenario_neighbours() {
    if [ "$driver" != cli ]; then note "neighbours needs the cli driver"; result "skipped=raw_driver"; return 0; fi
    background in_srv python3 -m http.server $HTTP_PORT --bind "$S_IP" --directory "$lab/www" 2>/dev/null
    local i
    for ((i = 0; i < 100; i++)); do in_cli curl -s -o /dev/null --max-time 1 "http://$S_IP:$HTTP_PORT/" && break; sleep 0.1; done
    in_cli ping -c1 -W2 -q "$S_IP6" >/dev/null 2>&1
    background in_srv tcpdump -i "$S_IF" -n -U -s 200 -w "$lab/nb.pcap" "icmp or icmp6 or arp or tcp port $HTTP_PORT" 2> "$lab/nb-tcpdump.err"
    local capture=$!
    for ((i = 0; i < 100; i++)); do grep -q "listening on" "$lab/nb-tcpdump.err" && break; sleep 0.1; done
    # One connection made before Black Hole: its requests are sent after it, as an app's would be.
    rm -f "$lab/go"
    background in_cli "${probe[@]}" requests --to "$S_IP" --port $HTTP_PORT --count 5 --interval 0.3 \
        --connected-file "$lab/connected" --go-file "$lab/go" --prefix http > "$lab/requests.out"
    local client=$!
    wait_for_file "$lab/connected" 20
    local before; before="$(tc_state)"
    apply "Black Hole" || { result "apply_status=failed"; touch "$lab/go"; return 1; }
    result "apply_status=0"
    # No permanent entries, nothing cached: every packet below needs ARP or NDP first, both ways.
    in_cli ip neigh del "$S_IP" dev "$C_IF"; in_srv ip neigh del "$C_IP" dev "$S_IF"
    in_cli ip neigh flush all; in_srv ip neigh flush all
    in_cli ip -6 neigh flush all; in_srv ip -6 neigh flush all
    result "neigh_after_flush=$(in_cli ip neigh show | grep -c . )"
    result "$(ping_figures ping -c 10 -i 0.2 -W 1)"
    result "$(in_cli ping -6 -n -q -c 10 -i 0.2 -W 1 "$S_IP6" 2>&1 | awk '/ packets transmitted/ {printf "ping6_sent=%d ping6_received=%d", $1, $4}')"
    touch "$lab/go"; wait $client
    result "$(cat "$lab/requests.out")"
    result "client_neigh_v4=$(in_cli ip neigh show "$S_IP" | awk '{print $NF}') client_neigh_v6=$(in_cli ip -6 neigh show "$S_IP6" | awk '{print $NF}')"
    sleep 0.5
    kill -TERM $capture; wait $capture 2>/dev/null
    local requests replies requests6 replies6 gets arp_replies_from_server ndp_adverts
    requests=$(tcpdump -r "$lab/nb.pcap" -n "icmp[icmptype] = icmp-echo and src $C_IP" 2>/dev/null | wc -l)
    replies=$(tcpdump -r "$lab/nb.pcap" -n "icmp[icmptype] = icmp-echoreply and src $S_IP" 2>/dev/null | wc -l)
    requests6=$(tcpdump -r "$lab/nb.pcap" -n "icmp6 and ip6[40] = 128 and src $C_IP6" 2>/dev/null | wc -l)
    replies6=$(tcpdump -r "$lab/nb.pcap" -n "icmp6 and ip6[40] = 129 and src $S_IP6" 2>/dev/null | wc -l)
    # Distinct request paths seen by the server (retransmissions repeat a path).
    gets=$(tcpdump -r "$lab/nb.pcap" -n -A "tcp dst port $HTTP_PORT" 2>/dev/null | grep -o 'GET /r[0-9]*' | sort -u | wc -l)
    arp_replies_from_server=$(tcpdump -r "$lab/nb.pcap" -n "arp and src host $S_IP" 2>/dev/null | grep -c "is-at")
    ndp_adverts=$(tcpdump -r "$lab/nb.pcap" -n "icmp6 and ip6[40] = 136 and src $S_IP6" 2>/dev/null | wc -l)
    result "server_echo_requests=$requests server_echo_replies=$replies server_echo6_requests=$requests6" \
        "server_echo6_replies=$replies6 server_http_requests=$gets server_arp_replies=$arp_replies_from_server" \
        "server_ndp_adverts=$ndp_adverts"
    off || { result "off_status=failed"; return 1; }
    result "off_status=0 $(ping_figures after_off_ping -c 5 -i 0.2)"
    # Put the lab's permanent entries back for the scenarios after this one.
    in_cli ip neigh replace "$S_IP" lladdr "$(in_srv cat /sys/class/net/$S_IF/address)" dev "$C_IF" nud permanent
    in_srv ip neigh replace "$C_IP" lladdr "$(in_cli cat /sys/class/net/$C_IF/address)" dev "$S_IF" nud permanent
    [ "$before" = "$(tc_state)" ] && result "restored=yes" || result "restored=no"
}

scenario_switch() {
    local size=400000
    head -c $size /dev/urandom > "$lab/www/big.bin"
    background in_srv python3 -m http.server $HTTP_PORT --bind "$S_IP" --directory "$lab/www" 2>/dev/null
    local i
    for ((i = 0; i < 100; i++)); do
        in_cli curl -s -o /dev/null --max-time 1 "http://$S_IP:$HTTP_PORT/" && break; sleep 0.1
    done
    # Times: t_slow after Slow Net's apply returned; t_switch when the switch to Black Hole began,
    # t_hole when it returned; t_unhole when off began, t_off when it returned.
    local t_base t_slow t_switch t_hole t_unhole t_off t_done
    t_base=$(now)
    background in_cli "${probe[@]}" series --to "$S_IP" --port $ECHO_PORT --interval 0.1 --seconds 180 \
        --stop-file "$lab/series.stop" --timeout 3 --output "$lab/series.txt" > "$lab/series.out"
    local series=$!
    sleep 1.5
    apply "Slow Net" || { result "apply_status=failed"; touch "$lab/series.stop"; return 1; }
    t_slow=$(now)
    # The download starts under Slow Net and must survive both switches.
    background in_cli curl -s -o "$lab/download.bin" --max-time 120 \
        -w "curl_status=%{http_code} curl_bytes=%{size_download}\n" "http://$S_IP:$HTTP_PORT/big.bin" > "$lab/curl.out"
    local download=$!
    sleep 6
    t_switch=$(now)
    local bytes_at_switch; bytes_at_switch=$(stat -c %s "$lab/download.bin" 2>/dev/null || echo 0)
    apply "Black Hole" || { result "switch_status=failed"; touch "$lab/series.stop"; return 1; }
    t_hole=$(now)
    local bytes_hole_start; bytes_hole_start=$(stat -c %s "$lab/download.bin" 2>/dev/null || echo 0)
    sleep 4
    t_unhole=$(now)
    local bytes_hole_end; bytes_hole_end=$(stat -c %s "$lab/download.bin" 2>/dev/null || echo 0)
    off || { result "off_status=failed"; touch "$lab/series.stop"; return 1; }
    t_off=$(now)
    wait $download; local curl_exit=$?
    t_done=$(now)
    sleep 1.5
    touch "$lab/series.stop"; wait $series
    span() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
    result "apply_status=0 switch_status=0 off_status=0 file_bytes=$size curl_exit=$curl_exit $(cat "$lab/curl.out")"
    result "slow_seconds=$(span $t_slow $t_switch) slow_bytes=$bytes_at_switch" \
        "switch_seconds=$(span $t_switch $t_hole)" \
        "hole_seconds=$(span $t_hole $t_unhole) hole_bytes=$((bytes_hole_end - bytes_hole_start))" \
        "off_seconds=$(span $t_unhole $t_off) after_off_seconds=$(span $t_off $t_done)"
    cmp -s "$lab/download.bin" "$lab/www/big.bin" && result "download_intact=yes" || result "download_intact=no"
    # Phases by send time; probes within 0.3 s of a boundary are left out (they straddle it).
    # "fast" = under 100 ms, less than Slow Net's delay in one direction alone.
    result "$("${probe[@]}" phases --series "$lab/series.txt" --margin 0.3 --fast-below 100 --prefix series \
        base=$t_base slow=$t_slow switching=$t_switch hole=$t_hole turning_off=$t_unhole off=$t_off)"
    # Between Slow Net's apply returning and off beginning the downlink is always conditioned
    # (100 ms delay, then 100% loss; Black Hole leaves the uplink alone, so while the switch is
    # under way a reply may take only the downlink's 100 ms). A reply under 100 ms would have
    # crossed both directions unconditioned.
    result "$("${probe[@]}" phases --series "$lab/series.txt" --margin 0 --fast-below 100 --prefix conditioned \
        base=$t_base all=$t_slow after=$t_unhole | grep -o 'conditioned_all_[a-z_]*=[^ ]*' | tr '\n' ' ')"
}

scenario_landing() {
    if [ "$driver" != cli ]; then note "landing needs the cli driver"; result "skipped=raw_driver"; return 0; fi
    local before; before="$(tc_state)"
    # Traffic under way, so the qdiscs have packets queued while they change.
    background in_cli "${probe[@]}" series --to "$S_IP" --port $ECHO_PORT --interval 0.05 --seconds 100 \
        --stop-file "$lab/landing.stop" --timeout 2 --output "$lab/landing-series.txt" > /dev/null
    # Steps of 10 s, counted from the first apply. Under emulation on a busy machine every process start takes
    # about a second (a first apply many): preparing a switch (three queries, and its tc started) takes seconds,
    # and the step must leave room for it, so that at the step's time only the change is left.
    echo '{"steps": [{"profile": "Slow Net", "for": "10s"}, {"profile": "3G", "for": "10s"}], "repeat": true}' > "$lab/landing.json"
    local status
    in_cli "$condition" apply --schedule "$lab/landing.json" -i "$C_IF" --for 65s > "$lab/landing.out" 2>&1; status=$?
    touch "$lab/landing.stop"
    sed 's/^/#   /' "$lab/landing.out"
    # "Switched tkc to "3G" at +2.000s: 6 commands in 1 process from -41.3 to +2.2 ms of its time"
    result "landing_status=$status $(awk '/^Switched / {
            for (i = 1; i <= NF; i++) { if ($i == "from") b = $(i + 1); if ($i == "to") t = $(i + 1); if ($i == "process" || $i == "processes") p = $(i - 1) }
            n++; began = began (n > 1 ? "," : "") b + 0; landed = landed (n > 1 ? "," : "") t + 0; procs = procs (n > 1 ? "," : "") p
            a = t < 0 ? -t : t; if (a > worst) worst = a }
        END { printf "switches=%d landed_worst_ms=%.1f landed_ms=%s began_ms=%s processes=%s", n, worst, landed, began, procs }' "$lab/landing.out")"
    [ "$before" = "$(tc_state)" ] && result "restored=yes" || result "restored=no"
}

scenario_sandbox() {
    if [ "$driver" != cli ]; then note "sandbox needs the cli driver"; result "skipped=raw_driver"; return 0; fi
    # A server in the guest's root namespace: "outside the sandbox", on the host side.
    head -c 2000 /dev/urandom > "$lab/www/small.bin"
    background python3 -m http.server $HTTP_PORT --bind 0.0.0.0 --directory "$lab/www" 2>/dev/null
    local i
    for ((i = 0; i < 100; i++)); do curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$HTTP_PORT/" && break; sleep 0.1; done
    # The sandbox's default gateway is the host end of its veth; curl's figures come on a line of
    # their own so an error message that quotes the command cannot be mistaken for them.
    local fetch='gw=$(ip -4 route show default | awk "{print \$3; exit}"); echo "sandbox_gateway=${gw:-none}"; echo "sandbox_netem=$(tc qdisc show dev eth0 | grep -c netem)"; curl -s -o /dev/null --max-time "$1" -w "\nCURLRESULT time_connect=%{time_connect} time_total=%{time_total} http=%{http_code}\n" "http://$gw:'$HTTP_PORT'/small.bin"'
    result "$(curl -s -o /dev/null -w 'host_time_connect=%{time_connect} host_time_total=%{time_total} host_http=%{http_code}' "http://127.0.0.1:$HTTP_PORT/small.bin")"
    local links_before netns_before nft_before
    links_before=$(ip -o link show | awk '{print $2}' | sort | tr '\n' ' ')
    netns_before=$(ip netns list | awk '{print $1}' | sort | tr '\n' ' ')
    nft_before=$(nft list tables 2>/dev/null | sort | tr '\n' ' ')

    "$condition" run "Slow Net" -- sh -c "$fetch" sh 20 > "$lab/slow.out" 2>&1
    local slow_exit=$?
    sed 's/^/#   run: /' "$lab/slow.out"
    # netem stays the engine where the kernel has it: its leaf on the sandbox's uplink, and no user-space engine.
    result "slow_netem_leaves=$(grep -o '^sandbox_netem=[0-9]*' "$lab/slow.out" | head -1 | cut -d= -f2)" \
        "slow_userspace_engine=$(grep -q 'user space (nftables' "$lab/slow.out" && echo yes || echo no)"
    result "slow_exit=$slow_exit $(grep -o '^sandbox_gateway=[^ ]*' "$lab/slow.out" | head -1)" \
        "$(grep '^CURLRESULT ' "$lab/slow.out" | head -1 | sed 's/^CURLRESULT //; s/time_connect=/slow_time_connect=/; s/time_total=/slow_time_total=/; s/http=/slow_http=/')"

    # Black Hole: the command must time out; meanwhile the host's own traffic keeps its speed.
    "$condition" run "Black Hole" -- sh -c "$fetch" sh 5 > "$lab/hole.out" 2>&1 &
    local hole=$!
    sleep 2
    local host_ok=0 host_max=0 t
    for i in 1 2 3 4 5; do
        t=$(curl -s -o /dev/null --max-time 2 -w '%{time_total}' "http://127.0.0.1:$HTTP_PORT/small.bin") && host_ok=$((host_ok + 1))
        host_max=$(awk -v a="$host_max" -v b="${t:-9}" 'BEGIN {print (b > a) ? b : a}')
        sleep 0.3
    done
    local hole_active; hole_active=$(kill -0 $hole 2>/dev/null && echo yes || echo no)
    wait $hole; local hole_exit=$?
    sed 's/^/#   run: /' "$lab/hole.out"
    result "hole_exit=$hole_exit hole_running_during_host_traffic=$hole_active" \
        "$(grep '^CURLRESULT ' "$lab/hole.out" | head -1 | grep -o 'time_total=[0-9.]* http=[0-9]*' | sed 's/^/hole_/; s/ http=/ hole_http=/')" \
        "host_during_hole_ok=$host_ok host_during_hole_max_s=$host_max"
    local links_after netns_after
    local nft_after
    links_after=$(ip -o link show | awk '{print $2}' | sort | tr '\n' ' ')
    netns_after=$(ip netns list | awk '{print $1}' | sort | tr '\n' ' ')
    nft_after=$(nft list tables 2>/dev/null | sort | tr '\n' ' ')
    [ "$links_before" = "$links_after" ] && [ "$netns_before" = "$netns_after" ] && [ "$nft_before" = "$nft_after" ] \
        && result "left_behind=none" \
        || { result "left_behind=yes"; note "links before: $links_before after: $links_after; netns before: $netns_before after: $netns_after; nft before: $nft_before after: $nft_after"; }
}

scenario_faults() {
    if [ "$driver" != cli ]; then note "faults needs the cli driver"; result "skipped=raw_driver"; return 0; fi
    local port=8081 dir="$lab/fault-profiles" i
    mkdir -p "$dir"
    head -c 4000000 /dev/zero > "$lab/www/blob"
    head -c 2000 /dev/zero > "$lab/www/small"
    local n=0
    profile() { n=$((n + 1)); echo "{\"name\": \"$1\", $2}" > "$dir/lab-$n.json"; }
    profile "Lab Reset" '"faults": {"resetAfterBytes": 300000}'
    profile "Lab Stall" '"faults": {"stallAfterBytes": 300000}'
    profile "Lab Refuse RST" '"faults": {"refuse": "reset"}'
    profile "Lab Refuse ICMP" '"faults": {"refuse": "unreachable"}'
    profile "Lab Refuse Drop" '"faults": {"refuse": "timeout"}'
    profile "Lab Share" '"faults": {"resetPercent": 50}'
    # A fault with netem beside it: 50 ms each way and 8 Mbit/s down (1 MB/s, so 1 s is about 1 MB of the blob).
    profile "Lab Slow Reset" '"downlink": {"bandwidthKbit": 8000, "delayMs": 50}, "uplink": {"delayMs": 50}, "faults": {"resetAfterMs": 1000}'
    profile "Lab DNS" '"downlink": {"delayMs": 100}, "uplink": {"delayMs": 100}, "dnsDelayMs": 300, "faults": {"dns": ["nxdomain:blocked.test", "servfail:broken.test", "timeout:silent.test"]}'
    background in_srv python3 -m http.server $port --bind "$S_IP" --directory "$lab/www" 2>/dev/null
    for ((i = 0; i < 100; i++)); do in_cli curl -s -o /dev/null --max-time 1 "http://$S_IP:$port/small" && break; sleep 0.1; done
    local before nft_before; before="$(tc_state)"; nft_before=$(in_cli nft list tables 2>/dev/null | sort | tr '\n' ' ')
    # `condition apply PROFILE` on tkc, at most 60 s; past that, every thread's stack (gdb) for the notes, then it is
    # stopped and the status is 124.
    fault_apply() {  # PROFILE
        in_cli "$condition" apply "$1" -i "$C_IF" --profiles "$dir" --yes > "$lab/fault-apply.out" 2>&1 &
        local apply=$! waited
        for ((waited = 0; waited < 600; waited++)); do kill -0 $apply 2>/dev/null || break; sleep 0.1; done
        if kill -0 $apply 2>/dev/null; then
            note "apply $1 still running after 60 s: $(cat "$lab/fault-apply.out" | tr '\n' ' ')"
            local pid; pid=$(pgrep -f "condition apply $1" | head -1)
            [ -n "$pid" ] && command -v gdb >/dev/null && gdb -p "$pid" -batch -ex "thread apply all bt 12" 2>&1 | grep -E '^(Thread|#)' | head -60 | sed 's/^/# gdb: /'
            kill -KILL $apply 2>/dev/null; wait $apply 2>/dev/null
            return 124
        fi
        wait $apply; local status=$?
        [ $status -eq 0 ] || sed "s/^/#   apply $1: /" "$lab/fault-apply.out"
        return $status
    }
    # Each profile switches the last in place (the first is a fresh apply); then the client's figures.
    fault() {  # PROFILE PREFIX PROBE-ARGS...
        local name=$1 prefix=$2; shift 2
        fault_apply "$name"
        result "${prefix}_apply=$? $(in_cli "${probe[@]}" downloads --to "$S_IP" --port $port --prefix "$prefix" "$@")"
    }
    # `status`'s count for the fault in force: "  faults: reset 3 connections".
    fault_count() { in_cli "$condition" status 2>&1 | sed -n 's/^ *faults: [a-z]* \([0-9]*\) connection.*/\1/p' | head -1; }
    fault "Lab Reset" reset
    fault "Lab Stall" stall
    fault "Lab Refuse RST" refuse_rst
    fault "Lab Refuse ICMP" refuse_icmp
    fault "Lab Refuse Drop" refuse_drop
    fault "Lab Share" share --path small --count 40
    result "share_status_count=$(fault_count)"
    fault_apply "Lab Slow Reset"
    result "slowreset_apply=$? $(ping_figures slowreset_ping -c 5 -i 0.2)"
    result "$(in_cli "${probe[@]}" downloads --to "$S_IP" --port $port --prefix slowreset --timeout 3)"
    off || { result "off_status=failed"; return 1; }
    [ "$before" = "$(tc_state)" ] && [ "$nft_before" = "$(in_cli nft list tables 2>/dev/null | sort | tr '\n' ' ')" ] \
        && result "restored=yes" || result "restored=no"

    # DNS faults: the host's name server is a dnsmasq on the guest's loopback (its log the oracle), the sandbox's
    # veth pair has 100 ms of netem each way, and the forwarder holds every query 300 ms more.
    dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts --listen-address=127.0.0.53 --bind-interfaces --port=53 \
        --user=root --group=root --pid-file= --address=/ok.test/192.0.2.10 --log-queries --log-facility="$lab/dns-faults.log" &
    pids+=($!)
    for ((i = 0; i < 50; i++)); do dig +tries=1 +timeout=1 @127.0.0.53 ok.test 2>/dev/null | grep -q 192.0.2.10 && break; sleep 0.1; done
    printf 'nameserver 127.0.0.53\noptions timeout:2 attempts:1\n' > "$lab/resolv.conf"
    cat > "$lab/dns-client.sh" <<'CLIENT'
# In the sandbox: each name's answer code and dig's own query time; getent's exit status, address and time.
for name in ok blocked broken silent; do
    dig +tries=1 +timeout=2 $name.test > "$2/dig.out" 2>&1
    code=$(sed -n 's/.*status: \([A-Z]*\).*/\1/p' "$2/dig.out"); grep -q "timed out" "$2/dig.out" && code=timeout
    echo "DNSRESULT dig_$name=${code:-none} dig_${name}_ms=$(sed -n 's/.*Query time: \([0-9]*\) msec.*/\1/p' "$2/dig.out")"
done
start=$(date +%s%N); address=$(getent ahostsv4 ok.test | awk '{print $1; exit}'); code=$?; end=$(date +%s%N)
echo "DNSRESULT getent_ok=${address:-none} getent_ms=$(( (end - start) / 1000000 ))"
"$1" sandboxes --json > "$2/sandboxes.json"
CLIENT
    local links_before netns_before nft_root_before
    links_before=$(ip -o link show | awk '{print $2}' | sort | tr '\n' ' ')
    netns_before=$(ip netns list | awk '{print $1}' | sort | tr '\n' ' ')
    nft_root_before=$(nft list tables 2>/dev/null | sort | tr '\n' ' ')
    TAPKIT_RESOLV_CONF="$lab/resolv.conf" "$condition" run "Lab DNS" --profiles "$dir" -- bash "$lab/dns-client.sh" "$condition" "$lab" \
        > "$lab/dns-run.out" 2>&1
    local run_status=$?
    grep -v '^DNSRESULT ' "$lab/dns-run.out" | sed 's/^/#   run: /'
    result "dns_run_status=$run_status $(grep '^DNSRESULT ' "$lab/dns-run.out" | sed 's/^DNSRESULT //' | tr '\n' ' ')"
    result "$(python3 -S -c 'import json, sys
boxes = json.load(open(sys.argv[1]))
counts = boxes[0].get("dnsQueries", {}) if len(boxes) == 1 else {}
print(" ".join("dns_count_%s=%d" % item for item in sorted(counts.items())) or "dns_counts=none")' "$lab/sandboxes.json" 2>&1 | tr '\n' ' ')"
    result "dns_upstream_ok=$(grep -c '] ok.test from' "$lab/dns-faults.log") dns_upstream_faulted=$(grep -cE '(blocked|broken|silent).test from' "$lab/dns-faults.log")"
    [ "$links_before" = "$(ip -o link show | awk '{print $2}' | sort | tr '\n' ' ')" ] \
        && [ "$netns_before" = "$(ip netns list | awk '{print $1}' | sort | tr '\n' ' ')" ] \
        && [ "$nft_root_before" = "$(nft list tables 2>/dev/null | sort | tr '\n' ' ')" ] \
        && result "dns_left_behind=none" || result "dns_left_behind=yes"
}

# How long a scenario may run: about four times what it takes under emulation on a busy machine.
# Past that, `stuck` says what is still running and stops it, so a hang costs minutes and says
# where it was, instead of running the VM into its timeout with nothing to show.
limit_of() { case "$1" in switch|landing) echo 180 ;; faults) echo 400 ;; *) echo 120 ;; esac; }

# What the scenario runs: the lab shell's descendants, less the lab's own servers and ASKER's.
running() {  # ASKER
    ps -eo pid=,ppid= | awk -v root=$$ -v skip="$1 ${lab_pids[*]}" '
        BEGIN { n = split(skip, s, " "); for (i = 1; i <= n; i++) skipped[s[i]] = 1 }
        { parent[$1] = $2 }
        END { for (p in parent) { q = p; while (q in parent && q != root && !(q in skipped) && q > 1) q = parent[q]
                                   if (q == root && p != root) print p } }' | sort -n
}

stuck() {  # SECONDS: sleeps that long, then says what the scenario still runs and stops it
    local nap me=$BASHPID
    trap 'kill $nap 2>/dev/null; exit 0' TERM
    sleep "$1" & nap=$!
    wait $nap
    local pids pid summary=""
    pids=$(running $me)
    for pid in $pids; do
        summary="$summary$(ps -o pid=,stat=,wchan:20=,args= -p "$pid" 2>/dev/null | cut -c1-100 | tr -s ' ') | "
    done
    touch "$lab/timed-out"
    result "timed_out=yes limit_s=$1"
    # One line for the test's failure message, then the details.
    note "stuck after $1 s: ${summary% | }"
    for pid in $pids; do
        [ -r "/proc/$pid/stack" ] && sed "s/^/# stack $pid: /" "/proc/$pid/stack" 2>/dev/null | head -12
    done
    dmesg 2>/dev/null | tail -n 15 | sed 's/^/# dmesg: /'
    tc_state | sed 's/^/# tc now: /'
    # Until the scenario ends: whatever it starts next is stopped too, so it runs to its end quickly.
    while true; do
        for pid in $(running $me); do kill -TERM "$pid" 2>/dev/null; done
        sleep 2 & nap=$!; wait $nap
        for pid in $(running $me); do kill -KILL "$pid" 2>/dev/null; done
    done
}

# One lab for the whole run (setting it up costs seconds under emulation); every scenario
# turns its profile off and checks the client's qdiscs are as before, so the next starts clean.
overall=0
note "lab setup starts at $(cut -d' ' -f1 /proc/uptime)s uptime"
if ! lab_up; then
    note "lab setup failed"
    for scenario in "${scenarios[@]}"; do result "status=1 seconds=0 lab=failed"; done
    lab_down
    exit 1
fi
for scenario in "${scenarios[@]}"; do
    note "scenario $scenario (driver $driver) starts at $(cut -d' ' -f1 /proc/uptime)s uptime"
    started=$(now)
    rm -f "$lab/timed-out"
    stuck "$(limit_of "$scenario")" &
    alarm=$!
    "scenario_$scenario"; status=$?
    kill "$alarm" 2>/dev/null; wait "$alarm" 2>/dev/null
    [ -e "$lab/timed-out" ] && status=124
    stop_scenario_processes
    if [ $status -ne 0 ]; then
        # Leave nothing behind for the next scenario, whatever state the failure left.
        [ "$driver" = cli ] && in_cli "$condition" off -i "$C_IF" >/dev/null 2>&1
        raw_off
    fi
    result "status=$status seconds=$(awk -v a="$started" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')"
    [ $status -eq 0 ] || overall=1
done
lab_down
exit $overall
