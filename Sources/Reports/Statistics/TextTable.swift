/// Columns padded to their widest cell: names in `left` to the left, the rest (numbers) to the right.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []
    var left: Set<Int>

    init(header: [String], left: Set<Int>) {
        self.header = header
        self.left = left
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    func render(indent: String = "  ") -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count { widths[column] = max(widths[column], cell.count) }
        }
        var text = ""
        for row in [header] + rows {
            var line = indent
            for (column, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
                if column > 0 { line += "  " }
                line += left.contains(column) ? cell + padding : padding + cell
            }
            while line.hasSuffix(" ") { line.removeLast() }
            text += line + "\n"
        }
        return text
    }
}

/// Number spellings shared by the statistics views.
enum StatisticsFormat {
    /// Seconds with six decimals: `0.001907`.
    static func seconds(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        guard abs(value) < 9e12 else { return String(value) }  // a hostile file's times; Int64 microseconds overflow
        let micros = Int64((value * 1_000_000).rounded())
        let whole = micros.magnitude / 1_000_000, fraction = micros.magnitude % 1_000_000
        let digits = String(fraction)
        return (micros < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Milliseconds with one decimal: `12.3 ms`; `-` when there is no value.
    static func milliseconds(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "-" }
        let tenths = Int64((value * 10_000).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
