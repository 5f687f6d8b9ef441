import Foundation
import HTTPModel

/// HAR 1.2 `cookies`: from the request's `Cookie` headers (`a=1; b=2`, RFC 6265 section 4.2) and from each
/// response `Set-Cookie` header (`name=value; Path=/; Domain=...; Expires=...; HttpOnly; Secure`, section 4.1).
struct HARCookie: Equatable {
    var name: String
    var value: String
    var path: String?
    var domain: String?
    /// ISO 8601, as HAR wants it; nil when the header has no Expires or it does not parse.
    var expires: String?
    var httpOnly: Bool?
    var secure: Bool?

    static func fromRequest(_ headers: HTTPHeaders) -> [HARCookie] {
        headers.values("Cookie").flatMap { line in
            line.split(separator: ";").compactMap { pair in pairParts(Substring(pair)) }
                .map { HARCookie(name: $0.name, value: $0.value) }
        }
    }

    static func fromResponse(_ headers: HTTPHeaders) -> [HARCookie] {
        headers.values("Set-Cookie").compactMap { line in
            var attributes = line.split(separator: ";")
            guard !attributes.isEmpty, let first = pairParts(attributes.removeFirst()) else { return nil }
            var cookie = HARCookie(name: first.name, value: first.value)
            for attribute in attributes {
                let parts = attribute.split(separator: "=", maxSplits: 1)
                let key = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
                let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
                switch key {
                case "path": cookie.path = value
                case "domain": cookie.domain = value
                case "expires": cookie.expires = iso8601(cookieDate: value)
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: break
                }
            }
            return cookie
        }
    }

    private static func pairParts(_ text: Substring) -> (name: String, value: String)? {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts[0].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        var value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
        return (name, value)
    }

    /// `Wed, 21 Oct 2026 07:28:00 GMT` (and the dashed RFC 850 form) to `2026-10-21T07:28:00.000Z`.
    static func iso8601(cookieDate: String) -> String? {
        let parser = DateFormatter()
        parser.locale = Locale(identifier: "en_US_POSIX")
        parser.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz"] {
            parser.dateFormat = format
            if let date = parser.date(from: cookieDate) {
                let printer = DateFormatter()
                printer.locale = Locale(identifier: "en_US_POSIX")
                printer.timeZone = TimeZone(identifier: "UTC")
                printer.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
                return printer.string(from: date)
            }
        }
        return nil
    }

    static func write(_ cookies: [HARCookie], into json: inout TextOutput) {
        json.append("[")
        for (index, cookie) in cookies.enumerated() {
            if index > 0 { json.append(",") }
            json.append("{"); json.key("name"); json.string(cookie.name)
            json.append(","); json.key("value"); json.string(cookie.value)
            if let path = cookie.path { json.append(","); json.key("path"); json.string(path) }
            if let domain = cookie.domain { json.append(","); json.key("domain"); json.string(domain) }
            if let expires = cookie.expires { json.append(","); json.key("expires"); json.string(expires) }
            if let httpOnly = cookie.httpOnly { json.append(","); json.key("httpOnly"); json.bool(httpOnly) }
            if let secure = cookie.secure { json.append(","); json.key("secure"); json.bool(secure) }
            json.append("}")
        }
        json.append("]")
    }
}
