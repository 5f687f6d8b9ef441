import Foundation
import Sandbox
import SystemSupport

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

/// A profile file that could not be used, with the names it may have been meant to give (its file name and the
/// `name` inside, when that much could be read): asking for one of those is an error, anything else a warning.
public struct BadProfileFile: Sendable, Equatable {
    public var error: ProfileFileError
    var lookupKeys: Set<String>

    init(_ error: ProfileFileError) {
        self.error = error
        let url = URL(fileURLWithPath: error.file)
        var keys: Set<String> = [Profile.lookupKey(url.deletingPathExtension().lastPathComponent)]
        if let data = try? Data(contentsOf: url),
           let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let name = object["name"] as? String {
            keys.insert(Profile.lookupKey(name))
        }
        lookupKeys = keys
    }

    /// Whether this file may have been the profile `name` (matched as `ProfileCatalog.profile(named:)` does).
    public func mayBe(_ name: String) -> Bool { lookupKeys.contains(Profile.lookupKey(name)) }
}

/// Built-in profiles overridden, by name, by the user's directories.
public struct ProfileCatalog: Sendable {
    /// Profiles in display order: built-ins first (in file-name order), then new user profiles.
    public private(set) var profiles: [Profile] = []
    /// Files set aside by `standard`: each affects only the profile it may have been (see `profile(named:)`).
    public private(set) var badFiles: [BadProfileFile] = []

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
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw ProfileFileError(file: directory.path, field: nil, problem: "cannot be listed (\(systemReason(error)))")
        }
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

    /// Finds a profile by name, ignoring case, spaces and punctuation ("slow-net" finds "Slow Net"). A bad file
    /// that may have been this profile (by its file name or the name inside) is the error, even when another
    /// directory has a good profile of that name: the one asked for would otherwise change silently.
    public func profile(named name: String) throws -> Profile {
        let key = Profile.lookupKey(name)
        if let bad = badFiles.first(where: { $0.lookupKeys.contains(key) }) { throw bad.error }
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
            // A schedule runs on an interface, where nothing answers DNS for TapKit: its DNS faults would silently not be.
            if let dns = profile.faults?.dns {
                throw ProfileFileError(file: file, field: field,
                                       problem: "names \"\(profile.name)\", whose DNS faults (faults.dns: "
                                       + dns.map(\.description).joined(separator: ", ") + ") work in `condition run` only, "
                                       + "where TapKit answers the command's DNS; a schedule changes an interface. Expected a "
                                       + "profile without faults.dns (copy it without them for this schedule)")
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

    /// `~/.config/tapkit/profiles` of the user who ran the command, from the executable's `environment`:
    /// `$XDG_CONFIG_HOME/tapkit/profiles` when set; under sudo (`SUDO_UID` not 0) the invoking user's home from
    /// the password database, so `sudo condition apply` sees the profiles `condition plan` sees; else `$HOME`.
    public static func userDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("tapkit/profiles")
        }
        let home = InvokingUser.fromSudo(environment: environment)?.environment(from: environment)["HOME"]
            ?? environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".config/tapkit/profiles")
    }

    /// Built-ins, then the user's directory (`userDirectory(environment:)`), then `extra` (from `--profiles DIR`).
    /// A bad file is set aside in `badFiles` (the executable warns about it); it is an error only when asked for.
    public static func standard(extra: URL? = nil, executable: URL? = nil, builtIn override: URL? = nil,
                                environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ProfileCatalog {
        var problems: [ProfileFileError] = []
        var catalog = ProfileCatalog()
        let directories = try standardDirectories(extra: extra, executable: executable, builtIn: override,
                                                  user: userDirectory(environment: environment))
        for directory in directories {
            for profile in try loadDirectory(directory, problems: &problems) { catalog.add(profile) }
        }
        catalog.badFiles = problems.map(BadProfileFile.init)
        return catalog
    }

    static func standardDirectories(extra: URL?, executable: URL?, builtIn override: URL? = nil, user: URL) throws -> [URL] {
        var directories: [URL] = []
        if let builtIn = builtInDirectory(executable: executable, override: override) { directories.append(builtIn) }
        directories.append(user)
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
