import Foundation
import LinkConditioner
import Testing
import TestSupport

@Suite("NLC property lists")
struct NLCPropertyListTests {
    static let fixture = TestEnvironment.fixtures.appendingPathComponent("nlc/prefPaneSimulate.plist")

    @Test("reads every profile of NLC's preferences file and ignores its other keys")
    func readsPreferencesFile() throws {
        let profiles = try NLCPropertyList.read(contentsOf: Self.fixture)
        #expect(profiles.map(\.name) == ["100% Loss", "3G", "Cable Modem", "Edge", "Flaky Hotel Wi-Fi",
                                         "High Latency DNS", "Very Bad Network"])
        let threeG = try #require(profiles.first { $0.name == "3G" })
        #expect(threeG.downlink == .init(bandwidth: 780, bandwidthUnit: .kbps, packetLossRatio: 0, delay: 100))
        #expect(threeG.uplink.bitsPerSecond == 330_000)
        let cable = try #require(profiles.first { $0.name == "Cable Modem" })
        #expect(cable.downlink.bandwidthUnit == .mbps)
        #expect(cable.downlink.bitsPerSecond == 6_000_000)
        let hotel = try #require(profiles.first { $0.name == "Flaky Hotel Wi-Fi" })
        #expect(hotel.downlink.packetLossRatio == 2.5)
        #expect(hotel.dnsDelay == 300)
        #expect(hotel.excludeLoopback)
    }

    @Test("export writes back exactly the dictionaries that were read")
    func roundTripsThroughExport() throws {
        let profiles = try NLCPropertyList.read(contentsOf: Self.fixture)
        let written = try NLCPropertyList.write(profiles)
        let reread = try NLCPropertyList.read(written, file: "export", defaultName: "x")
        #expect(reread == profiles)
        // And key by key against the original file, so nothing is renamed or dropped on the way.
        let original = try #require(try PropertyListSerialization.propertyList(
            from: Data(contentsOf: Self.fixture), format: nil) as? [String: Any])
        let exported = try #require(try PropertyListSerialization.propertyList(
            from: written, format: nil) as? [String: Any])
        let originalProfiles = try #require(original["Profiles"] as? [String: [String: Any]])
        let exportedProfiles = try #require(exported["Profiles"] as? [String: [String: Any]])
        #expect(Set(originalProfiles.keys) == Set(exportedProfiles.keys))
        for (name, dictionary) in originalProfiles {
            let other = try #require(exportedProfiles[name])
            #expect(Set(dictionary.keys) == Set(other.keys), "keys of \(name)")
            for (key, value) in dictionary {
                let same = (value as? NSNumber)?.doubleValue == (other[key] as? NSNumber)?.doubleValue
                #expect(same, "\(name).\(key): \(value) vs \(String(describing: other[key]))")
            }
        }
    }

    @Test("a single profile dictionary is named after its file")
    func singleDictionary() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: [
            "DownlinkBandwidth": 2, "DownlinkBandwidthUnit": 1, "UplinkBandwidth": 256, "UplinkDelay": 5,
        ], format: .xml, options: 0)
        let profiles = try NLCPropertyList.read(data, file: "My DSL.plist", defaultName: "My DSL")
        #expect(profiles == [NLCProfile(name: "My DSL",
                                        downlink: .init(bandwidth: 2, bandwidthUnit: .mbps),
                                        uplink: .init(bandwidth: 256, delay: 5))])
    }

    @Test("bad input names the file, the profile and the key", arguments: [
        ("<plist><dict><key>Profiles</key><dict><key>X</key><dict><key>DownlinkBandwidthUnit</key><integer>2</integer></dict></dict></dict></plist>",
         "DownlinkBandwidthUnit"),
        ("<plist><dict><key>Profiles</key><dict><key>X</key><dict><key>UplinkPacketLossRatio</key><real>150</real></dict></dict></dict></plist>",
         "UplinkPacketLossRatio"),
        ("<plist><dict><key>Profiles</key><dict><key>X</key><dict><key>DownlinkDelay</key><string>fast</string></dict></dict></dict></plist>",
         "DownlinkDelay"),
        ("<plist><dict><key>Other</key><string>x</string></dict></plist>", "no profile dictionaries"),
        ("not a plist at all", "not a property list"),
    ])
    func rejectsBadInput(text: String, expected: String) throws {
        let error = try #require(throws: NLCFormatError.self) {
            try NLCPropertyList.read(Data(text.utf8), file: "bad.plist", defaultName: "bad")
        }
        #expect(error.description.hasPrefix("bad.plist: "))
        #expect(error.description.contains(expected), "\(error.description)")
    }

    @Test("rates are written in NLC's units: whole Mbps when exact, otherwise Kbps")
    func bandwidthUnits() {
        #expect(NLCProfile.Direction.bandwidth(bitsPerSecond: 6_000_000) == (6, .mbps))
        #expect(NLCProfile.Direction.bandwidth(bitsPerSecond: 780_000) == (780, .kbps))
        #expect(NLCProfile.Direction.bandwidth(bitsPerSecond: 1_500_000) == (1500, .kbps))
    }
}

@Suite("NLC import and export through profile files")
struct NLCConversionTests {
    @Test("every fixture profile survives NLC -> profile file -> profile -> NLC unchanged")
    func roundTripThroughProfileFiles() throws {
        let profiles = try NLCPropertyList.read(contentsOf: NLCPropertyListTests.fixture)
        for nlc in profiles {
            let data = try NLCConversion.profileFileData(NLCConversion.profile(from: nlc, source: "prefPaneSimulate.plist"))
            let loaded = try ProfileFile.parse(data, file: NLCConversion.fileName(for: nlc.name))
            #expect(NLCConversion.nlcProfile(from: loaded) == nlc, "\(nlc.name)")
        }
    }

    @Test("units: Kbps and Mbps become kilobits, percent and milliseconds stay as they are")
    func conversionUnits() throws {
        let nlc = NLCProfile(name: "Mixed", downlink: .init(bandwidth: 6, bandwidthUnit: .mbps, packetLossRatio: 2.5, delay: 80),
                             uplink: .init(bandwidth: 512, bandwidthUnit: .kbps, delay: 40), dnsDelay: 300)
        let profile = NLCConversion.profile(from: nlc)
        #expect(profile.downlink == LinkSettings(bitsPerSecond: 6_000_000, delayMicroseconds: 80_000, lossPercent: 2.5))
        #expect(profile.uplink == LinkSettings(bitsPerSecond: 512_000, delayMicroseconds: 40_000))
        #expect(profile.dnsDelayMicroseconds == 300_000)
        let file = String(decoding: try NLCConversion.profileFileData(profile), as: UTF8.self)
        #expect(file.contains(#""bandwidthKbit" : 6000"#), "\(file)")
        #expect(file.contains(#""dnsDelayMs" : 300"#), "\(file)")
    }

    @Test("what NLC cannot express is reported, not silently dropped; ExcludeLoopback is carried over")
    func notes() {
        var nlc = NLCProfile(name: "Loopback Too")
        nlc.excludeLoopback = false
        #expect(NLCConversion.importNotes(nlc).isEmpty)
        #expect(NLCConversion.profile(from: nlc).excludeLoopback == false)
        nlc.excludeLoopback = true
        let imported = NLCConversion.profile(from: nlc)
        #expect(imported.excludeLoopback)
        #expect(NLCConversion.nlcProfile(from: imported).excludeLoopback)
        let file = String(decoding: (try? NLCConversion.profileFileData(imported)) ?? Data(), as: UTF8.self)
        #expect((try? ProfileFile.parse(Data(file.utf8), file: "l.json"))?.excludeLoopback == true, "\(file)")
        let jittery = Profile(name: "Jittery", downlink: LinkSettings(delayMicroseconds: 50_000, jitterMicroseconds: 10_000))
        #expect(NLCConversion.exportNotes(jittery).first?.contains("jitter") == true)
    }

    @Test("file names from profile names", arguments: [("100% Loss", "100-loss.json"), ("3G", "3g.json"),
                                                      ("Flaky Hotel Wi-Fi", "flaky-hotel-wi-fi.json"), ("%%", "profile.json")])
    func fileNames(name: String, expected: String) {
        #expect(NLCConversion.fileName(for: name) == expected)
    }
}
