import Foundation
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// What the forwarder did with the queries it got, by outcome.
public struct DNSForwarderCounts: Sendable, Equatable, Codable {
    public var nxdomain = 0
    public var servfail = 0
    public var refused = 0
    /// Queries given no answer (the `timeout` fault).
    public var unanswered = 0
    /// Queries held back by a `delay` fault (then forwarded).
    public var delayed = 0
    /// Answers relayed from the host's resolvers.
    public var forwarded = 0
    /// Queries or connections over the forwarder's limits, or that no upstream answered in time.
    public var lost = 0
}

/// The resolver a sandbox with DNS faults talks to: on the host end's address, at a port of its own (the sandbox's
/// nft table sends the command's UDP and TCP port 53 to the host end there), in the `condition run` process, for as
/// long as the command runs. A query whose name has a fault is answered here (NXDOMAIN, SERVFAIL, REFUSED), left
/// unanswered, or held back; every other query, and any message that is not a plain one-question query, goes
/// unchanged to the host's own name servers (its resolv.conf, loopback ones included: this runs in the host's
/// namespace), and the answer comes back unchanged, over the transport the command used (a truncated UDP answer
/// makes the command's resolver ask again over TCP, as it would ask the host's server).
///
/// Bounded: at most `maximumWorkers` queries being forwarded or held and TCP connections at once (more are
/// dropped and counted, and the client asks again), each upstream try `upstreamTimeout`, a TCP connection closed
/// after `tcpIdleTimeout` without a query; messages up to 65,535 bytes.
public final class SandboxDNSForwarder: @unchecked Sendable {
    public static let maximumWorkers = 64
    public static let upstreamTimeout: Double = 2
    public static let tcpIdleTimeout: Double = 10

    public let address: String
    public let port: UInt16
    /// The faults in force, asked at each query (a switch of the sandbox's profile may change them).
    private let faults: @Sendable () -> [DNSFault]
    let upstreams: [IPEndpoint]
    private let udp: Int32
    private let tcp: Int32
    private let lock = NSLock()
    private var counts = DNSForwarderCounts()
    private var workers = 0
    private var stopped = false
    private var listeners: [JoinableThread] = []
    /// Where the counts are kept for other processes (`condition sandboxes`), rewritten on every change.
    private let countsFile: URL?
    private let publishing = NSLock()
    /// Milliseconds every query is held before it is handled (the profile's DNS delay), asked at each query.
    private let dnsDelay: @Sendable () -> UInt64

    /// Listens on UDP and TCP `address`, at a port the kernel picks (the same for both).
    public init(address: String, faults: @escaping @Sendable () -> [DNSFault], upstreams: [String], countsFile: URL? = nil,
                dnsDelay: @escaping @Sendable () -> UInt64 = { 0 }) throws {
        self.address = address
        self.faults = faults
        self.countsFile = countsFile
        self.dnsDelay = dnsDelay
        self.upstreams = upstreams.compactMap { IPEndpoint($0, port: 53) }
        var bound: (udp: Int32, tcp: Int32, port: UInt16)?
        var lastError: Error?
        // The kernel picks a free UDP port; the same TCP port is usually free too, else try again.
        for _ in 0..<20 where bound == nil {
            do { bound = try Self.bindPair(address) } catch { lastError = error }
        }
        guard let bound else { throw lastError ?? SystemCallError(call: "bind", errno: EADDRINUSE, subject: address) }
        (udp, tcp, port) = bound
        publish()
        listeners.append(try JoinableThread { [self] in serveUDP() })
        listeners.append(try JoinableThread { [self] in acceptTCP() })
    }

    static func bindPair(_ address: String) throws -> (udp: Int32, tcp: Int32, port: UInt16) {
        guard let any = IPEndpoint(address, port: 0) else { throw SystemCallError(call: "inet_pton", errno: EINVAL, subject: address) }
        let udp = try SystemCall.retrying("socket(SOCK_DGRAM)") { socket(any.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            try SystemCall.retrying("bind(UDP)", subject: address) { any.withSockaddr { bind(udp, $0, $1) } }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            try SystemCall.retrying("getsockname") {
                withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(udp, $0, &length) } }
            }
            let port = IPEndpoint(storage: storage, length: length).port
            let tcp = try SystemCall.retrying("socket(SOCK_STREAM)") { socket(any.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
            do {
                var one: Int32 = 1
                setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
                let endpoint = IPEndpoint(address, port: port)!
                try SystemCall.retrying("bind(TCP)", subject: "\(address):\(port)") { endpoint.withSockaddr { bind(tcp, $0, $1) } }
                try SystemCall.retrying("listen") { listen(tcp, 16) }
                return (udp, tcp, port)
            } catch {
                close(tcp)
                throw error
            }
        } catch {
            close(udp)
            throw error
        }
    }

    public var counters: DNSForwarderCounts { lock.withLock { counts } }

    /// Stops listening and waits (up to 3 s) for queries in flight; safe to call more than once.
    public func stop() {
        let threads = lock.withLock { () -> [JoinableThread] in
            defer { stopped = true; listeners = [] }
            return stopped ? [] : listeners
        }
        guard !threads.isEmpty else { return }
        for thread in threads { thread.join() }
        let deadline = Date().addingTimeInterval(3)
        while lock.withLock({ workers }) > 0 && Date() < deadline { usleep(10_000) }
        // A worker still running past the deadline may yet answer through the UDP socket: leave it open then (the
        // process is ending) rather than let a reused descriptor number get its answer.
        if lock.withLock({ workers }) == 0 { close(udp) }
        close(tcp)
    }

    private func count(_ change: (inout DNSForwarderCounts) -> Void) {
        lock.withLock { change(&counts) }
        publish()
    }

    /// Writes the counts as they are now; one writer at a time, each taking the counts inside, so the last write
    /// holds the latest.
    private func publish() {
        guard let countsFile else { return }
        publishing.withLock {
            if let data = try? JSONEncoder().encode(counters) { try? data.write(to: countsFile, options: .atomic) }
        }
    }

    /// Runs `work` on a thread of its own unless `maximumWorkers` are busy (then counts a loss).
    private func startWorker(_ work: @escaping @Sendable () -> Void) -> Bool {
        let admitted = lock.withLock { () -> Bool in
            guard !stopped, workers < Self.maximumWorkers else { return false }
            workers += 1
            return true
        }
        guard admitted else { count { $0.lost += 1 }; return false }
        // Detached: it ends by itself, each of its waits bounded; `stop` waits for the count to reach zero.
        Thread.detachNewThread { [self] in
            work()
            lock.withLock { workers -= 1 }
        }
        return true
    }

    /// Waits up to 200 ms for `fd` to be readable, so a listener notices `stop` promptly.
    private func readable(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 200) > 0
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    // MARK: UDP

    private func serveUDP() {
        var buffer = [UInt8](repeating: 0, count: DNSMessage.maximumLength)
        while !isStopped {
            guard readable(udp) else { continue }
            var client = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let received = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &client) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(udp, bytes.baseAddress, bytes.count, 0, $0, &length) }
                }
            }
            guard received > 0 else { continue }
            let query = Array(buffer[0..<received])
            let from = IPEndpoint(storage: client, length: length)
            let held = dnsDelay()
            switch decide(query) {
            case .answer(let answer) where held == 0: sendUDP(answer, to: from)
            case .answer(let answer):
                _ = startWorker { [self] in
                    Self.hold(held)
                    sendUDP(answer, to: from)
                }
            case .drop: break
            case .forward(let delay):
                _ = startWorker { [self] in
                    Self.hold(held + delay)
                    if let answer = exchangeUDP(query) { sendUDP(answer, to: from) }
                }
            }
        }
    }

    private func sendUDP(_ message: [UInt8], to client: IPEndpoint) {
        _ = message.withUnsafeBytes { bytes in client.withSockaddr { sendto(udp, bytes.baseAddress, bytes.count, 0, $0, $1) } }
    }

    /// The query to each upstream in turn, over UDP, until one answers; nil when none does in time.
    private func exchangeUDP(_ query: [UInt8]) -> [UInt8]? {
        let id = UInt16(query[0]) << 8 | UInt16(query[1])
        for upstream in upstreams {
            let fd = socket(upstream.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard upstream.withSockaddr({ connect(fd, $0, $1) }) == 0,
                  query.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == query.count else { continue }
            var buffer = [UInt8](repeating: 0, count: DNSMessage.maximumLength)
            let deadline = Date().addingTimeInterval(Self.upstreamTimeout)
            while Date() < deadline {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
                let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if received < 0 && errno != EINTR { break } // ICMP port unreachable: the next server
                guard received > 0 else { continue }
                let answer = Array(buffer[0..<received])
                if answer.withUnsafeBytes({ DNSMessage.isAnswer($0, to: id) }) {
                    count { $0.forwarded += 1 }
                    return answer
                }
            }
        }
        count { $0.lost += 1 }
        return nil
    }

    // MARK: TCP

    private func acceptTCP() {
        while !isStopped {
            guard readable(tcp) else { continue }
            let connection = accept(tcp, nil, nil)
            guard connection >= 0 else { continue }
            // accept4 is not in Swift's Glibc module; nothing is spawned from this process between the two calls but
            // through ProcessSpawner, which closes every descriptor above 2 in the child anyway.
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            if !startWorker({ [self] in serveTCP(connection) }) { close(connection) }
        }
    }

    /// Length-prefixed queries (RFC 1035 §4.2.2), one after another, until the client closes or is idle too long.
    private func serveTCP(_ connection: Int32) {
        defer { close(connection) }
        Self.setTimeout(connection, seconds: Self.tcpIdleTimeout)
        while let query = Self.readMessage(connection) {
            let held = dnsDelay()
            switch decide(query) {
            case .answer(let answer):
                Self.hold(held)
                guard Self.writeMessage(answer, to: connection) else { return }
            case .drop: continue // the client's resolver gives up on its own clock
            case .forward(let delay):
                Self.hold(held + delay)
                guard let answer = exchangeTCP(query), Self.writeMessage(answer, to: connection) else { return }
            }
        }
    }

    /// Sleeps `milliseconds` (at most a minute: a fault's delay is at most that, and so is a sane DNS delay).
    static func hold(_ milliseconds: UInt64) {
        guard milliseconds > 0 else { return }
        usleep(UInt32(min(milliseconds, 60_000) * 1000))
    }

    private func exchangeTCP(_ query: [UInt8]) -> [UInt8]? {
        let id = UInt16(query[0]) << 8 | UInt16(query[1])
        for upstream in upstreams {
            let fd = socket(upstream.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            Self.setTimeout(fd, seconds: Self.upstreamTimeout) // connect honours the send timeout
            guard upstream.withSockaddr({ connect(fd, $0, $1) }) == 0, Self.writeMessage(query, to: fd),
                  let answer = Self.readMessage(fd), answer.withUnsafeBytes({ DNSMessage.isAnswer($0, to: id) }) else { continue }
            count { $0.forwarded += 1 }
            return answer
        }
        count { $0.lost += 1 }
        return nil
    }

    static func setTimeout(_ fd: Int32, seconds: Double) {
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// One length-prefixed message; nil at the end of the stream, on a timeout, or for an empty message.
    static func readMessage(_ fd: Int32) -> [UInt8]? {
        guard let prefix = readExactly(fd, 2) else { return nil }
        let length = Int(prefix[0]) << 8 | Int(prefix[1])
        guard length >= DNSMessage.headerLength else { return nil }
        return readExactly(fd, length)
    }

    static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let received = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, count - filled, 0) }
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { return nil }
            filled += received
        }
        return bytes
    }

    static func writeMessage(_ message: [UInt8], to fd: Int32) -> Bool {
        guard message.count <= DNSMessage.maximumLength else { return false }
        let framed = [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
        var written = 0
        while written < framed.count {
            let sent = framed.withUnsafeBytes { send(fd, $0.baseAddress! + written, framed.count - written, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            written += sent
        }
        return true
    }

    // MARK: Decision

    enum Decision {
        case answer([UInt8])
        case drop
        /// To the host's resolvers, after this many milliseconds.
        case forward(delay: UInt64)
    }

    /// What the first matching fault says; a message that is not a plain query is forwarded as it is.
    func decide(_ query: [UInt8]) -> Decision {
        let parsed = query.withUnsafeBytes { bytes in (try? DNSMessage.question(in: bytes)).map { (bytes, $0) } }
        guard let question = parsed?.1, let fault = faults().fault(for: question.name) else { return .forward(delay: 0) }
        func answer(_ code: DNSMessage.ResponseCode) -> Decision {
            .answer(query.withUnsafeBytes { DNSMessage.answer(to: $0, question: question, code: code) })
        }
        switch fault.action {
        case .nxdomain: count { $0.nxdomain += 1 }; return answer(.nameError)
        case .servfail: count { $0.servfail += 1 }; return answer(.serverFailure)
        case .refused: count { $0.refused += 1 }; return answer(.refused)
        case .timeout: count { $0.unanswered += 1 }; return .drop
        case .delay(let milliseconds): count { $0.delayed += 1 }; return .forward(delay: milliseconds)
        }
    }
}

/// An IPv4 or IPv6 address and port as the socket calls take them.
struct IPEndpoint: @unchecked Sendable {
    private var storage = sockaddr_storage()
    private(set) var length: socklen_t
    var family: Int32 { Int32(storage.ss_family) }

    init?(_ address: String, port: UInt16) {
        var storage = sockaddr_storage()
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, address, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: withUnsafeBytes(of: v4) { Array($0) }) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, address, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: withUnsafeBytes(of: v6) { Array($0) }) }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            return nil
        }
        self.storage = storage
    }

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The port (both families keep it right after the family field).
    var port: UInt16 {
        withUnsafeBytes(of: storage) { UInt16($0[2]) << 8 | UInt16($0[3]) }
    }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }
}
