import Analysis
import Flows
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// The Charles samples (written by scripts/charles/make-charles-samples.py from sample captures)
/// through whole runs: their records equal the capture records they were written from (sizes,
/// bodies, both estimators), a `.chlsj` and its `.chlsx` give identical records, tunnels become
/// connection rows, broken entries are reported by index.
final class SampleCharlesTests: XCTestCase {
    typealias Row = [String: String]

    private func run(_ sample: String) throws -> (messages: [Row], connections: [Row], diagnostics: String?, broken: [Int]) {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("charles-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = AuditRun(
            inputs: [Fixtures.root.appendingPathComponent("Samples/\(sample)").path], outputDirectory: out,
            formats: ["messages", "connections"])
        let diagnostics = try XCTUnwrap(try run.run().report.inputs.first)
        XCTAssertTrue(diagnostics.readable, "\(sample): \(diagnostics.error ?? "")")
        func rows(_ file: String) throws -> [Row] {
            let table = EndpointFiguresTests.parseCSV(try Data(contentsOf: URL(fileURLWithPath: out + "/" + file)))
            return table.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(table[0], $0)) }
        }
        return (
            try rows("messages.csv"), try rows("connections.csv"), diagnostics.error,
            diagnostics.har?.brokenEntries.map(\.index) ?? []
        )
    }

    /// What a Charles record must share with the capture record it was written from.
    static let sameAsCapture = [
        "kind", "time", "client", "server", "method", "host", "path", "query", "status", "endpoint", "complete",
        "measured", "wire_line", "wire_headers", "wire_body", "wire_total", "body_decoded", "content_encoding",
        "transfer_encoding", "est_naive", "est_documented", "est_naive_line", "est_naive_headers", "est_naive_body",
        "est_documented_line", "est_documented_headers", "est_documented_body", "transport", "protocol",
    ]

    func testNginxCurlSessionEqualsTheCaptureItWasWrittenFrom() throws {
        let capture = try run("nginx-curl.pcap").messages.filter { !($0["status"] ?? "").hasPrefix("1") }
        let truth = try String(contentsOfFile: Fixtures.root.appendingPathComponent("Samples/charles-nginx-curl.truth.jsonl").path, encoding: .utf8)
            .split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let charles = try run("charles-nginx-curl.chlsj")
        XCTAssertNil(charles.diagnostics)
        XCTAssertEqual(charles.messages.count, truth.count)
        XCTAssertEqual(charles.messages.count, capture.count)
        var decodedBothWays: Set<Bool> = []
        for (row, want) in zip(charles.messages, truth) {
            let kind = want["kind"] as! String
            let index = String(want["capture_index"] as! Int)
            let client = want["client"] as! String
            let place = "charles-nginx-curl \(kind) of \(client) #\(index)"
            guard
                let source = capture.first(where: {
                    $0["kind"] == kind && $0["client"] == client && $0["index"] == index
                })
            else { return XCTFail("\(place): no capture record") }
            XCTAssertEqual(row["wire_source"], "charles", place)
            for column in Self.sameAsCapture {
                XCTAssertEqual(row[column], source[column], "\(place): \(column)")
            }
            if let decoded = want["decoded"] as? Bool, source["content_encoding"] == "gzip", source["body_decoded"] != "0" {
                decodedBothWays.insert(decoded)
            }
        }
        XCTAssertEqual(decodedBothWays, [true, false], "gzip responses are in the sample decoded both ways")
    }

    func testJSONAndXMLSessionsGiveIdenticalRecords() throws {
        for stem in ["charles-nginx-curl", "charles-mixed"] {
            let json = try run("\(stem).chlsj")
            let xml = try run("\(stem).chlsx")
            XCTAssertFalse(json.messages.isEmpty)
            XCTAssertEqual(json.messages.count, xml.messages.count, stem)
            for (a, b) in zip(json.messages, xml.messages) {
                var a = a
                var b = b
                a["source"] = nil
                b["source"] = nil
                XCTAssertEqual(a, b, stem)
            }
            XCTAssertEqual(json.broken, xml.broken, stem)
            XCTAssertEqual(json.connections.map { $0.filter { $0.key != "source" } }, xml.connections.map { $0.filter { $0.key != "source" } }, stem)
        }
    }

    func testMixedSessionTunnelsHTTP2ContradictionsAndBrokenEntries() throws {
        let lines = try String(contentsOfFile: Fixtures.root.appendingPathComponent("Samples/charles-mixed.truth.jsonl").path, encoding: .utf8)
            .split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let meta = lines[0]
        let expected = Array(lines.dropFirst())
        for sample in ["charles-mixed.chlsj", "charles-mixed.chlsx"] {
            let result = try run(sample)
            XCTAssertEqual(result.broken, meta["broken"] as? [Int], "\(sample): broken entries")
            XCTAssertEqual(result.messages.count, expected.count, sample)
            for (row, want) in zip(result.messages, expected) {
                let place = "\(sample): \(want["from"] as! String)"
                for (key, value) in want where key != "from" {
                    let text: String
                    switch value {
                    case is NSNull: text = ""
                    case let number as Int: text = String(number)
                    default: text = "\(value)"
                    }
                    if key == "pair" { XCTAssertEqual(row["pair"], text, place); continue }
                    XCTAssertEqual(row[key], text, "\(place): \(key)")
                }
                if row["wire_source"] == "unknown" { XCTAssertEqual(row["measured"], "false", place) }
                if row["wire_source"] == "charles-reconstructed" { XCTAssertTrue(row["anomalies"]!.contains("size-rebuilt:"), place) }
            }
            let tunnels = meta["tunnels"] as! [[String: Any]]
            XCTAssertEqual(result.connections.count, tunnels.count, sample)
            for (row, want) in zip(result.connections, tunnels) {
                XCTAssertEqual(row["protocol"], "tls-undecrypted", sample)
                XCTAssertEqual(row["sni"], want["server_name"] as? String, sample)
                XCTAssertEqual(row["client"], want["client"] as? String, sample)
                XCTAssertEqual(row["server"], want["server"] as? String, sample)
                XCTAssertEqual(row["tls_version"], want["tls_version"] as? String, sample)
                XCTAssertEqual(row["client_tcp_bytes"], String(want["up_tcp"] as! Int), sample)
                XCTAssertEqual(row["server_tcp_bytes"], String(want["down_tcp"] as! Int), sample)
                XCTAssertEqual(row["up_tls_control_tls"], String(want["up_handshake"] as! Int), sample)
                XCTAssertEqual(row["down_tls_control_tls"], String(want["down_handshake"] as! Int), sample)
                XCTAssertEqual(row["records"], "0", sample)
            }
        }
    }

    /// Charles's tunnels are known without their frames (their TCP payload only): rows of
    /// connections.csv, never bytes of "What the network carried", whose parts are frame bytes.
    func testTunnelsAreInNoFrameFigure() throws {
        var rows: [ConnectionRow] = []
        _ = InputAnalyzer(options: AnalysisOptions()).analyze(
            path: Fixtures.sample("charles-mixed.chlsj"), connection: { rows.append($0) }) { _ in }
        XCTAssertGreaterThan(rows.count, 0)
        XCTAssertGreaterThan(rows.map { $0.clientCost.total.tcp }.reduce(0, +), 0)
        var aggregation = Aggregation(estimators: AnalysisOptions().estimators)
        for row in rows { aggregation.add(row) }
        for side in [Direction.up, .down] {
            XCTAssertEqual(aggregation.network[side]?.connections ?? 0, 0, "\(side)")
            XCTAssertEqual(aggregation.network[side]?.frameTotal ?? 0, 0, "\(side)")
        }
    }
}
