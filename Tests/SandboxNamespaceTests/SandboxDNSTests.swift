import Foundation
import LinkConditioner
import Sandbox
import Testing
import TestSupport

@Suite("sandbox DNS and NAT", .serialized, .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces"),
       .enabled(if: TestEnvironment.hasProgram("python3"), "needs python3 for the test resolver"))
struct SandboxDNSTests {
    /// A resolver on a host loopback address (as systemd-resolved's 127.0.0.53 stub is) answering every A
    /// query with `address`.
    final class LoopbackResolver: @unchecked Sendable {
        let process = Process()
        let listenAddress: String

        init(answer address: String) throws {
            listenAddress = "127.\(Int.random(in: 10...250)).\(Int.random(in: 1...250)).53"
            let script = """
                import socket, struct, sys
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind((sys.argv[1], 53))
                print("ready", flush=True)
                while True:
                    data, peer = s.recvfrom(512)
                    i = 12
                    while data[i] != 0:
                        i += data[i] + 1
                    qtype = struct.unpack(">H", data[i + 1:i + 3])[0]
                    question = data[12:i + 5]
                    answer = b""
                    if qtype == 1:
                        answer = b"\\xc0\\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(sys.argv[2])
                    header = data[:2] + struct.pack(">HHHHH", 0x8180, 1, 1 if answer else 0, 0, 0)
                    s.sendto(header + question + answer, peer)
                """
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", script, listenAddress, address]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = out.fileHandleForReading.availableData
            guard String(decoding: line, as: UTF8.self).hasPrefix("ready") else {
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "test resolver did not start (port 53 on \(listenAddress) taken?)"])
            }
        }

        func stop() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test("a resolver on the host's loopback (like systemd-resolved's stub) answers inside the sandbox")
    func loopbackResolverReachable() throws {
        let resolver = try LoopbackResolver(answer: "192.0.2.77")
        defer { resolver.stop() }
        let resolv = FileManager.default.temporaryDirectory.appendingPathComponent("sbx-resolv-\(UUID().uuidString)")
        try Data("nameserver \(resolver.listenAddress)\noptions timeout:2 attempts:1\n".utf8).write(to: resolv)
        defer { try? FileManager.default.removeItem(at: resolv) }
        let profiles = try SandboxHarness.profileDirectory([("Sandbox DNS", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }

        var environment = ProcessInfo.processInfo.environment
        environment["TAPKIT_RESOLV_CONF"] = resolv.path
        let result = try run(SandboxHarness.condition, ["run", "Sandbox DNS", "--profiles", profiles.path, "--", "sh", "-c",
                                                        "cat /etc/resolv.conf; getent ahostsv4 sandbox-dns.test"],
                             environment: environment)
        #expect(result.status == 0, "\(result.stdoutText) \(result.stderrText)")
        #expect(result.stdoutText.contains("nameserver 10.213."), "resolv.conf points at the host end: \(result.stdoutText)")
        #expect(result.stdoutText.contains("192.0.2.77"), "\(result.stdoutText)")
        let id = try #require(SandboxHarness.sandboxID(fromStderr: result.stderrText))
        #expect(try SandboxHarness.leftovers(of: id) == [])
    }

    @Test("while a sandbox runs: its nft table masquerades out of the default route and forwarding is on; after, both are back")
    func natWhileRunning() throws {
        let forwardingBefore = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_forward", encoding: .utf8)
        let defaultDevice = try run("ip", ["-4", "route", "show", "default"]).stdoutText
            .split(separator: " ").drop { $0 != "dev" }.dropFirst().first.map(String.init)
        let profiles = try SandboxHarness.profileDirectory([("Sandbox NAT", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let running = try SandboxHarness.RunningCondition(["run", "Sandbox NAT", "--profiles", profiles.path, "--", "sleep", "20"])
        defer { kill(running.pid, SIGKILL) }
        let record = try #require(running.waitForRecord())
        let table = try run("nft", ["list", "table", "inet", record.identity.nftTable]).stdoutText
        #expect(table.contains("dnat ip to 127.0.0.1"), "\(table)")
        if let defaultDevice {
            #expect(table.contains("oifname \"\(defaultDevice)\" masquerade"), "\(table)")
            #expect(try String(contentsOfFile: "/proc/sys/net/ipv4/ip_forward", encoding: .utf8) == "1\n")
        }
        #expect(try String(contentsOfFile: "/proc/sys/net/ipv4/conf/\(record.identity.hostInterface)/route_localnet",
                           encoding: .utf8) == "1\n")
        kill(running.pid, SIGTERM)
        _ = running.finish(timeout: 15)
        #expect(try SandboxHarness.leftovers(of: record.identity.id) == [])
        if SandboxRegistry().records().isEmpty {
            #expect(try String(contentsOfFile: "/proc/sys/net/ipv4/ip_forward", encoding: .utf8) == forwardingBefore)
        }
    }
}
