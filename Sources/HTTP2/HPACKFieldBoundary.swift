/// Where one HPACK field representation (or table size update) ends, and which table index it names, read
/// from RFC 7541 section 6 without decoding strings.
enum HPACKFieldBoundary {
    struct Field {
        var end: Int
        /// The index the representation names (0 for a literal name).
        var index: Int
        /// Literal with incremental indexing: the peer's table grows by this field.
        var addsToTable: Bool
    }

    static func next(in block: [UInt8], at start: Int) -> Field? {
        let first = block[start]
        var offset = start
        let prefix: Int
        let addsToTable: Bool
        let hasLiteralValue: Bool
        if first & 0x80 != 0 { prefix = 7; addsToTable = false; hasLiteralValue = false }         // indexed
        else if first & 0xc0 == 0x40 { prefix = 6; addsToTable = true; hasLiteralValue = true }    // incremental
        else if first & 0xe0 == 0x20 { prefix = 5; addsToTable = false; hasLiteralValue = false }  // size update
        else { prefix = 4; addsToTable = false; hasLiteralValue = true }                           // without/never indexed
        guard let index = integer(block, &offset, prefix: prefix) else { return nil }
        if first & 0xe0 == 0x20 { return Field(end: offset, index: 0, addsToTable: false) }
        if hasLiteralValue {
            if index == 0 { guard skipString(block, &offset) else { return nil } }
            guard skipString(block, &offset) else { return nil }
        }
        return Field(end: offset, index: index, addsToTable: addsToTable)
    }

    private static func integer(_ block: [UInt8], _ offset: inout Int, prefix: Int) -> Int? {
        guard offset < block.count else { return nil }
        let mask = (1 << prefix) - 1
        var value = Int(block[offset]) & mask
        offset += 1
        guard value == mask else { return value }
        var shift = 0
        while offset < block.count {
            let byte = Int(block[offset])
            offset += 1
            guard shift <= 28 else { return nil }
            value += (byte & 0x7f) << shift
            shift += 7
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }

    private static func skipString(_ block: [UInt8], _ offset: inout Int) -> Bool {
        guard let length = integer(block, &offset, prefix: 7), length <= block.count - offset else { return false }
        offset += length
        return true
    }
}
