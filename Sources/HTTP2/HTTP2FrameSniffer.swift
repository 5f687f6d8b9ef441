/// Whether bytes picked up mid-connection look like HTTP/2 frames from a client: every complete frame header in
/// them has a known type, a length within the default maximum frame size, flags that type can carry, and a
/// stream id that fits it; at least one header is complete.
enum HTTP2FrameSniffer {
    static func looksLikeClientFrames(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        var frames = 0
        while offset + FrameHeader.size <= bytes.count && frames < 8 {
            let header = bytes[offset..<offset + FrameHeader.size].withUnsafeBytes { FrameHeader($0) }
            guard header.type <= FrameType.continuation, header.length <= 16_384, bytes[offset + 5] & 0x80 == 0 else { return false }
            let connectionLevel = header.type == FrameType.settings || header.type == FrameType.ping || header.type == FrameType.goaway
            guard connectionLevel == (header.streamID == 0) || header.type == FrameType.windowUpdate else { return false }
            // Client-initiated streams are odd.
            if header.type == FrameType.headers && header.streamID % 2 == 0 { return false }
            frames += 1
            offset += FrameHeader.size + header.length
        }
        return frames > 0
    }
}
