import Foundation
import TestSupport

let captureBinary = TestEnvironment.executable("capture").path

/// Runs the built `capture` binary.
func capture(_ arguments: [String], input: Data? = nil) throws -> ProcessResult {
    try run(captureBinary, arguments, input: input, environment: ["TZ": "UTC", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"])
}

/// Runs tcpdump with the same time zone as `capture`.
func tcpdump(_ arguments: [String]) throws -> ProcessResult {
    try run("/usr/bin/env", ["tcpdump"] + arguments, environment: ["TZ": "UTC", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/sbin:/bin:/sbin"])
}

func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

let publicFixtureNames: [String] = {
    guard let folder = TestEnvironment.publicFixtures,
          let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
    return names.filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") }.sorted()
}()

/// Full paths of every capture to check against tcpdump: the public fixtures and the project's own
/// (Tests/Fixtures, made by Scripts/make-fixtures), whichever exist.
let conformanceFixturePaths: [String] = {
    var paths = publicFixtureNames.map { TestEnvironment.publicFixtures!.appendingPathComponent($0).path }
    if let enumerator = FileManager.default.enumerator(atPath: TestEnvironment.fixtures.path) {
        for case let relative as String in enumerator where relative.hasSuffix(".pcap") || relative.hasSuffix(".pcapng") {
            paths.append(TestEnvironment.fixtures.appendingPathComponent(relative).path)
        }
    }
    return paths.sorted()
}()

func publicFixture(_ name: String) -> String { TestEnvironment.publicFixtures!.appendingPathComponent(name).path }

func temporaryPath(_ suffix: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-cli-\(UUID().uuidString)\(suffix)").path
}

let haveBinaryAndTcpdump = FileManager.default.isExecutableFile(atPath: captureBinary) && TestEnvironment.hasProgram("tcpdump")
let haveFixtures = haveBinaryAndTcpdump && TestEnvironment.publicFixtures != nil

/// The parts of a `tcpdump -nq` TCP or UDP line that must agree: addresses, ports, protocol, length.
struct TransportSummary: Equatable, CustomStringConvertible {
    var family: String
    var source: String
    var destination: String
    var proto: String
    var length: Int
    var description: String { "\(family) \(source) > \(destination) \(proto) \(length)" }

    /// Parses `IP a.b.c.d.p > e.f.g.h.q: tcp 12` and `IP6 x.p > y.q: UDP, length 40`; nil for other lines.
    init?(line: String) {
        let words = line.split(separator: " ").map(String.init)
        // The last IP word: in a tunnelled line the transport belongs to the innermost packet.
        guard let familyIndex = words.lastIndex(where: { $0 == "IP" || $0 == "IP6" }),
              familyIndex + 4 < words.count, words[familyIndex + 2] == ">" else { return nil }
        family = words[familyIndex]
        source = words[familyIndex + 1]
        destination = String(words[familyIndex + 3].dropLast())
        let rest = words[(familyIndex + 4)...].joined(separator: " ")
        if rest.hasPrefix("tcp "), let n = Int(rest.dropFirst(4)) {
            proto = "tcp"; length = n
        } else if rest.hasPrefix("UDP, length "), let n = Int(rest.dropFirst(12)) {
            proto = "udp"; length = n
        } else {
            return nil
        }
    }
}
