import PacketDecoding

/// `capture --stats --json`: one JSON object with the same tables as the text view, numbers unformatted
/// (bytes as integers, times in seconds).
public struct StatisticsJSONRenderer {
    public init() {}

    public func render(_ stats: TrafficStatistics) -> String {
        var json = JSONText()
        json.raw("{")
        json.key("packets"); json.number(stats.packets)
        json.raw(","); json.key("bytes"); json.number(stats.bytes)
        json.raw(","); json.key("first")
        if let first = stats.first { json.seconds(first.secondsSinceEpoch) } else { json.null() }
        json.raw(","); json.key("last")
        if let last = stats.last { json.seconds(last.secondsSinceEpoch) } else { json.null() }
        json.raw(","); json.key("protocols"); hierarchy(stats.hierarchy.tree, into: &json)
        json.raw(","); json.key("conversations"); json.raw("{")
        json.key("tcp"); conversations(stats.conversations.tcp, start: stats.first, into: &json)
        json.raw(","); json.key("udp"); conversations(stats.conversations.udp, start: stats.first, into: &json)
        json.raw("}")
        json.raw(","); json.key("endpoints"); json.raw("{")
        json.key("ip"); endpoints(stats.addresses.endpoints, into: &json)
        json.raw(","); json.key("tcp"); endpoints(stats.conversations.tcp.endpoints(), into: &json)
        json.raw(","); json.key("udp"); endpoints(stats.conversations.udp.endpoints(), into: &json)
        json.raw("}")
        json.raw(","); json.key("http"); http(stats.http, into: &json)
        json.raw(","); json.key("notTabled"); json.raw("{")
        json.key("conversationPackets"); json.number(stats.conversations.packetsNotTabled)
        json.raw(","); json.key("addressPackets"); json.number(stats.addresses.packetsNotTabled)
        json.raw(","); json.key("httpExchangesInOtherHosts"); json.number(stats.http.hostsOverLimit)
        json.raw("}}\n")
        return json.text
    }

    private func hierarchy(_ nodes: [ProtocolHierarchy.Node], into json: inout JSONText) {
        json.raw("[")
        for (i, node) in nodes.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{"); json.key("protocol"); json.string(node.layer.name)
            json.raw(","); json.key("frames"); json.number(node.frames)
            json.raw(","); json.key("bytes"); json.number(node.bytes)
            if !node.children.isEmpty { json.raw(","); json.key("children"); hierarchy(node.children, into: &json) }
            json.raw("}")
        }
        json.raw("]")
    }

    private func conversations(_ list: [Conversation], start: Timestamp?, into json: inout JSONText) {
        json.raw("[")
        for (i, c) in list.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{"); json.key("index"); json.number(c.index)
            json.raw(","); json.key("a"); json.endpoint(c.a)
            json.raw(","); json.key("b"); json.endpoint(c.b)
            json.raw(","); json.key("framesAToB"); json.number(c.framesAToB)
            json.raw(","); json.key("bytesAToB"); json.number(c.bytesAToB)
            json.raw(","); json.key("framesBToA"); json.number(c.framesBToA)
            json.raw(","); json.key("bytesBToA"); json.number(c.bytesBToA)
            json.raw(","); json.key("frames"); json.number(c.frames)
            json.raw(","); json.key("bytes"); json.number(c.bytes)
            json.raw(","); json.key("relativeStart"); json.seconds(start.map { c.first.seconds(since: $0) } ?? 0)
            json.raw(","); json.key("duration"); json.seconds(c.duration)
            json.raw("}")
        }
        json.raw("]")
    }

    private func endpoints(_ list: [TrafficEndpoint], into json: inout JSONText) {
        json.raw("[")
        for (i, e) in list.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{"); json.key("address"); json.string(e.address.description)
            if let port = e.port { json.raw(","); json.key("port"); json.number(Int(port)) }
            json.raw(","); json.key("frames"); json.number(e.frames)
            json.raw(","); json.key("bytes"); json.number(e.bytes)
            json.raw(","); json.key("txFrames"); json.number(e.txFrames)
            json.raw(","); json.key("txBytes"); json.number(e.txBytes)
            json.raw(","); json.key("rxFrames"); json.number(e.rxFrames)
            json.raw(","); json.key("rxBytes"); json.number(e.rxBytes)
            json.raw("}")
        }
        json.raw("]")
    }

    private func http(_ stats: HTTPStatistics, into json: inout JSONText) {
        json.raw("{"); json.key("requests"); json.number(stats.all.requests)
        json.raw(","); json.key("responses"); json.number(stats.all.responses)
        json.raw(","); json.key("http2Exchanges"); json.number(stats.http2Exchanges)
        json.raw(","); json.key("latency"); latency(stats.all.latency, into: &json)
        json.raw(","); json.key("hosts"); groups(stats.hosts, into: &json)
        json.raw(","); json.key("methods"); groups(stats.methods, into: &json)
        json.raw(","); json.key("statusClasses"); json.raw("{")
        for statusClass in 1...5 {
            if statusClass > 1 { json.raw(",") }
            json.string("\(statusClass)xx"); json.raw(":"); json.number(stats.all.statusClasses[statusClass])
        }
        json.raw(","); json.key("other"); json.number(stats.all.statusClasses[0])
        json.raw("}")
        json.raw(","); json.key("http1StatusCodes"); json.raw("{")
        for (i, (code, count)) in stats.http1StatusCodes.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { json.raw(",") }
            json.string(String(code)); json.raw(":"); json.number(count)
        }
        json.raw("}")
        json.raw(","); json.key("http1RequestMethods"); json.raw("{")
        for (i, (method, count)) in stats.http1RequestMethods.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { json.raw(",") }
            json.string(method); json.raw(":"); json.number(count)
        }
        json.raw("}")
        json.raw(","); json.key("largestResponses"); json.raw("[")
        for (i, entry) in stats.largest.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{"); json.key("bodyBytes"); json.number(entry.bodyBytes)
            json.raw(","); json.key("transferBytes"); json.number(entry.transferBytes)
            json.raw(","); json.key("status"); json.number(entry.status)
            json.raw(","); json.key("method"); json.string(entry.method)
            json.raw(","); json.key("target"); json.string(entry.target)
            json.raw(","); json.key("time"); json.seconds(entry.time.secondsSinceEpoch)
            json.raw("}")
        }
        json.raw("]}")
    }

    private func groups(_ list: [HTTPGroup], into json: inout JSONText) {
        json.raw("[")
        for (i, group) in list.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{"); json.key("name"); json.string(group.name)
            json.raw(","); json.key("requests"); json.number(group.requests)
            json.raw(","); json.key("responses"); json.number(group.responses)
            for statusClass in 1...5 {
                json.raw(","); json.string("\(statusClass)xx"); json.raw(":"); json.number(group.statusClasses[statusClass])
            }
            json.raw(","); json.key("responseBytes"); json.number(group.responseBytes)
            json.raw(","); json.key("latency"); latency(group.latency, into: &json)
            json.raw("}")
        }
        json.raw("]")
    }

    private func latency(_ samples: LatencySamples, into json: inout JSONText) {
        let p = samples.percentiles([50, 90, 99])
        json.raw("{"); json.key("samples"); json.number(samples.samples.count + samples.dropped)
        for (name, value) in zip(["p50", "p90", "p99"], p) {
            json.raw(","); json.string(name); json.raw(":")
            if let value { json.seconds(value) } else { json.null() }
        }
        json.raw(","); json.key("max")
        if let maximum = samples.maximum { json.seconds(maximum) } else { json.null() }
        json.raw("}")
    }
}
