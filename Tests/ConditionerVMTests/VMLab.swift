import Foundation
import TestSupport

/// Runs `Scripts/vm/conditioner-lab.sh` inside the real-kernel VM (`Scripts/vm-run`) and reads its
/// `RESULT <scenario> key=value ...` lines.
struct LabRun: Sendable {
    var status: Int32
    var output: String
    var results: [String: [String: String]]

    init(status: Int32, output: String) {
        self.status = status
        self.output = output
        var results: [String: [String: String]] = [:]
        for line in output.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count >= 2, words[0] == "RESULT" else { continue }
            let scenario = String(words[1])
            for pair in words.dropFirst(2) {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                results[scenario, default: [:]][String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
        }
        self.results = results
    }

    /// The figures of one scenario, or an error that shows the guest's output. Its first line says what went
    /// wrong and, for a scenario the lab stopped at its time limit, what was still running (CI shows that line).
    func figures(_ scenario: String) throws -> Figures {
        guard let values = results[scenario] else {
            let lastNote = output.split(separator: "\n").last { $0.hasPrefix("# ") }.map { " Last note: \($0.dropFirst(2))" } ?? ""
            throw LabError("the VM printed no results for '\(scenario)' (vm-run status \(status)).\(lastNote)\n\(output.suffix(4000))")
        }
        if values["timed_out"] == "yes" {
            let lines = output.split(separator: "\n")
            let from = lines.firstIndex { $0.hasPrefix("RESULT \(scenario) timed_out=") } ?? lines.startIndex
            let stuck = lines[from...].first { $0.hasPrefix("# stuck after ") }.map { String($0.dropFirst(2)) } ?? "stuck"
            throw LabError("'\(scenario)' ran past its \(values["limit_s"] ?? "?") s and was stopped: \(stuck)\n\(output.suffix(4000))")
        }
        return Figures(scenario: scenario, values: values)
    }

    /// This scenario's lines, for failure messages and the test log.
    func lines(_ scenario: String) -> String {
        output.split(separator: "\n").filter { $0.hasPrefix("RESULT \(scenario) ") }.joined(separator: "\n")
    }
}

struct Figures: Sendable {
    var scenario: String
    var values: [String: String]

    subscript(_ key: String) -> String? { values[key] }

    /// A number the scenario must have printed; a missing or non-numeric one is an error naming it.
    func number(_ key: String) throws -> Double {
        guard let text = values[key] else { throw LabError("\(scenario): no figure '\(key)' in \(values)") }
        guard let value = Double(text) else { throw LabError("\(scenario): '\(key)' is '\(text)', not a number") }
        return value
    }
}

struct LabError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum VMLab {
    static let vmSetup = TestEnvironment.packageRoot.appendingPathComponent("Scripts/vm-setup").path
    static let vmRun = TestEnvironment.packageRoot.appendingPathComponent("Scripts/vm-run").path
    static let labScript = TestEnvironment.packageRoot.appendingPathComponent("Scripts/vm/conditioner-lab.sh").path
    static let condition = TestEnvironment.executable("condition").path

    /// Root, and `Scripts/vm-setup --check` says the kernel, qemu and virtme-ng are in place.
    static let isReady: Bool = {
        guard TestEnvironment.isRoot else { return false }
        return (try? TestSupport.run(vmSetup, ["--check"]).status) == 0
    }()

    static let whyNotReady = "needs root and the VM: run `Scripts/vm-setup` as root (or `Scripts/setup --test`), "
        + "then `swift build && swift test --no-parallel --filter ConditionerVMTests`"

    /// Whether the built `condition` has a subcommand: its help names it in the usage line (ArgumentParser
    /// answers `--help` with status 0 even after an unknown subcommand, so the status alone says nothing).
    static func conditionHas(_ subcommand: String) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: condition),
              let help = try? TestSupport.run(condition, ["help", subcommand]) else { return false }
        return (help.stdoutText + help.stderrText).contains("USAGE: condition \(subcommand)")
    }

    /// Boots the VM once and runs the lab's scenarios in it.
    static func boot(driver: String, scenarios: [String], timeoutSeconds: Int) -> Result<LabRun, LabError> {
        let started = Date()
        do {
            let result = try TestSupport.run(vmRun, ["--timeout", String(timeoutSeconds), "-f", labScript,
                                                     "--driver", driver, "--bin", TestEnvironment.binDirectory.path]
                                                     + scenarios)
            let output = result.stdoutText
            print("VM run (\(driver): \(scenarios.joined(separator: " "))) took "
                  + String(format: "%.0f s", Date().timeIntervalSince(started)) + "; " + result.stderrText
                  .split(separator: "\n").filter { $0.hasPrefix("vm-run:") }.joined(separator: "; "))
            // The figures and the lab's notes (what each `condition` call printed) go to the test log.
            for line in output.split(separator: "\n") where line.hasPrefix("RESULT ") || line.hasPrefix("# ") {
                print(line)
            }
            if result.status != 0 && !output.contains("RESULT ") {
                return .failure(LabError("Scripts/vm-run exited \(result.status):\n\(output.suffix(3000))\n\(result.stderrText.suffix(3000))"))
            }
            return .success(LabRun(status: result.status, output: output))
        } catch {
            return .failure(LabError("could not run \(vmRun): \(error)"))
        }
    }

    /// Issue 4's measurements with the real `condition` CLI (and issue 24's faults and its user-space engine beside
    /// netem), one boot shared by the tests that read them.
    static let conditionerRun = boot(driver: "cli", scenarios: ["slow", "nasty", "blackhole", "neighbours", "switch", "landing",
                                                                "engine", "faults"],
                                    timeoutSeconds: 1380)
}
