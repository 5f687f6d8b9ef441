import Foundation
import Testing
@testable import Reports

/// The one JSON string escaper (packets, exchanges, TLS sessions, statistics, HAR), checked against Foundation's
/// JSON parser as the independent reader.
@Suite struct JSONEscapingTests {
    private func parsed(_ output: TextOutput) throws -> String? {
        try JSONSerialization.jsonObject(with: Data(output.bytes), options: .fragmentsAllowed) as? String
    }

    @Test func everyControlCharacterQuoteAndBackslashRoundTrips() throws {
        var text = "plain \"quoted\" back\\slash tab\t cr\r lf\n é ✓ "
        for byte in UInt8(0)..<0x20 { text.unicodeScalars.append(Unicode.Scalar(byte)) }
        // Long enough that the 8-bytes-at-a-time path meets escapes at every offset within a word.
        text += String(repeating: "abcdefg\"", count: 9) + String(repeating: "x", count: 13) + "\u{1}"
        var output = TextOutput(fileDescriptor: -1)
        output.string(text)
        #expect(try parsed(output) == text)
        #expect(output.text.contains("\\n") && output.text.contains("\\u001f"))
    }

    @Test func bytesThatMayNotBeUTF8AreEscapedWhenAsked() throws {
        var output = TextOutput(fileDescriptor: -1)
        let bytes: [UInt8] = [0x61, 0x7f, 0xc3, 0xa9, 0x0a] + Array("abcdefgh".utf8) + [0xff]
        bytes.withUnsafeBytes { output.appendJSONEscaped($0, bytesAboveASCII: true) }
        #expect(output.text == "a\\u007f\\u00c3\\u00a9\\nabcdefgh\\u00ff")
        // Without the flag, UTF-8 passes through unchanged.
        var plain = TextOutput(fileDescriptor: -1)
        plain.string("é ✓ ünïcödé wörds")
        #expect(try parsed(plain) == "é ✓ ünïcödé wörds")
    }

    @Test func aCopyWrittenToKeepsItsOwnBytes() {
        var first = TextOutput(fileDescriptor: -1)
        first.append("shared")
        var second = first
        second.append(" second")
        first.append(" first")
        #expect(first.text == "shared first" && second.text == "shared second")
    }
}
