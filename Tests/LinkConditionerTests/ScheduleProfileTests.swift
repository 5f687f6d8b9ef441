import Foundation
import LinkConditioner
import Testing

/// Issue 11: a profile file may be a schedule (steps, repeat), run by `condition apply NAME`.
@Suite struct ScheduleProfileTests {
    private let flaky = #"{"name": "Flaky Train", "description": "tunnels", "steps": [{"profile": "Slow Net", "for": "15s"}, {"profile": "black-hole", "for": 5}], "repeat": true}"#

    @Test func aProfileWithStepsIsASchedule() throws {
        let profile = try parse(flaky, file: "/p/flaky.json")
        #expect(profile.name == "Flaky Train" && profile.summary == "tunnels" && profile.source == "/p/flaky.json")
        #expect(profile.schedule == Schedule(steps: [.init(profile: "Slow Net", seconds: 15), .init(profile: "black-hole", seconds: 5)],
                                             repeats: true))
        #expect(profile.downlink.isUnchanged && profile.uplink.isUnchanged)
        #expect(ProfileDescription.steps(try #require(profile.schedule)) == "Slow Net 15s -> black-hole 5s, repeating")
        #expect(ProfileDescription.show(profile).contains("  2. black-hole for 5s"))
        // One set of conditions it is not: apply of it as a profile, plan, run and export refuse it.
        #expect(profile.problems.first?.contains("condition apply \"Flaky Train\" -i IFACE") == true)
    }

    @Test func stepsAreResolvedAgainstTheCatalog() throws {
        var catalog = try builtIns()
        catalog.add(try parse(flaky, file: "/p/flaky.json"))
        let schedule = try #require(try catalog.profile(named: "flaky train").schedule)
        let steps = try catalog.stepProfiles(of: schedule, file: "/p/flaky.json")
        #expect(steps.map(\.profile.name) == ["Slow Net", "Black Hole"])
        #expect(steps.map(\.seconds) == [15, 5])
        let error = #expect(throws: ScheduleNotAllowedError.self) { try catalog.profileWithSettings(named: "Flaky Train", for: "plan") }
        #expect(error?.description == "\"Flaky Train\" is a schedule of other profiles (steps), which plan cannot take; "
                + "`condition apply \"Flaky Train\" -i IFACE` runs it step by step")
        #expect(try catalog.profileWithSettings(named: "3G", for: "plan").name == "3G")
    }

    @Test func unknownAndNestedStepsNameTheFileAndStep() throws {
        var catalog = try builtIns()
        catalog.add(try parse(flaky, file: "/p/flaky.json"))
        let unknown = Schedule(steps: [.init(profile: "3G", seconds: 1), .init(profile: "Blak Hole", seconds: 1)])
        let error = #expect(throws: ProfileFileError.self) { try catalog.stepProfiles(of: unknown, file: "/p/u.json") }
        #expect(error?.file == "/p/u.json" && error?.field == "steps[1].profile")
        #expect(error?.description.contains("names no known profile \"Blak Hole\"; expected one of") == true)
        #expect(error?.description.contains("Flaky Train") == false, "a schedule is no step to suggest")
        let nested = Schedule(steps: [.init(profile: "flaky train", seconds: 1)])
        let nestedError = #expect(throws: ProfileFileError.self) { try catalog.stepProfiles(of: nested, file: "/p/n.json") }
        #expect(nestedError?.field == "steps[0].profile")
        #expect(nestedError?.description.contains("has steps of its own") == true)
    }

    /// DNS faults need `condition run`'s forwarder; a step on an interface would leave them out without a word.
    @Test func aStepWithDNSFaultsIsRefused() throws {
        var catalog = try builtIns()
        catalog.add(try parse(#"{"name": "No Names", "downlink": {"bandwidthKbit": 500}, "faults": {"dns": ["nxdomain:api.example.com"]}}"#,
                              file: "/p/nonames.json"))
        let schedule = Schedule(steps: [.init(profile: "3G", seconds: 1), .init(profile: "No Names", seconds: 1)])
        let error = #expect(throws: ProfileFileError.self) { try catalog.stepProfiles(of: schedule, file: "/p/s.json") }
        #expect(error?.file == "/p/s.json" && error?.field == "steps[1].profile")
        #expect(error?.description.contains("names \"No Names\", whose DNS faults (faults.dns: nxdomain:api.example.com) "
                                            + "work in `condition run` only") == true, "\(error?.description ?? "")")
    }

    @Test(arguments: [
        (#"{"name": "S", "steps": [{"profile": "3G", "for": "1s"}], "downlink": {"bandwidthKbit": 100}}"#, "downlink",
         "cannot go with steps"),
        (#"{"name": "S", "steps": [{"profile": "3G", "for": "1s"}], "approximate": true}"#, "approximate", "cannot go with steps"),
        (#"{"name": "S", "repeat": true}"#, "steps", "is missing"),
        (#"{"steps": [{"profile": "3G", "for": "1s"}]}"#, "name", "is missing"),
        (#"{"name": "S", "steps": [{"profile": "3G", "for": "1s"}, {"profile": "s"}], "repeat": true}"#, "steps[1].for", "is missing"),
        (#"{"name": "S", "steps": [{"profile": "3G", "for": "1s"}, {"profile": "s", "for": "1s"}]}"#, "steps[1].profile",
         "names this profile itself"),
        (#"{"name": "S", "steps": {"profile": "3G"}}"#, "steps", "expected a list of 1 to 1000 steps"),
    ])
    func badScheduleProfilesNameFileFieldAndForm(json: String, field: String, expected: String) {
        let error = #expect(throws: ProfileFileError.self) { try parse(json, file: "/p/s.json") }
        #expect(error?.file == "/p/s.json")
        #expect(error?.field == field)
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "")")
    }

    @Test func aScheduleProfileInADirectoryLoadsBesideOthers() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-sched-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(flaky.utf8).write(to: directory.appendingPathComponent("flaky.json"))
        let catalog = try ProfileCatalog.load(directories: [builtInDirectory, directory])
        #expect(try catalog.profile(named: "Flaky Train").schedule?.steps.count == 2)
        #expect(catalog.profiles.filter { $0.schedule != nil }.count == 1)
    }
}
