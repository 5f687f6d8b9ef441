import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
#if canImport(Glibc)
import Glibc
#endif

/// The live view's HTTP and WebSocket server (swift-nio): one event loop, a small thread pool for the router, at most
/// `clientConnections` connections, request heads and bodies bounded, idle connections closed, WebSocket upgrades
/// only after the same checks as every request.
public final class LiveViewServer: Sendable {
    public let router: LiveViewRouter
    private let group: MultiThreadedEventLoopGroup
    private let pool: NIOThreadPool
    private let channel: Channel
    public let address: String
    public let port: Int

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Binds and starts serving; with a default port, the next free one of `fallbackPorts` is taken.
    public init(binding: LiveViewBinding, router: LiveViewRouter) throws {
        self.router = router
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        let limits = router.store.limits
        let open = NIOLockedValueBox(0)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [pool] channel in
                let admitted = open.withLockedValue { count in
                    guard count < limits.clientConnections else { return false }
                    count += 1
                    return true
                }
                guard admitted else { return channel.close() }
                channel.closeFuture.whenComplete { _ in open.withLockedValue { $0 -= 1 } }
                return channel.eventLoop.makeCompletedFuture {
                    try Self.configure(channel, router: router, pool: pool, limits: limits)
                }
            }
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
        var port = binding.port
        let last = binding.portIsDefault && port != 0 ? min(port + LiveViewBinding.fallbackPorts, 65535) : port
        var bound: Channel?
        var lastError: Error?
        while bound == nil && port <= last {
            do {
                bound = try bootstrap.bind(host: binding.address, port: port).wait()
            } catch {
                lastError = error
                port += 1
            }
        }
        guard let bound else {
            try? group.syncShutdownGracefully()
            try? pool.syncShutdownGracefully()
            let ports = last > binding.port ? "ports \(binding.port)-\(last)" : "port \(binding.port)"
            throw StartError(description: "cannot serve the live view on \(binding.address) \(ports): "
                             + Self.bindFailure(lastError, port: binding.port))
        }
        channel = bound
        address = binding.address
        self.port = bound.localAddress?.port ?? port
        router.requestGuard.listening(on: self.port)
    }

    /// A bind error in words, with what to do; NIO's own text is `bind(descriptor:ptr:bytes:): ... (errno: 98)`.
    static func bindFailure(_ error: Error?, port: Int) -> String {
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE?:
            return "another program is listening there (`ss -ltnp 'sport = :\(port)'` names it); "
                + "give another port with --ui PORT, or --ui 0 for any free one"
        case EADDRNOTAVAIL?:
            return "no interface of this machine has that address (`ip -br address` lists them); give one with --ui ADDR:PORT"
        case EACCES?:
            return "ports below 1024 need root or CAP_NET_BIND_SERVICE; give a port above 1023 with --ui PORT"
        default:
            return "\(error.map { "\($0)" } ?? "no port tried"); give another with --ui ADDR:PORT"
        }
    }

    private static func configure(_ channel: Channel, router: LiveViewRouter, pool: NIOThreadPool,
                                  limits: LiveViewLimits) throws {
        let requests = HTTPRequestHandler(router: router, pool: pool, bodyLimit: limits.requestBodyBytes)
        let idle = IdleStateHandler(readTimeout: .seconds(30))
        let closer = IdleConnectionCloser()
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: 1 << 12,
            shouldUpgrade: { channel, head in
                let request = LiveRequest(method: head.method.rawValue, target: head.uri,
                                          headers: head.headers.map { ($0.name, $0.value) })
                // Refused: no upgrade, and the request goes on to the router, which answers 403.
                guard request.path == "/api/live", router.requestGuard.refusal(request) == nil else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
            },
            upgradePipelineHandler: { channel, head in
                let request = LiveRequest(method: head.method.rawValue, target: head.uri, headers: [])
                let since = request.queryValue("since").flatMap { Int($0) }.map { max($0, 0) } ?? 0
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(LiveUpdatesHandler(router: router, since: since))
                }
            })
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = limits.requestHeadBytes
        decoderLimits.maxHeaderListSize = limits.requestHeadBytes
        decoderLimits.maxHeaderFieldCount = 100
        let http = NIOLoopBound([requests, idle, closer] as [RemovableChannelHandler], eventLoop: channel.eventLoop)
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(idle)
        try operations.addHandler(closer)
        try operations.configureHTTPServerPipeline(
            withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                // A WebSocket now: the HTTP handler and the idle timeout (the page may stay quiet) go.
                for handler in http.value { context.pipeline.syncOperations.removeHandler(handler, promise: nil) }
            }),
            withEncoderConfiguration: HTTPResponseEncoder.Configuration(),
            withDecoderLimitConfiguration: decoderLimits)
        try operations.addHandler(requests)
    }

    /// The URL to print: the address as a browser takes it, and the token.
    public var url: String {
        let host = address.contains(":") ? "[\(address)]" : address == "0.0.0.0" ? "127.0.0.1" : address
        return "http://\(host):\(port)/?token=\(router.requestGuard.token)"
    }

    /// Stops listening and closes every connection.
    public func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
        try? pool.syncShutdownGracefully()
    }
}
