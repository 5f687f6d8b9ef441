import Foundation

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

/// The errno behind a Foundation file error, in words; Foundation's own description when there is none.
func systemReason(_ error: any Error) -> String {
    let nsError = error as NSError
    if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
        return String(cString: strerror(Int32(underlying.code)))
    }
    switch nsError.code {
    case NSFileWriteNoPermissionError: return String(cString: strerror(EACCES))
    case NSFileWriteOutOfSpaceError: return String(cString: strerror(ENOSPC))
    case NSFileWriteVolumeReadOnlyError: return String(cString: strerror(EROFS))
    case NSFileNoSuchFileError, NSFileWriteInvalidFileNameError: return String(cString: strerror(ENOENT))
    default: return nsError.localizedDescription
    }
}
