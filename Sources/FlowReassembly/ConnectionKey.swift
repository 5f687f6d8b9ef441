import PacketDecoding

/// The 4-tuple of a TCP connection, the same value for both directions: the endpoints are stored in a fixed
/// order (the "lower" one first) so a segment and its reply hash to the same dictionary entry.
struct ConnectionKey: Hashable, Sendable {
    var lower: Endpoint
    var upper: Endpoint

    init(_ a: Endpoint, _ b: Endpoint) {
        if endpointPrecedes(b, a) {
            lower = b
            upper = a
        } else {
            lower = a
            upper = b
        }
    }
}

/// A total order on endpoints, only for normalising keys: IPv4 before IPv6, then address, then port.
func endpointPrecedes(_ a: Endpoint, _ b: Endpoint) -> Bool {
    switch (a.address, b.address) {
    case (.v4(let x), .v4(let y)):
        return x != y ? x < y : a.port < b.port
    case (.v4, .v6):
        return true
    case (.v6, .v4):
        return false
    case (.v6(let xh, let xl), .v6(let yh, let yl)):
        if xh != yh { return xh < yh }
        if xl != yl { return xl < yl }
        return a.port < b.port
    }
}
