import Foundation
import XCTest

/// The built `meteraudit` beside the test bundle, and a way to run a program to its end.
enum BuiltExecutable {
    static func meteraudit(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        // The test bundle is the products directory itself on Linux, inside it elsewhere.
        let bundle = Bundle(for: Marker.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("meteraudit") }
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            XCTFail(
                "meteraudit is not built beside the tests (\(candidates.map(\.path))); run swift build --build-tests",
                file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return binary
    }

    /// Runs `program` with `arguments` and waits for it: its exit status and both outputs.
    static func run(_ program: URL, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }

    private final class Marker {}
}
