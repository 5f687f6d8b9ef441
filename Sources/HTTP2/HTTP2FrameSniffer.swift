import TLSWire

/// Whether bytes picked up mid-connection look like HTTP/2 frames from a client: every complete frame header in
/// them has a known type, a length within the default maximum frame size, flags that type can carry, and a
/// stream id that fits it; at least one header is complete.
enum HTTP2FrameSniffer {
    static func looksLikeClientFrames(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            var frames = 0
            while frames < 8, let header = FrameHeader(&cursor) {
                // The stream id's reserved bit, which `FrameHeader` clears: the header's last four bytes.
                let reservedBit = raw[cursor.offset - 4] & 0x80
                guard header.type <= FrameType.continuation, header.length <= 16_384, reservedBit == 0 else { return false }
                let connectionLevel = header.type == FrameType.settings || header.type == FrameType.ping || header.type == FrameType.goaway
                guard connectionLevel == (header.streamID == 0) || header.type == FrameType.windowUpdate else { return false }
                // Client-initiated streams are odd.
                if header.type == FrameType.headers && header.streamID % 2 == 0 { return false }
                frames += 1
                guard cursor.skip(header.length) else { break }
            }
            return frames > 0
        }
    }
}
