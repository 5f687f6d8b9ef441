#if canImport(Glibc)
import Glibc
#endif
import FlowReassembly
import HTTPDecoding
import HTTPModel
import PacketCapture
import PacketDecoding
import Reports

// A whole capture file (pcap or pcapng) through the `capture -r FILE --http --json` path: libpcap reads it,
// then decoding, reassembly, HTTP decoding and the JSON line per exchange. The input is written to a file in
// /dev/shm (libpcap reads files), one per fuzzing process.

private let path = "/dev/shm/tapkit-fuzz-capture-\(getpid()).pcap"
nonisolated(unsafe) private var sink = TextOutput(fileDescriptor: -1, flushThreshold: 1 << 16)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCaptureFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let file = fopen(path, "wb") else { return 0 }
    fwrite(data, 1, size, file)
    fclose(file)
    defer { unlink(path) }
    guard let handle = try? CaptureHandle.openOffline(path),
          let decoder = try? PacketDecoder(linkType: handle.linkType) else { return 0 }
    var consumer = HTTPStreamDecoder { event in
        if case .exchange(let exchange) = event {
            HTTPJSONRenderer.appendLine(for: exchange, to: &sink)
            _ = sink.flush()
        }
    }
    var reassembler = TCPReassembler()
    var last: Timestamp?
    try? handle.forEachPacket { packet in
        last = packet.timestamp
        let decoded = decoder.decode(packet.bytes, timestamp: packet.timestamp, originalLength: packet.originalLength)
        reassembler.process(decoded, into: &consumer)
    }
    let end = last ?? Timestamp(seconds: 0, nanoseconds: 0)
    reassembler.finish(at: end, into: &consumer)
    consumer.flush(at: end)
    return 0
}
