import HTTPModel

/// The QPACK decoder stream (RFC 9204 section 4.4): what the decoding endpoint tells the encoder. An observer
/// needs none of it to decode, so it is only read through, instruction by instruction across any split, and
/// counted; an instruction that cannot be read stops the reading with a warning.
struct QPACKDecoderStreamReader {
    private(set) var sectionAcknowledgments = 0
    private(set) var streamCancellations = 0
    private(set) var insertCountIncrements = 0
    private var integer = PrefixInteger()
    private var kind: Kind?
    private var broken = false

    private enum Kind { case acknowledgment, cancellation, increment }

    /// Nil while the bytes read as instructions; a warning (once) when they stop doing so.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> HTTPWarning? {
        guard !broken else { return nil }
        for byte in bytes {
            if kind == nil {
                // 1xxxxxxx Section Acknowledgment, 01xxxxxx Stream Cancellation, 00xxxxxx Insert Count Increment.
                let (found, prefix): (Kind, Int) = byte & 0x80 != 0 ? (.acknowledgment, 7)
                    : byte & 0x40 != 0 ? (.cancellation, 6) : (.increment, 6)
                kind = found
                integer = PrefixInteger(prefixBits: prefix)
            }
            switch integer.feed(byte) {
            case .needMore: continue
            case .overflow:
                broken = true
                return .qpackFailed("decoder stream instruction with an integer over 62 bits")
            case .done:
                switch kind {
                case .acknowledgment: sectionAcknowledgments += 1
                case .cancellation: streamCancellations += 1
                case .increment: insertCountIncrements += 1
                case nil: break
                }
                kind = nil
            }
        }
        return nil
    }
}

/// An RFC 7541 section 5.1 prefix integer as QPACK uses it, read one byte at a time (the first byte's low
/// `prefixBits` bits, then 7 bits per continuation byte), bounded to 62 bits like QUIC's own integers.
struct PrefixInteger {
    enum Step { case needMore, done(UInt64), overflow }
    private var prefixBits = 8
    private var value: UInt64 = 0
    private var shift: UInt64 = 0
    private var started = false

    init(prefixBits: Int = 8) { self.prefixBits = prefixBits }

    mutating func feed(_ byte: UInt8) -> Step {
        if !started {
            started = true
            let mask = UInt8((1 << prefixBits) - 1)
            value = UInt64(byte & mask)
            return value < UInt64(mask) ? .done(value) : .needMore
        }
        guard shift <= 55 else { return .overflow }
        value += UInt64(byte & 0x7f) << shift
        shift += 7
        guard value < 1 << 62 else { return .overflow }
        return byte & 0x80 != 0 ? .needMore : .done(value)
    }
}
