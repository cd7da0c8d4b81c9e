import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// `meteraudit merge` (docs/SCALE.md): the samples analyzed in parts, the parts merged by the
/// built executable, and every file compared byte for byte with one `analyze` over all of them.
final class MergeTests: XCTestCase {
    /// Every file a merge must write as one analyze would.
    static let outputs = [
        "messages.csv", "connections.csv", "endpoints.csv", "report.md", "report.json", "report.html",
        "diagnostics.json",
    ]
    /// And the part files, so that a merged folder merges again like an analyzed one.
    static let partFiles = ["part.json", "part.figures", "part.points"]

    private var scratch = ""

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "meteraudit-merge-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func analyze(_ inputs: [String], _ name: String, options: AnalysisOptions? = nil) throws -> String {
        let out = scratch + "/" + name
        let result = try AuditRun(inputs: inputs, outputDirectory: out, options: options ?? .withSampleKeys()).run()
        XCTAssertEqual(result.outputErrors, [])
        return out
    }

    private func merge(_ parts: [String], _ name: String) throws -> (status: Int32, out: String, stderr: String) {
        let out = scratch + "/" + name
        let result = try BuiltExecutable.run(try BuiltExecutable.meteraudit(), ["merge"] + parts + ["--out", out, "--quiet"])
        return (result.status, out, result.stderr)
    }

    private func assertSameFiles(_ merged: String, _ whole: String, _ label: String, line: UInt = #line) throws {
        for name in Self.outputs + Self.partFiles {
            let mergedBytes = FileManager.default.contents(atPath: merged + "/" + name)
            let wholeBytes = FileManager.default.contents(atPath: whole + "/" + name)
            XCTAssertNotNil(wholeBytes, "\(label): analyze wrote \(name)", line: line)
            XCTAssertTrue(mergedBytes == wholeBytes, "\(label): \(name) differs from one analyze's", line: line)
        }
    }

    func testThreeUnevenPartsAndMergesOfMergesEqualOneAnalyze() throws {
        let inputs = try Fixtures.sampleInputs()
        XCTAssertGreaterThan(inputs.count, 30)
        let whole = try analyze(inputs, "whole")
        let p1 = try analyze(Array(inputs[..<3]), "p1")
        let p2 = try analyze(Array(inputs[3..<30]), "p2")
        let p3 = try analyze(Array(inputs[30...]), "p3")
        let flat = try merge([p1, p2, p3], "flat")
        XCTAssertEqual(flat.status, 0, flat.stderr)
        try assertSameFiles(flat.out, whole, "three parts")
        // Associative: either grouping of merges gives the same folder.
        let left = try merge([p1, p2], "m12")
        let right = try merge([p2, p3], "m23")
        XCTAssertEqual(left.status, 0, left.stderr)
        XCTAssertEqual(right.status, 0, right.stderr)
        let leftFirst = try merge([left.out, p3], "m12-3")
        let rightFirst = try merge([p1, right.out], "m1-23")
        try assertSameFiles(leftFirst.out, whole, "(p1 p2) p3")
        try assertSameFiles(rightFirst.out, whole, "p1 (p2 p3)")
    }

    func testEachInputAloneMergesToOneAnalyze() throws {
        let inputs = try Fixtures.sampleInputs()
        let whole = try analyze(inputs, "whole")
        let parts = try inputs.enumerated().map { try analyze([$0.element], "alone-\($0.offset)") }
        let merged = try merge(parts, "merged")
        XCTAssertEqual(merged.status, 0, merged.stderr)
        try assertSameFiles(merged.out, whole, "each input alone")
    }

    /// More measured records than report.html's scatter keeps (1,500): which ones it keeps
    /// depends on the records before them, across parts; the merge replays the draws.
    func testScatterSampleOverManyCopiesEqualsOneAnalyze() throws {
        let captures = try Fixtures.sampleInputs()
        var inputs: [String] = []
        for copy in 0..<3 {
            for (index, capture) in captures.enumerated() {
                // Renamed copies: one analyze sees 3 × the samples as distinct inputs.
                let name = String(format: "%d-%03d-", copy, index) + (capture as NSString).lastPathComponent
                let path = scratch + "/in-" + name
                try FileManager.default.copyItem(atPath: capture, toPath: path)
                inputs.append(path)
            }
        }
        let whole = try analyze(inputs, "whole")
        let html = try String(contentsOfFile: whole + "/report.html", encoding: .utf8)
        XCTAssertTrue(html.contains("sample: 1,500 of "), "more records than the scatter keeps")
        let p1 = try analyze(Array(inputs[..<70]), "p1")
        let p2 = try analyze(Array(inputs[70...]), "p2")
        let merged = try merge([p1, p2], "merged")
        XCTAssertEqual(merged.status, 0, merged.stderr)
        try assertSameFiles(merged.out, whole, "copies in two parts")
    }

    // MARK: refusals: the part named, exit 3, nothing written

    private func assertRefused(
        _ parts: [String], naming part: String, saying reason: String, line: UInt = #line
    ) throws {
        let result = try merge(parts, "refused")
        XCTAssertEqual(result.status, 3, result.stderr, line: line)
        XCTAssertTrue(result.stderr.contains("\(part): refused: "), result.stderr, line: line)
        XCTAssertTrue(result.stderr.contains(reason), result.stderr, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: result.out), "nothing written", line: line)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.hasPrefix(".") }
        XCTAssertEqual(leftovers, [], "no staging folder left", line: line)
    }

    private func twoParts(_ tag: String = "") throws -> (String, String) {
        let inputs = try Fixtures.sampleInputs()
        return (try analyze(Array(inputs[..<4]), "a" + tag), try analyze(Array(inputs[4..<8]), "b" + tag))
    }

    func testAPartOfAnotherVersionIsRefused() throws {
        let (a, b) = try twoParts()
        let manifest = b + "/part.json"
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        XCTAssertTrue(text.contains("\"tool_version\" : \"\(ToolVersion.current)\""), text)
        try text.replacingOccurrences(of: "\"tool_version\" : \"\(ToolVersion.current)\"", with: "\"tool_version\" : \"0.0.1\"")
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        try assertRefused([a, b], naming: b, saying: "made by meteraudit 0.0.1, this is \(ToolVersion.current)")
    }

    func testAPartWithOtherOptionsIsRefused() throws {
        let inputs = try Fixtures.sampleInputs()
        let a = try analyze(Array(inputs[..<4]), "a")
        var options = try AnalysisOptions.withSampleKeys()
        options.gzipLevel = 9
        let b = try analyze(Array(inputs[4..<8]), "b", options: options)
        try assertRefused([a, b], naming: b, saying: "made with gzip level: 9, the first part with gzip level: 6")
    }

    func testAPartMadeWithMeterLogsIsRefused() throws {
        let inputs = try Fixtures.sampleInputs()
        let a = try analyze(Array(inputs[..<4]), "a")
        let b = try analyze(Array(inputs[4..<8]), "b", options: .withSampleKeysAndMeters())
        XCTAssertFalse(FileManager.default.fileExists(atPath: b + "/part.figures"))
        try assertRefused([a, b], naming: b, saying: "made with --meter-log")
    }

    func testAPartMissingAFileIsRefused() throws {
        let (a, b) = try twoParts()
        try FileManager.default.removeItem(atPath: a + "/report.md")
        try assertRefused([a, b], naming: a, saying: "report.md is missing")
        try FileManager.default.removeItem(atPath: b + "/part.json")
        try assertRefused([b], naming: b, saying: "part.json is missing")
    }

    func testAPartWithATruncatedFileIsRefused() throws {
        for name in ["messages.csv", "part.figures"] {
            let (a, b) = try twoParts(name)
            let path = b + "/" + name
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            XCTAssertEqual(truncate(path, off_t(size - 10)), 0)
            try assertRefused([a, b], naming: b, saying: "\(name) is truncated: \(size - 10) of its \(size) bytes")
            // Cut short, with the manifest made to agree: the figures' own end mark refuses it.
            if name == "part.figures" {
                let manifest = b + "/part.json"
                let text = try String(contentsOfFile: manifest, encoding: .utf8)
                try text.replacingOccurrences(of: "\"part.figures\" : \(size)", with: "\"part.figures\" : \(size - 10)")
                    .write(toFile: manifest, atomically: true, encoding: .utf8)
                try assertRefused([a, b], naming: b, saying: "part.figures ")
            }
        }
    }
}
