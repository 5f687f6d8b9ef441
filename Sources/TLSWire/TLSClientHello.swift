/// Reads the ClientHello from the first TLS record of a connection, for the connection's label (server name, ALPN).
/// Only the first record is read: a ClientHello larger than one record is cut there, and the fields a label
/// shows come early in it.
public enum TLSClientHello {
    public enum Outcome {
        /// More bytes are needed: the record is not complete yet.
        case needMore
        /// Not a TLS handshake record.
        case notTLS
        /// The record's ClientHello; empty facts when the record holds another message or one cut short before
        /// its extensions.
        case clientHello(ClientHelloFacts)
    }

    public static func parse(_ bytes: [UInt8]) -> Outcome {
        bytes.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            guard let header = TLSRecordHeader(&cursor) else { return .needMore }
            guard header.type == TLSRecordHeader.handshake, header.version >> 8 == 3 else { return .notTLS }
            guard let fragment = cursor.take(header.length) else { return .needMore }
            return .clientHello(ClientHelloFacts(message: fragment) ?? ClientHelloFacts())
        }
    }
}
