import HTTPModel
import TLSWire

extension QUICTransportParameter {
    /// At most this many parameters are read from one side's extension (real stacks send about twenty).
    static let maxCount = 64

    /// Reads the quic_transport_parameters extension's value: (id, length, value) triples of RFC 9000 section 18,
    /// each value by the encoding its id gives. A value that does not read as its id says (an integer with bytes
    /// left over, a short preferred_address) is kept as the bytes sent; the list stops where a length runs past the
    /// end.
    static func list(_ extensionValue: [UInt8]) -> [QUICTransportParameter] {
        extensionValue.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            var parameters: [QUICTransportParameter] = []
            while parameters.count < maxCount, let id = cursor.quicVarInt(), let length = cursor.quicVarInt(),
                  length <= UInt64(cursor.remaining), let value = cursor.take(Int(length)) {
                parameters.append(QUICTransportParameter(id: id, value: Self.value(value, encoding: known[id]?.encoding)))
            }
            return parameters
        }
    }

    private static func value(_ bytes: UnsafeRawBufferPointer, encoding: Encoding?) -> Value {
        var cursor = ByteCursor(bytes)
        switch encoding {
        case .integer:
            if let number = cursor.quicVarInt(), cursor.isAtEnd { return .integer(number) }
        case .flag:
            if bytes.isEmpty { return .flag }
        case .preferredAddress:
            if let ipv4 = cursor.take(4), let ipv4Port = cursor.u16(), let ipv6 = cursor.take(16), let ipv6Port = cursor.u16(),
               let connectionID = cursor.vector8(), let token = cursor.take(16), cursor.isAtEnd {
                return .preferredAddress(ipv4: Array(ipv4), ipv4Port: ipv4Port, ipv6: Array(ipv6), ipv6Port: ipv6Port,
                                         connectionID: Array(connectionID), resetToken: Array(token))
            }
        case .versionInformation:
            if let chosen = cursor.u32(), cursor.remaining % 4 == 0 {
                var available: [UInt32] = []
                while let version = cursor.u32() { available.append(version) }
                return .versionInformation(chosen: chosen, available: available)
            }
        case .bytes, nil:
            break
        }
        return .bytes(Array(bytes))
    }
}
