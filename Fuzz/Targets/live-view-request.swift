// The live view's own reading of what a client sends (Sources/LiveView: LiveRequest, RequestGuard, LiveViewToken,
// LiveViewBinding, SwitchRequest, compiled into this target: LiveView's NIO server and LinkConditioner are not in the
// fuzz build; NIO's parser reads the wire, these read its fields). Input: 1 options byte, then lines: the request
// target, header lines `Name: value` up to an empty line, then the body. Checks that nothing traps, that a refused
// request stays refused whatever else it carries, and that a request without the token is never let through.

import NIOConcurrencyHelpers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLiveViewRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    let text = String(decoding: input.rest(), as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let target = lines.isEmpty ? "/" : lines.removeFirst()
    var headers: [(name: String, value: String)] = []
    while let line = lines.first, !line.isEmpty {
        lines.removeFirst()
        let parts = line.split(separator: ":", maxSplits: 1)
        headers.append((String(parts.first ?? ""), parts.count > 1 ? String(parts[1].drop { $0 == " " }) : ""))
    }
    let body = Array(lines.dropFirst().joined(separator: "\n").utf8)
    let request = LiveRequest(method: options & 1 == 0 ? "GET" : "POST", target: target, headers: headers, body: body)
    _ = request.path
    _ = request.query
    _ = request.cookie("tapkit")
    let token = LiveViewToken(fixed: "0123456789abcdef0123456789abcdef")
    let address = ["127.0.0.1", "::1", "0.0.0.0", "192.0.2.1"][Int(options >> 1) & 3]
    let requestGuard = RequestGuard(token: token, address: address, port: 8383)
    let refusal = requestGuard.refusal(request)
    let presented = request.headerValues(RequestGuard.tokenHeader) + [request.cookie(RequestGuard.cookieName),
                                                                      request.queryValue("token")].compactMap { $0 }
    if !presented.contains(where: { $0 == token.description }) {
        precondition(refusal != nil, "a request without the token was let through: \(target) \(headers)")
    }
    _ = LiveViewBinding(parsing: target)
    _ = SwitchRequest.parse(body)
    return 0
}
