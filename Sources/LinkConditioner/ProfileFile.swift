import Foundation
import Sandbox
import SystemSupport

/// A profile file could not be used: says which file, which field, and the form expected.
public struct ProfileFileError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var field: String?
    public var problem: String

    public init(file: String, field: String?, problem: String) {
        self.file = file
        self.field = field
        self.problem = problem
    }

    public var description: String {
        if let field { return "\(file): field \"\(field)\": \(problem)" }
        return "\(file): \(problem)"
    }
}

/// Reads and validates the JSON profile format:
/// ```json
/// { "name": "3G", "description": "...", "approximate": false,
///   "downlink": { "bandwidthKbit": 780, "delayMs": 100, "jitterMs": 0, "lossPercent": 0 },
///   "uplink":   { "bandwidthKbit": 330, "delayMs": 100 },
///   "dnsDelayMs": 0 }
/// ```
/// Units are in the field names so a number can never be read in the wrong unit.
public enum ProfileFile {
    public static let topLevelFields = ["name", "description", "approximate", "downlink", "uplink", "dnsDelayMs",
                                        "excludeLoopback", "faults"]
    public static let directionFields = ["bandwidthKbit", "delayMs", "jitterMs", "lossPercent", "jitterDistribution",
                                         "correlationPercent", "reorderPercent", "duplicatePercent", "corruptPercent",
                                         "packetOverheadBytes"]

    /// Largest accepted bandwidth: 100 Gbit/s.
    public static let maximumKbit: Double = 100_000_000
    /// Largest accepted delay or jitter: one minute.
    public static let maximumMilliseconds: Double = 60_000

    public static func load(contentsOf url: URL) throws -> Profile {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ProfileFileError(file: url.path, field: nil,
                                   problem: "is a directory; expected a profile file (rename it so its name does not end in .json)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ProfileFileError(file: url.path, field: nil, problem: "cannot be read (\(systemReason(error)))")
        }
        return try parse(data, file: url.path)
    }

    public static func parse(_ data: Data, file: String) throws -> Profile {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw ProfileFileError(file: file, field: nil,
                                   problem: "is not valid JSON; expected an object like {\"name\": \"My Profile\", \"downlink\": {\"bandwidthKbit\": 1000}}")
        }
        guard case .object(let object) = root else {
            throw ProfileFileError(file: file, field: nil, problem: "expected a JSON object at the top level, got \(root.kindName)")
        }
        if object["steps"] != nil || object["repeat"] != nil {
            return try scheduledProfile(object, file: file)
        }
        try rejectUnknown(object, allowed: topLevelFields, prefix: "", file: file)
        let name = try profileName(object, file: file)
        let summary = try description(object, file: file)
        var approximate = false
        if let value = object["approximate"] {
            guard case .bool(let flag) = value else {
                throw ProfileFileError(file: file, field: "approximate", problem: "expected true or false, got \(value.shortDescription)")
            }
            approximate = flag
        }
        let downlink = try direction(object["downlink"], name: "downlink", file: file)
        let uplink = try direction(object["uplink"], name: "uplink", file: file)
        let dnsDelay = try milliseconds(object["dnsDelayMs"], field: "dnsDelayMs", file: file)
        var excludeLoopback = false
        if let value = object["excludeLoopback"] {
            guard case .bool(let flag) = value else {
                throw ProfileFileError(file: file, field: "excludeLoopback",
                                       problem: "expected true or false (true: traffic with 127.0.0.0/8 and ::1 is not conditioned), got \(value.shortDescription)")
            }
            excludeLoopback = flag
        }
        return Profile(name: name, summary: summary, isApproximate: approximate,
                       downlink: downlink, uplink: uplink, dnsDelayMicroseconds: dnsDelay,
                       excludeLoopback: excludeLoopback, source: file,
                       faults: try faults(object["faults"], file: file))
    }

    public static let faultFields = ["resetAfterBytes", "resetAfterMs", "resetPercent", "stallAfterBytes", "refuse", "dns"]

    /// `"faults": {"resetAfterBytes": N, "resetAfterMs": MS, "resetPercent": P, "stallAfterBytes": N,
    /// "refuse": "reset" | "unreachable" | "timeout", "dns": ["nxdomain:NAME,NAME", "servfail", ...]}` (DNS faults
    /// in `DNSFault`'s form, for `condition run`).
    private static func faults(_ value: JSONValue?, file: String) throws -> ConnectionFaults? {
        guard let value, value != .null else { return nil }
        guard case .object(let object) = value else {
            throw ProfileFileError(file: file, field: "faults", problem: "expected an object like {\"resetAfterBytes\": 100000}, got \(value.shortDescription)")
        }
        try rejectUnknown(object, allowed: faultFields, prefix: "faults.", file: file)
        func bytes(_ field: String) throws -> UInt64? {
            guard let number = try number(object[field], field: "faults." + field, file: file, range: 1...1e15,
                                          expected: "a whole number of bytes from 1 to 10^15") else { return nil }
            guard number == number.rounded() else {
                throw ProfileFileError(file: file, field: "faults." + field, problem: "expected a whole number of bytes, got \(number)")
            }
            return UInt64(number)
        }
        var refuse: ConnectionFaults.Refusal?
        if let value = object["refuse"], value != .null {
            guard case .string(let text) = value, let mode = ConnectionFaults.Refusal(rawValue: text) else {
                throw ProfileFileError(file: file, field: "faults.refuse",
                                       problem: "expected \"reset\", \"unreachable\" or \"timeout\", got \(value.shortDescription)")
            }
            refuse = mode
        }
        let resetAfter = try number(object["resetAfterMs"], field: "faults.resetAfterMs", file: file,
                                    range: 1...Double(ConnectionFaults.maximumMilliseconds),
                                    expected: "a number of milliseconds from 1 to 86400000 (one day)")
        let percent = try number(object["resetPercent"], field: "faults.resetPercent", file: file, range: 0...100,
                                 expected: "a share of connections in percent, more than 0 and at most 100")
        if percent == 0 {
            throw ProfileFileError(file: file, field: "faults.resetPercent",
                                   problem: "expected a share of connections in percent, more than 0 and at most 100, got 0 (leave the field out)")
        }
        var dns: [DNSFault]?
        if let value = object["dns"], value != .null {
            let expected = "expected a list of DNS faults like [\"nxdomain:ads.example.com\", \"delay=2s\"]"
            guard case .array(let items) = value, !items.isEmpty else {
                throw ProfileFileError(file: file, field: "faults.dns", problem: "\(expected), got \(value.shortDescription)")
            }
            dns = try items.map { item in
                guard case .string(let text) = item else {
                    throw ProfileFileError(file: file, field: "faults.dns", problem: "\(expected), got \(item.shortDescription)")
                }
                do { return try DNSFault.parse(text, seconds: DurationParser.seconds) } catch {
                    throw ProfileFileError(file: file, field: "faults.dns", problem: "\(error)")
                }
            }
        }
        return ConnectionFaults(resetAfterBytes: try bytes("resetAfterBytes"),
                                resetAfterMilliseconds: resetAfter.map { UInt64($0.rounded()) }, resetPercent: percent,
                                stallAfterBytes: try bytes("stallAfterBytes"), refuse: refuse, dns: dns)
    }

    /// Fields of a profile that is a schedule: other profiles by name, one after another.
    public static let scheduleFields = ["name", "description", "steps", "repeat"]

    /// A profile file with `steps`: a schedule with a name, run by `condition apply NAME`. Its steps name other
    /// profiles (checked when it is applied, against the profiles then known); it has no settings of its own.
    private static func scheduledProfile(_ object: [String: JSONValue], file: String) throws -> Profile {
        for key in object.keys.sorted() where !scheduleFields.contains(key) {
            throw ProfileFileError(file: file, field: key,
                                   problem: "cannot go with steps: a profile with steps takes its settings from the profiles its "
                                   + "steps name; expected only \(scheduleFields.joined(separator: ", ")) (put \"\(key)\" in a "
                                   + "profile of its own and name that one in a step)")
        }
        guard object["steps"] != nil else {
            throw ProfileFileError(file: file, field: "steps",
                                   problem: "is missing; \"repeat\" belongs to a schedule, expected a list of steps like "
                                   + #"[{"profile": "Slow Net", "for": "10s"}, {"profile": "Black Hole", "for": "5s"}]"#)
        }
        let name = try profileName(object, file: file)
        let summary = try description(object, file: file)
        let schedule = try Schedule.parse(object: object, file: file)
        for (index, step) in schedule.steps.enumerated() where Profile.lookupKey(step.profile) == Profile.lookupKey(name) {
            throw ProfileFileError(file: file, field: "steps[\(index)].profile",
                                   problem: "names this profile itself; expected the name of a profile with settings")
        }
        return Profile(name: name, summary: summary, source: file, schedule: schedule)
    }

    private static func profileName(_ object: [String: JSONValue], file: String) throws -> String {
        guard let nameValue = object["name"] else {
            throw ProfileFileError(file: file, field: "name", problem: "is missing; expected a non-empty string such as \"Slow Net\"")
        }
        guard case .string(let name) = nameValue,
              !name.trimmingCharacters(in: .whitespaces).isEmpty,
              !Profile.lookupKey(name).isEmpty, name.count <= 64,
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ProfileFileError(file: file, field: "name",
                                   problem: "expected a non-empty string of at most 64 characters with at least one letter or digit, got \(nameValue.shortDescription)")
        }
        return name
    }

    private static func description(_ object: [String: JSONValue], file: String) throws -> String {
        guard let value = object["description"] else { return "" }
        guard case .string(let text) = value else {
            throw ProfileFileError(file: file, field: "description", problem: "expected a string, got \(value.shortDescription)")
        }
        return text
    }

    private static func direction(_ value: JSONValue?, name: String, file: String) throws -> LinkSettings {
        guard let value, value != .null else { return .unchanged }
        guard case .object(let object) = value else {
            throw ProfileFileError(file: file, field: name,
                                   problem: "expected an object with any of \(directionFields.joined(separator: ", ")), got \(value.shortDescription)")
        }
        try rejectUnknown(object, allowed: directionFields, prefix: name + ".", file: file)
        var settings = LinkSettings()
        if let kbit = try number(object["bandwidthKbit"], field: "\(name).bandwidthKbit", file: file,
                                 range: 0...maximumKbit,
                                 expected: "a number of kilobits per second (1000 = 1 Mbit/s) from 0 to 100000000; 0 or absent leaves bandwidth unchanged") {
            if kbit > 0 && kbit < 1 {
                throw ProfileFileError(file: file, field: "\(name).bandwidthKbit",
                                       problem: "expected at least 1 kilobit per second (or 0 for unchanged), got \(kbit)")
            }
            settings.bitsPerSecond = UInt64((kbit * 1000).rounded())
        }
        settings.delayMicroseconds = try milliseconds(object["delayMs"], field: "\(name).delayMs", file: file)
        settings.jitterMicroseconds = try milliseconds(object["jitterMs"], field: "\(name).jitterMs", file: file)
        if let loss = try number(object["lossPercent"], field: "\(name).lossPercent", file: file, range: 0...100,
                                 expected: "a percentage from 0 to 100 (90 = nine packets in ten dropped)") {
            settings.lossPercent = loss
        }
        if let value = object["jitterDistribution"], value != .null {
            guard case .string(let text) = value, let distribution = LinkSettings.JitterDistribution(rawValue: text) else {
                throw ProfileFileError(file: file, field: "\(name).jitterDistribution",
                                       problem: "expected one of \"normal\", \"pareto\", \"paretonormal\", got \(value.shortDescription)")
            }
            guard settings.jitterMicroseconds > 0 else {
                throw ProfileFileError(file: file, field: "\(name).jitterDistribution",
                                       problem: "needs \(name).jitterMs above 0 (the distribution shapes the jitter)")
            }
            settings.jitterDistribution = distribution
        }
        for (field, keyPath, meaning) in [
            ("correlationPercent", \LinkSettings.correlationPercent, "how much each random delay and loss depends on the one before"),
            ("reorderPercent", \LinkSettings.reorderPercent, "packets sent at once, ahead of delayed ones"),
            ("duplicatePercent", \LinkSettings.duplicatePercent, "packets sent twice"),
            ("corruptPercent", \LinkSettings.corruptPercent, "packets with a bit flipped"),
        ] as [(String, WritableKeyPath<LinkSettings, Double>, String)] {
            if let value = try number(object[field], field: "\(name).\(field)", file: file, range: 0...100,
                                      expected: "a percentage from 0 to 100 (\(meaning))") {
                settings[keyPath: keyPath] = value
            }
        }
        if settings.reorderPercent > 0 && settings.delayMicroseconds == 0 {
            throw ProfileFileError(file: file, field: "\(name).reorderPercent",
                                   problem: "needs \(name).delayMs above 0 (reordered packets are the ones sent without the delay)")
        }
        if let bytes = try number(object["packetOverheadBytes"], field: "\(name).packetOverheadBytes", file: file,
                                  range: -1000...1000, expected: "a whole number of bytes from -1000 to 1000 added to each packet by the rate (e.g. 8 for PPPoE)") {
            guard bytes == bytes.rounded() else {
                throw ProfileFileError(file: file, field: "\(name).packetOverheadBytes", problem: "expected a whole number of bytes, got \(bytes)")
            }
            settings.packetOverheadBytes = Int(bytes)
        }
        return settings
    }

    private static func milliseconds(_ value: JSONValue?, field: String, file: String) throws -> UInt64 {
        guard let ms = try number(value, field: field, file: file, range: 0...maximumMilliseconds,
                                  expected: "a number of milliseconds from 0 to 60000") else { return 0 }
        return UInt64((ms * 1000).rounded())
    }

    private static func number(_ value: JSONValue?, field: String, file: String,
                               range: ClosedRange<Double>, expected: String) throws -> Double? {
        guard let value, value != .null else { return nil }
        guard case .number(let number) = value, number.isFinite, range.contains(number) else {
            throw ProfileFileError(file: file, field: field, problem: "expected \(expected), got \(value.shortDescription)")
        }
        return number
    }

    private static func rejectUnknown(_ object: [String: JSONValue], allowed: [String], prefix: String, file: String) throws {
        for key in object.keys.sorted() where !allowed.contains(key) {
            throw ProfileFileError(file: file, field: prefix + key,
                                   problem: "is not a known field; expected one of \(allowed.joined(separator: ", "))")
        }
    }
}

/// Just enough JSON to validate a profile with precise error messages.
public enum JSONValue: Codable, Equatable, Sendable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let bool = try? container.decode(Bool.self) { self = .bool(bool) }
        else if let number = try? container.decode(Double.self) { self = .number(number) }
        else if let string = try? container.decode(String.self) { self = .string(string) }
        else if let array = try? container.decode([JSONValue].self) { self = .array(array) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .number(let n): try container.encode(n)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var string: String? { if case .string(let s) = self { return s }; return nil }
    public var number: Double? { if case .number(let n) = self { return n }; return nil }

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    var shortDescription: String {
        switch self {
        case .null: "null"
        case .bool(let b): String(b)
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .string(let s): "\"\(s.count > 40 ? String(s.prefix(40)) + "..." : s)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}
