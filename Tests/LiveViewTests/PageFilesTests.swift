import Foundation
@testable import LiveView
import Testing
import TestSupport

@Suite struct PageFilesTests {
    /// A file added to Sources/LiveView/Page must be listed in PageFiles, or the server would not serve it.
    @Test func everyPageFileIsServed() throws {
        let directory = TestEnvironment.packageRoot.appendingPathComponent("Sources/LiveView/Page")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        #expect(Set(names) == Set(PageFiles.files.keys))
        for name in names {
            #expect(PageFiles.files[name] == Array(try Data(contentsOf: directory.appendingPathComponent(name))), "\(name)")
        }
    }
}
