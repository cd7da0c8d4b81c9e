import Foundation
import TestSupport
import XCTest

/// The executable's exit codes, as README.md and --help document them.
final class CommandLineTests: XCTestCase {
    /// The built `meteraudit` beside the test bundle.
    private func executable() throws -> URL {
        // The test bundle is the products directory itself on Linux, inside it elsewhere.
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("meteraudit") }
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            XCTFail("meteraudit is not built beside the tests (\(candidates.map(\.path))); run swift build --build-tests")
            throw CocoaError(.fileNoSuchFile)
        }
        return binary
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    private var outputDirectory: String { NSTemporaryDirectory() + "meteraudit-cli-\(UUID().uuidString)" }

    func testSuccessPrintsTheSummary() throws {
        let result = try run(["analyze", Fixtures.sample("python-pipeline.pcap"), "--out", outputDirectory])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("Largest documented errors"), result.stdout)
        XCTAssertTrue(result.stderr.contains("python-pipeline.pcap: 16 packets"), result.stderr)
        XCTAssertFalse(result.stderr.contains("\r"), "no progress bar when stderr is not a terminal")
    }

    func testUnreadableInputExitsOne() throws {
        let bad = try CaptureFileWriter.temporaryFile(named: "bad.pcap", containing: Array("text".utf8))
        let result = try run(["analyze", bad, Fixtures.sample("python-pipeline.pcap"), "--out", outputDirectory, "--quiet"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("\(bad): not a pcap or pcapng capture"), result.stderr)
        XCTAssertEqual(result.stdout, "")
    }

    func testUsageErrorsExit64() throws {
        for arguments in [["analyze", "x.pcap", "--out", outputDirectory, "--format", "pdf"],
                          ["analyze", "x.pcap", "--out", outputDirectory, "--gzip-level", "0"],
                          ["analyze", "x.pcap", "--out", outputDirectory, "--endpoint-rule", "no-equals"],
                          ["analyze", "x.pcap"]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
        }
    }

    func testOutputThatCannotBeWrittenExitsTwo() throws {
        let blocker = try CaptureFileWriter.temporaryFile(named: "not-a-directory", containing: [1])
        let result = try run(["analyze", Fixtures.sample("python-pipeline.pcap"), "--out", blocker + "/out"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot create output"), result.stderr)
    }

    func testJSONGoesToStdout() throws {
        let result = try run(["analyze", Fixtures.sample("python-pipeline.pcap"), "--out", outputDirectory, "--json"])
        XCTAssertEqual(result.status, 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        XCTAssertNotNil(object as? [String: Any])
    }
}
