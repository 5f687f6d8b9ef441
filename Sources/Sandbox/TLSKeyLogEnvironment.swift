/// The environment that makes a program log its TLS secrets to a file, as Wireshark's users set it up:
/// `SSLKEYLOGFILE` (curl, Firefox, Chrome, Python's ssl module) and Node's
/// `--tls-keylog` option through `NODE_OPTIONS` (Node ignores SSLKEYLOGFILE).
public enum TLSKeyLogEnvironment {
    public static func variables(keyLogPath path: String, adding environment: [String: String]) -> [String: String] {
        var environment = environment
        environment["SSLKEYLOGFILE"] = path
        let node = "--tls-keylog=\(path)"
        if let existing = environment["NODE_OPTIONS"], !existing.isEmpty {
            environment["NODE_OPTIONS"] = existing + " " + node
        } else {
            environment["NODE_OPTIONS"] = node
        }
        return environment
    }
}
