import FlowReassembly
import PacketDecoding

/// Header fields in wire order, names and values as sent (UTF-8, or Latin-1 turned into UTF-8 when a name or
/// value is not valid UTF-8).
///
/// Every field is kept in one byte array, each as its name's and its value's lengths followed by the name and the
/// value: one allocation per head instead of one String per name or value longer than 15 bytes (12 of the 39
/// allocations per exchange on a browsing capture). Renderers read the bytes directly (`withRawFields`); Strings
/// are made only when asked for.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    /// Field after field: the name's length and the value's (`UInt32` each, native byte order), name, value.
    /// The same fields in the same order are the same bytes, so equality and hashing compare these.
    private var storage: [UInt8] = []
    public private(set) var count = 0
    /// Where the last field's lengths are in `storage`, for obsolete line folding.
    private var lastField = 0
    private static let lengthsSize = 8

    /// One field: its name at `start`, its value right after the name.
    private struct Span {
        var start: Int
        var nameLength: Int
        var valueLength: Int
        var name: Range<Int> { start..<(start + nameLength) }
        var value: Range<Int> { (start + nameLength)..<(start + nameLength + valueLength) }

        /// The field whose lengths are at `offset` in `storage`.
        init(at offset: Int, in storage: UnsafeRawBufferPointer) {
            start = offset + HTTPHeaders.lengthsSize
            nameLength = Int(storage.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            valueLength = Int(storage.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        }
    }

    public init() {}

    public init(_ fields: [(name: String, value: String)]) {
        var bytes = 0
        for field in fields { bytes += field.name.utf8.count + field.value.utf8.count }
        reserveCapacity(bytes: bytes, fields: fields.count)
        for field in fields { append(name: field.name, value: field.value) }
    }

    /// Room for `fields` fields whose names and values come to at most `bytes` bytes.
    package mutating func reserveCapacity(bytes: Int, fields: Int) {
        storage.reserveCapacity(bytes + fields * Self.lengthsSize)
    }

    public var isEmpty: Bool { count == 0 }

    /// The fields as Strings, made on each call (renderers use `withRawFields`).
    public var fields: [(name: String, value: String)] { map { $0 } }

    public mutating func append(name: String, value: String) {
        let field = beginField()
        storage.append(contentsOf: name.utf8)
        storage.append(contentsOf: value.utf8)
        setLengths(of: field, name: name.utf8.count, value: value.utf8.count)
    }

    public mutating func append(contentsOf other: [(name: String, value: String)]) {
        for field in other { append(name: field.name, value: field.value) }
    }

    /// Appends a field from the wire: each part kept as UTF-8 when it is, else read as Latin-1.
    package mutating func append(wireName name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let field = beginField()
        let nameLength = appendText(name)
        setLengths(of: field, name: nameLength, value: appendText(value))
    }

    /// Continues the last field's value from the wire (obsolete line folding): a space, then `more`.
    package mutating func continueLastValue(wire more: UnsafeRawBufferPointer) {
        guard count > 0 else { return }
        let last = storage.withUnsafeBytes { Span(at: lastField, in: $0) }
        storage.append(UInt8(ascii: " "))
        setLengths(of: lastField, name: last.nameLength, value: last.valueLength + 1 + appendText(more))
    }

    /// Starts a field with room for its lengths; returns where they go.
    private mutating func beginField() -> Int {
        lastField = storage.count
        count += 1
        withUnsafeBytes(of: UInt64(0)) { storage.append(contentsOf: $0) }
        return lastField
    }

    private mutating func setLengths(of field: Int, name: Int, value: Int) {
        storage.withUnsafeMutableBytes {
            $0.storeBytes(of: UInt32(name), toByteOffset: field, as: UInt32.self)
            $0.storeBytes(of: UInt32(value), toByteOffset: field + 4, as: UInt32.self)
        }
    }

    /// Appends `text` as UTF-8 (Latin-1 transcoded when it is not valid UTF-8); returns the bytes appended.
    private mutating func appendText(_ text: UnsafeRawBufferPointer) -> Int {
        if Self.isASCII(text) || String(validating: text, as: UTF8.self) != nil {
            storage.append(contentsOf: text)
            return text.count
        }
        let before = storage.count
        for byte in text {
            if byte < 0x80 {
                storage.append(byte)
            } else {
                storage.append(0xc0 | (byte >> 6))
                storage.append(0x80 | (byte & 0x3f))
            }
        }
        return storage.count - before
    }

    /// No byte with the high bit set; 8 bytes at a time.
    package static func isASCII(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= buffer.count {
            high |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < buffer.count {
            high |= UInt64(buffer[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Calls `body` with each field in wire order, and the storage it points into, until `body` returns false.
    private func walk(_ body: (Span, UnsafeRawBufferPointer) -> Bool) {
        storage.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let span = Span(at: offset, in: bytes)
                if !body(span, bytes) { return }
                offset = span.value.upperBound
            }
        }
    }

    /// Calls `body` with each field's name and value bytes (valid UTF-8), in wire order.
    public func withRawFields(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) {
        walk { span, bytes in
            body(UnsafeRawBufferPointer(rebasing: bytes[span.name]), UnsafeRawBufferPointer(rebasing: bytes[span.value]))
            return true
        }
    }

    /// Each value of the fields named `name` (compared ASCII case-insensitively, without allocating), as bytes,
    /// until `body` returns false.
    private func forEachValue(of name: String, _ body: (UnsafeRawBufferPointer) -> Bool) {
        var name = name
        name.withUTF8 { wanted in
            walk { span, bytes in
                guard Self.hasName(span, in: bytes, wanted) else { return true }
                return body(UnsafeRawBufferPointer(rebasing: bytes[span.value]))
            }
        }
    }

    private static func hasName(_ span: Span, in storage: UnsafeRawBufferPointer, _ wanted: UnsafeBufferPointer<UInt8>)
        -> Bool {
        guard wanted.count == span.nameLength else { return false }
        var offset = span.start
        for q in wanted {
            let p = storage[offset]
            offset += 1
            if p == q { continue }
            guard p | 0x20 == q | 0x20, (p | 0x20) >= 0x61, (p | 0x20) <= 0x7a else { return false }
        }
        return true
    }

    /// The first value of a header, name compared case-insensitively.
    public subscript(name: String) -> String? {
        var first: String?
        forEachValue(of: name) { value in
            first = String(decoding: value, as: UTF8.self)
            return false
        }
        return first
    }

    /// Every value of a header, each comma-separated list split into its elements, lower-cased, with the spaces
    /// and tabs around them removed (RFC 9110's list syntax, read byte by byte); empty elements are left out.
    public func tokens(_ name: String) -> [String] {
        var result: [String] = []
        forEachValue(of: name) { value in
            var start = 0
            while start < value.count {
                var end = start
                while end < value.count && value[end] != UInt8(ascii: ",") { end += 1 }
                var low = start, high = end
                while low < high && (value[low] == 0x20 || value[low] == 0x09) { low += 1 }
                while high > low && (value[high - 1] == 0x20 || value[high - 1] == 0x09) { high -= 1 }
                if low < high {
                    result.append(String(decoding: UnsafeRawBufferPointer(rebasing: value[low..<high]), as: UTF8.self)
                                      .lowercased())
                }
                start = end + 1
            }
            return true
        }
        return result
    }

    /// The header's value when it appears exactly once as a plain decimal number (digits only, no leading zero,
    /// within `Int`), read without allocating; nil otherwise (absent, repeated, a list, signs, spaces, overflow),
    /// for the caller to read through `values` and name what is odd.
    package func plainDecimalValue(_ name: String) -> Int? {
        var result: Int?
        var seen = 0
        forEachValue(of: name) { digits in
            seen += 1
            guard seen == 1, !digits.isEmpty, digits.count == 1 || digits.first != 0x30 else {
                result = nil
                return false
            }
            var value = 0
            for byte in digits {
                guard byte >= 0x30 && byte <= 0x39 else { return false }
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 0x30))
                if overflow1 || overflow2 { return false }
                value = sum
            }
            result = value
            return true
        }
        return result
    }

    /// Every value of a header, raw.
    public func values(_ name: String) -> [String] {
        var result: [String] = []
        forEachValue(of: name) { value in
            result.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return result
    }

    public struct Iterator: IteratorProtocol {
        fileprivate let headers: HTTPHeaders
        fileprivate var offset = 0
        public mutating func next() -> (name: String, value: String)? {
            guard offset < headers.storage.count else { return nil }
            return headers.storage.withUnsafeBytes { bytes in
                let span = Span(at: offset, in: bytes)
                offset = span.value.upperBound
                return (String(decoding: UnsafeRawBufferPointer(rebasing: bytes[span.name]), as: UTF8.self),
                        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[span.value]), as: UTF8.self))
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(headers: self) }
    public var underestimatedCount: Int { count }

    /// Field by field, byte for byte.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.count == rhs.count && lhs.storage == rhs.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        storage.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// A message body after de-chunking and content decoding.
public struct HTTPBody: Sendable, Hashable {
    /// Size in bytes of `sha256`'s input: the decoded body, or the bytes as received when decoding failed.
    public var size: Int
    /// SHA-256 of the decoded body (of the bytes as received when decoding failed); nil when not computed
    /// (`HTTPDecoderLimits.hashBodies` off).
    public var digest: SHA256Digest?
    /// `digest` as 64 hex digits, empty when there is none.
    public var sha256: String { digest?.hex ?? "" }
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

    public init(size: Int, digest: SHA256Digest?, encoding: [String], transferSize: Int, kept: [UInt8],
                keptIsPartial: Bool, contentType: String?) {
        self.size = size
        self.digest = digest
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
    /// The status code as a number; nil when what was sent is not one (`HTTP/1.1 2XX`) or nothing was sent (an
    /// HTTP/0.9 response has no status line). Never filled in.
    public var status: Int?
    /// The status code exactly as sent (`200`, `2XX`), empty when there was none.
    public var statusText: String
    /// The reason phrase as sent, empty when there was none.
    public var reason: String
    public var version: String
    public var headers: HTTPHeaders
    public var body: HTTPBody
    public var headSize: Int
    public var interim: [HTTPInterimResponse]
    public var start: Timestamp
    public var end: Timestamp

    /// `statusText` defaults to `status` written out (empty when nil).
    public init(status: Int?, statusText: String? = nil, reason: String, version: String, headers: HTTPHeaders,
                body: HTTPBody, headSize: Int, interim: [HTTPInterimResponse], start: Timestamp, end: Timestamp) {
        self.status = status
        self.statusText = statusText ?? status.map(String.init) ?? ""
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
    public var warnings: [HTTPWarning]
    /// Set when a 101 response (or a 2xx to CONNECT) turned the connection into something else; the bytes that
    /// follow are not parsed as HTTP. Values: the Upgrade header (`websocket`, `h2c`) or `tunnel` for CONNECT.
    public var upgrade: String?
    /// Set when a decoder took the connection over after `upgrade` (WebSocket messages follow as their own events),
    /// or reads what a CONNECT tunnel carries (TLS decrypted with a key log: its exchanges follow).
    public var upgradeDecoded = false
    /// Set when the exchange was one HTTP/2 stream; nil for HTTP/1.x.
    public var http2: HTTP2StreamFacts?
    /// Set when the exchange was one HTTP/3 request stream (or server push); nil for HTTP/1.x and HTTP/2.
    public var http3: HTTP3StreamFacts?
    /// Set when the exchange was a gRPC call.
    public var grpc: GRPCCallFacts?

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, request: HTTPRequest?,
                response: HTTPResponse?, complete: Bool, warnings: [HTTPWarning], upgrade: String?) {
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
        /// A QUIC connection (HTTP/3 or another QUIC application): its version, the server name and ALPN its
        /// handshake shows (the client's offer, or the server's choice once decrypted), and whether keys were found.
        case quic(version: UInt32, serverName: String?, alpn: [String], keys: QUICKeys)
        /// Bytes of a TCP connection that reached the HTTP/1.x decoder but made no exchange (not HTTP, or junk
        /// after a failed parse), counted per direction; `time` is when the first of them came.
        case notParsedAsHTTP(clientBytes: Int, serverBytes: Int)
    }

    /// Whether a QUIC connection's Handshake and 1-RTT packets could be read.
    public enum QUICKeys: Sendable, Hashable {
        /// No key log was given: only the Initial packets (keyed by the connection ID) were read.
        case noKeyLog
        /// A key log was given, but it holds no secrets for this connection's ClientHello.
        case notLogged
        /// The key log's secrets opened the connection's packets.
        case decrypted
        /// A version TapKit does not read (the version is on the line): nothing in it is decoded, key log or not.
        case unknownVersion
    }
    public var connection: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    public var kind: Kind
    public var time: Timestamp
    /// A QUIC connection's transport parameters, each side's as far as its handshake was read.
    public var transportParameters: QUICTransportParameters?
    /// A QUIC connection's resumption and 0-RTT, as far as its handshake was read.
    public var resumption: QUICResumption?
    /// A QUIC connection's first connection IDs.
    public var connectionIDs: QUICConnectionIDs?

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, kind: Kind, time: Timestamp,
                transportParameters: QUICTransportParameters? = nil, resumption: QUICResumption? = nil,
                connectionIDs: QUICConnectionIDs? = nil) {
        self.connection = connection
        self.client = client
        self.server = server
        self.kind = kind
        self.time = time
        self.transportParameters = transportParameters
        self.resumption = resumption
        self.connectionIDs = connectionIDs
    }
}

/// What the HTTP decoder reports, in the order things complete.
public enum HTTPEvent: Sendable, Hashable {
    case exchange(HTTPExchange)
    case notice(ConnectionNotice)
    /// Something not tied to one exchange (a limit was hit, reassembly lost data on an unknown connection).
    case warning(connection: ConnectionID?, warning: AnyConnectionWarning, time: Timestamp)
    /// A WebSocket message on a connection upgraded by a 101 (only with a takeover decoder plugged in).
    case webSocket(WebSocketMessage)
}
