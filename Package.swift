// swift-tools-version:6.1
import PackageDescription

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
    ],
    targets: [
        // C stays here; only PacketCapture imports it.
        .systemLibrary(
            name: "CPcap",
            pkgConfig: "libpcap",
            providers: [.apt(["libpcap-dev"])]
        ),
        // zlib, brotli and zstd decoders and libcrypto SHA-256; only HTTPDecoding imports it.
        .systemLibrary(
            name: "CCompression",
            providers: [.apt(["zlib1g-dev", "libbrotli-dev", "libzstd-dev", "libssl-dev"])]
        ),
        .target(name: "PacketDecoding"),
        .target(name: "PacketCapture", dependencies: ["CPcap", "PacketDecoding"]),
        .target(name: "FlowReassembly", dependencies: ["PacketDecoding"]),
        .target(name: "HTTPDecoding", dependencies: ["CCompression", "FlowReassembly", "PacketDecoding"]),
        .target(name: "Reports", dependencies: ["HTTPDecoding", "PacketDecoding"]),
        .target(name: "LinkConditioner", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .executableTarget(
            name: "capture",
            dependencies: [
                "PacketCapture", "PacketDecoding", "FlowReassembly", "HTTPDecoding", "Reports",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "condition",
            dependencies: [
                "LinkConditioner",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "PacketDecodingTests", dependencies: ["PacketDecoding", "TestSupport"]),
        .testTarget(name: "PacketCaptureTests", dependencies: ["PacketCapture", "PacketDecoding", "TestSupport"]),
        .testTarget(
            name: "FlowReassemblyTests", dependencies: ["FlowReassembly", "PacketDecoding", "PacketCapture", "TestSupport"]),
        .testTarget(name: "HTTPDecodingTests", dependencies: ["HTTPDecoding", "FlowReassembly", "TestSupport"]),
        .testTarget(name: "ReportsTests", dependencies: ["Reports", "HTTPDecoding", "TestSupport"]),
        .testTarget(name: "CaptureCLITests", dependencies: ["TestSupport"]),
        .testTarget(name: "CaptureNamespaceTests", dependencies: ["TestSupport"]),
        .testTarget(name: "LinkConditionerTests", dependencies: ["LinkConditioner", "TestSupport"]),
        .testTarget(name: "ConditionerNamespaceTests", dependencies: ["LinkConditioner", "TestSupport"]),
        .testTarget(name: "ConditionerVMTests", dependencies: ["TestSupport"]),
        .testTarget(name: "SandboxNamespaceTests", dependencies: ["LinkConditioner", "TestSupport"]),
    ]
)
