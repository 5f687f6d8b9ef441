import Foundation

/// No profile has the name asked for.
public struct UnknownProfileError: Error, CustomStringConvertible {
    public var name: String
    public var known: [String]
    public var description: String {
        "no profile named \"\(name)\"; known profiles: \(known.joined(separator: ", ")) (run `condition list`)"
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

    /// The profiles in one directory; two files with the same profile name are an error.
    public static func loadDirectory(_ directory: URL) throws -> [Profile] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return []
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        var seen: [String: String] = [:]
        var result: [Profile] = []
        for name in names {
            let profile = try ProfileFile.load(contentsOf: directory.appendingPathComponent(name))
            if let other = seen[profile.lookupKey] {
                throw ProfileFileError(file: directory.appendingPathComponent(name).path, field: "name",
                                       problem: "\"\(profile.name)\" is also the name of \(other); expected a name unique in its directory")
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

    /// Where the built-in profiles live: `$TAPKIT_PROFILES_DIR`, `share/tapkit/profiles` beside the
    /// executable's `bin`, `Profiles/` above a build folder, or the source checkout's `Profiles/`.
    public static func builtInDirectory(executable: URL? = nil) -> URL? {
        let fm = FileManager.default
        if let dir = ProcessInfo.processInfo.environment["TAPKIT_PROFILES_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
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
    public static func standard(extra: URL? = nil, executable: URL? = nil) throws -> ProfileCatalog {
        var directories: [URL] = []
        if let builtIn = builtInDirectory(executable: executable) { directories.append(builtIn) }
        directories.append(userDirectory())
        if let extra {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: extra.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ProfileFileError(file: extra.path, field: nil, problem: "is not a directory; expected a directory of *.json profile files")
            }
            directories.append(extra)
        }
        return try load(directories: directories)
    }
}
