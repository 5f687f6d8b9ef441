@testable import HTTPDecoding

// The TLS ClientHello parser on the first bytes of a client stream: the sniffing test and the full parse.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientHello(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = TLSClientHello.looksLikeTLS(bytes[...])
    if case .clientHello(let hello) = TLSClientHello.parse(bytes) {
        _ = hello.serverName?.count
        _ = hello.alpn.count
    }
    return 0
}
