import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A deliberately plain HTTP client over a socket: it sends exactly the bytes given (any Host, Origin or broken
/// request line, which URLSession would not send), and reads the answer to the end of the connection.
public struct RawHTTP: Sendable {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    public let port: Int

    public init(port: Int) { self.port = port }

    /// Sends `raw` and reads until the server closes (at most 5 s).
    public func exchange(_ raw: [UInt8]) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to port \(port): errno \(errno)") }
        var sent = 0
        while sent < raw.count {
            let count = raw[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }  // the server may close early (a refused body): read what it said
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        // A quiet 5 s ends the read, unless the answer's Content-Length says more is coming: a loaded machine (CI
        // with every suite at once) can stall a large answer longer, and a cut body must not pass for the answer.
        let deadline = Date().addingTimeInterval(60)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            if count < 0 && (errno == EINTR || errno == EAGAIN && Self.isShort(received) && Date() < deadline) { continue }
            break
        }
        return received
    }

    /// Whether `bytes` hold a head whose Content-Length is more than the body received so far.
    static func isShort(_ bytes: [UInt8]) -> Bool {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return !bytes.isEmpty }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return bytes.count - end.upperBound < length
    }

    /// A request with Host (this server unless given), Connection: close, the token header when given, and `extra`.
    public func request(_ target: String, method: String = "GET", token: String?, host: String? = nil,
                 extra: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        if let token { head += "X-TapKit-Token: \(token)\r\n" }
        for (name, value) in extra { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return try Self.parse(exchange(Array(head.utf8) + body))
    }

    public static func parse(_ bytes: [UInt8]) throws -> Response {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw Failure(description: "no complete response head in \(bytes.count) bytes: \(String(decoding: bytes, as: UTF8.self))")
        }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        let headers = lines.dropFirst().map { line -> (String, String) in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
        return Response(status: status, headers: headers, body: Array(bytes[end.upperBound...]))
    }
}
