import Foundation
@testable import Sandbox
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sandboxes starting and ending at once share /etc/netns: each makes its folder there and the last to leave
/// removes it. FileManager's `createDirectory` threw EEXIST when another process made /etc/netns between its
/// check and its mkdir (seen as `condition run` exiting 125 in the VM suite); a check and a recursive remove could
/// take another sandbox's new folder with it. Here two threads do both in a loop on a folder of their own.
struct SandboxEtcDirectoryTests {
    @Test func sandboxesMakingAndLeavingTheSharedFolderAtOnceNeverFail() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("etc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: base) }
        let parent = base.appendingPathComponent("netns").path
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { sandbox in
            let mine = parent + "/sandbox-\(sandbox)"
            for _ in 0..<3000 {
                do {
                    try SandboxLifecycle.makeEtcDirectory(mine, in: parent)
                    let file = mine + "/resolv.conf"
                    guard FileManager.default.createFile(atPath: file, contents: Data("nameserver 10.0.0.1\n".utf8))
                    else { throw NotWritten(path: file) }
                    unlink(file)
                    rmdir(mine)
                    rmdir(parent)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
    }
}

private struct NotWritten: Error { var path: String }
