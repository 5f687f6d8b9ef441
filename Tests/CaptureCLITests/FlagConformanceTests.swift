import Foundation
import Testing
import TestSupport

/// tcpdump's printing flags, byte for byte against tcpdump over every capture in ../shared/fixtures/public and
/// Tests/Fixtures. Lines that differ without any flag (application protocols not printed yet) are left out of the
/// per-line comparison and counted; for the dump flags (whose output is not line-shaped) such files are compared
/// whole only when the plain output already matches.
@Suite(.enabled(if: haveFixtures, "needs the built capture binary, tcpdump and ../shared/fixtures/public"))
struct FlagConformanceTests {
    static let lineFlags: [[String]] = [
        ["-t"], ["-tt"], ["-ttt"], ["-tttt"], ["-ttttt"], ["-tt", "--time-stamp-precision", "nano"],
        ["-ttt", "--time-stamp-precision", "nano"], ["-ttttt", "--time-stamp-precision", "micro"], ["-#"], ["--number"],
        ["-e"], ["-q", "-e"], ["-S"], ["-S", "-e", "-tttt", "-#"],
    ]
    static let dumpFlags: [[String]] = [["-x"], ["-xx"], ["-X"], ["-XX"], ["-A"], ["-AA"], ["-e", "-XX"], ["-q", "-A"]]
    /// -v output spans several lines per packet (IPv4's header fields, HTTP headers, ND options), so it is compared
    /// like the dumps: whole captures. Tunnel headers are not printed with their -v details (capture says so).
    static let verboseFlags: [[String]] = [["-v"], ["-vv"], ["-vvv"], ["-v", "-e"], ["-q", "-v"], ["-vv", "-S", "-#"], ["-v", "-X"]]

    static func outputs(_ flags: [String], _ path: String) throws -> (ours: String, theirs: String) {
        if flags.isEmpty, let known = plainOutputs[path] { return known }
        if flags == ["-q"], let known = quietOutputs[path] { return known }
        return (try capture(flags + ["-r", path]).stdoutText, try tcpdump(["-n"] + flags + ["-r", path]).stdoutText)
    }

    /// Both tools' output without flags, made once for all the flag cases.
    static let plainOutputs: [String: (ours: String, theirs: String)] = reference([])
    static let quietOutputs: [String: (ours: String, theirs: String)] = reference(["-q"])

    static func reference(_ flags: [String]) -> [String: (ours: String, theirs: String)] {
        var result: [String: (ours: String, theirs: String)] = [:]
        for path in conformanceFixturePaths {
            if let ours = try? capture(flags + ["-r", path]).stdoutText,
               let theirs = try? tcpdump(["-n"] + flags + ["-r", path]).stdoutText {
                result[path] = (ours, theirs)
            }
        }
        return result
    }

    /// -e inside tunnels (outer IP without "IP ", GRE's "proto", inner Ethernet headers) is not printed as tcpdump
    /// does yet: the tunnel printer (Tunnels.swift) does not look at -e. Those captures are left out for -e.
    static func paths(for flags: [String]) -> [String] {
        let tunnelsDiffer = flags.contains("-e") || flags.contains { $0.hasPrefix("-v") }
        return conformanceFixturePaths.filter {
            !(tunnelsDiffer && $0.contains("/tunnels/"))
        }
    }

    @Test(arguments: lineFlags)
    func linesMatchTcpdump(flags: [String]) throws {
        var compared = 0, skipped = 0
        for path in Self.paths(for: flags) {
            let plain = try Self.outputs([], path)
            let flagged = try Self.outputs(flags, path)
            let plainOurs = lines(plain.ours), plainTheirs = lines(plain.theirs)
            let ours = lines(flagged.ours), theirs = lines(flagged.theirs)
            #expect(ours.count == theirs.count, "\(path) \(flags)")
            for index in 0..<min(ours.count, theirs.count) {
                guard index < plainOurs.count, index < plainTheirs.count, plainOurs[index] == plainTheirs[index] else {
                    skipped += 1
                    continue
                }
                compared += 1
                #expect(ours[index] == theirs[index], "\(path) \(flags)")
            }
        }
        print("tcpdump \(flags.joined(separator: " ")): \(compared) lines compared over \(conformanceFixturePaths.count) captures, \(skipped) lines not compared (differ without the flag)")
        #expect(compared > 5000)
    }

    @Test(arguments: dumpFlags + verboseFlags)
    func dumpsMatchTcpdump(flags: [String]) throws {
        var comparedFiles = 0, comparedLines = 0
        for path in Self.paths(for: flags) {
            let plain = try Self.outputs(flags.contains("-q") ? ["-q"] : [], path)
            guard plain.ours == plain.theirs else { continue }
            let flagged = try Self.outputs(flags, path)
            comparedFiles += 1
            comparedLines += lines(flagged.theirs).count
            #expect(flagged.ours == flagged.theirs, "\(path) \(flags)")
        }
        print("tcpdump \(flags.joined(separator: " ")): \(comparedFiles) captures identical, \(comparedLines) lines")
        #expect(comparedFiles > 40)
    }
}

/// Flags that would do nothing in the chosen mode are refused with a message, never silently ignored.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "needs the built capture binary"))
struct FlagRefusalTests {
    static let cases: [[String]] = [
        ["--http", "-t"], ["--http", "-A"], ["--http", "-X"], ["--http", "-e"], ["--json", "-tt"], ["--json", "-x"],
        ["-w", "/tmp/x.pcap", "-A"], ["--body-limit", "10"], ["--color", "always"], ["--http", "--status", "999"],
        ["-ttttttt"], ["-XXX"], ["-vvvv"], ["--json", "-v"], ["-w", "/tmp/x.pcap", "-vv"],
    ]

    @Test(arguments: cases)
    func refused(arguments: [String]) throws {
        let result = try capture(arguments + ["-r", "/dev/null"])
        #expect(result.status == 64, "\(arguments): \(result.stderrText)")
        #expect(result.stderrText.contains("Error:"), "\(arguments): \(result.stderrText)")
    }
}
