import HTTPModel
import PacketDecoding

/// Latencies of one group of exchanges, kept up to a bound; percentiles are nearest-rank over the samples kept.
public struct LatencySamples: Sendable, Hashable {
    public private(set) var samples: [Double] = []
    /// Samples not kept because the bound was reached (the maximum still counts them).
    public private(set) var dropped = 0
    public private(set) var maximum: Double?
    let limit: Int

    init(limit: Int) { self.limit = limit }

    mutating func add(_ seconds: Double) {
        maximum = max(maximum ?? seconds, seconds)
        if samples.count < limit { samples.append(seconds) } else { dropped += 1 }
    }

    /// Nearest-rank percentiles (p in 0...100) of the samples kept, in seconds.
    public func percentiles(_ ps: [Double]) -> [Double?] {
        guard !samples.isEmpty else { return ps.map { _ in nil } }
        let sorted = samples.sorted()
        return ps.map { p in
            let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
            return sorted[min(max(rank, 1), sorted.count) - 1]
        }
    }
}

/// Counts and latencies of one row of the HTTP table (a host, a method or a status class).
public struct HTTPGroup: Sendable, Hashable {
    public var name: String
    public var requests = 0
    public var responses = 0
    /// Final responses by class: index 1 is 1xx ... index 5 is 5xx; index 0 counts anything else.
    public var statusClasses = [Int](repeating: 0, count: 6)
    public var responseBytes = 0
    public var latency: LatencySamples

    init(name: String, sampleLimit: Int) {
        self.name = name
        latency = LatencySamples(limit: sampleLimit)
    }

    mutating func add(_ exchange: HTTPExchange, latency seconds: Double?) {
        if exchange.request != nil { requests += 1 }
        if let response = exchange.response {
            responses += 1
            let statusClass = (response.status ?? 0) / 100  // no numeric status: counted as "other"
            statusClasses[(1...5).contains(statusClass) ? statusClass : 0] += 1
            responseBytes += response.body.transferSize
        }
        if let seconds { latency.add(seconds) }
    }
}

/// One of the largest responses.
public struct LargeResponse: Sendable, Hashable {
    public var bodyBytes: Int
    public var transferBytes: Int
    /// The status code as a number, nil when it was not one or there was none.
    public var status: Int?
    /// The status code as sent (empty for HTTP/0.9).
    public var statusText: String
    public var method: String
    public var target: String
    public var time: Timestamp
}

/// HTTP exchanges summed per host, method and status class, with latency percentiles and the largest responses.
///
/// Counted as `tshark -z http,tree` counts them: every request (with its method), every response (by its status
/// code), and interim 1xx responses as responses of their own. Latency is from the request's last byte to the
/// response's first byte.
public struct HTTPStatistics: Sendable {
    public private(set) var all: HTTPGroup
    public private(set) var hosts: [HTTPGroup] = []
    public private(set) var methods: [HTTPGroup] = []
    /// HTTP/1.x responses per status code, interim (1xx) responses included, as `tshark -z http,tree` counts them
    /// (its http tree leaves HTTP/2 to the http2 dissector).
    public private(set) var http1StatusCodes: [Int: Int] = [:]
    /// HTTP/1.x responses whose status was not a number (`2XX`), by the code as sent, or had none (HTTP/0.9:
    /// `(none: HTTP/0.9)`): counted apart, never under a made-up code.
    public private(set) var http1NonNumericStatuses: [String: Int] = [:]
    /// HTTP/1.x requests per method, as `tshark -z http,tree` counts them.
    public private(set) var http1RequestMethods: [String: Int] = [:]
    public private(set) var largest: [LargeResponse] = []
    public private(set) var http2Exchanges = 0
    public private(set) var http3Exchanges = 0
    /// Exchanges of hosts past `maxHTTPHosts`, counted in the "(other hosts)" row.
    public private(set) var hostsOverLimit = 0
    private var hostSlots: [String: Int] = [:]
    private var methodSlots: [String: Int] = [:]
    private let limits: StatisticsLimits

    public init(limits: StatisticsLimits = StatisticsLimits()) {
        self.limits = limits
        all = HTTPGroup(name: "all", sampleLimit: limits.maxLatencySamples)
    }

    public var statusClasses: [HTTPGroup] {
        (1...5).map { statusClass in
            var group = HTTPGroup(name: "\(statusClass)xx", sampleLimit: 0)
            group.responses = all.statusClasses[statusClass]
            return group
        }
    }

    public mutating func add(_ exchange: HTTPExchange) {
        var latency: Double?
        if let request = exchange.request, let response = exchange.response {
            latency = max(0, response.start.seconds(since: request.end))
        }
        if exchange.http2 != nil { http2Exchanges += 1 }
        if exchange.http3 != nil { http3Exchanges += 1 }
        all.add(exchange, latency: latency)
        let host = exchange.request == nil ? exchange.server.address.description : ExchangeText.hostWithoutPort(exchange)
        hosts[hostSlot(host)].add(exchange, latency: latency)
        // An h2c upgrade's request and 101 are HTTP/1.1 messages; the rest of the stream is HTTP/2.
        let http1Request = exchange.request.map { !$0.version.hasPrefix("HTTP/2") && !$0.version.hasPrefix("HTTP/3") } ?? false
        if let request = exchange.request {
            if http1Request { http1RequestMethods[request.method, default: 0] += 1 }
            let slot: Int
            if let existing = methodSlots[request.method] {
                slot = existing
            } else {
                // Methods are few in practice; a hostile capture's made-up methods share one row past 64.
                let name = methodSlots.count < 64 ? request.method : "(other methods)"
                slot = methodSlots[name] ?? {
                    methods.append(HTTPGroup(name: name, sampleLimit: limits.maxLatencySamples))
                    return methods.count - 1
                }()
                methodSlots[name] = slot
            }
            methods[slot].add(exchange, latency: latency)
        }
        if let response = exchange.response {
            let http1Response = !response.version.hasPrefix("HTTP/2") && !response.version.hasPrefix("HTTP/3")
            if http1Response || http1Request {
                for interim in response.interim { http1StatusCodes[interim.status, default: 0] += 1 }
            }
            if http1Response {
                if let status = response.status {
                    http1StatusCodes[status, default: 0] += 1
                } else {
                    http1NonNumericStatuses[response.statusText.isEmpty ? "(none: \(response.version))" : response.statusText,
                                           default: 0] += 1
                }
            }
            noteSize(of: exchange, response)
        }
    }

    private mutating func hostSlot(_ host: String) -> Int {
        if let slot = hostSlots[host] { return slot }
        var name = host
        if hosts.count >= limits.maxHTTPHosts {
            hostsOverLimit += 1
            name = "(other hosts)"
            if let slot = hostSlots[name] { return slot }
        }
        hosts.append(HTTPGroup(name: name, sampleLimit: limits.maxLatencySamples))
        hostSlots[name] = hosts.count - 1
        return hosts.count - 1
    }

    private mutating func noteSize(of exchange: HTTPExchange, _ response: HTTPResponse) {
        let size = response.body.size
        guard largest.count < limits.largestResponses || size > (largest.last?.bodyBytes ?? 0) else { return }
        let entry = LargeResponse(bodyBytes: size, transferBytes: response.body.transferSize, status: response.status,
                                  statusText: response.statusText,
                                  method: exchange.request?.method ?? "", target: ExchangeText.hostAndTarget(exchange),
                                  time: response.start)
        let position = largest.firstIndex { $0.bodyBytes < size } ?? largest.count
        largest.insert(entry, at: position)
        if largest.count > limits.largestResponses { largest.removeLast() }
    }
}
