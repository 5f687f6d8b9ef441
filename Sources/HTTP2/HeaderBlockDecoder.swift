import HTTPModel
import NIOCore
import NIOHPACK

/// HPACK (RFC 7541) for one direction of a connection, through swift-nio-http2's decoder, as a passive observer:
/// the dynamic table follows the peer's size updates, bounded by the largest SETTINGS_HEADER_TABLE_SIZE the
/// other side advertised.
///
/// When the table's earlier contents are unknown (the capture began mid-connection, or a block was lost), it
/// decodes field by field: each field representation is decoded alone, so literals and static-table references
/// still come out, and references to dynamic entries from before the capture are counted instead. Entries added
/// since are the newest of the real table, so references to them stay right — until a field whose name was
/// itself unknown is added to the table: from then on dynamic references are not trusted in this direction.
struct HeaderBlockDecoder {
    struct Decoded {
        var fields: [(name: String, value: String)]
        /// Fields that referred to table entries this decoder never saw.
        var unknownFields: Int
        /// Why the block could not be decoded at all (then `fields` holds what came before the failure).
        var failure: HTTPWarning?
    }

    private var decoder: HPACKDecoder
    private let maxTableBytes: Int
    /// Set once the table's contents may differ from the peer's.
    private(set) var tableUnknown = false
    private var trustDynamicEntries = true
    private static let staticTableCount = 61

    init(maxHeaderListBytes: Int, maxTableBytes: Int, tableUnknown: Bool = false) {
        decoder = HPACKDecoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
                               maxHeaderListSize: maxHeaderListBytes)
        self.maxTableBytes = maxTableBytes
        self.tableUnknown = tableUnknown
    }

    /// The other side's SETTINGS_HEADER_TABLE_SIZE: the most this side's encoder may use.
    mutating func peerAllowsTable(bytes: Int) {
        let allowed = min(maxTableBytes, max(bytes, decoder.maxDynamicTableLength))
        if allowed != decoder.maxDynamicTableLength { decoder.maxDynamicTableLength = allowed }
    }

    /// A block was lost (gap, limit): the table may now differ from the peer's.
    mutating func markTableUnknown() { tableUnknown = true }

    mutating func decode(_ block: [UInt8]) -> Decoded {
        if !tableUnknown {
            var buffer = ByteBuffer(bytes: block)
            do {
                let headers = try decoder.decodeHeaders(from: &buffer)
                return Decoded(fields: headers.map { ($0.name, $0.value) }, unknownFields: 0, failure: nil)
            } catch {
                // The table (or the block) is not what the peer's encoder had: go on field by field. Entries this
                // failed attempt already added make the table's indexes unreliable, so dynamic references are
                // no longer trusted in this direction.
                tableUnknown = true
                trustDynamicEntries = false
                var decoded = decodeFieldByField(block)
                decoded.failure = .hpackFailed("\(error)")
                return decoded
            }
        }
        return decodeFieldByField(block)
    }

    private mutating func decodeFieldByField(_ block: [UInt8]) -> Decoded {
        var result = Decoded(fields: [], unknownFields: 0, failure: nil)
        var offset = 0
        while offset < block.count {
            guard let field = HPACKFieldBoundary.next(in: block, at: offset) else {
                result.failure = .hpackMalformedField(offset: offset, blockBytes: block.count)
                return result
            }
            defer { offset = field.end }
            let refersToDynamic = field.index > Self.staticTableCount
            if refersToDynamic && !trustDynamicEntries {
                result.unknownFields += 1
                if field.addsToTable { trustDynamicEntries = false }
                continue
            }
            var buffer = ByteBuffer(bytes: block[offset..<field.end])
            do {
                let headers = try decoder.decodeHeaders(from: &buffer)
                result.fields += headers.map { ($0.name, $0.value) }
            } catch {
                result.unknownFields += 1
                // The peer added an entry this table could not: later indexes no longer line up.
                if field.addsToTable { trustDynamicEntries = false }
            }
        }
        return result
    }
}
