import Foundation

/// No profile has the name asked for.
public struct UnknownProfileError: Error, CustomStringConvertible {
    public var name: String
    public var known: [String]
    public var description: String {
        "no profile named \"\(name)\"; known profiles: \(known.joined(separator: ", ")) (run `condition list`)"
    }
}

/// A schedule (a profile with steps) was named where one set of conditions is needed.
public struct ScheduleNotAllowedError: Error, CustomStringConvertible {
    public var profile: String
    public var use: String
    public var description: String {
        "\"\(profile)\" is a schedule of other profiles (steps), which \(use) cannot take; "
            + "`condition apply \"\(profile)\" -i IFACE` runs it step by step"
    }
}

/// Built-in profiles overridden, by name, by the user's directories.
public struct ProfileCatalog: Sendable {
    /// Profiles in display order: built-ins first (in file-name order), then new user profiles.
    public private(set) var profiles: [Profile] = []

    public init(profiles: [Profile] = []) {
        for profile in profiles { add(profile) }
    }

    /// Loads every `*.json` in `directories`, in order; a later profile replaces an earlier one of the same name.
    /// Missing directories are skipped; a bad file is an error naming it.
    public static func load(directories: [URL]) throws -> ProfileCatalog {
        var catalog = ProfileCatalog()
        for directory in directories {
            for profile in try loadDirectory(directory) { catalog.add(profile) }
        }
        return catalog
    }

    /// Like `standard`, but a bad file is set aside and returned as a problem instead of failing the whole
    /// catalog, so `list` still shows every good profile.
    public static func standardSkippingBadFiles(extra: URL? = nil, executable: URL? = nil, builtIn override: URL? = nil) throws
        -> (catalog: ProfileCatalog, problems: [ProfileFileError]) {
        var problems: [ProfileFileError] = []
        var catalog = ProfileCatalog()
        for directory in try standardDirectories(extra: extra, executable: executable, builtIn: override) {
            for profile in try loadDirectory(directory, problems: &problems) { catalog.add(profile) }
        }
        return (catalog, problems)
    }

    /// The profiles in one directory; two files with the same profile name are an error.
    public static func loadDirectory(_ directory: URL) throws -> [Profile] {
        var problems: [ProfileFileError] = []
        let profiles = try loadDirectory(directory, problems: &problems, collect: false)
        return profiles
    }

    /// With `collect`, bad files are appended to `problems` and skipped; without it the first one is thrown.
    static func loadDirectory(_ directory: URL, problems: inout [ProfileFileError], collect: Bool = true) throws -> [Profile] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return []
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        var seen: [String: String] = [:]
        var result: [Profile] = []
        for name in names {
            let profile: Profile
            do {
                profile = try ProfileFile.load(contentsOf: directory.appendingPathComponent(name))
                if let other = seen[profile.lookupKey] {
                    throw ProfileFileError(file: directory.appendingPathComponent(name).path, field: "name",
                                           problem: "\"\(profile.name)\" is also the name of \(other); expected a name unique in its directory")
                }
            } catch let error as ProfileFileError where collect {
                problems.append(error)
                continue
            }
            seen[profile.lookupKey] = profile.source ?? name
            result.append(profile)
        }
        return result
    }

    public mutating func add(_ profile: Profile) {
        if let index = profiles.firstIndex(where: { $0.lookupKey == profile.lookupKey }) {
            profiles[index] = profile
        } else {
            profiles.append(profile)
        }
    }

    /// Finds a profile by name, ignoring case, spaces and punctuation ("slow-net" finds "Slow Net").
    public func profile(named name: String) throws -> Profile {
        let key = Profile.lookupKey(name)
        if let profile = profiles.first(where: { $0.lookupKey == key }) { return profile }
        throw UnknownProfileError(name: name, known: profiles.map(\.name))
    }

    /// A profile with settings of its own, by name, for `use` (a command that applies one set of conditions);
    /// a schedule is an error saying how to run it instead.
    public func profileWithSettings(named name: String, for use: String) throws -> Profile {
        let profile = try profile(named: name)
        guard profile.schedule == nil else { throw ScheduleNotAllowedError(profile: profile.name, use: use) }
        return profile
    }

    /// The profiles a schedule's steps name, in order, each with how long it lasts. A step naming an unknown
    /// profile, or another schedule (schedules do not nest), is an error naming `file` and the step.
    public func stepProfiles(of schedule: Schedule, file: String) throws -> [(profile: Profile, seconds: Double?)] {
        try schedule.steps.enumerated().map { index, step in
            let field = "steps[\(index)].profile"
            guard let profile = try? profile(named: step.profile) else {
                throw ProfileFileError(file: file, field: field,
                                       problem: "names no known profile \"\(step.profile)\"; expected one of "
                                       + profiles.filter { $0.schedule == nil }.map(\.name).joined(separator: ", ")
                                       + " (run `condition list`)")
            }
            guard profile.schedule == nil else {
                throw ProfileFileError(file: file, field: field,
                                       problem: "names \"\(profile.name)\", which has steps of its own; expected a profile with "
                                       + "settings (schedules do not nest: list its steps here instead)")
            }
            return (profile, step.seconds)
        }
    }

    /// Where the built-in profiles live: `override` (from the executable), `share/tapkit/profiles` beside the
    /// executable's `bin`, `Profiles/` above a build folder, or the source checkout's `Profiles/`.
    public static func builtInDirectory(executable: URL? = nil, override: URL? = nil) -> URL? {
        let fm = FileManager.default
        if let override { return override }
        var candidates: [URL] = []
        if let executable {
            let bin = executable.resolvingSymlinksInPath().deletingLastPathComponent()
            candidates.append(bin.deletingLastPathComponent().appendingPathComponent("share/tapkit/profiles"))
            // .build/<triple>/debug/condition -> package root three or four levels up
            var dir = bin
            for _ in 0..<4 {
                dir = dir.deletingLastPathComponent()
                candidates.append(dir.appendingPathComponent("Profiles"))
            }
        }
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Profiles"))
        return candidates.first { fm.fileExists(atPath: $0.appendingPathComponent("slow-net.json").path) }
    }

    /// `~/.config/tapkit/profiles` (honouring `$XDG_CONFIG_HOME`).
    public static func userDirectory() -> URL {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("tapkit/profiles")
        }
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".config/tapkit/profiles")
    }

    /// Built-ins, then `~/.config/tapkit/profiles`, then `extra` (from `--profiles DIR`).
    public static func standard(extra: URL? = nil, executable: URL? = nil, builtIn override: URL? = nil) throws -> ProfileCatalog {
        try load(directories: standardDirectories(extra: extra, executable: executable, builtIn: override))
    }

    static func standardDirectories(extra: URL?, executable: URL?, builtIn override: URL? = nil) throws -> [URL] {
        var directories: [URL] = []
        if let builtIn = builtInDirectory(executable: executable, override: override) { directories.append(builtIn) }
        directories.append(userDirectory())
        if let extra {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: extra.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ProfileFileError(file: extra.path, field: nil, problem: "is not a directory; expected a directory of *.json profile files")
            }
            directories.append(extra)
        }
        return directories
    }
}
