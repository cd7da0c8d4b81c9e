// swift-tools-version:6.0
import PackageDescription

// Targets follow the pipeline: CaptureIO → PacketLayers → TCPReassembly → HTTP1 (HAR files: CaptureIO
// → HARMessages) → ContentCoding → Estimation → Analysis → Reports, wired by MeterAuditKit under a
// thin CLI, meteraudit.
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
    ],
    targets: [
        .systemLibrary(name: "CPcap", path: "Sources/CPcap"),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .systemLibrary(name: "CBrotli", path: "Sources/CBrotli"),
        .target(name: "CCaptureSupport", path: "Sources/CCaptureSupport", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CaptureIO", dependencies: ["CPcap", "CCaptureSupport"]),
        .target(name: "PacketLayers", dependencies: ["CaptureIO"]),
        .target(name: "TCPReassembly", dependencies: [
            "PacketLayers", .product(name: "DequeModule", package: "swift-collections"),
        ]),
        .target(name: "HTTP1", dependencies: [
            "TCPReassembly", .product(name: "DequeModule", package: "swift-collections"),
        ]),
        .target(name: "HARMessages", dependencies: ["CaptureIO", "HTTP1"]),
        .target(name: "ContentCoding", dependencies: ["CZlib", "CBrotli"]),
        .target(name: "Estimation", dependencies: ["HTTP1"]),
        .target(name: "Analysis", dependencies: ["HTTP1", "ContentCoding", "Estimation"]),
        .target(name: "Reports", dependencies: ["Analysis", "Estimation"]),
        .target(name: "MeterAuditKit", dependencies: [
            "CaptureIO", "PacketLayers", "TCPReassembly", "HTTP1", "HARMessages", "ContentCoding", "Estimation", "Analysis", "Reports",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // What each fuzz target runs per input; the crasher-replay tests call it too (docs/FUZZING.md).
        .target(name: "FuzzEntries", dependencies: [
            "CaptureIO", "PacketLayers", "TCPReassembly", "HTTP1", "HARMessages", "ContentCoding",
        ]),
        .executableTarget(name: "meteraudit", dependencies: [
            "MeterAuditKit", "Estimation", "Analysis", "Reports", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .target(name: "TestSupport", dependencies: ["CaptureIO", "PacketLayers"], path: "Tests/TestSupport"),
        .testTarget(name: "CaptureIOTests", dependencies: ["CaptureIO", "TestSupport"]),
        .testTarget(name: "PacketLayersTests", dependencies: ["PacketLayers", "TestSupport"]),
        .testTarget(name: "TCPReassemblyTests", dependencies: ["TCPReassembly", "TestSupport"]),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1", "TestSupport"]),
        .testTarget(name: "HARMessagesTests", dependencies: ["HARMessages", "CaptureIO", "HTTP1", "TestSupport"]),
        .testTarget(name: "ContentCodingTests", dependencies: ["ContentCoding", "TestSupport"]),
        .testTarget(name: "EstimationTests", dependencies: ["Estimation", "TestSupport"]),
        .testTarget(name: "AnalysisTests", dependencies: ["Analysis", "TestSupport"]),
        .testTarget(name: "ReportsTests", dependencies: [
            "Reports", "Analysis", "Estimation", "HTTP1", "ContentCoding", "PacketLayers", "TestSupport",
        ]),
        .testTarget(name: "MeterAuditKitTests", dependencies: ["MeterAuditKit", "TestSupport"]),
        .testTarget(name: "FuzzEntriesTests", dependencies: ["FuzzEntries"]),
    ],
    swiftLanguageModes: [.v5]
)

// libFuzzer executables, one per parser (Fuzz/<name>/), over FuzzDriver. They exist only in
// builds made by scripts/fuzz, which sets METERAUDIT_FUZZ=1 and adds `-sanitize=fuzzer,address`:
// their entry point starts libFuzzer's driver, so they would not link without it. No top-level
// code (-parse-as-library): the entry point is the `@_cdecl` function SwiftPM binds `main` to.
let fuzzTargets = [
    "FuzzCaptureReader", "FuzzPacketDecoder", "FuzzTCPAssembler", "FuzzHTTP1", "FuzzHARReader", "FuzzContentDecoder",
]
if ProcessInfo.processInfo.environment["METERAUDIT_FUZZ"] == "1" {
    package.targets.append(.target(name: "FuzzDriver", dependencies: ["FuzzEntries"], path: "Fuzz/FuzzDriver"))
    for name in fuzzTargets {
        package.targets.append(.executableTarget(
            name: name, dependencies: ["FuzzDriver"], path: "Fuzz/\(name)",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
        package.products.append(.executable(name: name, targets: [name]))
    }
}
