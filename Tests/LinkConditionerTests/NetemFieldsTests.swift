import Foundation
import LinkConditioner
import Testing

/// Issue 11: netem's other impairments as profile fields, their exact tc arguments, and file errors that
/// name the file, the field and the form expected.
@Suite struct NetemFieldsTests {
    static let file = """
        {"name": "Moving", "downlink": {"bandwidthKbit": 1000, "delayMs": 100, "jitterMs": 10,
          "jitterDistribution": "normal", "correlationPercent": 25, "lossPercent": 1, "reorderPercent": 5,
          "duplicatePercent": 1, "corruptPercent": 0.1, "packetOverheadBytes": 8}}
        """

    @Test func everyFieldBecomesItsNetemOrHtbArgument() throws {
        let profile = try ProfileFile.parse(Data(Self.file.utf8), file: "moving.json")
        #expect(profile.downlink.jitterDistribution == .normal)
        let plan = PlanBuilder.applyPlan(profile: profile, interface: try InterfaceName("eth0"))
        let netem = try #require(plan.first { $0.contains("netem") && $0.contains("tk-eth0") })
        #expect(netem.joined(separator: " ") == "tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 100ms 10ms 25% "
                + "distribution normal loss 1% 25% reorder 5% duplicate 1% corrupt 0.1% limit 1000")
        let linkClass = try #require(plan.first { $0.contains("7ac0:1") && $0.contains("tk-eth0") && $0.contains("class") })
        #expect(Array(linkClass.suffix(2)) == ["overhead", "8"])
        #expect(ProfileDescription.short(profile.downlink).contains("normal jitter, 25% correlation, 5% reordered"))
        // Written back as a profile file, it reads the same.
        let again = try ProfileFile.parse(try NLCConversion.profileFileData(profile), file: "again.json")
        #expect(again.downlink == profile.downlink)
    }

    @Test(arguments: [
        (#""jitterDistribution": "gaussian", "jitterMs": 5"#, "downlink.jitterDistribution", "expected one of \"normal\", \"pareto\", \"paretonormal\""),
        (#""jitterDistribution": "normal""#, "downlink.jitterDistribution", "needs downlink.jitterMs above 0"),
        (#""reorderPercent": 5"#, "downlink.reorderPercent", "needs downlink.delayMs above 0"),
        (#""duplicatePercent": 150"#, "downlink.duplicatePercent", "expected a percentage from 0 to 100"),
        (#""corruptPercent": "1%""#, "downlink.corruptPercent", "expected a percentage from 0 to 100"),
        (#""packetOverheadBytes": 2.5"#, "downlink.packetOverheadBytes", "expected a whole number of bytes"),
    ])
    func badValuesNameFileFieldAndForm(fields: String, field: String, expected: String) {
        let json = "{\"name\": \"Bad\", \"downlink\": {" + fields + "}}"
        let error = #expect(throws: ProfileFileError.self) { try ProfileFile.parse(Data(json.utf8), file: "/p/bad.json") }
        #expect(error?.file == "/p/bad.json")
        #expect(error?.field == field)
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "")")
    }

    /// Old state files (before these fields existed) still load.
    @Test func settingsWithoutTheNewFieldsDecode() throws {
        let old = #"{"bitsPerSecond": 1000, "delayMicroseconds": 5, "jitterMicroseconds": 0, "lossPercent": 0}"#
        let settings = try JSONDecoder().decode(LinkSettings.self, from: Data(old.utf8))
        #expect(settings == LinkSettings(bitsPerSecond: 1000, delayMicroseconds: 5))
    }
}
