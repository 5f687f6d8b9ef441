import NIOCore
import NIOWebSocket
import Reports

/// One WebSocket client of `/api/live`: every 100 ms it is sent what is new since its cursor (exchanges in id
/// order, closed throughput buckets, conditioner switches, the end), only while its connection can take more. A slow
/// client therefore falls behind and catches up instead of making the server buffer for it; memory per client stays
/// at one batch.
final class LiveUpdatesHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let router: LiveViewRouter
    private var nextExchange: Int
    private var sentBuckets = 0
    private var sentBucketSeconds: Int64 = 0
    private var sentSwitches = -1  // the state goes out at connect
    private var sentClosed = false
    private var sentEnd = false
    private var timer: RepeatedTask?
    /// Exchanges per tick (at most this many JSON objects are built at once).
    static let batch = 200

    init(router: LiveViewRouter, since: Int) {
        self.router = router
        nextExchange = since
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(100)) { _ in
            let (handler, context) = bound.value
            handler.sendNews(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            var data = context.channel.allocator.buffer(capacity: 2)
            data.write(webSocketErrorCode: .normalClosure)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
                .whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)),
                                  promise: nil)
        default:
            break  // the page sends nothing the server acts on
        }
    }

    private func send(_ json: TextOutput, context: ChannelHandlerContext) {
        let buffer = context.channel.allocator.buffer(bytes: json.bytes)
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: buffer)), promise: nil)
    }

    private func sendNews(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var wrote = false
        defer { if wrote { context.flush() } }
        // Exchanges first, when the connection can take them.
        // Exchanges first, one batch per tick, when the connection can take them.
        let page = context.channel.isWritable ? router.store.page(since: nextExchange, limit: Self.batch).records : []
        for stored in page {
            var json = TextOutput.memory()
            json.append("{"); json.key("type"); json.append("\"exchange\","); json.key("exchange")
            APIDocuments.record(stored, into: &json)
            json.append("}")
            send(json, context: context)
            // Past any dropped for the exchange limit before this client got them.
            nextExchange = stored.id + 1
            wrote = true
        }
        let buckets = router.store.throughput
        if buckets.bucketSeconds != sentBucketSeconds {
            sentBucketSeconds = buckets.bucketSeconds
            sentBuckets = 0
        }
        // Every bucket but the last is closed.
        while sentBuckets < buckets.up.count - 1 {
            var json = TextOutput.memory()
            json.append("{"); json.key("type"); json.append("\"throughput\",")
            json.key("index"); json.number(sentBuckets)
            json.append(","); json.key("bucket"); json.number(Int(buckets.bucketSeconds))
            json.append(","); json.key("t"); json.number(Int(buckets.time(ofBucket: sentBuckets)))
            json.append(","); json.key("up"); json.number(buckets.up[sentBuckets])
            json.append(","); json.key("down"); json.number(buckets.down[sentBuckets])
            json.append("}")
            send(json, context: context)
            sentBuckets += 1
            wrote = true
        }
        let switches = router.conditioner.switches.count, closed = router.conditioner.isClosed
        if switches != sentSwitches || closed != sentClosed {
            sentSwitches = switches
            sentClosed = closed
            var json = TextOutput.memory()
            json.append("{"); json.key("type"); json.append("\"conditioner\","); json.key("state")
            json.append(router.conditioner.stateDocument())
            json.append("}")
            send(json, context: context)
            wrote = true
        }
        if !sentEnd, router.ended(), nextExchange >= router.store.nextID {
            sentEnd = true
            var json = TextOutput.memory()
            json.append("{"); json.key("type"); json.append("\"end\"}")
            send(json, context: context)
            wrote = true
        }
    }
}
