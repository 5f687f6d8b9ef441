@testable import BodyDecoding
@testable import HTTPDecoding
import HTTPModel
import Testing

/// Both SHA-256 implementations: libcrypto (used for bodies) and the pure-Swift reference.
enum Implementation: String, CaseIterable, Sendable {
    case libcrypto, portable

    func digest(pieces: [ArraySlice<UInt8>]) -> String {
        switch self {
        case .libcrypto:
            let hasher = SHA256()
            for piece in pieces { piece.withUnsafeBytes { hasher.update($0) } }
            return hasher.hexDigest()
        case .portable:
            var hasher = PortableSHA256()
            for piece in pieces { piece.withUnsafeBytes { hasher.update($0) } }
            return hasher.hexDigest()
        }
    }

    func digest(_ bytes: [UInt8], pieceSize: Int = Int.max) -> String {
        var pieces: [ArraySlice<UInt8>] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            pieces.append(bytes[offset..<end])
            offset = end
        }
        return digest(pieces: pieces)
    }
}

@Suite struct SHA256Tests {
    static let vectors = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ]

    /// A body's digest as a value: its hex digits, written on the stack or as a String, are the known vectors', and
    /// equal digests are equal values whose hashes agree.
    @Test func digestValuesGiveTheKnownHexDigits() {
        var seen: Set<SHA256Digest> = []
        for (input, wanted) in Self.vectors {
            let digest = SHA256.digest(of: Array(input.utf8))
            #expect(digest.hex == wanted)
            #expect(digest.withHexDigits { Array($0) } == Array(wanted.utf8))
            #expect(digest.withUnsafeBytes { $0.count } == 32)
            #expect(digest == SHA256.digest(of: Array(input.utf8)))
            seen.insert(digest)
            seen.insert(SHA256.digest(of: Array(input.utf8)))
        }
        #expect(seen.count == Self.vectors.count)
        #expect(SHA256.digest(of: [1]) != SHA256.digest(of: [2]))
    }

    @Test(arguments: Implementation.allCases)
    func knownVectors(implementation: Implementation) {
        for (input, digest) in Self.vectors {
            #expect(implementation.digest(Array(input.utf8)) == digest, "\(implementation) \"\(input)\"")
        }
    }

    @Test(arguments: Implementation.allCases)
    func millionAs(implementation: Implementation) {
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        #expect(implementation.digest(pieces: Array(repeating: block[...], count: 1000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func implementationsAgreeInAnySplit() {
        var state: UInt64 = 88172645463325252
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 1000, 4097] {
            let data = (0..<length).map { _ -> UInt8 in
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            }
            let reference = Implementation.portable.digest(data)
            for piece in [1, 3, 63, 64, 65, 200, Int.max] {
                #expect(Implementation.libcrypto.digest(data, pieceSize: piece) == reference, "length \(length) piece \(piece)")
                #expect(Implementation.portable.digest(data, pieceSize: piece) == reference, "length \(length) piece \(piece)")
            }
        }
    }

    @Test func finalizeDoesNotConsume() {
        let hasher = SHA256()
        Array("ab".utf8).withUnsafeBytes { hasher.update($0) }
        _ = hasher.hexDigest()
        Array("c".utf8).withUnsafeBytes { hasher.update($0) }
        #expect(hasher.hexDigest() == Self.vectors[1].1)
    }
}

@Suite struct SHA256HelperTests {
    @Test func staticHelpersAgree() {
        let data = Array("The quick brown fox jumps over the lazy dog".utf8)
        let expected = "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
        #expect(SHA256.hexDigest(of: data) == expected)
        #expect(PortableSHA256.hexDigest(of: data) == expected)
    }
}
