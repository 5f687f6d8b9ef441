import Foundation
import HTTPModel

/// How a decoded body is shown: text in its charset, JSON pretty-printed, anything binary only summarised.
public enum BodyPresentation: Equatable {
    case empty
    case text(String, isJSON: Bool)
    case binary(mimeType: String, size: Int)

    /// `limit`: decoded bytes to show at most (from the kept prefix of the body).
    public static func of(_ body: HTTPBody, limit: Int) -> BodyPresentation {
        if body.size == 0 { return .empty }
        let media = MediaType(body.contentType)
        let bytes = Array(body.kept.prefix(limit))
        if media.isBinary || (!media.isTextual && looksBinary(bytes)) {
            return .binary(mimeType: media.essence ?? "application/octet-stream", size: body.size)
        }
        guard let decoded = decode(bytes, charset: media.charset) else {
            return .binary(mimeType: media.essence ?? "application/octet-stream", size: body.size)
        }
        let isJSON = media.isJSON || (media.essence == nil && looksLikeJSON(decoded))
        let shown = isJSON ? prettyJSON(decoded) : decoded
        return .text(terminalSafe(shown), isJSON: isJSON)
    }

    struct MediaType {
        var essence: String?
        var charset: String?

        init(_ header: String?) {
            guard let header else { return }
            let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            essence = parts.first.map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].lowercased() == "charset" {
                    charset = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"' ")).lowercased()
                }
            }
        }

        var isJSON: Bool {
            guard let essence else { return false }
            return essence == "application/json" || essence == "text/json" || essence.hasSuffix("+json")
                || essence == "application/x-ndjson"
        }

        var isTextual: Bool {
            guard let essence else { return false }
            if essence.hasPrefix("text/") || isJSON || essence.hasSuffix("+xml") { return true }
            return ["application/xml", "application/javascript", "application/x-javascript", "application/ecmascript",
                    "application/x-www-form-urlencoded", "application/graphql", "application/x-yaml",
                    "application/yaml", "image/svg+xml"].contains(essence)
        }

        var isBinary: Bool {
            guard let essence, !isTextual else { return false }
            return ["image/", "audio/", "video/", "font/"].contains { essence.hasPrefix($0) }
                || ["application/octet-stream", "application/zip", "application/gzip", "application/pdf",
                    "application/wasm", "application/x-protobuf", "application/protobuf", "application/grpc",
                    "application/vnd.ms-fontobject", "application/x-font-woff"].contains(essence)
        }
    }

    /// NUL bytes, or many control bytes, in the first KiB mean binary.
    static func looksBinary(_ bytes: [UInt8]) -> Bool {
        let sample = bytes.prefix(1024)
        if sample.contains(0) { return true }
        let controls = sample.filter { $0 < 0x20 && $0 != 0x09 && $0 != 0x0a && $0 != 0x0d && $0 != 0x0c && $0 != 0x1b }.count
        if controls > sample.count / 20 { return true }
        // Not UTF-8 and no charset to explain it: treat as binary only when the bytes are mostly non-ASCII.
        if String(validating: sample, as: UTF8.self) == nil {
            let high = sample.filter { $0 >= 0x80 }.count
            return high > sample.count / 3
        }
        return false
    }

    static func decode(_ bytes: [UInt8], charset: String?) -> String? {
        let data = Data(bytes)
        let encoding: String.Encoding
        switch charset ?? "utf-8" {
        case "utf-8", "utf8": encoding = .utf8
        case "us-ascii", "ascii": encoding = .ascii
        case "iso-8859-1", "latin1", "iso8859-1", "l1": encoding = .isoLatin1
        case "iso-8859-2", "latin2": encoding = .isoLatin2
        case "windows-1252", "cp1252": encoding = .windowsCP1252
        case "windows-1251", "cp1251": encoding = .windowsCP1251
        case "windows-1250", "cp1250": encoding = .windowsCP1250
        case "utf-16": encoding = .utf16
        case "utf-16le": encoding = .utf16LittleEndian
        case "utf-16be": encoding = .utf16BigEndian
        case "shift_jis", "shift-jis", "sjis": encoding = .shiftJIS
        case "euc-jp": encoding = .japaneseEUC
        default: encoding = .utf8
        }
        if encoding == .utf8 {
            // A body cut at the keep limit may end inside a character: decode what is whole.
            return String(decoding: bytes, as: UTF8.self)
        }
        return String(data: data, encoding: encoding) ?? String(decoding: bytes, as: UTF8.self)
    }

    static func looksLikeJSON(_ text: String) -> Bool {
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        guard let first = trimmed.first, first == "{" || first == "[" else { return false }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
    }

    /// Re-indents JSON text token by token, keeping key order and the exact scalars; works on a cut prefix too.
    static func prettyJSON(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count * 2)
        var depth = 0
        var inString = false
        var escaped = false
        var previousWasOpen = false
        func newline() { out += "\n" + String(repeating: "  ", count: depth) }
        for character in text {
            if inString {
                out.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                continue
            }
            switch character {
            case " ", "\n", "\r", "\t":
                continue
            case "{", "[":
                if previousWasOpen { newline() }
                out.append(character)
                depth += 1
                previousWasOpen = true
                continue
            case "}", "]":
                depth = max(0, depth - 1)
                if !previousWasOpen { newline() }
                out.append(character)
            case ",":
                out.append(character)
                newline()
            case ":":
                out += ": "
            default:
                if previousWasOpen { newline() }
                if character == "\"" { inString = true }
                out.append(character)
            }
            previousWasOpen = false
        }
        return out
    }

    /// Control characters (escape sequences above all) never reach the terminal.
    static func terminalSafe(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0a, 0x09: out.append(scalar)
            case 0x0d: continue
            case 0..<0x20, 0x7f, 0x80..<0xa0: out.append("\u{FFFD}")
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
