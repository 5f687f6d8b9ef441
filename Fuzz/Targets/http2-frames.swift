// HTTP/2 framing and WebSocket decoding without the HPACK library: the frame splitter (padding, limits), the
// HPACK field boundary reader used when a header table is unknown, the gRPC message counter, the mid-connection
// frame sniffer, and the WebSocket frame reader with permessage-deflate. HPACK decoding as the HTTP2 module
// drives it is the hpack-blocks target's.
import FlowReassembly
@testable import HTTP2
import HTTPDecoding
import HTTPModel
import PacketDecoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2Frames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    let pieceSize = Int(input.byte()) + 1
    let bytes = input.rest()

    // Frames: small or default buffer limit, fed in pieces.
    var splitter = FrameSplitter(maxBufferedFrameBytes: options & 1 == 0 ? 64 : 1 << 20)
    var grpc = GRPCMessageCounter(maxListed: 4)
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + pieceSize)
        splitter.consume(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { piece in
            switch piece {
            case .frame(let header, let payload) where header.type == FrameType.headers:
                let block = Array(payload)
                var position = 0
                while position < block.count, let field = HPACKFieldBoundary.next(in: block, at: position) {
                    precondition(field.end > position && field.end <= block.count)
                    position = field.end
                }
            case .data(_, let payload, _):
                grpc.consume(payload)
            default:
                break
            }
        }
        offset = end
    }
    _ = HTTP2FrameSniffer.looksLikeClientFrames(Array(bytes.prefix(256)))

    // WebSocket: one direction, with or without permessage-deflate and context takeover.
    var limits = HTTP2Limits()
    limits.maxWebSocketMessageBytes = 1 << 16
    var decoder = DirectionDecoder(direction: options & 2 == 0 ? .clientToServer : .serverToClient,
                                   deflate: options & 4 != 0, contextTakeover: options & 8 != 0, keepBytes: 64,
                                   limits: limits)
    let time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    var messages = 0
    offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + pieceSize)
        decoder.consume(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), at: time) { _ in messages += 1 }
        offset = end
    }
    if options & 16 != 0 { decoder.gap(length: 10, at: time) { _ in messages += 1 } }
    decoder.flush(at: time) { _ in messages += 1 }
    return 0
}
