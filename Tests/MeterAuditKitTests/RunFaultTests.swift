import Analysis
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// Inputs that go away or change while a run reads them: each is reported with its name, and
/// the other inputs are still analyzed. The run's progress callback makes the change at a
/// known point, as another process would.
final class RunFaultTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "meteraudit-faults-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Copies of two samples plus `middle` between them: a.pcap (python-pipeline: 16 packets),
    /// the middle input, c.pcap (python-close).
    private func inputs(middle name: String, _ bytes: [UInt8]) throws -> [String] {
        let first = directory + "/a.pcap"
        let last = directory + "/c.pcap"
        let middle = directory + "/" + name
        try FileManager.default.copyItem(atPath: Fixtures.sample("python-pipeline.pcap"), toPath: first)
        try FileManager.default.copyItem(atPath: Fixtures.sample("python-close.pcap"), toPath: last)
        try CaptureFileWriter.write(bytes, to: middle)
        return [first, middle, last]
    }

    /// The `source` column of messages.csv, one per record.
    private func sources(_ out: String) throws -> [String] {
        let csv = try String(contentsOfFile: out + "/messages.csv", encoding: .utf8)
        return csv.split(separator: "\r\n").dropFirst().map { String($0.prefix { $0 != "," }) }
    }

    /// Records a sample alone gives, by the same run.
    private func recordCount(_ sample: String) throws -> Int {
        let out = directory + "/alone-\(sample)"
        _ = try AuditRun(inputs: [Fixtures.sample(sample)], outputDirectory: out, formats: ["messages"]).run()
        return try sources(out).count
    }

    private func run(_ inputs: [String], change: @escaping (Int) -> Void) throws -> (AuditRun.Result, String) {
        let out = directory + "/out"
        var progress = AuditRun.Progress()
        progress.input = { index, _ in change(index) }
        return (try AuditRun(inputs: inputs, outputDirectory: out, formats: ["messages"]).run(progress: progress), out)
    }

    private func assertOthersKept(_ out: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let sources = try sources(out)
        XCTAssertEqual(
            sources.filter { $0 == "a.pcap" }.count, try recordCount("python-pipeline.pcap"), file: file, line: line)
        XCTAssertEqual(
            sources.filter { $0 == "c.pcap" }.count, try recordCount("python-close.pcap"), file: file, line: line)
        XCTAssertGreaterThan(sources.count, 0, file: file, line: line)
    }

    func testInputDeletedBeforeItsTurnIsUnreadableAndTheOthersAreRead() throws {
        let inputs = try inputs(
            middle: "b.pcap",
            try Data(contentsOf: URL(fileURLWithPath: Fixtures.sample("python-close.pcap"))).map { $0 })
        let (result, out) = try run(inputs) { index in
            if index == 0 { try? FileManager.default.removeItem(atPath: inputs[1]) }
        }
        XCTAssertTrue(result.someInputsUnreadable, "exit code 1")
        let deleted = result.report.inputs[1]
        XCTAssertFalse(deleted.readable)
        XCTAssertTrue(deleted.summaryLine.hasPrefix("b.pcap: unreadable: \(inputs[1])"), deleted.summaryLine)
        XCTAssertEqual(result.report.inputs.map(\.readable), [true, false, true])
        try assertOthersKept(out)
        XCTAssertTrue(result.outputErrors.isEmpty)
    }

    func testInputReplacedByADirectoryIsUnreadableAndTheOthersAreRead() throws {
        // What chmod 000 does for anyone but root: the path opens but cannot be read.
        let inputs = try inputs(middle: "b.pcap", Array("placeholder".utf8))
        let (result, out) = try run(inputs) { index in
            if index == 0 {
                try? FileManager.default.removeItem(atPath: inputs[1])
                try? FileManager.default.createDirectory(atPath: inputs[1], withIntermediateDirectories: false)
            }
        }
        XCTAssertTrue(result.someInputsUnreadable, "exit code 1")
        let replaced = result.report.inputs[1]
        XCTAssertFalse(replaced.readable)
        XCTAssertTrue(try XCTUnwrap(replaced.error).contains(inputs[1]), replaced.summaryLine)
        try assertOthersKept(out)
    }

    func testInputTruncatedWhileReadIsReportedAndItsRecordsBeforeTheCutKept() throws {
        // A HAR of 4,000 one-line entries, each a request (wire 30) and a response (wire 45):
        // far more than the reader's 256 KiB chunk, so cutting the file after the first 64
        // entries (the first progress report) cuts what the reader has yet to read.
        let entry =
            #"{"request": {"method": "GET", "url": "http://127.0.0.1:8080/a", "httpVersion": "HTTP/1.1", "headers": [], "headersSize": 30, "bodySize": 0},"#
            + #" "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "content": {"size": 5, "text": "hello"}, "headersSize": 40, "bodySize": 5}}"#
        let text =
            "{\"log\": {\"version\": \"1.2\", \"entries\": [\n"
            + Array(repeating: entry, count: 4000).joined(separator: ",\n") + "\n]}}\n"
        let inputs = try inputs(middle: "b.har", Array(text.utf8))
        let size = text.utf8.count
        let out = directory + "/out"
        var progress = AuditRun.Progress()
        var cut = false
        progress.bytes = { _, _ in
            guard !cut else { return }
            cut = true
            truncate(inputs[1], off_t(size / 2))
        }
        let result = try AuditRun(inputs: inputs, outputDirectory: out, formats: ["messages"]).run(progress: progress)
        XCTAssertTrue(cut)
        XCTAssertFalse(result.someInputsUnreadable, "a cut input counts as read: exit code 0")
        let truncated = result.report.inputs[1]
        XCTAssertTrue(truncated.readable)
        let error = try XCTUnwrap(truncated.error)
        XCTAssertTrue(error.hasPrefix(inputs[1] + ": "), error)
        XCTAssertTrue(
            error.contains("\(inputs[1]): truncated from \(size) to \(size / 2) bytes while it was read"), error)
        // Entries before the cut are kept, whole: about half of them, never the ones past it.
        let records = try sources(out).filter { $0 == "b.har" }.count
        XCTAssertGreaterThan(records, 2 * 64)
        XCTAssertLessThan(records, 2 * 4000 / 2 + 2)
        XCTAssertEqual(records % 2, 0, "request and response of each entry kept together")
        try assertOthersKept(out)
    }
}
