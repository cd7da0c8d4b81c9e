import Foundation
import TestSupport
import XCTest

/// The executable's exit codes, as README.md and --help document them.
final class CommandLineTests: XCTestCase {
    private func executable() throws -> URL { try BuiltExecutable.meteraudit() }

    private func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try BuiltExecutable.run(executable(), arguments)
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
        let result = try run([
            "analyze", bad, Fixtures.sample("python-pipeline.pcap"), "--out", outputDirectory, "--quiet",
        ])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("\(bad): not a pcap or pcapng capture"), result.stderr)
        XCTAssertEqual(result.stdout, "")
    }

    func testUsageErrorsExit64() throws {
        for arguments in [
            ["analyze", "x.pcap", "--out", outputDirectory, "--format", "pdf"],
            ["analyze", "x.pcap", "--out", outputDirectory, "--gzip-level", "0"],
            ["analyze", "x.pcap", "--out", outputDirectory, "--endpoint-rule", "no-equals"],
            ["analyze", "x.pcap"],
        ] {
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

    // MARK: outputs that cannot be written

    private func files(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func testDirectoryThatCannotBeWrittenExitsTwoNamingTheFile() throws {
        var directory = outputDirectory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory)
        if FileManager.default.createFile(atPath: directory + "/probe", contents: nil) {
            // Root writes anywhere: take a directory of a file system that refuses new files.
            try FileManager.default.removeItem(atPath: directory + "/probe")
            guard FileManager.default.fileExists(atPath: "/proc/self") else {
                throw XCTSkip("no unwritable directory for root")
            }
            directory = "/proc/self"
        }
        let result = try run(["analyze", Fixtures.sample("python-pipeline.pcap"), "--out", directory, "--quiet"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("\(directory)/messages.csv: cannot write"), result.stderr)
        XCTAssertFalse(files(in: directory).contains { $0.contains("messages.csv") || $0.contains("report") })
    }

    /// Runs meteraudit under `ulimit -f` (KiB, as bash counts): a write past the limit fails
    /// with EFBIG, as on a full disk.
    private func runWithFileSizeLimit(kib: Int, _ arguments: [String]) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let binary = try executable().path
        return try run(viaShell: ["-c", "ulimit -f \(kib) && exec \"$0\" \"$@\"", binary] + arguments)
    }

    private func run(viaShell arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try BuiltExecutable.run(URL(fileURLWithPath: "/bin/bash"), arguments)
    }

    func testFullDiskMidWriteExitsTwoAndLeavesNoPartialFile() throws {
        let inputs = try Fixtures.sampleInputs()
        let reference = outputDirectory
        let full = try run(["analyze"] + inputs + ["--out", reference, "--quiet"])
        XCTAssertEqual(full.status, 0, full.stderr)
        // A run that could not write every file is not a part (docs/SCALE.md): it writes no part files.
        let partFiles = ["part.figures", "part.json", "part.points"]
        XCTAssertEqual(files(in: reference).filter(partFiles.contains), partFiles)
        let sizes = try Dictionary(
            uniqueKeysWithValues: files(in: reference).filter { !partFiles.contains($0) }.map {
                ($0, try XCTUnwrap(FileManager.default.attributesOfItem(atPath: reference + "/" + $0)[.size] as? Int))
            })
        // The limit sits between the small files and the three large ones, so those fail mid-write;
        // it follows the samples' sizes (4 KiB of room above the largest small file).
        let small = ["connections.csv", "diagnostics.json", "endpoints.csv", "report.md"]
        let largestSmall = try small.map { try XCTUnwrap(sizes[$0], $0) }.max() ?? 0
        let limit = (largestSmall + 4096) / 1024 * 1024 + 1024
        let tooLarge = sizes.filter { $0.value > limit }.keys.sorted()
        let fitting = sizes.filter { $0.value <= limit - 4096 }.keys.sorted()
        XCTAssertEqual(tooLarge, ["messages.csv", "report.html", "report.json"], "\(sizes)")
        XCTAssertEqual(fitting, small, "\(sizes)")

        let directory = outputDirectory
        let result = try runWithFileSizeLimit(
            kib: limit / 1024, ["analyze"] + inputs + ["--out", directory, "--quiet"])
        XCTAssertEqual(result.status, 2, result.stderr)
        for name in tooLarge {
            XCTAssertTrue(result.stderr.contains("\(directory)/\(name): cannot write: File too large"), result.stderr)
        }
        // Only complete files are left, byte-identical to the unlimited run's; no temporaries.
        XCTAssertEqual(files(in: directory), fitting)
        for name in fitting {
            XCTAssertEqual(
                FileManager.default.contents(atPath: directory + "/" + name),
                FileManager.default.contents(atPath: reference + "/" + name), name)
        }
    }

    func testFullDiskWhileStreamingMessagesKeepsTheReports() throws {
        let inputs = try Fixtures.sampleInputs()
        // The limit sits between diagnostics.json and report.md (whose sizes follow the samples and
        // the inputs' paths) and messages.csv, so only messages.csv fails mid-write.
        let reference = outputDirectory
        let full = try run(["analyze"] + inputs + ["--out", reference, "--format", "messages,markdown", "--quiet"])
        XCTAssertEqual(full.status, 0, full.stderr)
        func size(_ name: String) throws -> Int {
            try XCTUnwrap(FileManager.default.attributesOfItem(atPath: reference + "/" + name)[.size] as? Int, name)
        }
        let kib = (max(try size("diagnostics.json"), try size("report.md")) + 4096) / 1024 + 1
        XCTAssertLessThan(kib * 1024, try size("messages.csv"))
        let directory = outputDirectory
        let result = try runWithFileSizeLimit(
            kib: kib, ["analyze"] + inputs + ["--out", directory, "--format", "messages,markdown"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("\(directory)/messages.csv: cannot write"), result.stderr)
        XCTAssertFalse(result.stdout.contains("messages.csv"), "not listed as written: \(result.stdout)")
        XCTAssertEqual(files(in: directory), ["diagnostics.json", "report.md"])
        // The inputs were still read and summarized.
        XCTAssertTrue(result.stderr.contains("python-pipeline.pcap: 16 packets"), result.stderr)
    }

    // MARK: the estimator's floor (scripts/bench)

    func testWorkTimingsCountDistinctBodiesAndContents() throws {
        // Six gzip responses: body.gzip three times, the stored-block gzip of the same text
        // (plain.txt) twice, and a different text once. Distinct wire bodies: 3; distinct
        // decoded contents: 2, so 2 deflates and 1 re-compression answered from memory.
        let plain = try Fixtures.bytes("contentcoding/plain.txt")
        let bodies =
            try [Fixtures.bytes("contentcoding/body.gzip")] + [CaptureFileWriter.gzip(plain)]
            + [CaptureFileWriter.gzip(Array("a different text".utf8))]
        var conversation = Conversation()
        conversation.handshake()
        for body in [bodies[0], bodies[0], bodies[1], bodies[0], bodies[1], bodies[2]] {
            conversation.send(.client, BadInputTests.request)
            conversation.send(
                .server,
                Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
        conversation.close()
        let path = try CaptureFileWriter.temporaryFile(named: "floor.pcap", containing: conversation.pcap())
        let result = try run(["analyze", path, "--out", outputDirectory, "--quiet", "--work-timings"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let line = try XCTUnwrap(
            result.stderr.split(separator: "\n").first { $0.hasPrefix("work-floor: ") }, result.stderr)
        XCTAssertTrue(line.hasPrefix("work-floor: decode 3 distinct bodies "), String(line))
        XCTAssertTrue(line.contains(" deflate 2 distinct contents "), String(line))
        XCTAssertTrue(line.contains("(1 re-compressions and 3 bodies answered from memory)"), String(line))
        XCTAssertNotNil(
            line.range(of: #"; floor [0-9]+\.[0-9]{3} s on [1-9][0-9]* threads$"#, options: .regularExpression),
            String(line))
    }
}
