import Foundation
import LinkConditioner
import Testing

/// Issue 11: schedules of profiles, read from a file with errors naming file, field and form.
@Suite struct ScheduleTests {
    @Test func stepsRepeatAndTheLastMayLastForever() throws {
        let file = #"{"steps": [{"profile": "Slow Net", "for": "10s"}, {"profile": "Black Hole", "for": 5}], "repeat": true}"#
        let schedule = try Schedule.parse(Data(file.utf8), file: "s.json")
        #expect(schedule.steps == [.init(profile: "Slow Net", seconds: 10), .init(profile: "Black Hole", seconds: 5)])
        #expect(schedule.step(at: 0) == (0, 10))
        #expect(schedule.step(at: 12) == (1, 15))
        #expect(schedule.step(at: 16) == (0, 25))
        let once = Schedule(steps: [.init(profile: "Slow Net", seconds: 10), .init(profile: "Black Hole", seconds: nil)])
        #expect(once.step(at: 11) == (1, nil))
    }

    /// Issue 36: a one-interval trace is a one-step repeating schedule. Far into it the step and its next start come
    /// at once and are right (cycles were counted one by one, up to a million, and then the answer was "never").
    @Test func farIntoARepeatingScheduleTheNextStepIsStillKnown() {
        let one = Schedule(steps: [.init(profile: "A @0s", seconds: 1)], repeats: true)
        #expect(one.step(at: 0.5) == (0, 1))
        #expect(one.step(at: 3_000_000.25) == (0, 3_000_001))
        let two = Schedule(steps: [.init(profile: "A", seconds: 0.1), .init(profile: "B", seconds: 0.2)], repeats: true)
        let clock = ContinuousClock()
        var answers: [(Int, Double?)] = []
        let took = clock.measure { answers = (0..<1000).map { two.step(at: 10_000_000 + Double($0) * 0.001 + 0.05) } }
        #expect(answers.allSatisfy { $0.1 != nil })
        #expect(two.step(at: 9_999_999.95).0 == 0 && abs((two.step(at: 9_999_999.95).1 ?? 0) - 10_000_000) < 1e-6)
        #expect(abs((two.step(at: 1_000_000.15).1 ?? 0) - 1_000_000.2) < 1e-6)
        #expect(took < .seconds(1), "\(took)")
    }

    @Test(arguments: [
        (#"{"steps": []}"#, "steps", "expected a list of 1 to 1000 steps"),
        (#"{"steps": [{"profile": "A"}, {"profile": "B"}]}"#, "steps[0].for", "is missing"),
        (#"{"steps": [{"profile": "A", "for": "soon"}]}"#, "steps[0].for", "expected a duration"),
        (#"{"steps": [{"profile": "A", "for": "10ms"}]}"#, "steps[0].for", "at least 50ms"),
        (#"{"steps": [{"profile": "A", "for": "1s", "loss": 5}]}"#, "steps[0].loss", "not a known field"),
        (#"{"steps": [{"profile": "A"}], "repeat": true}"#, "steps[0].for", "is missing"),
        (#"{"steps": [{"profile": "A", "for": "1s"}], "repeat": "yes"}"#, "repeat", "expected true or false"),
    ])
    func badFilesNameTheField(json: String, field: String, expected: String) {
        let error = #expect(throws: ProfileFileError.self) { try Schedule.parse(Data(json.utf8), file: "/x/s.json") }
        #expect(error?.file == "/x/s.json")
        #expect(error?.field == field)
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "")")
    }
}

/// Mahimahi-style traces become per-interval rates; an interval without delivery is 100% loss.
@Suite struct BandwidthTraceTests {
    @Test func opportunitiesPerIntervalBecomeRates() throws {
        // 250 packets in the first second, none in the second, 1000 in the third.
        let first: [String] = (0..<250).map { (index: Int) -> String in String(1 + index * 4) }
        let third: [String] = (0..<1000).map { (index: Int) -> String in String(2001 + index) }
        let lines = first + third
        let rates = try BandwidthTrace.rates(Data(lines.joined(separator: "\n").utf8), file: "t", interval: 1)
        #expect(rates == [3_000_000, 0, 12_000_000])
        let steps = BandwidthTrace.steps(base: Profile(name: "B", uplink: LinkSettings(bitsPerSecond: 1_000_000)),
                                         downlink: rates, uplink: nil, interval: 1)
        let downlinkRates: [UInt64] = steps.map { (step: (Profile, Double)) -> UInt64 in step.0.downlink.bitsPerSecond }
        #expect(downlinkRates == [3_000_000, 0, 12_000_000])
        #expect(steps[1].0.downlink.lossPercent == 100)
        #expect(steps.allSatisfy { $0.0.uplink.bitsPerSecond == 1_000_000 && $0.1 == 1 })
    }

    @Test func badLinesAreNamed() {
        let error = #expect(throws: ProfileFileError.self) {
            try BandwidthTrace.rates(Data("5\n3\n".utf8), file: "/t/down.trace", interval: 1)
        }
        #expect(error?.description == "/t/down.trace: field \"line 2\": expected a millisecond timestamp not below the one before (Mahimahi trace format), got \"3\"")
    }
}
