import NIOCore
import NIOPosix
import NIOHTTP1

/// One HTTP connection's requests: the head and a bounded body gathered, the router run off the event loop (a HAR
/// of many exchanges, or a profile switch that runs `tc`, must not hold up other clients), the answer written with
/// the headers every answer carries. A body over the limit gets 413 and the connection is closed.
final class HTTPRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let router: LiveViewRouter
    private let pool: NIOThreadPool
    private let bodyLimit: Int
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var tooLarge = false

    init(router: LiveViewRouter, pool: NIOThreadPool, bodyLimit: Int) {
        self.router = router
        self.pool = pool
        self.bodyLimit = bodyLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            let declared = head.headers.first(name: "Content-Length").flatMap { Int($0) } ?? 0
            tooLarge = declared > bodyLimit
        case .body(var buffer):
            guard !tooLarge else { return }
            if body.count + buffer.readableBytes > bodyLimit {
                tooLarge = true
                body = []
            } else {
                body += buffer.readBytes(length: buffer.readableBytes) ?? []
            }
        case .end:
            guard let head else { return }
            self.head = nil
            if tooLarge {
                write(.error(413, "request body over \(bodyLimit) bytes"), head: head, keepAlive: false, context: context)
                return
            }
            let request = LiveRequest(method: head.method.rawValue, target: head.uri,
                                      headers: head.headers.map { ($0.name, $0.value) }, body: body)
            body = []
            let router = self.router
            let answer = pool.runIfActive(eventLoop: context.eventLoop) { router.respond(to: request) }
            let keepAlive = head.isKeepAlive
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            answer.whenComplete { result in
                let (handler, context) = bound.value
                let response = (try? result.get()) ?? .error(503, "the live view is stopping")
                handler.write(response, head: head, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func write(_ response: LiveResponse, head request: HTTPRequestHead, keepAlive: Bool,
                       context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        for (name, value) in LiveResponse.securityHeaders + response.headers { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: String(response.body.count))
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
                      promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))),
                          promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive { done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) } }
    }
}

/// Closes a connection that sent nothing for a while (a client that opens connections and never finishes a
/// request would otherwise hold them); removed once the connection becomes a WebSocket.
final class IdleConnectionCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
