import LinkConditioner

/// The exact commands `condition apply NAME -i eth0` runs on a fresh interface, then `condition off`,
/// for every built-in profile. Reviewed by hand: bit units only, reserved handles, netem only where
/// there is delay or loss, DNS branch only with a DNS delay, burst/quantum never below a full frame.
enum ExpectedPlans {
    static let eth0: [String: (apply: String, off: String)] = [
        "Slow Net": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 100ms limit 1000
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:20 htb rate 8kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc qdisc add dev eth0 parent 7ac0:20 handle 7ac4: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc add dev eth0 parent 7ac4:1 handle 7ac2: netem delay 300ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 4 u32 match ip protocol 17 0xff match ip dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ip prio 4 u32 match ip protocol 6 0xff match ip dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 5 u32 match ip6 protocol 17 0xff match ip6 dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 5 u32 match ip6 protocol 6 0xff match ip6 dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 100ms limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "Nasty Net": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem loss 90% limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem loss 90% limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "Black Hole": (apply: """
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem loss 100% limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            ip link del dev tk-eth0
            """),
        "3G": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 330kbit ceil 330kbit burst 1600 cburst 1600 quantum 4125
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 330kbit ceil 330kbit burst 1600 cburst 1600 quantum 4125
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 100ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 780kbit ceil 780kbit burst 1600 cburst 1600 quantum 9750
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 780kbit ceil 780kbit burst 1600 cburst 1600 quantum 9750
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 100ms limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "Edge": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 200kbit ceil 200kbit burst 1600 cburst 1600 quantum 2500
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 200kbit ceil 200kbit burst 1600 cburst 1600 quantum 2500
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 440ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 240kbit ceil 240kbit burst 1600 cburst 1600 quantum 3000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 240kbit ceil 240kbit burst 1600 cburst 1600 quantum 3000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 400ms limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "DSL": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 256kbit ceil 256kbit burst 1600 cburst 1600 quantum 3200
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 256kbit ceil 256kbit burst 1600 cburst 1600 quantum 3200
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 5ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 2mbit ceil 2mbit burst 2500 cburst 2500 quantum 25000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 2mbit ceil 2mbit burst 2500 cburst 2500 quantum 25000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 5ms limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "Cable Modem": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 1mbit ceil 1mbit burst 1600 cburst 1600 quantum 12500
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 1mbit ceil 1mbit burst 1600 cburst 1600 quantum 12500
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 2ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 6mbit ceil 6mbit burst 7500 cburst 7500 quantum 75000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 6mbit ceil 6mbit burst 7500 cburst 7500 quantum 75000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 2ms limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "Very Bad Network": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 1mbit ceil 1mbit burst 1600 cburst 1600 quantum 12500
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 1mbit ceil 1mbit burst 1600 cburst 1600 quantum 12500
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 500ms loss 10% limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 1mbit ceil 1mbit burst 1600 cburst 1600 quantum 12500
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 1mbit ceil 1mbit burst 1600 cburst 1600 quantum 12500
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 500ms loss 10% limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "100% Loss": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem loss 100% limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem loss 100% limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "LTE": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 10mbit ceil 10mbit burst 12500 cburst 12500 quantum 125000
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10mbit ceil 10mbit burst 12500 cburst 12500 quantum 125000
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 65ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 50mbit ceil 50mbit burst 62500 cburst 62500 quantum 200000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 50mbit ceil 50mbit burst 62500 cburst 62500 quantum 200000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 50ms limit 1250
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "Wi-Fi": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 33mbit ceil 33mbit burst 41250 cburst 41250 quantum 200000
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 33mbit ceil 33mbit burst 41250 cburst 41250 quantum 200000
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 1ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev tk-eth0 root handle 7ac0: htb default 0
            tc class add dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 40mbit ceil 40mbit burst 50000 cburst 50000 quantum 200000
            tc class add dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 40mbit ceil 40mbit burst 50000 cburst 50000 quantum 200000
            tc qdisc add dev tk-eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 1ms limit 1000
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
        "High Latency DNS": (apply: """
            tc qdisc add dev eth0 root handle 7ac0: htb default 0
            tc class add dev eth0 parent 7ac0: classid 7ac0:1 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc qdisc add dev eth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:20 htb rate 100mbit ceil 10gbit burst 125000 cburst 12500000 quantum 200000
            tc qdisc add dev eth0 parent 7ac0:20 handle 7ac4: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc add dev eth0 parent 7ac4:1 handle 7ac2: netem delay 3000ms limit 150000
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 133 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 134 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 135 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 136 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 1 u32 match ip6 protocol 58 0xff match ip6 icmp_type 137 0xff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 4 u32 match ip protocol 17 0xff match ip dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ip prio 4 u32 match ip protocol 6 0xff match ip dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 5 u32 match ip6 protocol 17 0xff match ip6 dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 5 u32 match ip6 protocol 6 0xff match ip6 dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            ip link add tk-eth0 txqueuelen 1000 type ifb
            ip link set dev tk-eth0 up
            tc qdisc add dev eth0 handle ffff: ingress
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """, off: """
            tc qdisc del dev eth0 ingress
            tc qdisc del dev eth0 root
            ip link del dev tk-eth0
            """),
    ]
}
