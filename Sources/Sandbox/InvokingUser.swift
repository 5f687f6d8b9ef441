import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The user who ran `sudo`: a sandboxed command runs as them again, with their HOME, and files made for them
/// (a pcap, the TLS key log the command writes) belong to them.
public struct InvokingUser: Sendable, Equatable {
    public var uid: uid_t
    public var gid: gid_t

    public init(uid: uid_t, gid: gid_t) {
        self.uid = uid
        self.gid = gid
    }

    /// From sudo's `SUDO_UID`/`SUDO_GID` in `environment` (given by the executable); nil when not under sudo,
    /// or sudo was run by root.
    public static func fromSudo(environment: [String: String]) -> InvokingUser? {
        guard let uid = environment["SUDO_UID"].flatMap(uid_t.init), let gid = environment["SUDO_GID"].flatMap(gid_t.init),
              uid != 0 else { return nil }
        return InvokingUser(uid: uid, gid: gid)
    }

    /// Put before a command to drop back to this user (`setpriv`, util-linux).
    public var commandPrefix: [String] {
        ["setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--"]
    }

    /// `environment` with HOME, USER, LOGNAME and SHELL of this user.
    public func environment(from environment: [String: String]) -> [String: String] {
        var environment = environment
        guard let entry = getpwuid(uid) else { return environment }
        environment["HOME"] = String(cString: entry.pointee.pw_dir)
        environment["USER"] = String(cString: entry.pointee.pw_name)
        environment["LOGNAME"] = String(cString: entry.pointee.pw_name)
        environment["SHELL"] = String(cString: entry.pointee.pw_shell)
        return environment
    }

    /// Gives `path` to this user (best effort: the file stays root's if chown fails).
    public func give(_ path: String) {
        _ = chown(path, uid, gid)
    }
}
