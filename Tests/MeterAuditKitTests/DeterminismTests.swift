import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// The same inputs give byte-identical files, so reports diff cleanly in CI.
final class DeterminismTests: XCTestCase {
    func testTwoRunsWriteIdenticalFiles() throws {
        let captures = try SampleTruthTests.samplePairs().map(\.0)
        var contents: [[String: Data]] = []
        for _ in 0..<2 {
            let out = NSTemporaryDirectory() + "meteraudit-determinism-\(UUID().uuidString)"
            let result = try AuditRun(inputs: captures, outputDirectory: out, options: try .withSampleKeys()).run()
            XCTAssertEqual(
                result.files.map { ($0 as NSString).lastPathComponent },
                [
                    "messages.csv", "connections.csv", "endpoints.csv", "report.md", "report.json", "report.html",
                    "diagnostics.json", "part.figures", "part.points", "part.json",
                ])
            var files: [String: Data] = [:]
            for path in result.files {
                files[(path as NSString).lastPathComponent] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
            contents.append(files)
        }
        for (name, data) in contents[0] {
            XCTAssertGreaterThan(data.count, 100, name)
            XCTAssertEqual(data, contents[1][name], "\(name) differs between two runs")
        }
    }

    /// Records wait for their bodies' measurements and for the ACKs that settle their layers;
    /// with little room to wait (`maxWaitingRecords` 2), some take their layers early. When,
    /// depends on the capture alone: bodies measured as they stream on the parsing thread
    /// (always ready at once) and on the worker threads give the same records.
    func testRecordsDoNotDependOnTheBodyWorkersTiming() throws {
        let path = Fixtures.sample("nginx-curl.pcap")
        var runs: [[String]] = []
        for inline in [true, false] {
            var options = AnalysisOptions()
            options.limits.maxWaitingRecords = 2
            if inline { options.limits.bodyWork.maxCollectedBody = 0 }
            var records: [String] = []
            _ = InputAnalyzer(options: options).analyze(path: path) { record in
                records.append("\(record.message.kind) \(record.message.index) \(record.wire) \(record.estimates)")
            }
            runs.append(records)
        }
        XCTAssertGreaterThan(runs[0].count, 20)
        XCTAssertEqual(runs[0], runs[1])
    }

    func testFormatSelectsTheFiles() throws {
        let out = NSTemporaryDirectory() + "meteraudit-formats-\(UUID().uuidString)"
        let captures = try SampleTruthTests.samplePairs().map(\.0)
        let result = try AuditRun(inputs: Array(captures.prefix(2)), outputDirectory: out, formats: ["markdown"]).run()
        XCTAssertEqual(result.files.map { ($0 as NSString).lastPathComponent }, ["report.md", "diagnostics.json", "part.figures", "part.json"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/messages.csv"))
    }
}

/// Samples/report.md is what `scripts/analyze-samples` writes today.
final class SampleReportTests: XCTestCase {
    func testCommittedSampleReportIsCurrent() throws {
        let out = NSTemporaryDirectory() + "meteraudit-sample-report-\(UUID().uuidString)"
        _ = try AuditRun(
            inputs: try Fixtures.sampleInputs(), outputDirectory: out, options: try .withSampleKeysAndMeters(),
            formats: ["markdown"]
        ).run()
        let produced = try String(contentsOfFile: out + "/report.md", encoding: .utf8)
        let committed = try String(contentsOfFile: Fixtures.sample("report.md"), encoding: .utf8)
        XCTAssertEqual(
            produced, committed,
            "Samples/report.md is stale: run scripts/analyze-samples and copy out/samples/report.md")
    }
}
