import PacketDecoding
import Reports

// One packet through the decoder and both packet renderers (lines with every dump option and -v level, and JSON), for every
// link type the decoder supports. Input: 2 bytes link type (big endian; an unsupported value picks one of the
// supported ones), 1 byte of renderer options, then the frame.

nonisolated(unsafe) private var decoders: [Int32: PacketDecoder] = {
    var table: [Int32: PacketDecoder] = [:]
    for raw in Int32(0)...Int32(400) {
        let type = LinkType(rawValue: raw)
        if type.isSupported, let decoder = try? PacketDecoder(linkType: type) { table[raw] = decoder }
    }
    return table
}()
private let supported = decoders.keys.sorted()
nonisolated(unsafe) private var lineRenderer = PacketLineRenderer()
nonisolated(unsafe) private var quietRenderer: PacketLineRenderer = {
    var options = PacketLineRenderer.Options()
    options.quiet = true
    options.ascii = true
    options.utc = true
    options.verbosity = 1
    return PacketLineRenderer(options: options)
}()
nonisolated(unsafe) private var hexRenderer: PacketLineRenderer = {
    var options = PacketLineRenderer.Options()
    options.hexAndASCII = true
    options.showTimestamp = false
    options.verbosity = 3  // -vvv: checksums, IPv6 options, ND options, HTTP lines, every DNS section
    return PacketLineRenderer(options: options)
}()
nonisolated(unsafe) private var output = TextOutput(fileDescriptor: -1, flushThreshold: 1 << 16)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPacket(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let raw = Int32(input.uint16())
    let linkType = decoders[raw] != nil ? raw : supported[Int(raw) % supported.count]
    let options = input.byte()
    let frame = input.rest()
    // Times from the input too, so extreme ones reach the renderers.
    let seconds = Int64(bitPattern: UInt64(options) &* 0x0123_4567_89ab_cdef)
    let time = Timestamp(seconds: options & 0x80 != 0 ? seconds : 1_700_000_000,
                         subsecondNanoseconds: Int64(options) * 7_777_777)
    let originalLength = options & 0x40 != 0 ? frame.count + Int(options) * 100 : frame.count
    let packet = decoders[linkType]!.decode(frame, timestamp: time, originalLength: originalLength)
    switch options & 3 {
    case 0: lineRenderer.render(packet, frame: frame, to: &output)
    case 1: quietRenderer.render(packet, frame: frame, to: &output)
    case 2: hexRenderer.render(packet, frame: frame, to: &output)
    default: PacketJSONRenderer().render(packet, index: Int(options), to: &output)
    }
    _ = output.flush()  // no file behind it: this only empties the buffer
    return 0
}
