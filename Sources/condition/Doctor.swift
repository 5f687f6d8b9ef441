import ArgumentParser
import Foundation
import LinkConditioner

struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check kernel support (netem, htb, ifb, mirred, u32, ingress) and privileges.",
        discussion: "Each feature is tried in a throwaway network namespace. Exits 1 if anything is missing.")

    @Flag(help: "Print the checks as JSON.") var json = false

    func run() throws {
        let checks = LinkConditioner.Doctor(runner: ProcessRunner()).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(["checks": checks]), as: UTF8.self))
        } else {
            for check in checks {
                print("\(check.ok ? "ok     " : "MISSING") \(check.name.padding(toLength: 11, withPad: " ", startingAt: 0)) \(check.detail)")
                if let remedy = check.remedy { print("        \(String(repeating: " ", count: 11)) fix: \(remedy)") }
            }
        }
        if !checks.allSatisfy(\.ok) { throw ExitCode.failure }
    }
}
