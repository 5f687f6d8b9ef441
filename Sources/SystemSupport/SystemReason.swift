import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The errno behind a Foundation file error, in words; Foundation's own description when there is none.
public func systemReason(_ error: any Error) -> String {
    let nsError = error as NSError
    if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
    // On Linux the underlying error is a Swift POSIXError (a directory read gives code 256 over EISDIR), which
    // `as? NSError` does not match; bridge it through `any Error`.
    if let underlying = (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map({ $0 as NSError }),
       underlying.domain == NSPOSIXErrorDomain {
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
