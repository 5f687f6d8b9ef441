extension PacketLineRenderer {
    /// `-A`: the bytes as ASCII, non-printables as `.` (tcpdump's ascii_print). A CR is left out before LF and
    /// in the last two bytes; elsewhere (a lone CR) it prints as `.`.
    func appendASCII(_ bytes: UnsafeRawBufferPointer, to output: inout TextOutput) {
        output.append(10)
        var index = 0
        while index < bytes.count {
            let c = bytes[index]
            index += 1
            let remaining = bytes.count - index
            if c == 0x0d {
                if remaining > 1 && bytes[index] != 0x0a { output.append(UInt8(ascii: ".")) }
            } else if (c > 0x20 && c < 0x7f) || c == 0x09 || c == 0x20 || c == 0x0a {
                output.append(c)
            } else {
                output.append(UInt8(ascii: "."))
            }
        }
    }

    /// `-x`: 16 bytes a row, offset, hex in pairs (tcpdump's hex_print); each row starts with `indent`.
    func appendHex(_ bytes: UnsafeRawBufferPointer, indent: StaticString = "\n\t", to output: inout TextOutput) {
        var offset = 0
        while offset < bytes.count {
            if offset % 16 == 0 {
                output.append(indent)
                output.append("0x")
                output.append(hexByte: UInt8(truncatingIfNeeded: offset >> 8))
                output.append(hexByte: UInt8(truncatingIfNeeded: offset))
                output.append(": ")
            }
            output.append(" ")
            output.append(hexByte: bytes[offset])
            if offset + 1 < bytes.count { output.append(hexByte: bytes[offset + 1]) }
            offset += 2
        }
    }

    /// `-X`: 16 bytes a row, offset, hex in pairs, then ASCII (tcpdump's hex_and_ascii_print).
    func appendHexAndASCII(_ bytes: UnsafeRawBufferPointer, to output: inout TextOutput) {
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 16, bytes.count)
            output.append("\n\t0x")
            output.append(hexByte: UInt8(truncatingIfNeeded: offset >> 8))
            output.append(hexByte: UInt8(truncatingIfNeeded: offset))
            output.append(": ")
            var columns = 0
            var i = offset
            while i < end {
                output.append(" ")
                output.append(hexByte: bytes[i])
                columns += 3
                if i + 1 < end { output.append(hexByte: bytes[i + 1]); columns += 2 }
                i += 2
            }
            for _ in columns..<40 { output.append(" ") }
            output.append("  ")
            for j in offset..<end {
                let c = bytes[j]
                output.append(c > 0x20 && c < 0x7f ? c : UInt8(ascii: "."))
            }
            offset = end
        }
    }
}
