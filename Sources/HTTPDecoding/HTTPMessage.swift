import FlowReassembly
import PacketDecoding

/// Header fields in wire order, names and values as sent (values decoded as UTF-8, or Latin-1 when not UTF-8).
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    public var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// The first value of a header, name compared case-insensitively.
    public subscript(name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of a header, each comma-separated list split into its trimmed, lower-cased elements.
    public func tokens(_ name: String) -> [String] {
        var result: [String] = []
        for field in fields where Self.sameName(field.name, name) {
            for part in field.value.split(separator: ",") {
                let token = part.trimmingASCIIWhitespace().lowercased()
                if !token.isEmpty { result.append(token) }
            }
        }
        return result
    }

    /// Every value of a header, raw.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// ASCII case-insensitive comparison of field names, without allocating.
    static func sameName(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        if a == b { return true }  // the usual spelling: one memcmp instead of a byte loop
        for (p, q) in zip(x, y) where p != q {
            guard p | 0x20 == q | 0x20, (p | 0x20) >= 0x61, (p | 0x20) <= 0x7a else { return false }
        }
        return true
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0 == $1 }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields { hasher.combine(field.name); hasher.combine(field.value) }
    }
}

/// A message body after de-chunking and content decoding.
public struct HTTPBody: Sendable, Hashable {
    /// Size in bytes of `sha256`'s input: the decoded body, or the bytes as received when decoding failed.
    public var size: Int
    /// SHA-256 (hex) of the decoded body.
    public var sha256: String
    /// Content codings removed, in the order they were removed (`gzip`, `br`, ...). Empty when none or on failure.
    public var encoding: [String]
    /// Body bytes as transferred (after de-chunking, before content decoding).
    public var transferSize: Int
    /// The first bytes of the decoded body, up to the limit the decoder was given, for display and HAR.
    public var kept: [UInt8]
    /// Whether `kept` holds less than the whole body.
    public var keptIsPartial: Bool
    /// The Content-Type value, when there was one.
    public var contentType: String?

    public init(size: Int, sha256: String, encoding: [String], transferSize: Int, kept: [UInt8],
                keptIsPartial: Bool, contentType: String?) {
        self.size = size
        self.sha256 = sha256
        self.encoding = encoding
        self.transferSize = transferSize
        self.kept = kept
        self.keptIsPartial = keptIsPartial
        self.contentType = contentType
    }
}

public struct HTTPRequest: Sendable, Hashable {
    public var method: String
    /// The request-target exactly as sent (`/path?query`, or absolute form through a proxy, or `host:port` for CONNECT).
    public var uri: String
    /// `HTTP/1.1`, `HTTP/1.0`.
    public var version: String
    public var headers: HTTPHeaders
    public var body: HTTPBody
    /// Bytes of the start line and headers, blank line included.
    public var headSize: Int
    public var start: Timestamp
    public var end: Timestamp

    public init(method: String, uri: String, version: String, headers: HTTPHeaders, body: HTTPBody, headSize: Int,
                start: Timestamp, end: Timestamp) {
        self.method = method
        self.uri = uri
        self.version = version
        self.headers = headers
        self.body = body
        self.headSize = headSize
        self.start = start
        self.end = end
    }
}

/// A 1xx response that came before the final one (100 Continue, 103 Early Hints).
public struct HTTPInterimResponse: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders
    public var time: Timestamp

    public init(status: Int, reason: String, headers: HTTPHeaders, time: Timestamp) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.time = time
    }
}

public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var version: String
    public var headers: HTTPHeaders
    public var body: HTTPBody
    public var headSize: Int
    public var interim: [HTTPInterimResponse]
    public var start: Timestamp
    public var end: Timestamp

    public init(status: Int, reason: String, version: String, headers: HTTPHeaders, body: HTTPBody, headSize: Int,
                interim: [HTTPInterimResponse], start: Timestamp, end: Timestamp) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.body = body
        self.headSize = headSize
        self.interim = interim
        self.start = start
        self.end = end
    }
}

/// One request paired with its response, as seen on one connection.
public struct HTTPExchange: Sendable, Hashable {
    public var connection: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    /// Nil only when a response arrived whose request was never seen (capture started mid-connection, or a gap).
    public var request: HTTPRequest?
    /// Nil when no response was seen before the connection or the capture ended.
    public var response: HTTPResponse?
    /// Both messages seen whole, with no gaps, truncation or decode failures.
    public var complete: Bool
    /// Gaps, truncation, decode failures, in the order they happened.
    public var warnings: [String]
    /// Set when a 101 response (or a 2xx to CONNECT) turned the connection into something else; the bytes that
    /// follow are not parsed as HTTP. Values: the Upgrade header (`websocket`, `h2c`) or `tunnel` for CONNECT.
    public var upgrade: String?
    /// Set when a decoder took the connection over after `upgrade` (WebSocket messages follow as their own events),
    /// or reads what a CONNECT tunnel carries (TLS decrypted with a key log: its exchanges follow).
    public var upgradeDecoded = false
    /// Set when the exchange was one HTTP/2 stream; nil for HTTP/1.x.
    public var http2: HTTP2StreamFacts?
    /// Set when the exchange was a gRPC call.
    public var grpc: GRPCCallFacts?

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, request: HTTPRequest?,
                response: HTTPResponse?, complete: Bool, warnings: [String], upgrade: String?) {
        self.connection = connection
        self.client = client
        self.server = server
        self.request = request
        self.response = response
        self.complete = complete
        self.warnings = warnings
        self.upgrade = upgrade
    }

    /// When the exchange began: the request's first byte, else the response's.
    public var time: Timestamp { request?.start ?? response?.start ?? Timestamp(seconds: 0, nanoseconds: 0) }
}

/// A connection that is not HTTP/1.x but is worth a line of its own.
public struct ConnectionNotice: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// A TLS ClientHello: the server name it asked for (SNI) and the application protocols it offered (ALPN).
        case tls(serverName: String?, alpn: [String])
        /// The HTTP/2 connection preface in cleartext (prior knowledge h2c).
        case http2Preface
        /// A QUIC Initial packet (HTTP/3 or another QUIC application): labelled, not decoded.
        case quic(version: UInt32, serverName: String?, alpn: [String])
    }
    public var connection: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    public var kind: Kind
    public var time: Timestamp

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, kind: Kind, time: Timestamp) {
        self.connection = connection
        self.client = client
        self.server = server
        self.kind = kind
        self.time = time
    }
}

/// What the HTTP decoder reports, in the order things complete.
public enum HTTPEvent: Sendable, Hashable {
    case exchange(HTTPExchange)
    case notice(ConnectionNotice)
    /// Something not tied to one exchange (a limit was hit, reassembly lost data on an unknown connection).
    case warning(connection: ConnectionID?, message: String, time: Timestamp)
    /// A WebSocket message on a connection upgraded by a 101 (only with a takeover decoder plugged in).
    case webSocket(WebSocketMessage)
}

extension StringProtocol {
    func trimmingASCIIWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return String(view)
    }
}
