import Foundation

/// Profiles that follow each other on time, applied by in-place switches (the ifb and the filters stay, so
/// traffic is never unconditioned in between). Read from a file:
/// ```json
/// {"steps": [{"profile": "Slow Net", "for": "10s"}, {"profile": "Black Hole", "for": "5s"}], "repeat": true}
/// ```
/// The last step may leave out `for` (it then lasts until `off`, `--for` or Ctrl-C), unless `repeat` is true.
public struct Schedule: Sendable, Equatable, Codable {
    public struct Step: Sendable, Equatable, Codable {
        public var profile: String
        /// How long the step lasts; nil only for a last step that lasts until stopped.
        public var seconds: Double?
        public init(profile: String, seconds: Double?) {
            self.profile = profile
            self.seconds = seconds
        }
    }

    public var steps: [Step]
    public var repeats: Bool

    public init(steps: [Step], repeats: Bool = false) {
        self.steps = steps
        self.repeats = repeats
    }

    /// The most steps a file may hold; a schedule is a handful of phases, not a trace.
    public static let maximumSteps = 1000

    /// The step active `elapsed` seconds after the start, and when the next one begins (nil: never). A repeating
    /// schedule's earlier cycles are skipped by arithmetic, so the answer takes the same time at any `elapsed`
    /// (counting cycles one by one took minutes far into a short one-step trace, and then answered "never").
    public func step(at elapsed: Double) -> (index: Int, nextStart: Double?) {
        var start = 0.0
        let cycle = steps.reduce(0.0) { $0 + ($1.seconds ?? .infinity) }
        if repeats, cycle.isFinite, cycle > 0, elapsed >= cycle {
            start = (elapsed / cycle).rounded(.down) * cycle
            // Rounding at a cycle's edge: never start past `elapsed`.
            if start > elapsed { start -= cycle }
        }
        while true {
            for (index, step) in steps.enumerated() {
                guard let seconds = step.seconds else { return (index, nil) }
                if elapsed < start + seconds { return (index, start + seconds) }
                start += seconds
            }
            if !repeats || !(cycle > 0) { return (steps.count - 1, nil) }
        }
    }

    public static func parse(_ data: Data, file: String) throws -> Schedule {
        let root: JSONValue
        do { root = try JSONDecoder().decode(JSONValue.self, from: data) } catch {
            throw ProfileFileError(file: file, field: nil, problem: "is not valid JSON; expected an object like "
                                   + #"{"steps": [{"profile": "Slow Net", "for": "10s"}], "repeat": false}"#)
        }
        guard case .object(let object) = root else {
            throw ProfileFileError(file: file, field: nil, problem: "expected a JSON object at the top level, got \(root.kindName)")
        }
        for key in object.keys.sorted() where !["steps", "repeat", "name", "description"].contains(key) {
            throw ProfileFileError(file: file, field: key, problem: "is not a known field; expected one of steps, repeat, name, description")
        }
        return try parse(object: object, file: file)
    }

    /// The `steps` and `repeat` fields of an object (a schedule file, or a profile file with steps); other
    /// fields are the caller's to check.
    static func parse(object: [String: JSONValue], file: String) throws -> Schedule {
        var repeats = false
        if let value = object["repeat"] {
            guard case .bool(let flag) = value else {
                throw ProfileFileError(file: file, field: "repeat", problem: "expected true or false, got \(value.shortDescription)")
            }
            repeats = flag
        }
        guard case .array(let items)? = object["steps"], !items.isEmpty, items.count <= maximumSteps else {
            throw ProfileFileError(file: file, field: "steps",
                                   problem: "expected a list of 1 to \(maximumSteps) steps like {\"profile\": \"Slow Net\", \"for\": \"10s\"}, got \(object["steps"]?.shortDescription ?? "nothing")")
        }
        var steps: [Step] = []
        for (index, item) in items.enumerated() {
            let field = "steps[\(index)]"
            guard case .object(let step) = item else {
                throw ProfileFileError(file: file, field: field, problem: "expected an object like {\"profile\": \"Slow Net\", \"for\": \"10s\"}, got \(item.shortDescription)")
            }
            for key in step.keys.sorted() where !["profile", "for"].contains(key) {
                throw ProfileFileError(file: file, field: "\(field).\(key)", problem: "is not a known field; expected profile or for")
            }
            guard case .string(let name)? = step["profile"], !name.isEmpty else {
                throw ProfileFileError(file: file, field: "\(field).profile", problem: "expected a profile name such as \"Slow Net\"")
            }
            var seconds: Double?
            if let value = step["for"] {
                switch value {
                case .string(let text): seconds = DurationParser.seconds(text)
                case .number(let number) where number > 0 && number.isFinite: seconds = number
                default: seconds = nil
                }
                guard seconds != nil else {
                    throw ProfileFileError(file: file, field: "\(field).for",
                                           problem: "expected a duration such as \"10s\", \"500ms\", \"2m\" or a number of seconds, got \(value.shortDescription)")
                }
            } else if index < items.count - 1 || repeats {
                throw ProfileFileError(file: file, field: "\(field).for",
                                       problem: "is missing; every step needs a duration (\"10s\") except the last one of a schedule that does not repeat")
            }
            if let seconds, seconds < 0.05 {
                throw ProfileFileError(file: file, field: "\(field).for", problem: "expected at least 50ms, got \(seconds)s")
            }
            steps.append(Step(profile: name, seconds: seconds))
        }
        return Schedule(steps: steps, repeats: repeats)
    }
}
