import Foundation
import TestSupport

let captureBinary = TestEnvironment.executable("capture").path
let h2Fixtures = TestEnvironment.fixtures.appendingPathComponent("h2")
let haveCapture = FileManager.default.isExecutableFile(atPath: captureBinary)
let haveTshark = TestEnvironment.hasProgram("tshark")

func fixturePath(_ name: String) -> String { h2Fixtures.appendingPathComponent(name).path }

/// Runs the built `capture` binary.
func capture(_ arguments: [String]) throws -> ProcessResult {
    try run(captureBinary, arguments, environment: ["TZ": "UTC", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"])
}

/// `capture -r FIXTURE --http --json`: exchange records and WebSocket records, parsed.
func jsonRecords(_ fixture: String) throws -> (exchanges: [[String: Any]], webSocket: [[String: Any]], stderr: String) {
    let result = try capture(["-r", fixturePath(fixture), "--http", "--json"])
    guard result.status == 0 else { throw FixtureError("capture failed on \(fixture): \(result.stderrText)") }
    var exchanges: [[String: Any]] = [], webSocket: [[String: Any]] = []
    for line in result.stdoutText.split(separator: "\n") {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        if object["type"] as? String == "websocket" { webSocket.append(object) } else { exchanges.append(object) }
    }
    return (exchanges, webSocket, result.stderrText)
}

/// The logs the fixture's own server and client wrote while the capture was made (Tests/Fixtures/h2/manifest.json).
struct FixtureLogs {
    var server: [[String: Any]]
    var client: [[String: Any]]

    static func load(_ fixture: String) throws -> FixtureLogs {
        let data = try Data(contentsOf: h2Fixtures.appendingPathComponent("manifest.json"))
        let manifest = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let fixtures = manifest?["fixtures"] as? [String: Any], let entry = fixtures[fixture] as? [String: Any] else {
            throw FixtureError("\(fixture) is not in Tests/Fixtures/h2/manifest.json; run Scripts/fixtures/make-h2.sh")
        }
        return FixtureLogs(server: entry["server"] as? [[String: Any]] ?? [], client: entry["client"] as? [[String: Any]] ?? [])
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// tshark's view of HTTP/2 header fields: (stream ids, name, value) per decoded field, port given as HTTP/2.
/// tshark lists a packet's fields without saying which of its frames (streams) each came from, so each field
/// carries every stream id of its packet.
func tsharkHeaders(_ fixture: String, port: Int) throws -> [(streams: Set<Int>, name: String, value: String)] {
    let result = try run("tshark", ["-r", fixturePath(fixture), "-d", "tcp.port==\(port),http2", "-Y", "http2.header",
                                    "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|",
                                    "-e", "http2.streamid", "-e", "http2.header.name", "-e", "http2.header.value"])
    var fields: [(Set<Int>, String, String)] = []
    for line in result.stdoutText.split(separator: "\n") {
        let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard columns.count == 3 else { continue }
        let streams = Set(columns[0].split(separator: "|").compactMap { Int($0) }.filter { $0 != 0 })
        let names = columns[1].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        let values = columns[2].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard !streams.isEmpty, names.count == values.count else { continue }
        for (name, value) in zip(names, values) { fields.append((streams, name, value)) }
    }
    return fields
}
