// swift-tools-version:5.9
// meter-app: a small app with seed 001's interception meter (a URLProtocol subclass) and a
// second, body-only meter, used by scripts/make-meter-samples to make Samples/meter-app.*.
// Its own package: MeterAudit gains no dependency. Foundation (FoundationNetworking on Linux)
// and the system zlib only.
import PackageDescription

let package = Package(
    name: "meter-app",
    targets: [
        .systemLibrary(name: "CZlibMeter", path: "Sources/CZlibMeter", providers: [.apt(["zlib1g-dev"])]),
        .executableTarget(name: "meter-app", dependencies: ["CZlibMeter"], path: "Sources/meter-app"),
    ]
)
