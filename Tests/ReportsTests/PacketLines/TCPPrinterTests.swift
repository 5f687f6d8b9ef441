@testable import PacketDecoding
@testable import Reports
import Testing

@Suite struct TCPPrinterTests {
    func segment(flags: TCPFlags, seq: UInt32, ack: UInt32, options: UnsafeRawBufferPointer, declaredOptions: Int? = nil,
                 length: Int = 0) -> TCPSegment {
        TCPSegment(source: Endpoint(address: Printed.a, port: 40000), destination: Endpoint(address: Printed.b, port: 443),
                   sequenceNumber: seq, acknowledgmentNumber: ack, flags: flags, window: 512, urgentPointer: 0,
                   headerLength: 20 + (declaredOptions ?? options.count), options: options,
                   payload: UnsafeRawBufferPointer(start: nil, count: 0), payloadLength: length)
    }

    func line(_ segment: TCPSegment, renderer: inout PacketLineRenderer) -> String {
        let packet = Printed.packet(network: .ipv4(Printed.ipv4(protocolNumber: 6, length: segment.headerLength)),
                                    transport: .tcp(segment), wireLength: 20 + segment.headerLength)
        return Printed.line(packet, renderer: &renderer)
    }

    @Test func synWithOptionsAsTcpdumpPrintsThem() {
        let options: [UInt8] = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7]
        options.withUnsafeBytes { raw in
            var renderer = PacketLineRenderer()
            #expect(line(segment(flags: .syn, seq: 1000, ack: 0, options: raw), renderer: &renderer)
                    == "IP 10.0.0.1.40000 > 10.0.0.2.443: Flags [S], seq 1000, win 512, options [mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7], length 0")
        }
    }

    @Test func sequenceNumbersAreRelativeAfterTheFirstAck() {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        var renderer = PacketLineRenderer()
        _ = line(segment(flags: .ack, seq: 5000, ack: 9000, options: none), renderer: &renderer)
        #expect(line(segment(flags: [.psh, .ack], seq: 5010, ack: 9000, options: none, length: 10), renderer: &renderer)
                == "IP 10.0.0.1.40000 > 10.0.0.2.443: Flags [P.], seq 10:20, ack 1, win 512, length 10")
    }

    @Test func optionsCutBySnapLengthEndTheLine() {
        let captured: [UInt8] = [1, 1, 8, 10, 0, 0]
        captured.withUnsafeBytes { raw in
            var renderer = PacketLineRenderer()
            #expect(line(segment(flags: .syn, seq: 1, ack: 0, options: raw, declaredOptions: 12), renderer: &renderer)
                    == "IP 10.0.0.1.40000 > 10.0.0.2.443: Flags [S], seq 1, win 512, options [nop,nop,TS [|tcp]>")
        }
    }

    @Test func badOptionLengthIsMarked() {
        let options: [UInt8] = [2, 1, 0, 0]
        options.withUnsafeBytes { raw in
            var renderer = PacketLineRenderer()
            #expect(line(segment(flags: .syn, seq: 1, ack: 0, options: raw), renderer: &renderer)
                    == "IP 10.0.0.1.40000 > 10.0.0.2.443: Flags [S], seq 1, win 512, options [[bad opt]]")
        }
    }

    @Test func cutHeaderShowsThePorts() {
        let cut = CutTransportHeader(source: Endpoint(address: Printed.a, port: 1), destination: Endpoint(address: Printed.b, port: 2),
                                     fixedTCPHeader: nil)
        let packet = Printed.packet(network: .ipv4(Printed.ipv4(protocolNumber: 6, length: 20)), transport: .cutTCP(cut),
                                    wireLength: 40, error: DecodingError(layer: .tcp, kind: .truncated, offset: 34, needed: 20, actual: 4))
        #expect(Printed.line(packet) == "IP 10.0.0.1.1 > 10.0.0.2.2:  [|tcp]")
    }
}
