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
