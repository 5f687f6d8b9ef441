import HTTPModel

/// The session's version and cipher suite by name: the names are TLS's tables, the facts are the exchange model's.
extension TLSSessionFacts {
    public var versionName: String? { version.map(TLSVersionName.name) }
    public var cipherSuiteName: String? { cipherSuite.map(CipherSuite.name(of:)) }
}
