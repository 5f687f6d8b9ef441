import Testing
@testable import Reports

/// The packet JSON (PacketOutput) and the exchange, HAR and stats JSON (JSONText) escape strings the same way.
@Suite struct JSONEscapingTests {
    @Test func packetAndExchangeEscapersAgree() {
        var text = "plain \"quoted\" back\\slash tab\t cr\r lf\n é ✓ "
        for byte in UInt8(0)..<0x20 { text.unicodeScalars.append(Unicode.Scalar(byte)) }
        var json = JSONText()
        json.string(text)
        var output = PacketOutput(fileDescriptor: -1)
        output.append("\"")
        output.appendJSONEscaped(text.utf8)
        output.append("\"")
        #expect(String(decoding: output.bytes, as: UTF8.self) == json.text)
        #expect(json.text.contains("\\n") && json.text.contains("\\u001f"))
    }

    @Test func bytesThatMayNotBeUTF8AreEscapedWhenAsked() {
        var output = PacketOutput(fileDescriptor: -1)
        output.appendJSONEscaped([0x61, 0x7f, 0xc3, 0xa9, 0x0a], bytesAboveASCII: true)
        #expect(String(decoding: output.bytes, as: UTF8.self) == "a\\u007f\\u00c3\\u00a9\\n")
    }
}
