import TLSWire

// The TLS wire format on bytes a client or server sends first: the "is this TLS?" test, the first record's
// ClientHello as connection labels read it, and the same bytes as handshake messages (framed in pieces by the
// assembler) read as ClientHello, ServerHello and EncryptedExtensions, as decryption reads them.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientHello(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = TLSRecordHeader.startsTLS(bytes)
    if case .clientHello(let hello) = TLSClientHello.parse(bytes) {
        _ = hello.serverName?.count
        _ = hello.alpn.count
    }
    _ = bytes.withUnsafeBytes { ClientHelloFacts(message: $0) }
    // Handshake framing with a small limit over what follows a record header (the seeds are records), cut in
    // two where the last byte says.
    let messages = TLSRecordHeader.startsTLS(bytes) == true ? bytes.dropFirst(TLSRecordHeader.size) : bytes[...]
    var assembler = HandshakeAssembler(maxMessageLength: 512)
    let cut = messages.startIndex + (bytes.last.map { Int($0) % (messages.count + 1) } ?? 0)
    for piece in [messages[..<cut], messages[cut...]] {
        assembler.append(piece) { type, body in
            switch type {
            case HandshakeType.clientHello: _ = ClientHelloFacts(body: body)?.cipherSuites.count
            case HandshakeType.serverHello: _ = ServerHelloFacts(body: body)?.version
            case HandshakeType.encryptedExtensions: _ = EncryptedExtensionsFacts(body: body).alpn
            default: break
            }
        }
    }
    return 0
}
