import Foundation

/// One line of `condition doctor`.
public struct DoctorCheck: Sendable, Codable, Equatable {
    public var name: String
    public var ok: Bool
    /// What was found.
    public var detail: String
    /// How to get it, when missing.
    public var remedy: String?
}

/// Checks the kernel features and privileges the conditioner needs. Each feature is tried for real inside
/// a throwaway network namespace (so nothing real is touched) and its module looked up, so a missing one
/// says whether it is absent, or present but not loaded.
public struct Doctor: Sendable {
    struct Feature {
        var name: String
        var module: String
        var config: String
        var purpose: String
    }

    static let features = [
        Feature(name: "htb", module: "sch_htb", config: "CONFIG_NET_SCH_HTB", purpose: "bandwidth"),
        Feature(name: "netem", module: "sch_netem", config: "CONFIG_NET_SCH_NETEM", purpose: "delay, jitter, loss and DNS delay"),
        Feature(name: "ingress", module: "sch_ingress", config: "CONFIG_NET_SCH_INGRESS", purpose: "catching the downlink"),
        Feature(name: "u32", module: "cls_u32", config: "CONFIG_NET_CLS_U32", purpose: "matching DNS and redirecting the downlink"),
        Feature(name: "mirred", module: "act_mirred", config: "CONFIG_NET_ACT_MIRRED", purpose: "redirecting the downlink to the ifb"),
        Feature(name: "ifb", module: "ifb", config: "CONFIG_IFB", purpose: "shaping the downlink"),
        Feature(name: "veth", module: "veth", config: "CONFIG_VETH", purpose: "the sandbox of `condition run`"),
        Feature(name: "nftables", module: "nf_tables", config: "CONFIG_NF_TABLES",
                purpose: "the NAT and DNS of `condition run`'s sandbox"),
    ]

    let runner: any CommandRunner
    let kernelRelease: String

    public init(runner: any CommandRunner = ProcessRunner()) {
        self.runner = runner
        var name = utsname()
        uname(&name)
        kernelRelease = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    public func run() -> [DoctorCheck] {
        var checks: [DoctorCheck] = [privileges()]
        for tool in [("tc", "iproute2"), ("ip", "iproute2"), ("unshare", "util-linux"), ("setsid", "util-linux"),
                     ("nft", "nftables")] {
            if let path = ProcessRunner.locate(tool.0) {
                checks.append(DoctorCheck(name: tool.0, ok: true, detail: "found at \(path)"))
            } else {
                checks.append(DoctorCheck(name: tool.0, ok: false, detail: "\(tool.0) not found",
                                          remedy: "install \(tool.1) (Debian/Ubuntu: apt-get install \(tool.1))"))
            }
        }
        guard checks.allSatisfy(\.ok) else {
            return checks + Doctor.features.map {
                DoctorCheck(name: $0.name, ok: false, detail: "not tested: needs root and the tools above",
                            remedy: "fix the lines above, then run `condition doctor` again")
            }
        }
        let probes = probeFeatures()
        let userspace = probes["netem"] != nil && LiveKernelSupport(runner: runner).userspaceEngineAvailable()
        for feature in Doctor.features {
            let module = moduleStatus(feature.module)
            if feature.name == "netem", let error = probes[feature.name], userspace {
                checks.append(DoctorCheck(
                    name: "netem", ok: true,
                    detail: "not here (\(error)); \(module.description). Delay, jitter, loss and DNS delay use the user-space "
                        + "engine instead (\(ConditioningEngine.userspace.summary)); only duplication and corruption need netem"))
            } else if let error = probes[feature.name] {
                checks.append(DoctorCheck(
                    name: feature.name, ok: false,
                    detail: "cannot be used (\(error)); \(module.description); needed for \(feature.purpose)",
                    remedy: module.loadable
                        ? "run `modprobe \(feature.module)` (as root)"
                        : "this kernel (\(kernelRelease)) has no \(feature.module): install its extra modules package "
                          + "(Ubuntu: linux-modules-extra-\(kernelRelease); Fedora: kernel-modules-extra; Debian's stock "
                          + "linux-image has it) or use a kernel built with \(feature.config)=m or =y"
                        + (feature.name == "netem" ? ". Until then only bandwidth-only profiles can be applied" : "")))
            } else {
                // It works, so a module that is neither loaded nor loadable is built in.
                let how = module.found ? module.description : "\(feature.module) built into the kernel"
                checks.append(DoctorCheck(name: feature.name, ok: true, detail: "works (\(how))"))
            }
        }
        return checks
    }

    private func privileges() -> DoctorCheck {
        if geteuid() == 0 { return DoctorCheck(name: "privileges", ok: true, detail: "running as root") }
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
           let caps = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16),
           caps & (1 << 12) != 0, caps & (1 << 21) != 0 {
            return DoctorCheck(name: "privileges", ok: true, detail: "CAP_NET_ADMIN and CAP_SYS_ADMIN granted")
        }
        return DoctorCheck(name: "privileges", ok: false, detail: "not root and no CAP_NET_ADMIN",
                           remedy: "run condition as root (sudo condition ...)")
    }

    struct ModuleStatus: CustomStringConvertible {
        var description: String
        var loadable: Bool
        var found = true
    }

    /// Whether a kernel module is loaded, built in or installed (no root needed; a guess where `doctor`
    /// and `apply` try it for real).
    public func moduleAvailable(_ module: String) -> Bool { moduleStatus(module).found }

    private func moduleStatus(_ module: String) -> ModuleStatus {
        let loaded = ((try? String(contentsOfFile: "/proc/modules", encoding: .utf8)) ?? "")
            .split(separator: "\n").contains { $0.hasPrefix(module + " ") }
        if loaded { return ModuleStatus(description: "module \(module) loaded", loadable: false) }
        let builtin = ((try? String(contentsOfFile: "/lib/modules/\(kernelRelease)/modules.builtin", encoding: .utf8)) ?? "")
            .contains("/\(module).ko")
        if builtin || FileManager.default.fileExists(atPath: "/sys/module/\(module)") {
            return ModuleStatus(description: "\(module) built into the kernel", loadable: false)
        }
        if let result = try? runner.run(["modprobe", "-n", "-q", module]), result.status == 0 {
            return ModuleStatus(description: "module \(module) available but not loaded", loadable: true)
        }
        return ModuleStatus(description: "\(module) neither built in nor available as a module for \(kernelRelease)",
                            loadable: false, found: false)
    }

    /// Tries each feature in a fresh network namespace; returns the error for each one that failed.
    private func probeFeatures() -> [String: String] {
        let namespace = "tapkit-doctor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var errors: [String: String] = [:]
        func attempt(_ feature: String, _ arguments: [String]) -> Bool {
            do {
                try runner.check(arguments)
                return true
            } catch let error as CommandFailedError {
                let message = error.stderr.split(separator: "\n").first.map(String.init) ?? "exit \(error.status)"
                errors[feature] = errors[feature] ?? message
            } catch {
                errors[feature] = errors[feature] ?? "\(error)"
            }
            return false
        }
        guard attempt("namespace", ["ip", "netns", "add", namespace]) else {
            let reason = errors["namespace"] ?? "cannot create a network namespace"
            return Dictionary(uniqueKeysWithValues: Doctor.features.map { ($0.name, "not tested: \(reason)") })
        }
        defer { _ = try? runner.run(["ip", "netns", "del", namespace]) }
        let tc = ["tc", "-n", namespace]
        if attempt("htb", tc + ["qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb"]) {
            _ = try? runner.run(tc + ["qdisc", "del", "dev", "lo", "root"])
        }
        if attempt("netem", tc + ["qdisc", "add", "dev", "lo", "root", "handle", "2:", "netem", "delay", "1ms"]) {
            _ = try? runner.run(tc + ["qdisc", "del", "dev", "lo", "root"])
        }
        _ = attempt("ifb", ["ip", "-n", namespace, "link", "add", "tkdoctor0", "type", "ifb"])
        if attempt("ingress", tc + ["qdisc", "add", "dev", "lo", "handle", "ffff:", "ingress"]) {
            _ = attempt("u32", tc + ["filter", "add", "dev", "lo", "parent", "ffff:", "protocol", "all", "prio", "1",
                                     "u32", "match", "u32", "0", "0", "classid", ":1"])
            if errors["u32"] == nil {
                _ = attempt("mirred", tc + ["filter", "add", "dev", "lo", "parent", "ffff:", "protocol", "all", "prio", "2",
                                            "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", "lo"])
            } else {
                errors["mirred"] = "not tested: needs u32"
            }
        } else {
            errors["u32"] = "not tested: needs ingress"
            errors["mirred"] = "not tested: needs ingress"
        }
        if attempt("veth", ["ip", "-n", namespace, "link", "add", "tkdoctor1", "type", "veth", "peer", "name", "tkdoctor2"]) {
            _ = try? runner.run(["ip", "-n", namespace, "link", "del", "tkdoctor1"])
        }
        _ = attempt("nftables", ["ip", "netns", "exec", namespace, "nft", "add", "table", "inet", "tkdoctor"])
        errors["namespace"] = nil
        return errors
    }
}
