import Foundation
import LinkConditioner
import TestSupport
import Testing

let builtInDirectory = TestEnvironment.packageRoot.appendingPathComponent("Profiles")

func builtIns() throws -> ProfileCatalog {
    try ProfileCatalog.load(directories: [builtInDirectory])
}

func parse(_ json: String, file: String = "test.json") throws -> Profile {
    try ProfileFile.parse(Data(json.utf8), file: file)
}

/// The error a bad profile raises, or a test failure when it parses.
func parseError(_ json: String) -> ProfileFileError? {
    do {
        _ = try parse(json)
        Issue.record("expected \(json) to be rejected")
        return nil
    } catch let error as ProfileFileError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

@Suite struct ProfileFileTests {
    @Test func parsesEveryField() throws {
        let profile = try parse("""
            {"name": "Mine", "description": "d", "approximate": true,
             "downlink": {"bandwidthKbit": 780, "delayMs": 100.5, "jitterMs": 20, "lossPercent": 2.5},
             "uplink": {"bandwidthKbit": 0.5e3}, "dnsDelayMs": 200}
            """)
        #expect(profile.name == "Mine")
        #expect(profile.summary == "d")
        #expect(profile.isApproximate)
        #expect(profile.downlink == LinkSettings(bitsPerSecond: 780_000, delayMicroseconds: 100_500,
                                                 jitterMicroseconds: 20_000, lossPercent: 2.5))
        #expect(profile.uplink == LinkSettings(bitsPerSecond: 500_000))
        #expect(profile.dnsDelayMicroseconds == 200_000)
        #expect(profile.source == "test.json")
    }

    @Test func absentAndZeroFieldsLeaveThingsUnchanged() throws {
        let profile = try parse(#"{"name": "Zero", "downlink": {"bandwidthKbit": 0, "delayMs": 0}, "uplink": null}"#)
        #expect(profile.downlink.isUnchanged)
        #expect(profile.uplink.isUnchanged)
        #expect(!profile.needsNetem)
        #expect(!PlanBuilder.uplinkSpec(profile).needsTree)
    }

    @Test(arguments: [
        (#"{"name": "X", "downlink": {"bandwidthKbit": "fast"}}"#, "downlink.bandwidthKbit", "kilobits per second"),
        (#"{"name": "X", "uplink": {"bandwidthKbit": -5}}"#, "uplink.bandwidthKbit", "kilobits per second"),
        (#"{"name": "X", "uplink": {"bandwidthKbit": 0.2}}"#, "uplink.bandwidthKbit", "at least 1 kilobit"),
        (#"{"name": "X", "downlink": {"lossPercent": 150}}"#, "downlink.lossPercent", "percentage from 0 to 100"),
        (#"{"name": "X", "downlink": {"delayMs": true}}"#, "downlink.delayMs", "milliseconds"),
        (#"{"name": "X", "uplink": {"jitterMs": 1e9}}"#, "uplink.jitterMs", "milliseconds from 0 to 60000"),
        (#"{"name": "X", "dnsDelayMs": "200ms"}"#, "dnsDelayMs", "milliseconds"),
        (#"{"name": "X", "downlink": {"bandwith": 5}}"#, "downlink.bandwith", "bandwidthKbit"),
        (#"{"name": "X", "downlink": 5}"#, "downlink", "an object"),
        (#"{"name": "", "downlink": {}}"#, "name", "non-empty string"),
        (#"{"downlink": {}}"#, "name", "is missing"),
        (#"{"name": "X", "approximate": "yes"}"#, "approximate", "true or false"),
        (#"{"name": "X", "speed": 5}"#, "speed", "not a known field"),
    ])
    func badFieldsNameTheFieldAndTheExpectedForm(json: String, field: String, expected: String) throws {
        let error = try #require(parseError(json))
        #expect(error.file == "test.json")
        #expect(error.field == field)
        #expect(error.description.contains(expected), "\(error)")
        #expect(error.description.hasPrefix("test.json: field \"\(field)\""))
    }

    @Test func notJSONOrNotAnObject() throws {
        let broken = try #require(parseError("{name: 3G"))
        #expect(broken.field == nil)
        #expect(broken.description.contains("not valid JSON"))
        let array = try #require(parseError("[1, 2]"))
        #expect(array.description.contains("expected a JSON object"))
    }

    @Test func unreadableFileIsNamed() {
        let missing = URL(fileURLWithPath: "/nonexistent/dir/x.json")
        #expect(throws: ProfileFileError.self) { try ProfileFile.load(contentsOf: missing) }
    }
}

@Suite struct BuiltInProfileTests {
    @Test func everyBuiltInIsPresentWithIssueValues() throws {
        let catalog = try builtIns()
        #expect(catalog.profiles.count == 12)
        func p(_ name: String) throws -> Profile { try catalog.profile(named: name) }
        let kbit: UInt64 = 1000, ms: UInt64 = 1000
        #expect(try p("Slow Net").downlink == LinkSettings(bitsPerSecond: 32 * kbit, delayMicroseconds: 100 * ms))
        #expect(try p("Slow Net").uplink == LinkSettings(bitsPerSecond: 32 * kbit, delayMicroseconds: 100 * ms))
        #expect(try p("Slow Net").dnsDelayMicroseconds == 200 * ms)
        #expect(try p("Nasty Net").downlink == LinkSettings(lossPercent: 90))
        #expect(try p("Nasty Net").uplink == LinkSettings(lossPercent: 90))
        #expect(try p("Black Hole").downlink == LinkSettings(lossPercent: 100))
        #expect(try p("Black Hole").uplink.isUnchanged)
        #expect(try p("3G").downlink == LinkSettings(bitsPerSecond: 780 * kbit, delayMicroseconds: 100 * ms))
        #expect(try p("3G").uplink == LinkSettings(bitsPerSecond: 330 * kbit, delayMicroseconds: 100 * ms))
        #expect(try p("Edge").downlink == LinkSettings(bitsPerSecond: 240 * kbit, delayMicroseconds: 400 * ms))
        #expect(try p("Edge").uplink == LinkSettings(bitsPerSecond: 200 * kbit, delayMicroseconds: 440 * ms))
        #expect(try p("DSL").downlink == LinkSettings(bitsPerSecond: 2000 * kbit, delayMicroseconds: 5 * ms))
        #expect(try p("DSL").uplink == LinkSettings(bitsPerSecond: 256 * kbit, delayMicroseconds: 5 * ms))
        #expect(try p("Cable Modem").downlink == LinkSettings(bitsPerSecond: 6000 * kbit, delayMicroseconds: 2 * ms))
        #expect(try p("Cable Modem").uplink == LinkSettings(bitsPerSecond: 1000 * kbit, delayMicroseconds: 2 * ms))
        let veryBad = LinkSettings(bitsPerSecond: 1000 * kbit, delayMicroseconds: 500 * ms, lossPercent: 10)
        #expect(try p("Very Bad Network").downlink == veryBad)
        #expect(try p("Very Bad Network").uplink == veryBad)
        #expect(try p("100% Loss").downlink == LinkSettings(lossPercent: 100))
        #expect(try p("100% Loss").uplink == LinkSettings(lossPercent: 100))
        for name in ["LTE", "Wi-Fi", "High Latency DNS"] {
            #expect(try p(name).isApproximate, "\(name) should be marked approximate")
        }
        #expect(try p("High Latency DNS").dnsDelayMicroseconds > 0)
        let exact = catalog.profiles.filter { !["LTE", "Wi-Fi", "High Latency DNS"].contains($0.name) }
        #expect(exact.allSatisfy { !$0.isApproximate })
    }

    @Test func namesAreFoundIgnoringCaseSpacesAndPunctuation() throws {
        let catalog = try builtIns()
        #expect(try catalog.profile(named: "slow-net").name == "Slow Net")
        #expect(try catalog.profile(named: "VERY BAD NETWORK").name == "Very Bad Network")
        #expect(try catalog.profile(named: "100loss").name == "100% Loss")
        #expect(try catalog.profile(named: "wifi").name == "Wi-Fi")
        let error = #expect(throws: UnknownProfileError.self) { try catalog.profile(named: "Fast Net") }
        #expect(error?.description.contains("Slow Net") == true)
    }

    @Test func userProfilesOverrideBuiltInsByName() throws {
        let user = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: user, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: user) }
        try Data(#"{"name": "slow net", "downlink": {"bandwidthKbit": 64}}"#.utf8)
            .write(to: user.appendingPathComponent("mine.json"))
        try Data(#"{"name": "Office VPN", "uplink": {"delayMs": 30}}"#.utf8)
            .write(to: user.appendingPathComponent("vpn.json"))
        let catalog = try ProfileCatalog.load(directories: [builtInDirectory, user])
        #expect(catalog.profiles.count == 13)
        let slow = try catalog.profile(named: "Slow Net")
        #expect(slow.downlink.bitsPerSecond == 64_000)
        #expect(slow.uplink.isUnchanged)
        #expect(slow.source?.hasSuffix("mine.json") == true)
        #expect(try catalog.profile(named: "office-vpn").uplink.delayMicroseconds == 30_000)
    }

    @Test func duplicateNamesInOneDirectoryAreAnError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-dup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"name": "Same"}"#.utf8).write(to: dir.appendingPathComponent("a.json"))
        try Data(#"{"name": "SAME"}"#.utf8).write(to: dir.appendingPathComponent("b.json"))
        let error = #expect(throws: ProfileFileError.self) { try ProfileCatalog.loadDirectory(dir) }
        #expect(error?.field == "name")
        #expect(error?.file.hasSuffix("b.json") == true)
    }

    @Test func badUserFileStopsLoadingWithItsName() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"name": "Bad", "uplink": {"lossPercent": "lots"}}"#.utf8).write(to: dir.appendingPathComponent("bad.json"))
        let error = #expect(throws: ProfileFileError.self) { try ProfileCatalog.load(directories: [builtInDirectory, dir]) }
        #expect(error?.description.contains("bad.json: field \"uplink.lossPercent\"") == true)
    }
}

@Suite struct ValueValidationTests {
    @Test(arguments: ["", "-eth0", "eth 0", "eth0;reboot", "a/b", "..", ".", "abcdefghijklmnop", "eth0\n", "$(x)"])
    func badInterfaceNamesAreRejected(name: String) {
        #expect(throws: InvalidInterfaceNameError.self) { try InterfaceName(name) }
    }

    @Test(arguments: ["eth0", "lo", "veth-a.1", "wlp2s0", "abcdefghijklmno"])
    func goodInterfaceNamesAndTheirIfbFit(name: String) throws {
        let interface = try InterfaceName(name)
        #expect(interface.ifbName.rawValue.utf8.count <= 15)
        #expect(interface.ifbName.rawValue.hasPrefix("tk-"))
        #expect(interface.ifbName != interface)
    }

    @Test func longNamesGetDistinctIfbs() throws {
        #expect(try InterfaceName("abcdefghijklmn").ifbName != InterfaceName("abcdefghijklmo").ifbName)
    }

    @Test func ratesAreOnlyEverWrittenInBitUnits() {
        #expect(TCUnits.rate(bitsPerSecond: 32_000) == "32kbit")
        #expect(TCUnits.rate(bitsPerSecond: 2_000_000) == "2mbit")
        #expect(TCUnits.rate(bitsPerSecond: 1_500) == "1500bit")
        #expect(TCUnits.rate(bitsPerSecond: 10_000_000_000) == "10gbit")
        #expect(TCUnits.rate(bitsPerSecond: 2_500_000) == "2500kbit")
        #expect(TCUnits.time(microseconds: 100_500) == "100500us")
        #expect(TCUnits.percent(0.25) == "0.25%")
    }

    @Test(arguments: [("3s", 3.0), ("500ms", 0.5), ("2m", 120.0), ("1h", 3600.0), ("1m30s", 90.0), ("90", 90.0)])
    func durations(text: String, seconds: Double) {
        #expect(DurationParser.seconds(text) == seconds)
    }

    @Test(arguments: ["", "0", "-3s", "3x", "s", "3s4", "abc"])
    func badDurations(text: String) {
        #expect(DurationParser.seconds(text) == nil)
    }
}
