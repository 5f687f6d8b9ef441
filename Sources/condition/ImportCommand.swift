import ArgumentParser
import Foundation
import LinkConditioner

/// `condition import FILE`: Network Link Conditioner profiles from a property list into profile files.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import Network Link Conditioner profiles from a property list.",
        discussion: """
            Reads NLC profile dictionaries (DownlinkBandwidth, DownlinkBandwidthUnit 0=Kbps 1=Mbps, \
            DownlinkPacketLossRatio %, DownlinkDelay ms, the same for Uplink, DNSDelayValue ms, ExcludeLoopback) \
            from NLC's preferences file (com.apple.network.prefPaneSimulate.plist), a dictionary of profiles, \
            an array of profiles with Name, or one profile dictionary. Writes one JSON profile file per \
            profile, named after it; imported profiles override built-ins of the same name.
            """)

    @Argument(help: "The property list (XML or binary).")
    var file: String

    @Option(name: .customLong("to"), help: ArgumentHelp("Write the profile files here instead of ~/.config/tapkit/profiles.",
                                                        valueName: "DIR"))
    var directory: String?

    @Flag(name: .customLong("force"), help: "Overwrite profile files that already exist.")
    var force = false

    func run() throws {
        let source = URL(fileURLWithPath: file)
        let profiles: [NLCProfile]
        do { profiles = try NLCPropertyList.read(contentsOf: source) } catch {
            SandboxCLI.printError("condition import: \(error)")
            throw ExitCode.failure
        }
        let target = directory.map { URL(fileURLWithPath: $0) } ?? ProfileCatalog.userDirectory()
        var planned: [(NLCProfile, URL, Data)] = []
        var names = Set<String>()
        for nlc in profiles {
            let url = target.appendingPathComponent(NLCConversion.fileName(for: nlc.name))
            guard names.insert(url.lastPathComponent).inserted else {
                SandboxCLI.printError("condition import: two profiles map to \(url.lastPathComponent); rename one in \(file)")
                throw ExitCode.failure
            }
            let data = try NLCConversion.profileFileData(NLCConversion.profile(from: nlc, source: source.path))
            // What is written must load back as a profile; check before writing anything.
            do { _ = try ProfileFile.parse(data, file: url.path) } catch {
                SandboxCLI.printError("condition import: profile '\(nlc.name)' from \(file) is not usable: \(error)")
                throw ExitCode.failure
            }
            if !force && FileManager.default.fileExists(atPath: url.path) {
                SandboxCLI.printError("condition import: \(url.path) exists; use --force to overwrite it, or --to DIR")
                throw ExitCode.failure
            }
            planned.append((nlc, url, data))
        }
        try report { try createUserDirectory(target) }
        for (nlc, url, data) in planned {
            try report { try writeUserFile(data, to: url.path) }
            print("imported \"\(nlc.name)\" -> \(url.path)")
            NLCConversion.importNotes(nlc).forEach { SandboxCLI.printError("note: \($0)") }
        }
    }
}
