import Foundation
import LinkConditioner
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new user hit (issue 24): the profile folder under sudo, lock files, needing root.
@Suite struct RoughEdgeTests {
    @Test func underSudoTheInvokingUsersFolderIsUsed() throws {
        let nobody = try #require(getpwnam("nobody"))
        let home = String(cString: nobody.pointee.pw_dir)
        let environment = ["HOME": "/root", "SUDO_UID": String(nobody.pointee.pw_uid), "SUDO_GID": String(nobody.pointee.pw_gid)]
        #expect(ProfileCatalog.userDirectory(environment: environment).path == home + "/.config/tapkit/profiles")
        // Not under sudo (or sudo run by root): HOME as given.
        #expect(ProfileCatalog.userDirectory(environment: ["HOME": "/home/me"]).path == "/home/me/.config/tapkit/profiles")
        #expect(ProfileCatalog.userDirectory(environment: ["HOME": "/root", "SUDO_UID": "0", "SUDO_GID": "0"]).path
                == "/root/.config/tapkit/profiles")
        #expect(ProfileCatalog.userDirectory(environment: ["HOME": "/root", "XDG_CONFIG_HOME": "/x"]).path == "/x/tapkit/profiles")
    }

    @Test func lockFilesGoWhenNoRecordIsLeft() throws {
        let store = temporaryStore()
        let eth9 = try InterfaceName("eth9")
        try store.withLock(eth9) {}
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path).isEmpty)
        // With a record, the lock stays beside it.
        try store.withLock(eth9) { try store.save(ConditionState(interface: eth9, profile: Profile(name: "X"))) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path).count == 2)
        try store.withLock(eth9) { store.remove(eth9) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path).isEmpty)
    }

    @Test func aPlainUserIsToldItNeedsRoot() throws {
        let binary = TestEnvironment.executable("condition").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build first: swift build")
        guard geteuid() == 0, let setpriv = ProcessRunner.locate("setpriv") else {
            print("skipped: needs root to run condition as nobody"); return
        }
        for arguments in [["off", "-i", "lo"], ["apply", "DSL", "-i", "lo"], ["status", "--netns", "w24-none"]] {
            let result = try run(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments)
            if result.stderrText.contains("Permission denied") && result.stderrText.contains(binary) {
                print("skipped: nobody cannot execute \(binary)"); return
            }
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderrText.contains("needs root (or CAP_NET_ADMIN): run it again as `sudo condition \(arguments[0])"),
                    "\(arguments): \(result.stderrText)")
        }
    }
}
