import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// Every `Samples/*.har` through a whole run, row by row against what `scripts/har-expected`
/// (Python, written from docs/HAR.md and docs/METERING.md §3-§4, not from this code) expects in
/// Tests/Fixtures/har-expected/: record counts per kind, broken entries, wire_source, every
/// wire size, body_decoded, notes, and both estimators' components or their absence.
final class SampleHARTests: XCTestCase {
    static func sampleHARs() throws -> [String] {
        let samples = Fixtures.root.appendingPathComponent("Samples").path
        return try FileManager.default.contentsOfDirectory(atPath: samples).filter { $0.hasSuffix(".har") }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    func testEverySampleHARMatchesTheIndependentExpectations() throws {
        let hars = try Self.sampleHARs()
        XCTAssertGreaterThanOrEqual(hars.count, 10, "Samples/ should hold the real mitmproxy HAR and one per exporter")
        for har in hars {
            try checkSample(har)
        }
    }

    /// The HAR notes a record may carry; the rest of the anomalies column is the message's own.
    static let noteNames = ["from-cache", "websocket-messages:", "body-from-params", "body-unknown"]

    /// One line of an expectations file: a record, or a broken entry's index.
    struct Expected: Decodable {
        var kind: String?
        var index: Int?
        var pair: Int?
        var conn, time, server, method, host, path, query: String?
        var status: Int?
        var measured, complete: Bool?
        var wire_source: String?
        var wire_line, wire_headers, wire_body, wire_total, body_decoded: Int?
        var notes: [String]?
        var est_naive_line, est_naive_headers, est_naive_body: Int?
        var est_documented_line, est_documented_headers, est_documented_body: Int?
        var est_naive_unavailable, est_documented_unavailable: String?
        var broken_entry: Int?

        /// The columns as messages.csv writes them (nil: empty).
        var columns: [String: String] {
            let numbers: [String: Int?] = [
                "index": index, "pair": pair, "status": status, "wire_line": wire_line, "wire_headers": wire_headers,
                "wire_body": wire_body, "wire_total": wire_total, "body_decoded": body_decoded,
                "est_naive_line": est_naive_line, "est_naive_headers": est_naive_headers,
                "est_naive_body": est_naive_body,
                "est_documented_line": est_documented_line, "est_documented_headers": est_documented_headers,
                "est_documented_body": est_documented_body,
            ]
            var columns = numbers.mapValues { $0.map(String.init) ?? "" }
            let texts: [String: String?] = [
                "kind": kind, "conn": conn, "time": time, "server": server, "method": method, "host": host,
                "path": path, "query": query, "wire_source": wire_source,
                "measured": measured.map(String.init), "complete": complete.map(String.init),
            ]
            columns.merge(texts.mapValues { $0 ?? "" }) { $1 }
            return columns
        }
    }

    private func checkSample(_ name: String) throws {
        let stem = String(name.dropLast(".har".count))
        let lines = try String(contentsOfFile: Fixtures.path("har-expected/\(stem).expected.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try JSONDecoder().decode(Expected.self, from: Data($0.utf8)) }
        let expected = lines.filter { $0.kind != nil }

        let out = FileManager.default.temporaryDirectory.appendingPathComponent("har-sample-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = AuditRun(
            inputs: [Fixtures.root.appendingPathComponent("Samples/\(name)").path], outputDirectory: out,
            formats: ["messages"])
        let diagnostics = try XCTUnwrap(try run.run().report.inputs.first)
        XCTAssertTrue(diagnostics.readable, "\(name): \(diagnostics.error ?? "")")
        XCTAssertNil(diagnostics.error, name)
        XCTAssertEqual(
            diagnostics.har?.brokenEntries.map(\.index), lines.compactMap(\.broken_entry), "\(name): broken entries")

        let table = EndpointFiguresTests.parseCSV(try Data(contentsOf: URL(fileURLWithPath: out + "/messages.csv")))
        let rows = table.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(table[0], $0)) }
        for kind in ["request", "response"] {
            XCTAssertEqual(
                rows.filter { $0["kind"] == kind }.count, expected.filter { $0.kind == kind }.count,
                "\(name): \(kind) records")
        }
        for (row, want) in zip(rows, expected) {
            let place = "\(name) \(want.kind!) \(want.index!)"
            for (column, value) in want.columns.sorted(by: { $0.key < $1.key }) {
                XCTAssertEqual(row[column], value, "\(place): \(column)")
            }
            XCTAssertEqual(row["est_naive"]?.isEmpty, want.est_naive_unavailable != nil, "\(place): est_naive given")
            XCTAssertEqual(
                row["est_documented"]?.isEmpty, want.est_documented_unavailable != nil, "\(place): est_documented given"
            )
            let notes = (row["anomalies"] ?? "").split(separator: " ").map(String.init)
                .filter { note in Self.noteNames.contains { note.hasPrefix($0) } }
            XCTAssertEqual(notes.sorted(), (want.notes ?? []).sorted(), "\(place): notes")
        }
    }
}
