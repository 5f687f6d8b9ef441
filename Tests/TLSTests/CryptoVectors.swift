import Foundation
import TestSupport

/// Vectors made at test time by crypto-vectors.py beside this file, from implementations other than the libcrypto
/// the decoder uses (CPython's own HMAC and SHA modules; the `cryptography` package's AEADs and AES-CBC): the
/// independent side of KeyDerivationTests, RecordMACTests and RecordCipherTests. Fresh random inputs every run.
struct CryptoVectors: Sendable {
    struct ExpandLabel: Sendable { var sha384: Bool; var secret: [UInt8]; var label: String; var context: [UInt8]; var length: Int; var out: [UInt8] }
    struct PRF: Sendable { var sha384: Bool; var secret: [UInt8]; var label: String; var seed: [UInt8]; var length: Int; var out: [UInt8] }
    struct Extract: Sendable { var sha384: Bool; var salt: [UInt8]; var key: [UInt8]; var out: [UInt8] }
    struct MAC: Sendable { var hash: String; var key: [UInt8]; var first: [UInt8]; var second: [UInt8]; var out: [UInt8] }
    struct AEAD: Sendable { var algorithm: String; var key: [UInt8]; var nonce: [UInt8]; var aad: [UInt8]; var plaintext: [UInt8]; var ciphertext: [UInt8]; var tag: [UInt8] }
    struct CBC: Sendable { var key: [UInt8]; var iv: [UInt8]; var plaintext: [UInt8]; var ciphertext: [UInt8] }

    var expandLabel: [ExpandLabel] = []
    var prf12: [PRF] = []
    var extract: [Extract] = []
    var hmac: [MAC] = []
    var aead: [AEAD] = []
    var cbc: [CBC] = []

    /// python3 with the `cryptography` package (Scripts/setup --test installs it with aioquic).
    static let available: Bool = {
        guard TestEnvironment.hasProgram("python3"),
              let probe = try? TestSupport.run("python3", ["-c", "import cryptography, _sha1, _sha256, _sha512"]) else { return false }
        return probe.status == 0
    }()

    enum Failure: Error { case script(status: Int32, stderr: String), notJSON }

    static func make() throws -> CryptoVectors {
        let script = TestEnvironment.packageRoot.appendingPathComponent("Tests/TLSTests/crypto-vectors.py").path
        let result = try TestSupport.run("python3", [script])
        guard result.status == 0 else { throw Failure.script(status: result.status, stderr: result.stderrText) }
        guard let document = try JSONSerialization.jsonObject(with: result.stdout) as? [String: [[String: Any]]] else {
            throw Failure.notJSON
        }
        func hex(_ value: Any?) -> [UInt8] {
            let text = Array((value as? String ?? "").utf8)
            return stride(from: 0, to: text.count - 1, by: 2).map { UInt8(String(decoding: text[$0...$0 + 1], as: UTF8.self), radix: 16)! }
        }
        var vectors = CryptoVectors()
        for v in document["expandLabel"] ?? [] {
            vectors.expandLabel.append(.init(sha384: v["sha384"] as! Bool, secret: hex(v["secret"]), label: v["label"] as! String,
                                             context: hex(v["context"]), length: v["length"] as! Int, out: hex(v["out"])))
        }
        for v in document["prf12"] ?? [] {
            vectors.prf12.append(.init(sha384: v["sha384"] as! Bool, secret: hex(v["secret"]), label: v["label"] as! String,
                                       seed: hex(v["seed"]), length: v["length"] as! Int, out: hex(v["out"])))
        }
        for v in document["extract"] ?? [] {
            vectors.extract.append(.init(sha384: v["sha384"] as! Bool, salt: hex(v["salt"]), key: hex(v["key"]), out: hex(v["out"])))
        }
        for v in document["hmac"] ?? [] {
            vectors.hmac.append(.init(hash: v["hash"] as! String, key: hex(v["key"]), first: hex(v["first"]),
                                      second: hex(v["second"]), out: hex(v["out"])))
        }
        for v in document["aead"] ?? [] {
            vectors.aead.append(.init(algorithm: v["algorithm"] as! String, key: hex(v["key"]), nonce: hex(v["nonce"]),
                                      aad: hex(v["aad"]), plaintext: hex(v["plaintext"]), ciphertext: hex(v["ciphertext"]),
                                      tag: hex(v["tag"])))
        }
        for v in document["cbc"] ?? [] {
            vectors.cbc.append(.init(key: hex(v["key"]), iv: hex(v["iv"]), plaintext: hex(v["plaintext"]),
                                     ciphertext: hex(v["ciphertext"])))
        }
        return vectors
    }
}
