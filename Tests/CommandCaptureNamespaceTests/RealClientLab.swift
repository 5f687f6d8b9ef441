import Foundation
import TestSupport

/// A small site served over TLS by nginx on the host's loopback (HTML, CSS, JS, six binary files, a JSON API,
/// gzip on, and a JSON POST echo behind it), the real clients of the live-decryption matrix, and the oracles:
/// nginx's own access log and the sha256 of every file it served.
final class RealClientLab: @unchecked Sendable {
    let directory: URL
    let port: Int
    private let nginx = Process()
    private let echo = Process()
    var accessLog: URL { directory.appendingPathComponent("access.log") }
    var site: URL { directory.appendingPathComponent("site") }
    /// sha256 of each file by its path on the site ("/img0.bin").
    private(set) var digests: [String: String] = [:]
    /// Size of each file by its path on the site.
    private(set) var sizes: [String: Int] = [:]
    static let paths = ["/index.html", "/style.css", "/app.js", "/img0.bin", "/img1.bin", "/img2.bin", "/img3.bin",
                        "/img4.bin", "/img5.bin", "/api.json"]

    init() throws {
        directory = URL(fileURLWithPath: "/tmp/tkr-lab-\(UUID().uuidString.prefix(8))")
        port = Int.random(in: 20_000..<40_000)
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        try makeSite()
        let key = directory.appendingPathComponent("key.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        let made = try run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                       "-subj", "/CN=tkr.test", "-days", "1", "-keyout", key, "-out", cert])
        guard made.status == 0 else { throw HarnessFailure(description: "openssl req: \(made.stderrText)") }
        let echoPort = port + 20_000
        echo.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        echo.arguments = ["python3", "-c", Self.echoServer, String(echoPort)]
        echo.standardOutput = FileHandle.nullDevice
        echo.standardError = FileHandle.nullDevice
        try echo.run()
        let config = """
            daemon off; worker_processes 1; pid \(directory.path)/nginx.pid; error_log \(directory.path)/error.log;
            events { worker_connections 256; }
            http {
              access_log off;
              log_format oracle '$request_method $request_uri $status $body_bytes_sent $server_protocol';
              types { text/html html; text/css css; application/javascript js; application/json json;
                      application/octet-stream bin; }
              client_body_temp_path \(directory.path)/tmp; proxy_temp_path \(directory.path)/tmp;
              server {
                listen 127.0.0.1:\(port) ssl http2;
                ssl_certificate \(cert); ssl_certificate_key \(key);
                access_log \(accessLog.path) oracle;
                root \(site.path);
                gzip on; gzip_types text/css application/javascript application/json; gzip_min_length 100;
                location /echo { proxy_pass http://127.0.0.1:\(echoPort); }
                location /sink { client_max_body_size 512m; proxy_request_buffering off; proxy_pass http://127.0.0.1:\(echoPort); }
              }
            }
            """
        let configFile = directory.appendingPathComponent("nginx.conf")
        try Data(config.utf8).write(to: configFile)
        nginx.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        nginx.arguments = ["-c", configFile.path, "-p", directory.path]
        nginx.standardOutput = FileHandle.nullDevice
        nginx.standardError = FileHandle.nullDevice
        try nginx.run()
        var ready = false
        for _ in 0..<100 where !ready {
            usleep(50_000)
            ready = LoopbackTLSServer.canConnect(port) && LoopbackTLSServer.canConnect(echoPort)
        }
        guard ready else {
            stop()
            throw HarnessFailure(description: "nginx or the echo server did not start (port \(port))")
        }
        try writeClients()
    }

    func stop() {
        // The echo server gets SIGKILL: Foundation starts children with the test runner's blocked signals still
        // blocked, so Python never sees a SIGTERM (nginx unblocks its own, and needs SIGTERM to stop its worker).
        for (process, signal) in [(nginx, SIGTERM), (echo, SIGKILL)] where process.isRunning {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private func makeSite() throws {
        var generator = SystemRandomNumberGenerator()
        func write(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: site.appendingPathComponent(name))
            digests["/" + name] = Self.sha256(bytes)
            sizes["/" + name] = bytes.count
        }
        let images = (0..<6).map { "img\($0).bin" }
        try write("index.html", Array(("<!doctype html><html><head><title>lab</title><link rel=\"stylesheet\" href=\"/style.css\">"
            + "<script src=\"/app.js\"></script></head><body>\n" + images.map { "<img src=\"/\($0)\">\n" }.joined()
            + "<p>" + String(repeating: "lorem ipsum dolor sit amet ", count: 200) + "</p></body></html>\n").utf8))
        try write("style.css", Array(("body { font-family: sans-serif; }\n"
            + (0..<600).map { ".c\($0) { color: #\(String($0, radix: 16)); margin: \($0)px; }\n" }.joined()).utf8))
        // The page's own script GETs the API and POSTs to the echo once the page has loaded.
        try write("app.js", Array(("""
            window.addEventListener("load", async () => {
              const api = await (await fetch("/api.json")).json();
              const echo = await (await fetch("/echo", {method: "POST", headers: {"content-type": "application/json"},
                body: JSON.stringify({items: api.items, note: "posted by the page"})})).text();
              document.title = "done " + api.items.length + " " + echo.length;
            });

            """ + (0..<400).map { "function f\($0)(x) { return x * \($0) + \($0 * 7); }\n" }.joined()).utf8))
        for (index, name) in images.enumerated() {
            try write(name, (0..<(20_000 + index * 17_000)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        try write("api.json", Array(("{\"items\": [" + (0..<300).map { "{\"id\": \($0), \"name\": \"item \($0)\"}" }
            .joined(separator: ", ") + "]}").utf8))
        try Data("".utf8).write(to: accessLog)
    }

    /// Adds a file of `size` random bytes to the site (made at test time, never committed), with its sha256.
    @discardableResult
    func addGeneratedFile(_ name: String, size: Int) throws -> URL {
        let file = site.appendingPathComponent(name)
        let made = try run("sh", ["-c", "head -c \(size) /dev/urandom > '\(file.path)'"])
        guard made.status == 0 else { throw HarnessFailure(description: "making \(name): \(made.stderrText)") }
        digests["/" + name] = try Self.sha256(file: file.path)
        sizes["/" + name] = size
        return file
    }

    static func sha256(file: String) throws -> String {
        String(try run("sha256sum", [file]).stdoutText.prefix(64))
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tkr-sha-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try? Data(bytes).write(to: file)
        let result = try? run("sha256sum", [file.path])
        return String(result?.stdoutText.prefix(64) ?? "")
    }

    static let echoServer = """
        import sys
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        class Echo(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_PUT(self):
                # /sink: reads the upload in pieces and answers with its sha256 (big bodies, flat memory)
                import hashlib
                left, digest = int(self.headers.get("content-length", "0")), hashlib.sha256()
                while left > 0:
                    piece = self.rfile.read(min(left, 1 << 20))
                    if not piece: break
                    digest.update(piece)
                    left -= len(piece)
                body = digest.hexdigest().encode()
                self.send_response(200)
                self.send_header("content-type", "text/plain")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args): pass
        ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
        """

    // MARK: Clients

    /// One real client: its command line, run inside the sandbox (`$TAPKIT_SANDBOX_HOST` reaches the host's loopback).
    struct Client: Sendable, CustomStringConvertible {
        var name: String
        var program: String
        var description: String { name }
    }

    /// Every client, or the one TAPKIT_REAL_CLIENT names (for runs by hand, with TAPKIT_REAL_CLIENT_RUNS).
    static let clients: [Client] = ProcessInfo.processInfo.environment["TAPKIT_REAL_CLIENT"]
        .map { name in allClients.filter { $0.name == name } } ?? allClients
    static let allClients: [Client] = [
        Client(name: "chromium-h1", program: "chromium"), Client(name: "chromium-h2", program: "chromium"),
        Client(name: "node-fetch", program: "node"), Client(name: "node-https", program: "node"),
        Client(name: "python-requests", program: "python3"), Client(name: "python-httpx-h2", program: "python3"),
        Client(name: "curl-parallel", program: "curl"), Client(name: "go", program: "go"),
    ]

    /// The command (argument array) that runs `client` against this lab, then copies the key log it wrote to
    /// `keysCopy` (the final key log for the offline decode).
    func command(for client: Client, keysCopy: String) -> [String] {
        let base = "https://$TAPKIT_SANDBOX_HOST:\(port)"
        let dir = directory.path
        let urls = Self.paths.map { base + $0 }.joined(separator: " ")
        let run: String
        switch client.name {
        case "chromium-h1", "chromium-h2":
            run = "profile=$(mktemp -d /tmp/tkr-chromium-XXXXXX); chromium --headless=new --no-sandbox --ignore-certificate-errors "
                + "--user-data-dir=$profile \(client.name == "chromium-h1" ? "--disable-http2 " : "")--disable-background-networking "
                + "--disable-component-update --disable-sync --no-first-run --virtual-time-budget=10000 --dump-dom "
                + "\(base)/index.html >/dev/null 2>&1; rm -rf $profile"
        case "node-fetch": run = "NODE_TLS_REJECT_UNAUTHORIZED=0 node \(dir)/fetch.mjs \(port) 2>/dev/null"
        case "node-https": run = "node \(dir)/https.mjs \(port) 2>/dev/null"
        case "python-requests": run = "python3 \(dir)/requests_client.py \(port)"
        case "python-httpx-h2": run = "python3 \(dir)/httpx_client.py \(port)"
        case "curl-parallel":
            run = "curl -sk --compressed --http1.1 --parallel --parallel-max 6 "
                + Self.paths.map { _ in "-o /dev/null " }.joined() + urls
                + "; curl -sk --http1.1 -o /dev/null -H 'content-type: application/json' --data '{\"posted\":\"by curl\"}' \(base)/echo"
        // The same Go client without KeyLogWriter: its secrets can only come from the Go key source's uprobe.
        case "go-uprobe": run = "\(dir)/goclient-nokeys \(port)"
        case "go-uprobe-stripped": run = "\(dir)/goclient-nokeys-stripped \(port)"
        default: run = "\(dir)/goclient \(port)"
        }
        return ["sh", "-c", run + "; cp \"$SSLKEYLOGFILE\" \(keysCopy)"]
    }

    private func writeClients() throws {
        let paths = Self.paths.map { "\"\($0)\"" }.joined(separator: ", ")
        var files: [String: String] = [
            "fetch.mjs": """
                const base = `https://${process.env.TAPKIT_SANDBOX_HOST}:${process.argv[2]}`;
                const paths = [\(paths)];
                await Promise.all(paths.map(async p => { const r = await fetch(base + p); await r.arrayBuffer(); }));
                const r = await fetch(base + "/echo", {method: "POST", headers: {"content-type": "application/json"},
                  body: JSON.stringify({posted: "by node fetch"})});
                await r.text();
                """,
            "https.mjs": """
                import https from "node:https";
                const agent = new https.Agent({keepAlive: true, maxSockets: 6, rejectUnauthorized: false});
                const host = process.env.TAPKIT_SANDBOX_HOST, port = Number(process.argv[2]);
                function request(path, method = "GET", body) {
                  return new Promise((resolve, reject) => {
                    const headers = body ? {"content-type": "application/json", "content-length": Buffer.byteLength(body)}
                      : {"accept-encoding": "gzip"};
                    const req = https.request({host, port, path, method, agent, headers}, res => {
                      res.on("data", () => {}); res.on("end", resolve);
                    });
                    req.on("error", reject); if (body) req.write(body); req.end();
                  });
                }
                await Promise.all([\(paths)].map(p => request(p)));
                await request("/echo", "POST", JSON.stringify({posted: "by node https"}));
                agent.destroy();
                """,
            "requests_client.py": """
                import os, sys, threading, requests, urllib3
                from concurrent.futures import ThreadPoolExecutor
                urllib3.disable_warnings()
                base = f"https://{os.environ['TAPKIT_SANDBOX_HOST']}:{sys.argv[1]}"
                local = threading.local()
                def get(path):
                    if not hasattr(local, "session"): local.session = requests.Session()
                    return local.session.get(base + path, verify=False).content
                with ThreadPoolExecutor(6) as pool: list(pool.map(get, [\(paths)]))
                requests.post(base + "/echo", json={"posted": "by requests"}, verify=False).content
                """,
            "httpx_client.py": """
                import asyncio, os, ssl, sys, httpx
                base = f"https://{os.environ['TAPKIT_SANDBOX_HOST']}:{sys.argv[1]}"
                # httpx 0.28 with verify=False makes a bare SSLContext, which ignores SSLKEYLOGFILE; the default
                # context honours it.
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                async def main():
                    # three HTTP/2 connections, several streams on each
                    clients = [httpx.AsyncClient(http2=True, verify=context) for _ in range(3)]
                    await asyncio.gather(*(clients[i % 3].get(base + p) for i, p in enumerate([\(paths)])))
                    await clients[0].post(base + "/echo", json={"posted": "by httpx"})
                    for client in clients: await client.aclose()
                asyncio.run(main())
                """,
            "goclient.go": """
                package main

                import (
                \t"crypto/tls"
                \t"io"
                \t"net/http"
                \t"os"
                \t"strings"
                \t"sync"
                )

                // Go's crypto/tls ignores SSLKEYLOGFILE: the program opens it as its KeyLogWriter itself.
                func main() {
                \tkeys, _ := os.OpenFile(os.Getenv("SSLKEYLOGFILE"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0600)
                \tclient := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 6,
                \t\tTLSClientConfig: &tls.Config{InsecureSkipVerify: true, KeyLogWriter: keys}}}
                \tbase := "https://" + os.Getenv("TAPKIT_SANDBOX_HOST") + ":" + os.Args[1]
                \tvar wait sync.WaitGroup
                \tfor _, p := range []string{\(paths)} {
                \t\twait.Add(1)
                \t\tgo func(p string) {
                \t\t\tdefer wait.Done()
                \t\t\tif r, err := client.Get(base + p); err == nil { io.Copy(io.Discard, r.Body); r.Body.Close() }
                \t\t}(p)
                \t}
                \twait.Wait()
                \tif r, err := client.Post(base+"/echo", "application/json", strings.NewReader(`{"posted":"by go"}`)); err == nil {
                \t\tio.Copy(io.Discard, r.Body); r.Body.Close()
                \t}
                }
                """,
        ]
        files["goclient-nokeys.go"] = files["goclient.go"]!
            .replacingOccurrences(of: "\tkeys, _ := os.OpenFile(os.Getenv(\"SSLKEYLOGFILE\"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0600)\n", with: "")
            .replacingOccurrences(of: ", KeyLogWriter: keys", with: "")
        for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
        if TestEnvironment.hasProgram("go") {
            var environment = ProcessInfo.processInfo.environment
            environment["GOCACHE"] = "/tmp/tkr-go-cache"
            environment["GOPATH"] = "/tmp/tkr-go-path"
            environment["GO111MODULE"] = "off"
            let built = try TestSupport.run("go", ["build", "-o", directory.appendingPathComponent("goclient").path,
                                                   directory.appendingPathComponent("goclient.go").path], environment: environment)
            guard built.status == 0 else { throw HarnessFailure(description: "go build: \(built.stderrText)") }
            for (name, flags) in [("goclient-nokeys", [String]()), ("goclient-nokeys-stripped", ["-ldflags=-s -w"])] {
                let made = try TestSupport.run("go", ["build"] + flags + ["-o", directory.appendingPathComponent(name).path,
                                                      directory.appendingPathComponent("goclient-nokeys.go").path],
                                               environment: environment)
                guard made.status == 0 else { throw HarnessFailure(description: "go build \(name): \(made.stderrText)") }
            }
        }
    }
}
