import PacketDecoding
import Reports

// Tunnelled Ethernet frames (PPPoE, MPLS, GRE/ERSPAN, VXLAN, Geneve, IP-in-IP...) through the decoder, the packet
// lines (default, and -q with -X) and the packet JSON, checking what the decoder promises about outer layers: at
// most `Encapsulations.capacity` of them, and every borrowed view (TCP payload, PPPoE tags) inside the frame.
// Input: 1 options byte, then the frame. Seeds: every packet of Tests/Fixtures/tunnels (seed kind `tunnels`).

private let decoder = try! PacketDecoder(linkType: .ethernet)
nonisolated(unsafe) private var lineRenderer = PacketLineRenderer()
nonisolated(unsafe) private var quietRenderer: PacketLineRenderer = {
    var options = PacketLineRenderer.Options()
    options.quiet = true
    options.hexAndASCII = true
    return PacketLineRenderer(options: options)
}()
nonisolated(unsafe) private var output = TextOutput(fileDescriptor: -1, flushThreshold: 1 << 30)

private func isInside(_ view: UnsafeRawBufferPointer, _ frame: UnsafeRawBufferPointer) -> Bool {
    guard view.count > 0, let start = view.baseAddress else { return true }
    guard let base = frame.baseAddress else { return false }
    return start >= base && start + view.count <= base + frame.count
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTunnel(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    let frame = input.rest()
    // Sometimes claim more bytes on the wire than were captured (a snap length), so length fields disagree.
    let originalLength = options & 0x40 != 0 ? frame.count + Int(options & 0x3c) * 16 : frame.count
    let packet = decoder.decode(frame, timestamp: Timestamp(seconds: 1_700_000_000, nanoseconds: 0),
                                originalLength: originalLength)
    precondition(packet.encapsulation.count <= Encapsulations.capacity, "more outer layers than the capacity")
    if let tcp = packet.tcp {
        precondition(isInside(tcp.payload, frame) && isInside(tcp.options, frame), "TCP view outside the frame")
    }
    for layer in packet.encapsulation {
        if case .pppoe(let pppoe) = layer { precondition(isInside(pppoe.tags, frame), "PPPoE tags outside the frame") }
    }
    switch options & 3 {
    case 0: lineRenderer.render(packet, frame: frame, to: &output)
    case 1: quietRenderer.render(packet, frame: frame, to: &output)
    default: PacketJSONRenderer().render(packet, index: 1, to: &output)
    }
    _ = output.flush()  // no file behind it: this only empties the buffer
    return 0
}
