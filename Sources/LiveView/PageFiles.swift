/// The page's files (Sources/LiveView/Page), compiled into the module by SwiftPM (`.embedInCode`), so the
/// executable serves them without files beside it. A file added to Page/ is listed here too (LiveViewTests checks
/// that every file in Page/ is).
enum PageFiles {
    static let files: [String: [UInt8]] = [
        "index.html": PackageResources.index_html,
    ]

    /// The file named by the last part of `/page/NAME`, and its type; nil for anything else (no paths, no dot files).
    static func file(_ name: Substring) -> (bytes: [UInt8], type: String)? {
        guard let bytes = files[String(name)], let dot = name.lastIndex(of: ".") else { return nil }
        return (bytes, contentType(extension: name[name.index(after: dot)...]))
    }

    static func contentType(extension name: Substring) -> String {
        switch name {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "json": "application/json; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}
