import Analysis
import Estimation
import Foundation
import MessageModel
import MeterAuditKit
import Reports
import TestSupport
import XCTest

/// HTTP/3 in the reports (docs/FIGURES.md, HTTP/3 headers): the QPACK table's figures against
/// the peers' own qlog (Tests/Fixtures/h3/NAME.truth.json) and the independent estimates
/// (NAME.estimates.jsonl, scripts/expected-h3-estimates); QUIC connections without keys by
/// server name against the same truth's datagram bytes.
final class HTTP3ReportTests: XCTestCase {
    struct Sums: Equatable {
        var records = 0, leftOut = 0, wireHeaders = 0, headerList = 0, documentedHeaders = 0
    }

    private func pcap(_ name: String) throws -> String {
        guard
            let path = [".pcap", ".pcap.gz"].map({ Fixtures.sample(name + $0) })
                .first(where: FileManager.default.fileExists(atPath:))
        else { throw XCTSkip("Samples/\(name).pcap is missing") }
        return path
    }

    private func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
    }

    /// Per direction, the truth's complete messages: their HEADERS frames' bytes, header lists
    /// and the script's documented headers; the incomplete ones are left out (unmeasured).
    private func expectedSums(_ name: String) throws -> [RecordClass: Sums] {
        let truth = try json(Fixtures.path("h3/\(name).truth.json"))
        let messages = (truth["connections"] as! [[String: Any]]).flatMap { $0["messages"] as! [[String: Any]] }
        let estimates = try String(contentsOfFile: Fixtures.path("h3/\(name).estimates.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(messages.count, estimates.count, name)
        var sums: [RecordClass: Sums] = [:]
        for (message, estimate) in zip(messages, estimates) {
            XCTAssertEqual(message["stream"] as? Int, estimate["stream"] as? Int, name)
            let direction: RecordClass =
                message["interim"] as! Bool ? .interim : message["kind"] as! String == "request" ? .request : .response
            if message["complete"] as! Bool {
                sums[direction, default: Sums()].records += 1
                sums[direction, default: Sums()].wireHeaders += message["wire_headers"] as! Int
                sums[direction, default: Sums()].headerList += message["header_list"] as! Int
                sums[direction, default: Sums()].documentedHeaders += estimate["est_documented_headers"] as! Int
            } else {
                sums[direction, default: Sums()].leftOut += 1
            }
        }
        return sums
    }

    private func run(_ name: String, keys: Bool) throws -> RunReport {
        var options = AnalysisOptions()
        if keys { try options.loadKeyLogs([Fixtures.sample(name + ".keys")]) }
        var aggregation = Aggregation(estimators: options.estimators)
        let diagnostics = InputAnalyzer(options: options).analyze(path: try pcap(name)) { aggregation.add($0) }
        var report = RunReport(inputs: [diagnostics], aggregation: aggregation)
        report.rankEndpoints()
        return report
    }

    /// The QPACK table's totals and its endpoint rows equal the truth's sums for every keyed
    /// sample (h3-mixed: requests 9 records, 277 B of HEADERS and PUSH_PROMISE frames, 2,480 B
    /// header list, 44 B documented headers; responses 8 and 1 reset one left out, 117, 1,443,
    /// 475; the interim one 34, 113, 45); the naive meter counts no headers; HTTP/2's HPACK
    /// table stays empty.
    func testQPACKFiguresEqualTheTruth() throws {
        for name in ["h3-mixed", "h3-v2", "h3-loss", "h3-download"] {
            let report = try run(name, keys: true)
            let aggregation = report.aggregation
            let documented = try XCTUnwrap(aggregation.estimatorNames.firstIndex(of: "documented"))
            let naive = try XCTUnwrap(aggregation.estimatorNames.firstIndex(of: "naive"))
            var actual: [RecordClass: Sums] = [:]
            for (direction, figures) in report.headerCompressionTotals(.qpack) {
                actual[direction] = Sums(
                    records: figures.records, leftOut: figures.leftOut, wireHeaders: figures.wireHeaders,
                    headerList: figures.headerList, documentedHeaders: figures.estimatedHeaders[documented])
                XCTAssertEqual(figures.estimatedHeaders[naive], 0, "\(name) \(direction)")
            }
            XCTAssertEqual(actual, try expectedSums(name), name)
            XCTAssertTrue(aggregation.headerCompressionTotals.isEmpty, name)
            XCTAssertTrue(report.headerCompressionEndpoints().isEmpty, name)
            // One endpoint per request target: their rows add up to the totals.
            var byEndpoint: [RecordClass: Int] = [:]
            for endpoint in report.headerCompressionEndpoints(.qpack) {
                for (direction, figures) in endpoint.directions {
                    byEndpoint[direction, default: 0] += figures.wireHeaders
                }
            }
            XCTAssertEqual(byEndpoint, actual.mapValues(\.wireHeaders), name)
        }
    }

    /// The three reports show the QPACK table: report.md's section with its totals rows,
    /// report.json's `http3_headers` with the same sums, report.html's table; `http2_headers`
    /// is empty.
    func testReportsShowTheQPACKTable() throws {
        let report = try run("h3-mixed", keys: true)
        let sums = try expectedSums("h3-mixed")
        let markdown = MarkdownReport.render(report, endpointRows: 50, explainedEndpoints: 5)
        XCTAssertTrue(markdown.contains("## HTTP/3 headers: the meter against QPACK\n"))
        XCTAssertFalse(markdown.contains("## HTTP/2 headers"))
        // The response total row: records, wire headers, header list, then their ratio.
        let response = try XCTUnwrap(sums[.response])
        XCTAssertTrue(
            markdown.contains(
                "|  | all | response | \(response.records) | \(response.wireHeaders) | 1,443 | "
                    + String(format: "%.2fx", Double(response.wireHeaders) / Double(response.headerList))),
            markdown)

        let document = try JSONSerialization.jsonObject(with: Data(JSONReport.render(report).utf8)) as! [String: Any]
        let http3 = try XCTUnwrap(document["http3_headers"] as? [String: Any])
        let totals = try XCTUnwrap(http3["totals"] as? [String: [String: Any]])
        for (direction, expected) in sums {
            let total = try XCTUnwrap(totals[direction.rawValue], "\(direction)")
            XCTAssertEqual(total["records"] as? Int, expected.records, "\(direction)")
            XCTAssertEqual(total["left_out"] as? Int, expected.leftOut, "\(direction)")
            XCTAssertEqual(total["wire_headers"] as? Int, expected.wireHeaders, "\(direction)")
            XCTAssertEqual(total["header_list"] as? Int, expected.headerList, "\(direction)")
            let estimators = try XCTUnwrap(total["estimators"] as? [String: [String: Any]])
            XCTAssertEqual(estimators["documented"]?["headers"] as? Int, expected.documentedHeaders, "\(direction)")
        }
        XCTAssertFalse((http3["endpoints"] as? [Any] ?? []).isEmpty)
        let http2 = try XCTUnwrap(document["http2_headers"] as? [String: Any])
        XCTAssertEqual((http2["endpoints"] as? [Any])?.count, 0)

        let html = HTMLReport.render(report)
        XCTAssertTrue(html.contains("<h3 id=\"http3-headers\">HTTP/3 headers: the meter against QPACK</h3>"))
        XCTAssertTrue(html.contains("<table class=\"figures\" id=\"http3-table\">"))
        XCTAssertFalse(html.contains("id=\"http2-headers\""))
        XCTAssertTrue(html.contains("<p id=\"quic\">QUIC: 1 connection, 1 decrypted.</p>"))
    }

    /// A QUIC connection without keys is listed by server name with its UDP payload, both
    /// directions: h3-nokey's peers logged 2,682 B up and 3,588 B down (datagram bytes), 6,270 B.
    func testQUICWithoutKeysIsListedByServerName() throws {
        let report = try run("h3-nokey", keys: false)
        let truth = try json(Fixtures.path("h3/h3-nokey.truth.json"))
        let directions = (truth["connections"] as! [[String: Any]])[0]["directions"] as! [String: [String: Any]]
        let payload = (directions["up"]!["datagram_bytes"] as! Int) + (directions["down"]!["datagram_bytes"] as! Int)
        XCTAssertEqual(payload, 6_270)
        let markdown = MarkdownReport.render(report, endpointRows: 50, explainedEndpoints: 5)
        XCTAssertTrue(markdown.contains("QUIC: 1 connection, 0 decrypted; not decrypted: 1 no-key."), markdown)
        XCTAssertTrue(markdown.contains("- `localhost`: 6,270 B\n"), markdown)
        let html = HTMLReport.render(report)
        XCTAssertTrue(html.contains("<p id=\"quic\">QUIC: 1 connection, 0 decrypted; not decrypted: 1 no-key.</p>"))
        XCTAssertTrue(html.contains("<li>localhost: 6,270 B</li>"))
        XCTAssertFalse(html.contains("id=\"http3-headers\""))
        XCTAssertNil(
            (try JSONSerialization.jsonObject(with: Data(JSONReport.render(report).utf8)) as! [String: Any])[
                "http3_headers"])
    }

    /// A connection found mid-way is decrypted, and the QUIC line says how it was found.
    func testMidConnectionIsSaidFoundByTrial() throws {
        let report = try run("h3-midconn", keys: true)
        let line = "QUIC: 1 connection, 1 decrypted (1 found mid-connection: handshake not captured, 1-RTT keys by trial)."
        XCTAssertTrue(MarkdownReport.render(report, endpointRows: 50, explainedEndpoints: 5).contains(line))
        XCTAssertTrue(HTMLReport.render(report).contains("<p id=\"quic\">" + line + "</p>"))
    }
}
