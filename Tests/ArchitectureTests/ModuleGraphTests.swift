import Foundation
import Testing

/// The module graph of docs/architecture.md, checked against what the sources import: every module sits on a layer,
/// and imports only modules on layers below its own, so data flows one way (source -> bytes -> packets -> flows ->
/// TLS -> HTTP -> events -> renderers) and no layer reaches back. A new module gets a layer here and in the document.
@Suite struct ModuleGraphTests {
    /// Bottom to top. Modules on one layer do not import each other.
    static let layers: [[String]] = [
        ["CPcap", "CCompression", "CNGHTTP3", "SystemSupport"],
        ["KeySources", "PacketDecoding", "Sandbox"],
        ["PacketCapture", "FlowReassembly", "LinkConditioner"],
        ["HTTPModel", "TLSWire"],
        ["BodyDecoding"],
        ["HTTPDecoding", "TLS"],
        ["HTTP2", "HTTP3", "QUIC"],
        ["CaptureEngine", "Reports"],
        ["LiveView"],
        ["capture", "condition"],
    ]

    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    static func layer(of module: String) -> Int? { layers.firstIndex { $0.contains(module) } }

    /// Each module under Sources and the modules of this package it imports.
    static func imports() throws -> [String: Set<String>] {
        let fileManager = FileManager.default
        let modules = try fileManager.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix(".") }
        var graph: [String: Set<String>] = [:]
        for module in modules {
            graph[module] = []
            let directory = sources.appendingPathComponent(module)
            guard let files = fileManager.enumerator(atPath: directory.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ").map(String.init)
                    // `import X`, `@testable import X`, `internal import X`, `@_exported import X`.
                    guard let position = words.firstIndex(of: "import"), position + 1 < words.count,
                          words[..<position].allSatisfy({ $0.hasPrefix("@") || ["internal", "public", "private", "fileprivate", "package"].contains($0) })
                    else { continue }
                    let name = String(words[position + 1].prefix { $0 != "." })
                    if modules.contains(name) { graph[module]!.insert(name) }
                }
            }
        }
        return graph
    }

    @Test func everyModuleHasALayer() throws {
        let graph = try Self.imports()
        for module in graph.keys.sorted() {
            #expect(Self.layer(of: module) != nil, "Sources/\(module) is on no layer of ModuleGraphTests.layers (and docs/architecture.md)")
        }
    }

    /// Scripts/fuzz compiles the modules of Fuzz/modules in its order: each module's imports of this package (C
    /// modules aside: they are headers on the search path) must come before it, or the fuzz targets do not link
    /// (TLS once imported SystemSupport, which the list lacked).
    @Test func fuzzModulesListEveryImportFirst() throws {
        let graph = try Self.imports()
        let list = try String(contentsOf: Self.sources.deletingLastPathComponent().appendingPathComponent("Fuzz/modules"),
                              encoding: .utf8)
        let modules = list.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") && !$0.hasPrefix("swiftpm ") }
        let swiftModules = graph.keys.filter { name in
            FileManager.default.enumerator(atPath: Self.sources.appendingPathComponent(name).path)?
                .contains { ($0 as? String)?.hasSuffix(".swift") == true } ?? false
        }
        for (position, module) in modules.enumerated() {
            for name in (graph[module] ?? []).sorted() where swiftModules.contains(name) {
                #expect(modules[..<position].contains(name), "Fuzz/modules: \(module) imports \(name), which must come before it")
            }
        }
    }

    @Test func importsPointDownOnly() throws {
        let graph = try Self.imports()
        for (module, imported) in graph.sorted(by: { $0.key < $1.key }) {
            guard let from = Self.layer(of: module) else { continue }
            for name in imported.sorted() {
                guard let to = Self.layer(of: name) else { continue }
                #expect(to < from, "\(module) (layer \(from)) imports \(name) (layer \(to)): imports go down only")
            }
        }
    }

    /// What the layers already imply, said on its own: following imports never comes back to where it started.
    @Test func graphIsAcyclic() throws {
        let graph = try Self.imports()
        var state: [String: Bool] = [:]  // false: on the current path; true: done
        func visit(_ module: String, path: [String]) -> [String]? {
            if state[module] == true { return nil }
            if state[module] == false { return path + [module] }
            state[module] = false
            for next in graph[module, default: []].sorted() {
                if let cycle = visit(next, path: path + [module]) { return cycle }
            }
            state[module] = true
            return nil
        }
        for module in graph.keys.sorted() {
            let cycle = visit(module, path: [])
            #expect(cycle == nil, "import cycle: \(cycle?.joined(separator: " -> ") ?? "")")
        }
    }

    /// A file holds one idea; one longer than 600 lines says in its first lines why it is not split.
    @Test func longFilesSayWhy() throws {
        let fileManager = FileManager.default
        guard let files = fileManager.enumerator(atPath: Self.sources.path) else { return }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.count > 600 else { continue }
            let header = lines.prefix(30).joined(separator: "\n")
            #expect(header.contains("Longer than 600 lines"),
                    "Sources/\(file) has \(lines.count) lines: split it, or say in its header why not (\"Longer than 600 lines: ...\")")
        }
    }
}
