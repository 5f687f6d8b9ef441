import ArgumentParser
import Foundation
import LinkConditioner

/// `condition export NAME... --nlc`: profiles as a Network Link Conditioner property list.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export profiles as a Network Link Conditioner property list.",
        discussion: "Writes an XML plist shaped like NLC's preferences file: {Profiles = {NAME = {...}}}. `condition import` reads it back.")

    @Argument(help: "One or more profile names.")
    var names: [String]

    @Flag(name: .customLong("nlc"), help: "NLC property list format (the only export format).")
    var nlc = false

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write to FILE instead of standard output.",
                                                                               valueName: "FILE"))
    var output: String?

    @OptionGroup var profiles: ProfileOptions

    func validate() throws {
        if !nlc { throw ValidationError("say which format: --nlc (Network Link Conditioner property list)") }
        if names.isEmpty { throw ValidationError("name at least one profile to export (`condition list` shows them)") }
    }

    func run() throws {
        let profiles = try report { () throws -> [Profile] in
            let catalog = try self.profiles.catalog()
            return try names.map { try catalog.profileWithSettings(named: $0, for: "export --nlc") }
        }
        profiles.flatMap(NLCConversion.exportNotes).forEach { SandboxCLI.printError("note: \($0)") }
        let data = try NLCPropertyList.write(profiles.map(NLCConversion.nlcProfile(from:)))
        if let output {
            try report { try writeUserFile(data, to: output) }
        } else {
            FileHandle.standardOutput.write(data)
        }
    }
}
