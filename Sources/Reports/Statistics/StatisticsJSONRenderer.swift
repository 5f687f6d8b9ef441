import PacketDecoding

/// `capture --stats --json`: one JSON object with the same tables as the text view, numbers unformatted
/// (bytes as integers, times in seconds).
public struct StatisticsJSONRenderer {
    public init() {}

    public func render(_ stats: TrafficStatistics) -> String {
        var json = TextOutput(fileDescriptor: -1)
        json.append("{")
        json.key("packets"); json.number(stats.packets)
        json.append(","); json.key("bytes"); json.number(stats.bytes)
        json.append(","); json.key("first")
        if let first = stats.first { json.time(first) } else { json.null() }
        json.append(","); json.key("last")
        if let last = stats.last { json.time(last) } else { json.null() }
        json.append(","); json.key("protocols"); hierarchy(stats.hierarchy.tree, into: &json)
        json.append(","); json.key("conversations"); json.append("{")
        json.key("tcp"); conversations(stats.conversations.tcp, start: stats.first, into: &json)
        json.append(","); json.key("udp"); conversations(stats.conversations.udp, start: stats.first, into: &json)
        json.append("}")
        json.append(","); json.key("endpoints"); json.append("{")
        json.key("ip"); endpoints(stats.addresses.endpoints, into: &json)
        json.append(","); json.key("tcp"); endpoints(stats.conversations.tcp.endpoints(), into: &json)
        json.append(","); json.key("udp"); endpoints(stats.conversations.udp.endpoints(), into: &json)
        json.append("}")
        json.append(","); json.key("http"); http(stats.http, into: &json)
        json.append(","); json.key("notTabled"); json.append("{")
        json.key("conversationPackets"); json.number(stats.conversations.packetsNotTabled)
        json.append(","); json.key("addressPackets"); json.number(stats.addresses.packetsNotTabled)
        json.append(","); json.key("httpExchangesInOtherHosts"); json.number(stats.http.hostsOverLimit)
        json.append("}}\n")
        return json.text
    }

    private func hierarchy(_ nodes: [ProtocolHierarchy.Node], into json: inout TextOutput) {
        json.append("[")
        for (i, node) in nodes.enumerated() {
            if i > 0 { json.append(",") }
            json.append("{"); json.key("protocol"); json.string(node.layer.name)
            json.append(","); json.key("frames"); json.number(node.frames)
            json.append(","); json.key("bytes"); json.number(node.bytes)
            if !node.children.isEmpty { json.append(","); json.key("children"); hierarchy(node.children, into: &json) }
            json.append("}")
        }
        json.append("]")
    }

    private func conversations(_ list: [Conversation], start: Timestamp?, into json: inout TextOutput) {
        json.append("[")
        for (i, c) in list.enumerated() {
            if i > 0 { json.append(",") }
            json.append("{"); json.key("index"); json.number(c.index)
            json.append(","); json.key("a"); json.endpoint(c.a)
            json.append(","); json.key("b"); json.endpoint(c.b)
            json.append(","); json.key("framesAToB"); json.number(c.framesAToB)
            json.append(","); json.key("bytesAToB"); json.number(c.bytesAToB)
            json.append(","); json.key("framesBToA"); json.number(c.framesBToA)
            json.append(","); json.key("bytesBToA"); json.number(c.bytesBToA)
            json.append(","); json.key("frames"); json.number(c.frames)
            json.append(","); json.key("bytes"); json.number(c.bytes)
            json.append(","); json.key("relativeStart"); json.seconds(start.map { c.first.seconds(since: $0) } ?? 0)
            json.append(","); json.key("duration"); json.seconds(c.duration)
            json.append("}")
        }
        json.append("]")
    }

    private func endpoints(_ list: [TrafficEndpoint], into json: inout TextOutput) {
        json.append("[")
        for (i, e) in list.enumerated() {
            if i > 0 { json.append(",") }
            json.append("{"); json.key("address"); json.string(e.address.description)
            if let port = e.port { json.append(","); json.key("port"); json.number(Int(port)) }
            json.append(","); json.key("frames"); json.number(e.frames)
            json.append(","); json.key("bytes"); json.number(e.bytes)
            json.append(","); json.key("txFrames"); json.number(e.txFrames)
            json.append(","); json.key("txBytes"); json.number(e.txBytes)
            json.append(","); json.key("rxFrames"); json.number(e.rxFrames)
            json.append(","); json.key("rxBytes"); json.number(e.rxBytes)
            json.append("}")
        }
        json.append("]")
    }

    private func http(_ stats: HTTPStatistics, into json: inout TextOutput) {
        json.append("{"); json.key("requests"); json.number(stats.all.requests)
        json.append(","); json.key("responses"); json.number(stats.all.responses)
        json.append(","); json.key("http2Exchanges"); json.number(stats.http2Exchanges)
        json.append(","); json.key("http3Exchanges"); json.number(stats.http3Exchanges)
        json.append(","); json.key("latency"); latency(stats.all.latency, into: &json)
        json.append(","); json.key("hosts"); groups(stats.hosts, into: &json)
        json.append(","); json.key("methods"); groups(stats.methods, into: &json)
        json.append(","); json.key("statusClasses"); json.append("{")
        for statusClass in 1...5 {
            if statusClass > 1 { json.append(",") }
            json.string("\(statusClass)xx"); json.append(":"); json.number(stats.all.statusClasses[statusClass])
        }
        json.append(","); json.key("other"); json.number(stats.all.statusClasses[0])
        json.append("}")
        json.append(","); json.key("http1StatusCodes"); json.append("{")
        for (i, (code, count)) in stats.http1StatusCodes.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { json.append(",") }
            json.string(String(code)); json.append(":"); json.number(count)
        }
        json.append("}")
        json.append(","); json.key("http1NonNumericStatuses"); json.append("{")
        for (i, (code, count)) in stats.http1NonNumericStatuses.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { json.append(",") }
            json.string(code); json.append(":"); json.number(count)
        }
        json.append("}")
        json.append(","); json.key("http1RequestMethods"); json.append("{")
        for (i, (method, count)) in stats.http1RequestMethods.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { json.append(",") }
            json.string(method); json.append(":"); json.number(count)
        }
        json.append("}")
        json.append(","); json.key("largestResponses"); json.append("[")
        for (i, entry) in stats.largest.enumerated() {
            if i > 0 { json.append(",") }
            json.append("{"); json.key("bodyBytes"); json.number(entry.bodyBytes)
            json.append(","); json.key("transferBytes"); json.number(entry.transferBytes)
            json.append(","); json.key("status")
            if let status = entry.status { json.number(status) } else { json.null() }
            json.append(","); json.key("status_text"); json.string(entry.statusText)
            json.append(","); json.key("method"); json.string(entry.method)
            json.append(","); json.key("target"); json.string(entry.target)
            json.append(","); json.key("time"); json.time(entry.time)
            json.append("}")
        }
        json.append("]}")
    }

    private func groups(_ list: [HTTPGroup], into json: inout TextOutput) {
        json.append("[")
        for (i, group) in list.enumerated() {
            if i > 0 { json.append(",") }
            json.append("{"); json.key("name"); json.string(group.name)
            json.append(","); json.key("requests"); json.number(group.requests)
            json.append(","); json.key("responses"); json.number(group.responses)
            for statusClass in 1...5 {
                json.append(","); json.string("\(statusClass)xx"); json.append(":"); json.number(group.statusClasses[statusClass])
            }
            json.append(","); json.key("responseBytes"); json.number(group.responseBytes)
            json.append(","); json.key("latency"); latency(group.latency, into: &json)
            json.append("}")
        }
        json.append("]")
    }

    private func latency(_ samples: LatencySamples, into json: inout TextOutput) {
        let p = samples.percentiles([50, 90, 99])
        json.append("{"); json.key("samples"); json.number(samples.samples.count + samples.dropped)
        for (name, value) in zip(["p50", "p90", "p99"], p) {
            json.append(","); json.string(name); json.append(":")
            if let value { json.seconds(value) } else { json.null() }
        }
        json.append(","); json.key("max")
        if let maximum = samples.maximum { json.seconds(maximum) } else { json.null() }
        json.append("}")
    }
}
