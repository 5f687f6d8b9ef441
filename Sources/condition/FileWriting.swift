import Foundation
import SystemSupport

/// Writes a file the user named, turning Foundation's error into "cannot write FILE: reason" (the
/// system's own words for the errno, e.g. "Permission denied"), never an NSCocoaErrorDomain dump.
func writeUserFile(_ data: Data, to path: String) throws {
    do {
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
        throw ReportedError(description: "cannot write \(path): \(systemReason(error))")
    }
}

/// Creates a directory the user named, with the same kind of message.
func createUserDirectory(_ url: URL) throws {
    do {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    } catch {
        throw ReportedError(description: "cannot create \(url.path): \(systemReason(error))")
    }
}
