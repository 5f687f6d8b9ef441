import Foundation
import Testing
import TestSupport

/// What the root live-view tests share: their preconditions, a bandwidth-only profile, and JSON answers.
enum LiveViewRootTest {
    /// Root for namespaces, veth and tc, and curl for the download; says why when it skips.
    static var canRun: Bool {
        guard TestEnvironment.isRoot else {
            print("skipped: needs root for a network namespace, a veth pair and tc")
            return false
        }
        guard TestEnvironment.hasProgram("curl") else {
            print("skipped: needs curl (Scripts/setup --test)")
            return false
        }
        return true
    }

    /// The profile of `profileDirectory`: bandwidth only (this kernel has no netem), 800 kbit/s both ways, so 200 KB
    /// take about 2 s, against milliseconds unconditioned.
    static let trickle = "W23 Trickle"

    /// A fresh folder (under the system's temporary one, named w23-...) holding the `trickle` profile file.
    static func profileDirectory(_ label: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("w23-\(label)-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"name": "\#(trickle)", "downlink": {"bandwidthKbit": 800}, "uplink": {"bandwidthKbit": 800}}"#.utf8)
            .write(to: directory.appendingPathComponent("w23-trickle.json"))
        return directory
    }

    /// curl's own account of one download of `size` bytes: its time in seconds.
    static func download(_ url: String, size: Int) throws -> Double {
        let result = try run("curl", ["-s", "-o", "/dev/null", "--retry", "20", "--retry-connrefused", "--retry-delay", "0",
                                      "--max-time", "15", "-w", "%{http_code} %{size_download} %{time_total}", url])
        let fields = result.stdoutText.split(separator: " ")
        try #require(fields.count == 3 && fields[0] == "200" && fields[1] == "\(size)", "curl: \(result.stdoutText)")
        return try #require(Double(fields[2]))
    }
}

extension RawHTTP {
    func json(_ target: String, token: String) throws -> [String: Any] {
        let answer = try request(target, token: token)
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any], "\(answer.text)")
    }
}
