// Longer than 600 lines: `HTTPMessageParser` is one incremental state machine over one direction's bytes (head,
// chunk framing, body, trailers, HTTP/0.9 answers) whose states share the buffers declared with it; split across
// files, each part would need the others' private state. The message it fills and the framing types come first.
import BodyDecoding
#if canImport(Glibc)
import Glibc
#endif
import FlowReassembly
import HTTPModel
import PacketDecoding

/// One message being read: its parsed head, its body so far, and what went wrong.
final class MessageInProgress {
    let head: ParsedHead
    let headSize: Int
    let start: Timestamp
    var end: Timestamp
    var warnings: [HTTPWarning] { didSet { warnings.keepWithin(maxWarnings) } }
    private let maxWarnings: Int
    private let limits: HTTPDecoderLimits
    private let budget: DecodedBytesBudget?
    /// Created with the head when it lists a content coding (the decoding budget is checked then), else with the
    /// first body byte or gap: most messages (GET requests, redirects, 304s) have no body and need none.
    private var accumulator: BodyAccumulator?
    var body: BodyAccumulator {
        if let accumulator { return accumulator }
        let role: MessageRole = if case .response = head.startLine { .response } else { .request }
        let created = BodyAccumulator(role: role, contentEncoding: head.headers.tokens("Content-Encoding"),
                                      contentType: head.headers["Content-Type"], limits: limits, budget: budget)
        accumulator = created
        return created
    }
    /// Where its first byte lies in its direction's stream, and how far into the other direction's stream the
    /// segment carrying it acknowledged (nil when not known): what pairing after a gap reads (`GapPairing`).
    var streamOffset = 0
    var acknowledged: Int?
    /// Seen whole: no gap, not cut short, not abandoned.
    var complete = true
    var finished = false
    /// The body as it stood when finished, computed once.
    private(set) var finalBody: HTTPBody?

    init(head: ParsedHead, headSize: Int, start: Timestamp, warnings: [HTTPWarning], limits: HTTPDecoderLimits,
         budget: DecodedBytesBudget? = nil) {
        self.head = head
        self.headSize = headSize
        self.start = start
        self.end = start
        self.warnings = warnings
        maxWarnings = limits.maxWarningsPerMessage
        self.limits = limits
        self.budget = budget
        if head.headers["Content-Encoding"] != nil { _ = body }
    }

    func finishedBody() -> HTTPBody {
        if let finalBody { return finalBody }
        let result: HTTPBody
        if accumulator == nil {
            // No body bytes and no content coding: what an accumulator given nothing would say, without one.
            result = BodyAccumulator.emptyBody(contentType: head.headers["Content-Type"], limits: limits)
        } else {
            result = body.finish()
            warnings.append(contentsOf: body.warnings)
        }
        finalBody = result
        return result
    }

    /// Moves the end forward to `time`, never back: a capture whose clock goes backwards must not give a
    /// message that ends before it starts.
    func extendEnd(to time: Timestamp) {
        if time > end { end = time }
    }

    var method: String? {
        if case .request(let method, _, _) = head.startLine { return method }
        return nil
    }
}

/// How the body of a message is delimited, decided once its head is known (RFC 9112 section 6).
enum BodyFraming {
    case none
    case length(Int)
    case chunked
    case untilClose
}

/// What the connection tells a direction's parser to do once a message is complete.
enum AfterMessage {
    case next
    /// Read the next message, but return from `consume` first: the connection acts on the other direction (held
    /// requests released after a refused upgrade) before this one reads on, so events keep the bytes' order.
    case nextAfterReturn
    /// Stop parsing and return: the bytes that follow are another protocol (upgrade, tunnel) or not HTTP.
    case opaque
    /// Hold further bytes until the other side decides (an Upgrade or CONNECT request awaiting its response).
    case hold
}

/// The connection-side decisions a direction's parser needs. The connection answers with values; it never changes
/// a parser's state from inside these calls (it acts on what a parser found after `consume` returns).
protocol MessageParserDelegate: AnyObject {
    /// A head was parsed (`warnings`: trouble seen in this direction since the last message); returns its body
    /// framing. May return nil to abandon the stream (HTTP/2 preface).
    func parser(_ parser: HTTPMessageParser, didParse head: ParsedHead, headSize: Int, warnings: [HTTPWarning],
                at time: Timestamp) -> (MessageInProgress, BodyFraming)?
    func parser(_ parser: HTTPMessageParser, didFinish message: MessageInProgress, at time: Timestamp) -> AfterMessage
    /// Whether trouble outside a message (a head that could not be parsed) is worth a warning: not before any HTTP
    /// was seen, when the stream is probably not HTTP at all.
    func parserWarnsOfProblems(_ parser: HTTPMessageParser) -> Bool
    /// Whether the response now expected answers an HTTP/0.9 request (so it has no status line).
    func parserExpectsHTTP09Response(_ parser: HTTPMessageParser) -> Bool
}

extension MessageParserDelegate {
    func parserExpectsHTTP09Response(_ parser: HTTPMessageParser) -> Bool { false }
}

private let cr: UInt8 = 0x0d, lf: UInt8 = 0x0a

/// The value of a hex digit, nil for any other byte.
private func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case 0x30...0x39: Int(byte - 0x30)
    case 0x41...0x46: Int(byte - 0x41 + 10)
    case 0x61...0x66: Int(byte - 0x61 + 10)
    default: nil
    }
}

/// Parses one direction of a connection as a stream of HTTP/1.x messages, incrementally: any split of the
/// bytes into calls gives the same result. Bytes are lent for the call only; what must outlive it is copied
/// into bounded buffers (the head, one chunk-size line, the kept part of a body).
final class HTTPMessageParser {
    enum Phase {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        /// Waiting for the other side to accept or refuse an upgrade; bytes are held.
        case holding
        /// The server refused a CONNECT: deciding from the client's next line whether it goes on with HTTP or
        /// sends what it meant to tunnel (a TLS ClientHello, say).
        case afterRefusedTunnel
        /// Looking for the next start line after a gap or a parse error.
        case resync
        /// Not parsed any more.
        case opaque
    }

    let role: MessageRole
    private let limits: HTTPDecoderLimits
    /// Unowned: the connection that owns this parser is its delegate and outlives it; a weak reference would cost
    /// every connection a side-table allocation.
    unowned var delegate: MessageParserDelegate?

    private(set) var phase: Phase
    private var buffer: [UInt8] = []
    private var scanFrom = 0
    private(set) var message: MessageInProgress?
    /// Warnings waiting for the next message of this direction (a gap between messages).
    var pendingWarnings: [HTTPWarning] = [] { didSet { pendingWarnings.keepWithin(limits.maxWarningsPerMessage) } }
    private(set) var messagesParsed = 0
    /// Bytes that reached this parser but made no message (lines that start none, bad heads, what resync skipped,
    /// a head cut short with too little to show), and when the first of them came: the connection shows them.
    private(set) var unparsedBytes = 0
    private(set) var firstUnparsed: Timestamp?
    /// The resync budget ran out: every later byte of the direction is unparsed too.
    private(set) var gaveUp = false
    /// During resync: whether the next byte starts a line; and how many bytes were scanned.
    private var atLineStart = true
    private var resyncScanned = 0
    private var held: [UInt8] = []
    private var heldGap = false
    /// Set when a finished message asked `consume` to return (`AfterMessage.nextAfterReturn`).
    private var returnRequested = false
    /// After a refused CONNECT: the client's bytes that turned out not to be HTTP, for the connection to take.
    private var notHTTP: [UInt8]?
    private var trailerFields: [UInt8] = []

    /// Where `buffer` comes from and goes back to when the parser is done with it.
    private let buffers: ByteArrayPool?

    init(role: MessageRole, limits: HTTPDecoderLimits, buffers: ByteArrayPool? = nil) {
        self.role = role
        self.limits = limits
        phase = .head
        self.buffers = buffers
        buffer = buffers?.take() ?? []
    }

    deinit {
        buffers?.giveBack(&buffer)
    }

    /// Counts `count` bytes as read into no message (`unparsedBytes`).
    func noteUnparsed(_ count: Int, at time: Timestamp) {
        guard count > 0 else { return }
        if firstUnparsed == nil { firstUnparsed = time }
        unparsedBytes += count
    }

    /// The connection took the unparsed bytes into a warning on an exchange: they are not counted again.
    func unparsedBytesReported() { unparsedBytes = 0 }

    // MARK: Input

    /// Whether the parser stopped reading: the direction's bytes are another protocol's, or not HTTP.
    var isOpaque: Bool {
        if case .opaque = phase { return true }
        return false
    }

    /// Bytes of the stream, as delivered: `offset` is where the first of them lies in the stream (bytes and gaps
    /// before it), `acknowledged` how far into the other direction its segment acknowledged. Both are noted for
    /// each message that starts in them (`headOffset`). Returns how many bytes were read (see the other `consume`).
    @discardableResult
    func consume(_ bytes: UnsafeRawBufferPointer, at time: Timestamp, offset: Int, acknowledged: Int?) -> Int {
        piece = (bytes.baseAddress, bytes.count, offset, acknowledged)
        defer { piece.base = nil }
        return consume(bytes, at: time)
    }

    /// The piece of the stream being consumed, to say where a head starts in it. Bytes parsed again from a copy
    /// (sniffed, held, a resync line) are not in it: their head is placed at the piece's start (`headOffset`).
    private var piece: (base: UnsafeRawPointer?, count: Int, offset: Int, acknowledged: Int?) = (nil, 0, 0, nil)
    /// Where the latest head started in the stream, and what its segment acknowledged (see `consume`).
    private(set) var headOffset = 0
    private(set) var headAcknowledged: Int?

    /// Set while a start line found by resync is parsed again from a copy: where that line began in the stream.
    private var resyncLineOffset: Int?

    private func noteHeadStart(at pointer: UnsafeRawPointer?) {
        headOffset = resyncLineOffset ?? streamOffset(of: pointer)
        headAcknowledged = piece.acknowledged
    }

    /// The stream offset of a byte of the piece being consumed; the piece's start for bytes not in it.
    private func streamOffset(of pointer: UnsafeRawPointer?) -> Int {
        guard let pointer, let base = piece.base, pointer >= base, pointer < base + piece.count else {
            return piece.offset
        }
        return piece.offset + base.distance(to: pointer)
    }

    /// Reads `bytes` as HTTP; returns how many it read. It stops early, leaving the rest to the caller, when the
    /// parser becomes opaque (the rest is not HTTP) or a finished message asks the connection to act first.
    @discardableResult
    func consume(_ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Int {
        returnRequested = false
        var rest = bytes[...]
        while !rest.isEmpty {
            if case .opaque = phase { break }
            let used = step(UnsafeRawBufferPointer(rebasing: rest), at: time)
            rest = rest.dropFirst(used)
            if returnRequested { returnRequested = false; break }
        }
        return bytes.count - rest.count
    }

    /// Consumes a prefix of `bytes` in the current phase; returns how many bytes were used (at least one unless
    /// the phase changed).
    private func step(_ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Int {
        switch phase {
        case .opaque:
            return bytes.count
        case .holding:
            if held.count + bytes.count > limits.maxHeadBytes {
                held.removeAll()
                heldGap = true
            } else {
                held.append(contentsOf: bytes)
            }
            return bytes.count
        case .afterRefusedTunnel:
            buffer.append(contentsOf: bytes)
            guard let isHTTP = Self.looksLikeRequestAfterRefusedTunnel(buffer[...], final: buffer.count > limits.maxHeadBytes)
            else { return bytes.count }
            decideAfterRefusedTunnel(isHTTP: isHTTP, at: time)
            return bytes.count
        case .head:
            return consumeHead(bytes, at: time)
        case .fixedBody(let remaining):
            let take = min(remaining, bytes.count)
            appendBody(bytes, count: take, at: time)
            if take == remaining { finishMessage(at: time) } else { phase = .fixedBody(remaining: remaining - take) }
            return take
        case .chunkData(let remaining):
            let take = min(remaining, bytes.count)
            appendBody(bytes, count: take, at: time)
            phase = take == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - take)
            return take
        case .untilClose:
            appendBody(bytes, count: bytes.count, at: time)
            return bytes.count
        case .chunkDataEnd:
            let byte = bytes[0]
            if byte == lf { buffer.removeAll(); phase = .chunkSize; return 1 }
            if byte == cr && buffer.isEmpty { buffer.append(cr); return 1 }
            abandonMessage(.chunkDataWithoutLineEnd, at: time)
            return 0
        case .chunkSize, .trailers:
            return consumeLine(bytes, at: time)
        case .resync:
            return consumeResync(bytes, at: time)
        }
    }

    private func appendBody(_ bytes: UnsafeRawBufferPointer, count: Int, at time: Timestamp) {
        guard let message, count > 0 else { return }
        message.body.append(UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
        message.extendEnd(to: time)
    }

    private func consumeHead(_ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Int {
        var used = 0
        if buffer.isEmpty {
            // Blank lines before a message are ignored (RFC 9112 section 2.2).
            while used < bytes.count && (bytes[used] == cr || bytes[used] == lf) { used += 1 }
            if used == bytes.count { return used }
            headStart = time
            noteHeadStart(at: bytes.baseAddress.map { $0 + used })
            startLineChecked = false
            if role == .response, let delegate, delegate.parserExpectsHTTP09Response(self),
               !Self.couldStartStatusLine(UnsafeRawBufferPointer(rebasing: bytes[used...])) {
                startHTTP09Response(at: time)
                return used
            }
        }
        let room = limits.maxHeadBytes + 1 - buffer.count
        var piece = bytes[used..<min(bytes.count, used + room)]
        // Only the head is copied: what follows it in the piece (often its body, up to a whole 64 KB segment on
        // loopback or a 16 KB TLS record) is left for the next step.
        piece = piece.prefix(headBytes(in: UnsafeRawBufferPointer(rebasing: piece)))
        // Room for most heads at once, so a new buffer is not grown step by step as heads get longer.
        if buffer.capacity < 1024 { buffer.reserveCapacity(max(1024, piece.count)) }
        let before = buffer.count
        buffer.append(contentsOf: piece)
        var index = max(scanFrom, 1)
        while index < buffer.count {
            // Only LFs matter: jump from one to the next.
            guard let newline = HTTPHeadParser.firstLF(buffer[...], from: index) else { break }
            index = newline
            if !startLineChecked {
                // Check the start line as soon as it is whole, so a stream joined mid-message resyncs on the
                // next line instead of swallowing it into a bogus head.
                startLineChecked = true
                let lenient = LenientStartLine.read(buffer[0..<index], role: role)
                if lenient?.isHTTP09 == true {
                    // HTTP/0.9: the request line is the whole head.
                    let fromThisCall = index + 1 - before
                    parseHead(size: index + 1, at: time)
                    return used + fromThisCall
                }
                if lenient == nil, role == .response, let delegate, delegate.parserExpectsHTTP09Response(self) {
                    // The answer to an HTTP/0.9 request: no status line, the body runs to the close. Everything
                    // buffered, this piece included, is its first bytes.
                    startHTTP09Response(at: time)
                    return used + piece.count
                }
                if lenient == nil {
                    let problem = HTTPWarning.notAMessageStart(role, line: HTTPHeadParser.preview(buffer[0..<index]))
                    let fromThisCall = index + 1 - before
                    report(problem)
                    noteUnparsed(index + 1, at: time)
                    startResync(atLineStart: true)
                    resyncScanned += index + 1
                    return used + fromThisCall
                }
            }
            if Self.lineFeedEndsHead(after: buffer[index - 1], index >= 2 ? buffer[index - 2] : nil) {
                let headSize = index + 1
                let fromThisCall = headSize - before
                parseHead(size: headSize, at: time)
                return used + fromThisCall
            }
            index += 1
        }
        scanFrom = buffer.count
        if buffer.count > limits.maxHeadBytes {
            let skipped = buffer.count
            buffer.removeAll()
            scanFrom = 0
            pendingWarnings.append(.headOverLimit(role, limit: limits.maxHeadBytes))
            noteUnparsed(skipped, at: time)
            startResync(atLineStart: false)
            resyncScanned += skipped
        }
        return used + piece.count
    }

    private var headStart = Timestamp(seconds: 0, nanoseconds: 0)

    /// Whether a LF preceded by `last` and, before it, `secondLast` ends a blank line, so a head: LF LF or LF CR LF.
    private static func lineFeedEndsHead(after last: UInt8?, _ secondLast: UInt8?) -> Bool {
        last == lf || (last == cr && secondLast == lf)
    }

    /// How many of `piece`'s bytes the head being buffered can take: up to the LF that ends its blank line when
    /// that LF is in `piece` (the line may start in `buffer`), else all of them.
    private func headBytes(in piece: UnsafeRawBufferPointer) -> Int {
        guard let base = piece.baseAddress else { return 0 }
        var from = 0
        while from < piece.count, let found = memchr(base + from, Int32(lf), piece.count - from) {
            let at = base.distance(to: UnsafeRawPointer(found))
            let before1 = at >= 1 ? piece[at - 1] : buffer.last
            let before2 = at >= 2 ? piece[at - 2] : at == 1 ? buffer.last : buffer.dropLast().last
            if Self.lineFeedEndsHead(after: before1, before2) { return at + 1 }
            from = at + 1
        }
        return piece.count
    }

    /// Whether `bytes` could be the start of `HTTP/` (in any case).
    private static func couldStartStatusLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let prefix: [UInt8] = Array("http/".utf8)
        for (index, byte) in bytes.prefix(5).enumerated() where byte | (index < 4 ? 0x20 : 0) != prefix[index] {
            return false
        }
        return true
    }

    /// Starts a response without a status line (HTTP/0.9): the bytes buffered so far are its first body bytes.
    private func startHTTP09Response(at time: Timestamp) {
        let saved = buffer
        buffer.removeAll()
        scanFrom = 0
        let head = ParsedHead(startLine: .response(version: "HTTP/0.9", status: nil, code: "", reason: ""),
                              headers: HTTPHeaders([]),
                              anomalies: [.http09Response])
        guard let (message, _) = announce(head, size: 0) else {
            phase = .opaque
            return
        }
        self.message = message
        messagesParsed += 1
        resyncScanned = 0
        phase = .untilClose
        saved.withUnsafeBytes { appendBody($0, count: $0.count, at: time) }
    }
    private var startLineChecked = false

    /// Tells the connection about a parsed head, handing over the warnings gathered for it.
    private func announce(_ head: ParsedHead, size: Int) -> (MessageInProgress, BodyFraming)? {
        let warnings = pendingWarnings
        pendingWarnings = []
        return delegate?.parser(self, didParse: head, headSize: size, warnings: warnings, at: headStart)
    }

    /// Trouble outside a message: kept for the next message when the connection finds it worth a warning.
    private func report(_ problem: HTTPWarning) {
        if delegate?.parserWarnsOfProblems(self) == true { pendingWarnings.append(problem) }
    }

    private func parseHead(size: Int, at time: Timestamp) {
        // No slice of `buffer` outlives the parse: emptying a buffer something else still refers to allocates anew.
        defer { buffer.removeAll(keepingCapacity: buffer.capacity <= 4096); scanFrom = 0 }
        let parsed: ParsedHead
        do throws(HeadParseError) {
            parsed = try HTTPHeadParser.parse(buffer[0..<size], role: role)
        } catch {
            report(error.warning)
            noteUnparsed(size, at: time)
            startResync(atLineStart: true)
            resyncScanned += size  // bad heads count against the resync budget too, so a flood of them ends
            return
        }
        resyncScanned = 0  // a message was found: the next resync starts with a full budget
        guard let (message, framing) = announce(parsed, size: size) else {
            phase = .opaque
            return
        }
        message.extendEnd(to: time)
        self.message = message
        messagesParsed += 1
        switch framing {
        case .none: finishMessage(at: time)
        case .length(let length): if length == 0 { finishMessage(at: time) } else { phase = .fixedBody(remaining: length) }
        case .chunked: phase = .chunkSize
        case .untilClose: phase = .untilClose
        }
    }

    /// Chunk-size lines and trailer lines, kept in `buffer` until their LF arrives.
    private func consumeLine(_ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Int {
        guard let newline = bytes.firstIndex(of: lf) else {
            buffer.append(contentsOf: bytes)
            if buffer.count > limits.maxChunkLineBytes {
                abandonMessage(.chunkLineOverLimit(limit: limits.maxChunkLineBytes), at: time)
            }
            return bytes.count
        }
        if buffer.isEmpty {
            // The whole line is in this piece, as it nearly always is: read it in place.
            lineEnded(UnsafeRawBufferPointer(rebasing: bytes[0..<newline]), at: time)
        } else {
            // The line's start was buffered: take the buffer out while reading it (what the line sets off may
            // buffer anew), then give its storage back.
            var line = buffer
            buffer = []
            line.append(contentsOf: bytes[0..<newline])
            line.withUnsafeBytes { lineEnded($0, at: time) }
            if buffer.isEmpty {
                line.removeAll(keepingCapacity: line.capacity <= 4096)
                buffer = line
            }
        }
        return newline + 1
    }

    /// A chunk-size line or a trailer line, without its LF.
    private func lineEnded(_ bytes: UnsafeRawBufferPointer, at time: Timestamp) {
        var line = bytes
        if line.last == cr { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
        if case .chunkSize = phase {
            // chunk-size [; extensions], spaces and tabs ignored. Hex digits only: Int(_:radix:) would also take a
            // sign ("-1", "+5"). Leading zeros are allowed (1*HEXDIG) and do not count towards the 15 digits an
            // Int holds.
            var size = 0, digits = 0, significant = 0, allHex = true
            var first: UInt8?
            for byte in line {
                if byte == UInt8(ascii: ";") { break }
                if byte == 0x20 || byte == 0x09 { continue }
                if first == nil { first = byte }
                digits += 1
                guard let value = hexValue(byte) else { allHex = false; continue }
                if significant > 0 || value != 0 { significant += 1 }
                if significant <= 15 { size = size << 4 | value }
            }
            guard digits > 0, allHex, significant <= 15 else {
                let shown = HTTPHeadParser.preview(ArraySlice(line))
                abandonMessage(first == UInt8(ascii: "-") ? .negativeChunkSize(shown)
                               : digits > 0 && allHex ? .chunkSizeOverflows(shown)
                               : .invalidChunkSizeLine(shown), at: time)
                return
            }
            message?.extendEnd(to: time)
            phase = size == 0 ? .trailers : .chunkData(remaining: size)
            return
        }
        // Trailer section: fields until an empty line.
        if line.isEmpty {
            if !trailerFields.isEmpty {
                trailers = HTTPHeadParser.parseFields(trailerFields[...])
            }
            trailerFields.removeAll()
            finishMessage(at: time)
        } else {
            trailerFields.append(contentsOf: line)
            trailerFields.append(lf)
            if trailerFields.count > limits.maxChunkLineBytes {
                trailerFields.removeAll()
                abandonMessage(.trailersOverLimit(limit: limits.maxChunkLineBytes), at: time)
            }
        }
    }

    /// Trailer fields of the message just finished (chunked bodies), for the connection to append.
    private(set) var trailers: [(name: String, value: String)] = []

    private func finishMessage(at time: Timestamp) {
        guard let message else { phase = .head; return }
        message.extendEnd(to: time)
        message.finished = true
        self.message = nil
        let after = delegate?.parser(self, didFinish: message, at: time) ?? .next
        trailers = []
        switch after {
        case .next: phase = .head
        case .nextAfterReturn: phase = .head; returnRequested = true
        case .opaque: phase = .opaque
        case .hold: phase = .holding
        }
    }

    /// The current message cannot be read further: report it as incomplete and look for the next one.
    private func abandonMessage(_ warning: HTTPWarning, at time: Timestamp) {
        buffer.removeAll()
        if let message {
            message.warnings.append(warning)
            message.complete = false
            finishMessage(at: time)
            if case .opaque = phase { return }
            if case .holding = phase { return }
        } else {
            pendingWarnings.append(warning)
        }
        startResync(atLineStart: false)
    }

    /// Starts looking for the next message. The scan budget (`maxResyncScanBytes`) is not reset here but only
    /// when a message is parsed, so a stream of bad heads, each starting its own resync, still runs out of it.
    private func startResync(atLineStart: Bool) {
        phase = .resync
        self.atLineStart = atLineStart
        buffer.removeAll(keepingCapacity: buffer.capacity <= 4096)
    }

    private func consumeResync(_ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Int {
        if resyncScanned > limits.maxResyncScanBytes {
            if messagesParsed > 0 {
                report(.noMessageAfterGap(role, scanned: limits.maxResyncScanBytes))
            }
            noteUnparsed(buffer.count + bytes.count, at: time)
            buffer.removeAll()
            phase = .opaque
            gaveUp = true
            return bytes.count
        }
        if !atLineStart {
            guard let newline = bytes.firstIndex(of: lf) else {
                resyncScanned += bytes.count
                noteUnparsed(bytes.count, at: time)
                return bytes.count
            }
            atLineStart = true
            resyncScanned += newline + 1
            noteUnparsed(newline + 1, at: time)
            return newline + 1
        }
        guard let newline = bytes.firstIndex(of: lf) else {
            if buffer.count + bytes.count > 8192 {
                noteUnparsed(buffer.count + bytes.count, at: time)
                buffer.removeAll()
                atLineStart = false
            } else {
                buffer.append(contentsOf: bytes)
            }
            resyncScanned += bytes.count
            return bytes.count
        }
        let lineStartsBefore = buffer.count
        buffer.append(contentsOf: bytes[0..<newline])
        let found = HTTPHeadParser.looksLikeStartLine(buffer[...], role: role)
        resyncScanned += newline + 1
        if found {
            // Restart head parsing with this line; the bytes after the LF follow in the next step.
            var line = buffer
            line.append(lf)
            buffer.removeAll()
            phase = .head
            scanFrom = 0
            startLineChecked = false
            resyncLineOffset = streamOffset(of: bytes.baseAddress) - lineStartsBefore
            _ = line.withUnsafeBytes { consumeHead($0, at: time) }
            resyncLineOffset = nil
        } else {
            noteUnparsed(buffer.count + 1, at: time)
            buffer.removeAll()
        }
        return newline + 1
    }

    // MARK: Gaps and ends

    /// Where a gap of `length` bytes falls, told before it is handed to `gap(length:at:)`: inside the message
    /// being read (its framing skips it), or past its end, so messages may have been lost whole. For the
    /// connection's pairing after gaps (`GapPairing`).
    func place(ofGap length: Int) -> GapPlace {
        switch phase {
        case .opaque, .holding, .afterRefusedTunnel, .untilClose:
            return .insideMessage
        case .fixedBody(let remaining) where length <= remaining, .chunkData(let remaining) where length <= remaining:
            return .insideMessage
        case .fixedBody(let remaining):
            return .pastMessageEnd(bytesToMessageEnd: remaining, lostWholeMessages: true)
        case .head where buffer.isEmpty:
            return .pastMessageEnd(bytesToMessageEnd: 0, lostWholeMessages: true)
        case .chunkData, .chunkSize, .chunkDataEnd, .trailers, .head, .resync:
            return .pastMessageEnd(bytesToMessageEnd: nil, lostWholeMessages: false)
        }
    }

    /// `length` bytes of this direction were never seen.
    func gap(length: Int, at time: Timestamp) {
        if case .afterRefusedTunnel = phase {
            // Bytes before the gap decide; with none, what follows the gap is looked for as HTTP.
            if buffer.isEmpty { phase = .head } else { decideAfterRefusedTunnel(isHTTP: Self.looksLikeRequestAfterRefusedTunnel(buffer[...], final: true) ?? true, at: time) }
        }
        switch phase {
        case .opaque:
            return
        case .holding:
            heldGap = true
        case .fixedBody(let remaining) where length <= remaining, .chunkData(let remaining) where length <= remaining:
            message?.body.gap(length: length)
            message?.warnings.append(.gapInBody(role, length: length))
            message?.complete = false
            if case .fixedBody = phase {
                if length == remaining { finishMessage(at: time) } else { phase = .fixedBody(remaining: remaining - length) }
            } else {
                phase = length == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - length)
            }
        case .untilClose:
            message?.body.gap(length: length)
            message?.warnings.append(.gapInBody(role, length: length))
            message?.complete = false
        case .fixedBody, .chunkData, .chunkSize, .chunkDataEnd, .trailers:
            message?.body.gap(length: length)
            abandonMessage(.gapInBodyRestLost(role, length: length), at: time)
            // The gap ran past the message's end: the next message may start right after it.
            if case .resync = phase { atLineStart = true }
        case .head, .afterRefusedTunnel:
            if buffer.isEmpty {
                pendingWarnings.append(.gapBeforeMessage(role, length: length))
            } else if !salvageCutHead(because: .gapInsideHead(role, length: length), at: time) {
                pendingWarnings.append(.gapInsideHeadLost(role, length: length))
                noteUnparsed(buffer.count, at: time)
            }
            startResync(atLineStart: true)
        case .resync:
            noteUnparsed(buffer.count, at: time)
            buffer.removeAll()
            atLineStart = true
        }
    }

    /// The direction ended. A body delimited by the close is complete after a FIN; any other message is cut.
    func end(reason: StreamEndReason, at time: Timestamp) {
        if case .afterRefusedTunnel = phase {
            if buffer.isEmpty { phase = .head } else { decideAfterRefusedTunnel(isHTTP: Self.looksLikeRequestAfterRefusedTunnel(buffer[...], final: true) ?? true, at: time) }
        }
        switch phase {
        case .untilClose:
            if !reason.isOrderly, let message {
                message.warnings.append(.bodyEndsWithConnection(role, reason))
                message.complete = false
            }
            finishMessage(at: time)
        case .fixedBody(let remaining), .chunkData(let remaining):
            message?.warnings.append(.bodyCutShort(role, missing: remaining, reason))
            message?.complete = false
            finishMessage(at: time)
        case .chunkSize, .chunkDataEnd, .trailers:
            message?.warnings.append(.chunkedBodyCutShort(role, reason))
            message?.complete = false
            finishMessage(at: time)
        case .head:
            if !buffer.isEmpty {
                let problem = HTTPWarning.headCutShort(role, bytes: buffer.count, reason)
                if !salvageCutHead(because: problem, at: time) && !salvageCutRequestLine(reason, at: time) {
                    report(problem)
                    noteUnparsed(buffer.count, at: time)
                }
            }
        case .holding:
            if !held.isEmpty || heldGap { releaseHeld(at: time) }
        case .resync:
            noteUnparsed(buffer.count, at: time)
        case .opaque, .afterRefusedTunnel:
            break
        }
        buffer.removeAll(keepingCapacity: true)
        phase = .opaque
    }

    /// A head that will never be completed (a gap, the capture's end): when its start line is whole, report the
    /// message as incomplete with the fields seen so far, instead of losing it. Returns false when there was not
    /// enough to show.
    private func salvageCutHead(because why: HTTPWarning, at time: Timestamp) -> Bool {
        guard let lastLF = buffer.lastIndex(of: lf), delegate != nil else { return false }
        var head = Array(buffer[...lastLF])
        head += [cr, lf]
        guard let parsed = try? HTTPHeadParser.parse(head[...], role: role),
              let (message, _) = announce(parsed, size: buffer.count)
        else { return false }
        buffer.removeAll()
        scanFrom = 0
        message.warnings.append(why)
        message.complete = false
        self.message = message
        messagesParsed += 1
        finishMessage(at: time)
        return true
    }

    /// A request line the connection's end cut before its line end (`GET /`, then a reset): when it starts like one
    /// (a method of capital letters, a space), the request is shown with the method and target as sent and the
    /// version as far as it came, marked incomplete, as Suricata logs it. Returns false when it does not.
    private func salvageCutRequestLine(_ reason: StreamEndReason, at time: Timestamp) -> Bool {
        guard role == .request, delegate != nil, !buffer.contains(lf),
              let line = Self.cutRequestLine(buffer[...]) else { return false }
        let head = ParsedHead(startLine: .request(method: line.method, uri: line.target, version: line.version),
                              headers: HTTPHeaders([]), anomalies: [])
        guard let (message, _) = announce(head, size: buffer.count) else { return false }
        message.warnings.append(.requestLineCutShort(bytes: buffer.count, reason))
        message.complete = false
        buffer.removeAll()
        scanFrom = 0
        self.message = message
        messagesParsed += 1
        finishMessage(at: time)
        return true
    }

    /// The parts of a request line without its line end, when it starts like one: a method of 1 to 24 capital
    /// letters (or `-`, `_`) and a space; the target up to the next space, the version after it as sent.
    static func cutRequestLine(_ bytes: ArraySlice<UInt8>) -> (method: String, target: String, version: String)? {
        guard let space = bytes.firstIndex(of: 0x20) else { return nil }
        let method = bytes[bytes.startIndex..<space]
        guard (1...24).contains(method.count),
              method.allSatisfy({ (0x41...0x5a).contains($0) || $0 == 0x2d || $0 == 0x5f }) else { return nil }
        let rest = bytes[(space + 1)...].drop { $0 == 0x20 }
        let targetEnd = rest.firstIndex(of: 0x20) ?? rest.endIndex
        let version = rest[targetEnd...].drop { $0 == 0x20 }
        func text(_ part: ArraySlice<UInt8>) -> String {
            String(decoding: part.map { $0 == cr ? 0x20 : $0 }, as: UTF8.self).trimmingASCIIWhitespace()
        }
        return (text(method), text(rest[..<targetEnd]), text(version))
    }

    /// The other side refused an upgrade: parse the held bytes as HTTP after all. The connection calls this after
    /// the call that read the refusal returned, never from inside a parser's call.
    func releaseHeld(at time: Timestamp) {
        guard case .holding = phase else { return }
        let bytes = held
        held.removeAll()
        if heldGap {
            heldGap = false
            pendingWarnings.append(.bytesLostAwaitingUpgrade)
            startResync(atLineStart: true)
        } else {
            phase = .head
        }
        bytes.withUnsafeBytes { _ = consume($0, at: time) }
    }

    /// The server refused a CONNECT. A client may go on with HTTP on the same connection (a new CONNECT with
    /// credentials after a 407) or may already have sent, or still send, what it meant to tunnel. The held bytes
    /// and those that follow are read as HTTP when their first line is a request line; otherwise the parser stops
    /// (opaque) and hands them to the connection (`takeNotHTTP`); they are never parsed as a message.
    func releaseHeldAfterRefusedTunnel(at time: Timestamp) {
        guard case .holding = phase else { return }
        let bytes = held
        held.removeAll()
        if heldGap {
            heldGap = false
            pendingWarnings.append(.bytesLostAwaitingConnectResponse)
            startResync(atLineStart: true)
        } else {
            phase = .afterRefusedTunnel
        }
        bytes.withUnsafeBytes { _ = consume($0, at: time) }
    }

    private func decideAfterRefusedTunnel(isHTTP: Bool, at time: Timestamp) {
        let saved = buffer
        buffer.removeAll()
        guard isHTTP else {
            notHTTP = saved
            phase = .opaque
            return
        }
        phase = .head
        saved.withUnsafeBytes { _ = consume($0, at: time) }
    }

    /// The bytes after a refused CONNECT found not to be HTTP (once): what follows them this way is not HTTP either.
    func takeNotHTTP() -> [UInt8]? {
        defer { notHTTP = nil }
        return notHTTP
    }

    /// Whether `takeNotHTTP` has bytes to give.
    var hasNotHTTP: Bool { notHTTP != nil }

    /// After a refused CONNECT: whether the client's next bytes are HTTP. Nil until the first line is whole;
    /// false as soon as a byte of it could not be in a request line (TLS, SSH and other binary protocols show
    /// this in their first byte) or when the whole line is not a request line with a version; at the end (`final`) a printable fragment counts as HTTP, so the usual
    /// cut-head handling reports it.
    static func looksLikeRequestAfterRefusedTunnel(_ bytes: ArraySlice<UInt8>, final: Bool) -> Bool? {
        var start = bytes.startIndex
        while start < bytes.endIndex && (bytes[start] == cr || bytes[start] == lf) { start += 1 }
        var index = start
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == lf {
                // With a version: HTTP/0.9's bare "WORD text" would also take in other protocols' greetings.
                guard let line = LenientStartLine.read(bytes[start..<index], role: .request) else { return false }
                return !line.isHTTP09
            }
            guard (0x20...0x7e).contains(byte) || byte == 0x09 || byte == cr else { return false }
            index += 1
        }
        return final ? true : nil
    }

    /// The bytes held while an upgrade's answer was awaited, and whether some were lost: the next protocol's first
    /// bytes this way once the other side accepted.
    func takeHeld() -> (bytes: [UInt8], gap: Bool) {
        defer { held = []; heldGap = false }
        return (held, heldGap)
    }
}
