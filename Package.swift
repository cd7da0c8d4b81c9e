// swift-tools-version:6.0
import PackageDescription

// Targets follow the pipeline: CaptureIO → PacketLayers → Flows → TCPReassembly → HTTP1, HTTP2 (HAR
// files: CaptureIO → HARMessages), each handing on MessageModel's messages → Records → ContentCoding → Estimation → Analysis → Reports, wired by MeterAuditKit
// under a thin CLI, meteraudit.
// See ARCHITECTURE.md.
import Foundation

let package = Package(
    name: "MeterAudit",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "meteraudit", targets: ["meteraudit"]),
        .library(name: "MeterAuditKit", targets: ["MeterAuditKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        // report.html's page templates (escaping every value by default).
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
        // HPACK for HTTP/2 header blocks (the HTTP2 stage never decodes HPACK itself).
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
    ],
    targets: [
        // libpcap and zlib come with the macOS SDK and are found without pkg-config; brotli comes
        // from Homebrew on macOS, whose prefix (/opt/homebrew on Apple silicon) is not searched
        // by default, so its flags come from libbrotlidec.pc.
        .systemLibrary(name: "CPcap", path: "Sources/CPcap", providers: [.apt(["libpcap-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CBrotli", path: "Sources/CBrotli", pkgConfig: "libbrotlidec",
            providers: [.apt(["libbrotli-dev"]), .brew(["brotli"])]),
        // nghttp3 (Debian libnghttp3-dev, Homebrew libnghttp3): its QPACK decoder, for HTTP/3.
        .systemLibrary(
            name: "CNghttp3", path: "Sources/CNghttp3", pkgConfig: "libnghttp3",
            providers: [.apt(["libnghttp3-dev"]), .brew(["libnghttp3"])]),
        .target(name: "CCaptureSupport", path: "Sources/CCaptureSupport", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CaptureIO", dependencies: ["CPcap", "CCaptureSupport"]),
        .target(name: "PacketLayers", dependencies: ["CaptureIO"]),
        // Flows: which way (Direction), a flow's identity and the handlers its bytes or datagrams go to.
        .target(name: "Flows", dependencies: ["PacketLayers"]),
        // CostAccounting: what each packet cost, shared out by owner over messages and the overhead
        // kinds protocols register; the transport's settlement rule; the TLS record rule.
        .target(
            name: "CostAccounting",
            dependencies: ["CaptureIO", "Flows", .product(name: "DequeModule", package: "swift-collections")]),
        // MessageModel: what every protocol's reader hands on and every consumer reads (messages,
        // their facts, the sink contract); no protocol's own.
        .target(name: "MessageModel", dependencies: ["CaptureIO", "PacketLayers", "Flows", "CostAccounting"]),
        .target(
            name: "TCPReassembly",
            dependencies: [
                "PacketLayers", "Flows", .product(name: "DequeModule", package: "swift-collections"),
            ]),
        .target(
            name: "HTTP1",
            dependencies: [
                "CaptureIO", "PacketLayers", "Flows", "MessageModel", "TCPReassembly",
                .product(name: "DequeModule", package: "swift-collections"),
            ]),
        // HTTP/2: frames, HPACK (swift-nio-http2's NIOHPACK) and per-stream records (docs/METERING.md §2a).
        .target(
            name: "HTTP2",
            dependencies: [
                "CaptureIO",
                "PacketLayers", "Flows", "MessageModel", "CostAccounting", "TCPReassembly",
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ]),
        // HTTP/3: frames on QUIC's streams, QPACK through nghttp3, per-stream records (docs/METERING.md §2d).
        .target(
            name: "HTTP3",
            dependencies: ["CaptureIO", "PacketLayers", "Flows", "MessageModel", "CostAccounting", "CNghttp3"]),
        .target(name: "Records", dependencies: ["PacketLayers", "MessageModel", "CostAccounting"]),
        .target(name: "HARMessages", dependencies: ["CaptureIO", "MessageModel", "Records"]),
        // TLS: key logs, record reading and decryption (docs/TLS.md); swift-crypto does every cipher.
        .target(
            name: "TLS",
            dependencies: [
                "CaptureIO", // saturatingSum
                "Flows", "CostAccounting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]),
        // QUIC (RFC 9000, 9001, 9369): packets, header and packet protection (swift-crypto), frames,
        // streams put in order for the application protocol (Flows' MultiplexedStreamHandler).
        .target(
            name: "QUIC",
            dependencies: [
                "Flows", "TLS", "CostAccounting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]),
        .target(name: "ContentCoding", dependencies: ["CZlib", "CBrotli"]),
        // Meter logs: an app's own meter, read (JSON Lines or CSV) and joined to the wire (docs/METER-LOG.md).
        .target(name: "MeterLog", dependencies: ["CaptureIO"]),
        .target(name: "Estimation", dependencies: ["CaptureIO", "MessageModel", "Records"]),
        .target(
            name: "Analysis",
            dependencies: [
                "CaptureIO", "PacketLayers", "Flows", "MessageModel", "CostAccounting", "Records", "ContentCoding",
                "Estimation",
            ]),
        .target(
            name: "Reports",
            dependencies: [
                "PacketLayers", "Flows", "MessageModel", "CostAccounting", "Records", "ContentCoding", "Estimation",
                "Analysis", .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .target(
            name: "MeterAuditKit",
            dependencies: [
                "CaptureIO", "PacketLayers", "Flows", "MessageModel", "CostAccounting", "TCPReassembly", "HTTP1",
                "Records", "HARMessages", "ContentCoding", "Estimation", "Analysis", "Reports", "TLS", "HTTP2", "HTTP3", "MeterLog",
                "QUIC", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]),
        // What each fuzz target runs per input; the crasher-replay tests call it too (docs/FUZZING.md).
        .target(
            name: "FuzzEntries",
            dependencies: [
                "CaptureIO", "PacketLayers", "Flows", "MessageModel", "TCPReassembly", "HTTP1", "HTTP2", "HTTP3", "Records",
                "HARMessages", "ContentCoding",
                "TLS", "MeterLog", "QUIC", "Analysis", "Reports",
            ]),
        .executableTarget(
            name: "meteraudit",
            dependencies: [
                "MeterAuditKit", "Estimation", "Analysis", "Reports",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .target(name: "TestSupport", dependencies: ["CaptureIO", "PacketLayers"], path: "Tests/TestSupport"),
        .testTarget(name: "CaptureIOTests", dependencies: ["CaptureIO", "TestSupport"]),
        .testTarget(name: "PacketLayersTests", dependencies: ["CaptureIO", "PacketLayers", "TestSupport"]),
        .testTarget(name: "TCPReassemblyTests", dependencies: ["PacketLayers", "Flows", "TCPReassembly", "TestSupport"]),
        .testTarget(name: "HTTP1Tests", dependencies: ["PacketLayers", "Flows", "MessageModel", "TCPReassembly", "HTTP1", "TestSupport"]),
        .testTarget(
            name: "HTTP2Tests",
            dependencies: ["HTTP2", "HTTP1", "MessageModel", "CaptureIO", "PacketLayers", "Flows", "TCPReassembly", "TestSupport"]),
        .testTarget(
            name: "HTTP3Tests",
            dependencies: ["HTTP3", "MessageModel", "CostAccounting", "CaptureIO", "PacketLayers", "Flows", "ContentCoding"]),
        .testTarget(name: "RecordsTests", dependencies: ["Records", "MessageModel", "CostAccounting", "PacketLayers"]),
        .testTarget(
            name: "HARMessagesTests", dependencies: ["HARMessages", "Records", "CaptureIO", "MessageModel", "TestSupport"]),
        .testTarget(
            name: "TLSTests", dependencies: ["TLS", "CaptureIO", "PacketLayers", "Flows", "TCPReassembly", "TestSupport"]),
        .testTarget(name: "ContentCodingTests", dependencies: ["ContentCoding", "TestSupport"]),
        .testTarget(name: "EstimationTests", dependencies: ["Estimation", "Records", "MessageModel", "TestSupport"]),
        .testTarget(
            name: "AnalysisTests",
            dependencies: ["Analysis", "Records", "Flows", "MessageModel", "CostAccounting", "TestSupport"]),
        .testTarget(
            name: "ReportsTests",
            dependencies: [
                "Reports", "Analysis", "Estimation", "Records", "MessageModel", "CostAccounting", "ContentCoding",
                "PacketLayers", "Flows", "TLS", "HTTP2", "HTTP3", "QUIC", "TestSupport",
            ]),
        .testTarget(
            name: "MeterAuditKitTests",
            dependencies: [
                "MeterAuditKit", "CaptureIO", "Records", "Estimation", "Analysis", "Flows", "MessageModel", "CostAccounting",
                "TestSupport",
            ]),
        // The cost module's ledgers, claims and TLS record rule, counted by hand.
        .testTarget(
            name: "CostAccountingTests",
            dependencies: [
                "CostAccounting", "MeterAuditKit", "Analysis", "Records", "Flows", "MessageModel", "PacketLayers", "TLS", "HTTP2",
                "TCPReassembly",
            ]),
        .testTarget(name: "MeterLogTests", dependencies: ["MeterLog", "CaptureIO"]),
        .testTarget(name: "QUICTests", dependencies: ["QUIC", "Flows", "TLS", "TestSupport"]),
        .testTarget(name: "FuzzEntriesTests", dependencies: ["FuzzEntries"]),
        // A protocol of the test's own (a message per CRLF-terminated line on a port), registered
        // in one line: a protocol is a reader plus a registration (ARCHITECTURE.md, "Adding a protocol").
        .testTarget(
            name: "LineProtocolTests",
            dependencies: [
                "MeterAuditKit", "Analysis", "CostAccounting", "Flows", "MessageModel", "PacketLayers", "TestSupport",
            ]),
    ],
    swiftLanguageModes: [.v5]
)

// libFuzzer executables, one per parser (Fuzz/<name>/), over FuzzDriver. They exist only in
// builds made by scripts/fuzz, which sets METERAUDIT_FUZZ=1 and adds `-sanitize=fuzzer,address`:
// their entry point starts libFuzzer's driver, so they would not link without it. No top-level
// code (-parse-as-library): the entry point is the `@_cdecl` function SwiftPM binds `main` to.
let fuzzTargets = [
    "FuzzCaptureReader", "FuzzPacketDecoder", "FuzzTCPAssembler", "FuzzHTTP1", "FuzzHARReader", "FuzzContentDecoder",
    "FuzzTLS", "FuzzHTTP2", "FuzzCharlesReader", "FuzzMeterLog", "FuzzHTTP3", "FuzzQUIC", "FuzzPartFigures",
]
if ProcessInfo.processInfo.environment["METERAUDIT_FUZZ"] == "1" {
    package.targets.append(.target(name: "FuzzDriver", dependencies: ["FuzzEntries"], path: "Fuzz/FuzzDriver"))
    for name in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: name, dependencies: ["FuzzDriver"], path: "Fuzz/\(name)",
                swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
        package.products.append(.executable(name: name, targets: [name]))
    }
}
