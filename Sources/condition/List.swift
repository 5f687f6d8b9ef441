import ArgumentParser
import Foundation
import LinkConditioner

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the profiles, built-in and your own.")

    @OptionGroup var profiles: ProfileOptions

    func run() throws {
        let catalog = try report { try profiles.catalog() }
        let rows = catalog.profiles.map { profile in
            [profile.name + (profile.isApproximate ? " *" : ""),
             ProfileDescription.short(profile.downlink),
             ProfileDescription.short(profile.uplink),
             profile.dnsDelayMicroseconds > 0 ? "+" + TCUnits.humanTime(microseconds: profile.dnsDelayMicroseconds) : "-"]
        }
        let header = ["NAME", "DOWNLINK", "UPLINK", "DNS"]
        let widths = (0..<4).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            let line = row.enumerated().map { column, text in
                column == 3 ? text : text.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0)
            }.joined()
            print(line)
        }
        if catalog.profiles.contains(where: \.isApproximate) {
            print("\n* approximate: commonly quoted values, not published ones")
        }
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Say what a profile does, in words and numbers.")

    @OptionGroup var profiles: ProfileOptions
    @Argument(help: "Profile name; case, spaces and punctuation are ignored (\"slow-net\" finds \"Slow Net\").")
    var name: String

    func run() throws {
        let profile = try report { try profiles.catalog().profile(named: name) }
        print(ProfileDescription.show(profile))
    }
}
