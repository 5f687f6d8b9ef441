import PacketDecoding

/// `capture --stats` as text tables: the capture, protocol hierarchy, conversations, endpoints and HTTP.
public struct StatisticsTextRenderer {
    public init() {}

    public func render(_ stats: TrafficStatistics) -> String {
        var text = summary(stats)
        text += "\nProtocol hierarchy (frames, bytes)\n"
        for node in stats.hierarchy.tree { text += hierarchy(node, depth: 1) }
        text += conversations("TCP conversations (index is what --follow takes)", stats.conversations.tcp, stats)
        text += conversations("UDP conversations", stats.conversations.udp, stats)
        text += endpoints("IP endpoints", stats.addresses.endpoints)
        text += endpoints("TCP endpoints", stats.conversations.tcp.endpoints())
        text += endpoints("UDP endpoints", stats.conversations.udp.endpoints())
        text += http(stats.http)
        return text
    }

    private func summary(_ stats: TrafficStatistics) -> String {
        var text = "Capture: \(stats.packets) packet\(stats.packets == 1 ? "" : "s"), \(stats.bytes) bytes"
        if let first = stats.first, let last = stats.last {
            text += ", \(StatisticsFormat.seconds(max(0, last.seconds(since: first)))) s"
        }
        return text + "\n"
    }

    private func hierarchy(_ node: ProtocolHierarchy.Node, depth: Int) -> String {
        let name = String(repeating: "  ", count: depth) + node.layer.name
        var text = name + String(repeating: " ", count: max(1, 32 - name.count)) + "frames:\(node.frames) bytes:\(node.bytes)\n"
        for child in node.children { text += hierarchy(child, depth: depth + 1) }
        return text
    }

    private func conversations(_ title: String, _ list: [Conversation], _ stats: TrafficStatistics) -> String {
        let text = "\n\(title): \(list.count)\n"
        guard !list.isEmpty else { return text }
        var table = TextTable(header: ["#", "A", "", "B", "A>B frames", "bytes", "B>A frames", "bytes", "frames", "bytes",
                                       "start", "duration"], left: [1, 2, 3])
        for c in list {
            let start = stats.first.map { c.first.seconds(since: $0) } ?? 0
            table.add([String(c.index), c.a.description, "<->", c.b.description, String(c.framesAToB), String(c.bytesAToB),
                       String(c.framesBToA), String(c.bytesBToA), String(c.frames), String(c.bytes),
                       StatisticsFormat.seconds(start), StatisticsFormat.seconds(c.duration)])
        }
        return text + table.render()
    }

    private func endpoints(_ title: String, _ list: [TrafficEndpoint]) -> String {
        let text = "\n\(title): \(list.count)\n"
        guard !list.isEmpty else { return text }
        let withPort = list.first?.port != nil
        var table = TextTable(header: (withPort ? ["address", "port"] : ["address"])
                                  + ["frames", "bytes", "tx frames", "tx bytes", "rx frames", "rx bytes"], left: [0])
        for e in list {
            table.add([e.address.description] + (withPort ? [String(e.port ?? 0)] : [])
                      + [String(e.frames), String(e.bytes), String(e.txFrames), String(e.txBytes), String(e.rxFrames),
                         String(e.rxBytes)])
        }
        return text + table.render()
    }

    private func http(_ stats: HTTPStatistics) -> String {
        var text = "\nHTTP: \(stats.all.requests) request\(stats.all.requests == 1 ? "" : "s"), \(stats.all.responses) response"
            + "\(stats.all.responses == 1 ? "" : "s")"
        if stats.http2Exchanges > 0 { text += " (\(stats.http2Exchanges) exchanges over HTTP/2)" }
        if stats.http3Exchanges > 0 { text += " (\(stats.http3Exchanges) exchanges over HTTP/3)" }
        text += "\n"
        guard stats.all.requests + stats.all.responses > 0 else { return text }
        text += "\nBy host (latency: request's last byte to response's first byte, ms)\n"
        text += groups(stats.hosts, title: "host", total: stats.all)
        text += "\nBy method\n" + groups(stats.methods, title: "method", total: nil)
        text += "\nBy status class\n"
        var classes = TextTable(header: ["class", "responses"], left: [0])
        for (offset, count) in stats.all.statusClasses.enumerated().dropFirst() where count > 0 {
            classes.add(["\(offset)xx", String(count)])
        }
        if stats.all.statusClasses[0] > 0 { classes.add(["other", String(stats.all.statusClasses[0])]) }
        text += classes.render()
        text += "\nHTTP/1.x status codes (interim 1xx included, as tshark -z http,tree counts them)\n"
        var codes = TextTable(header: ["status", "responses"], left: [0])
        for (code, count) in stats.http1StatusCodes.sorted(by: { $0.key < $1.key }) { codes.add([String(code), String(count)]) }
        for (code, count) in stats.http1NonNumericStatuses.sorted(by: { $0.key < $1.key }) { codes.add([code, String(count)]) }
        text += codes.render()
        if !stats.largest.isEmpty {
            text += "\nLargest responses (decoded body bytes)\n"
            var largest = TextTable(header: ["body bytes", "on the wire", "status", "method", "target"], left: [3, 4])
            for entry in stats.largest {
                largest.add([String(entry.bodyBytes), String(entry.transferBytes), entry.statusText.isEmpty ? "-" : entry.statusText, entry.method,
                             entry.target])
            }
            text += largest.render()
        }
        if stats.hostsOverLimit > 0 {
            text += "\n\(stats.hostsOverLimit) exchanges of hosts past the first \(stats.hosts.count - 1) are in \"(other hosts)\".\n"
        }
        return text
    }

    private func groups(_ list: [HTTPGroup], title: String, total: HTTPGroup?) -> String {
        var table = TextTable(header: [title, "requests", "responses", "2xx", "3xx", "4xx", "5xx", "p50", "p90", "p99", "max",
                                       "response bytes"], left: [0])
        for group in list + (total.map { [$0] } ?? []) {
            let p = group.latency.percentiles([50, 90, 99])
            table.add([group.name, String(group.requests), String(group.responses), String(group.statusClasses[2]),
                       String(group.statusClasses[3]), String(group.statusClasses[4]), String(group.statusClasses[5]),
                       StatisticsFormat.milliseconds(p[0]), StatisticsFormat.milliseconds(p[1]),
                       StatisticsFormat.milliseconds(p[2]), StatisticsFormat.milliseconds(group.latency.maximum),
                       String(group.responseBytes)])
        }
        return table.render()
    }
}
