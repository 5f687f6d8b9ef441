// swift-tools-version:6.1
import PackageDescription

/// What `-static-stdlib` alone leaves out on Linux when Foundation is used: its own static libraries, in link order.
let staticSwiftRuntime = [
    "-static-stdlib", "-lCoreFoundation", "-lFoundationInternationalization", "-l_FoundationICU", "-lFoundationEssentials",
    "-l_FoundationCShims", "-l_FoundationCollections",
]

/// Release builds let generic code in one module be specialised in another (the reassembly batch, the stream
/// consumers): unspecialised, every call looked up generic metadata at run time.
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

let package = Package(
    name: "TapKit",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "capture", targets: ["capture"]),
        .executable(name: "condition", targets: ["condition"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.82.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
    ],
    targets: [
        // C stays here; only PacketCapture imports it.
        .systemLibrary(
            name: "CPcap",
            pkgConfig: "libpcap",
            providers: [.apt(["libpcap-dev"])]
        ),
        // zlib, ISA-L inflate, brotli and zstd decoders, libcrypto's SHA-256 (BodyDecoding) and record ciphers (TLS).
        .systemLibrary(
            name: "CCompression",
            providers: [.apt(["zlib1g-dev", "libisal-dev", "libbrotli-dev", "libzstd-dev", "libssl-dev"])]
        ),
        // nghttp3's QPACK decoder (RFC 9204) for HTTP/3 header blocks; only HTTP3 imports it.
        .systemLibrary(
            name: "CNGHTTP3",
            pkgConfig: "libnghttp3",
            providers: [.apt(["libnghttp3-dev"])]
        ),
        .target(name: "PacketDecoding", swiftSettings: crossModule),
        .target(name: "PacketCapture", dependencies: ["CPcap", "PacketDecoding"], swiftSettings: crossModule),
        .target(name: "FlowReassembly", dependencies: ["PacketDecoding"], swiftSettings: crossModule),
        // The exchange model: HTTP/1 and HTTP/2 exchanges, gRPC calls, WebSocket messages, TLS session facts,
        // connection notices, body digests, and the limits every HTTP decoder shares. No parser lives here.
        .target(name: "HTTPModel", dependencies: ["FlowReassembly", "PacketDecoding"], swiftSettings: crossModule),
        // Bodies as transferred -> decoded bytes, size, SHA-256 and what is kept: content codings and hashing,
        // used by HTTP/1, HTTP/2 and WebSocket alike.
        .target(name: "BodyDecoding", dependencies: ["CCompression", "HTTPModel"], swiftSettings: crossModule),
        // The TLS wire format in one place, over one bounds-checked byte cursor: record headers, handshake message
        // framing, ClientHello/ServerHello/EncryptedExtensions facts, "is this TLS?". Used by connection labels,
        // decryption and QUIC.
        .target(name: "TLSWire", swiftSettings: crossModule),
        .target(
            name: "HTTPDecoding", dependencies: ["BodyDecoding", "FlowReassembly", "HTTPModel", "PacketDecoding", "TLSWire"],
            swiftSettings: crossModule
        ),
        // TLS key logs, record layer and decryption: key derivation, MACs and record ciphers all from libcrypto
        // (OpenSSL 3's EVP, keyed once per key, not per record; see RecordCipher, RecordMAC, KeyDerivation).
        .target(
            name: "TLS",
            dependencies: ["CCompression", "FlowReassembly", "HTTPModel", "PacketDecoding", "SystemSupport", "TLSWire"],
            swiftSettings: crossModule
        ),
        .target(name: "Reports", dependencies: ["FlowReassembly", "HTTPModel", "PacketDecoding", "TLS"], swiftSettings: crossModule),
        // HTTP/2 frames, HPACK, streams as exchanges; WebSocket after a 101; gRPC framing.
        .target(
            name: "HTTP2",
            dependencies: [
                "BodyDecoding", "CCompression", "FlowReassembly", "HTTPDecoding", "HTTPModel", "PacketDecoding", "TLSWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: crossModule
        ),
        // QUIC v1 and v2 from UDP datagrams on any port: Initial keys from the connection ID, the other levels from
        // a key log (TLS's key schedule and libcrypto's AEADs), header protection, packet numbers, key updates,
        // connection IDs and migration, the TLS handshake from CRYPTO frames, and streams put in order.
        .target(
            name: "QUIC",
            dependencies: ["CCompression", "FlowReassembly", "HTTPModel", "PacketDecoding", "TLS", "TLSWire"],
            swiftSettings: crossModule
        ),
        // HTTP/3 (RFC 9114) on QUIC streams: control and unidirectional streams, frames, QPACK through nghttp3,
        // request streams as exchanges. Fed stream by stream by CaptureEngine from the QUIC layer.
        .target(
            name: "HTTP3",
            dependencies: ["BodyDecoding", "CNGHTTP3", "FlowReassembly", "HTTPModel", "PacketDecoding", "TLSWire"],
            swiftSettings: crossModule
        ),
        // The capture pipeline assembled from options (decode -> reassembly -> TLS -> HTTP/1, HTTP/2 -> events) and
        // one read loop over live and offline sources: every mode of `capture` runs it (docs/architecture.md).
        .target(
            name: "CaptureEngine",
            dependencies: [
                "BodyDecoding", "FlowReassembly", "HTTP2", "HTTP3", "HTTPDecoding", "HTTPModel", "PacketCapture",
                "PacketDecoding", "QUIC", "SystemSupport", "TLS",
            ],
            swiftSettings: crossModule
        ),
        // The live view: a loopback HTTP and WebSocket server (swift-nio) over the engine's events, with an exchange
        // store of bounded memory, HAR from the `--har` code, and the conditioner's panel (docs/liveview.md). The
        // page's files are compiled into the module, so the executable serves them without files beside it.
        .target(
            name: "LiveView",
            dependencies: [
                "CaptureEngine", "HTTPModel", "LinkConditioner", "PacketDecoding", "Reports", "Sandbox", "SystemSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            resources: [.embedInCode("Page")]
        ),
        // Spawning, waiting, signals, file locks and errno-typed errors: the OS plumbing, in one place.
        .target(name: "SystemSupport"),
        // Where TLS secrets come from besides a key log file: Go binaries' writeKeyLog found from .symtab or
        // .gopclntab, and a tracefs uprobe on it whose fetched registers become key log lines (docs/tls.md).
        .target(name: "KeySources", dependencies: ["SystemSupport"]),
        // A network namespace + veth + NAT + DNS for one command; used by `condition run` and `capture -- COMMAND`.
        .target(name: "Sandbox", dependencies: ["SystemSupport"]),
        .target(name: "LinkConditioner", dependencies: ["SystemSupport", "Sandbox", .product(name: "Logging", package: "swift-log")]),
        .executableTarget(
            name: "capture",
            dependencies: [
                "CaptureEngine", "PacketCapture", "PacketDecoding", "FlowReassembly", "HTTPModel", "Reports", "TLS",
                "KeySources", "Sandbox", "SystemSupport", "LinkConditioner", "LiveView",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Release builds link the Swift runtime and Foundation statically: resolving their symbols at every
            // launch took most of `capture -r small.pcap`'s start-up (docs/performance.md). Debug builds stay
            // dynamic, which links faster.
            linkerSettings: [.unsafeFlags(staticSwiftRuntime, .when(configuration: .release))]
        ),
        .executableTarget(
            name: "condition",
            dependencies: [
                "LinkConditioner", "Sandbox", "SystemSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Test doubles (a recording command runner, a kernel with fixed answers) and test plumbing: never in a product.
        .target(name: "TestSupport", dependencies: ["SystemSupport", "LinkConditioner"], path: "Tests/TestSupport"),
        .testTarget(name: "PacketDecodingTests", dependencies: ["PacketDecoding", "TestSupport"]),
        .testTarget(name: "PacketCaptureTests", dependencies: ["PacketCapture", "PacketDecoding", "TestSupport"]),
        .testTarget(
            name: "FlowReassemblyTests", dependencies: ["FlowReassembly", "PacketDecoding", "PacketCapture", "TestSupport"]),
        .testTarget(
            name: "HTTPDecodingTests", dependencies: ["BodyDecoding", "HTTPDecoding", "HTTPModel", "FlowReassembly", "TestSupport"]),
        .testTarget(
            name: "HTTP2Tests",
            dependencies: [
                "HTTP2", "HTTPDecoding", "HTTPModel", "FlowReassembly", "PacketDecoding", "Reports", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ]
        ),
        .testTarget(name: "HTTP3Tests", dependencies: ["HTTP3", "HTTPModel", "FlowReassembly", "PacketDecoding", "Reports", "TestSupport"]),
        .testTarget(name: "ReportsTests", dependencies: ["BodyDecoding", "Reports", "HTTPModel", "TLS", "TestSupport"]),
        .testTarget(name: "CaptureCLITests", dependencies: ["TestSupport"]),
        .testTarget(
            name: "CaptureEngineTests",
            dependencies: ["CaptureEngine", "HTTPDecoding", "HTTPModel", "PacketCapture", "TLS", "TestSupport"]
        ),
        // The module graph of docs/architecture.md, from what the sources import.
        .testTarget(name: "ArchitectureTests"),
        // The capture executable's own types (its quick argument path against swift-argument-parser's).
        .testTarget(name: "CaptureCommandTests", dependencies: ["capture"]),
        .testTarget(name: "CaptureNamespaceTests", dependencies: ["TestSupport"]),
        .testTarget(name: "LinkConditionerTests", dependencies: ["LinkConditioner", "Sandbox", "TestSupport"]),
        .testTarget(name: "ConditionerNamespaceTests", dependencies: ["LinkConditioner", "TestSupport"]),
        .testTarget(name: "ConditionerVMTests", dependencies: ["TestSupport"]),
        .testTarget(name: "LiveViewTests", dependencies: [
            "LiveView", "HTTPModel", "FlowReassembly", "PacketDecoding", "LinkConditioner", "TestSupport",
        ]),
        // The live view's conditioner switch on a sandboxed command, measured by the command (root).
        .testTarget(name: "LiveViewNamespaceTests", dependencies: ["TestSupport"]),
        .testTarget(name: "SystemSupportTests", dependencies: ["SystemSupport"]),
        // Go programs built at test time with Debian's go (plain and stripped), `go tool nm` as the oracle.
        .testTarget(name: "KeySourcesTests", dependencies: ["KeySources", "SystemSupport", "TestSupport"]),
        // Scripts/install and Scripts/uninstall into a temporary prefix, the installed tools run from there (root).
        .testTarget(name: "InstallNamespaceTests", dependencies: ["TestSupport"]),
        .testTarget(name: "CommandCaptureNamespaceTests", dependencies: ["Sandbox", "SystemSupport", "TestSupport"]),
        .testTarget(name: "SandboxNamespaceTests", dependencies: ["LinkConditioner", "Sandbox", "SystemSupport", "TestSupport"]),
        // The live view's page in headless chromium (selenium drives it from drive_page.py).
        .testTarget(name: "LiveViewBrowserTests", dependencies: ["TestSupport"], exclude: ["drive_page.py"]),
        // The page's pure modules (curl.js) under node's own test runner, the commands run by bash and dash.
        .testTarget(name: "LiveViewPageTests", dependencies: ["TestSupport"], exclude: ["curl.test.js", "curl-shell.test.js"]),
        // The same driver against a sandboxed command's live view and the conditioner panel (root).
        .testTarget(name: "LiveViewBrowserNamespaceTests", dependencies: ["TestSupport"]),
        .testTarget(name: "TLSWireTests", dependencies: ["TLSWire", "TestSupport"]),
        .testTarget(
            name: "QUICTests", dependencies: ["QUIC", "FlowReassembly", "HTTPModel", "PacketCapture", "PacketDecoding", "TLS", "TestSupport"]),
        // Python's `cryptography` and hashlib/hmac, run at test time, are the independent side of the crypto tests.
        .testTarget(name: "TLSTests", dependencies: ["TLS", "FlowReassembly", "HTTPModel", "PacketDecoding", "TestSupport"],
                    exclude: ["crypto-vectors.py"]),
    ]
)
