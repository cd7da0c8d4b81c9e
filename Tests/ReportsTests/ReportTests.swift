import Analysis
import Foundation
import TestSupport
import XCTest
@testable import Reports

/// report.md, report.json and the terminal summary of ReportFixture, whose figures are
/// counted by hand in the comments.
final class MarkdownReportTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    private let markdown = MarkdownReport.render(ReportFixture.run)

    private func section(_ title: String) -> [String] {
        let lines = markdown.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: "## " + title) else { return [] }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        return Array(lines[start..<end])
    }

    func testSectionsInOrder() {
        let headings = markdown.components(separatedBy: "\n").filter { $0.hasPrefix("#") && !$0.hasPrefix("###") }
        XCTAssertEqual(
            headings,
            [
                "# MeterAudit report", "## Inputs", "## Totals", "## What costs the user", "## Protocols",
                "## What the network carried",
                "## Endpoints",
                "## Where the error comes from", "## Data quality",
            ])
        XCTAssertTrue(markdown.hasSuffix("\n"))
        XCTAssertFalse(markdown.contains("<"), "no HTML")
    }

    func testProseLinesStayShort() {
        for line in markdown.components(separatedBy: "\n") where !line.hasPrefix("|") {
            XCTAssertLessThanOrEqual(line.count, 120, line)
        }
    }

    func testSummary() {
        // Requests: 200 + 200 + 5000 + 200 = 5,600 B; responses (measured) 1000 + 500 + 100 + 100 = 1,700 B.
        XCTAssertTrue(
            markdown.contains(
                "MeterAudit read 2 inputs (5 TCP connections) and found 10 HTTP messages:\n"
                    + "4 requests with 5,600 B, 5 responses with 1,700 B and 1 interim response with 27 B on the wire.\n"
            ))
        // documented requests: 5,340 − 5,600 = −260 (−4.64%); responses 1,694 − 1,600 = +94 (+5.875%).
        XCTAssertTrue(
            markdown.contains(
                "The documented estimator is off by -260 B (-4.64%) on the requests\n"
                    + "and +94 B (+5.88%) on the responses (1 response not estimated).\n"))
        // naive: 4,800 − 5,600 = −800 (−14.29%); 1,120 − 1,700 = −580 (−34.12%).
        XCTAssertTrue(
            markdown.contains(
                "The naive estimator is off by -800 B (-14.29%) on the requests\n"
                    + "and -580 B (-34.12%) on the responses.\n"))
        // /users/{id}: |−200| + |+96| = 296.
        XCTAssertTrue(
            markdown.contains(
                "The largest documented error is on `GET api.test /users/{id}`: 296 B summed over its directions.\n"))
        XCTAssertTrue(markdown.contains("Settings: profile `urlsession`, gzip level `6`.\n"))
    }

    func testInputsTable() {
        let lines = section("Inputs")
        XCTAssertTrue(
            lines.contains("| fixture.pcap | pcap | 1,234 | 5 (4/1/0) | 4 | 5 | 1 | 1 | 1 | 2 (1,448 B) | 0 |"))
        XCTAssertTrue(lines.contains("| broken_file.pcap | n/a | 0 | 0 (0/0/0) | 0 | 0 | 0 | 0 | 0 | 0 | unreadable |"))
        XCTAssertTrue(lines.contains("| all |  | 1,234 | 5 (4/1/0) | 4 | 5 | 1 | 1 | 1 | 2 (1,448 B) | 1 |"))
        XCTAssertTrue(lines.contains("- broken_file.pcap: not a capture file"))
    }

    func testTotalsTable() {
        let lines = section("Totals")
        // documented requests: |rel| = 0.5, 0.5, 0.01, 0.05 → sorted 0.01 0.05 0.5 0.5: median (rank 2) 0.05, p95 (rank 4) 0.5.
        XCTAssertTrue(
            lines.contains(
                "| up (requests) | documented | 4 | 5,600 | 5,340 | -260 | -4.64% | 5.00% | 50.00% | 50.00% |"))
        XCTAssertTrue(lines.contains("|  | naive | 4 | 5,600 | 4,800 | -800 | -14.29% | 100.00% | 100.00% | 100.00% |"))
        // documented responses: S1 98/1000, S2 2/500, S3 2/100 → 0.004 0.02 0.098; U1 not estimated, M1 unmeasured.
        XCTAssertTrue(
            lines.contains(
                "| down (responses) | documented | 3 | 1,600 | 1,694 | +94 | +5.88% | 2.00% | 9.80% | 9.80% |"))
        // naive responses: 200/1000, 200/500, 100/100, 80/100 → 0.2 0.4 0.8 1: median (rank 2) 0.4.
        XCTAssertTrue(lines.contains("|  | naive | 4 | 1,700 | 1,120 | -580 | -34.12% | 40.00% | 100.00% | 100.00% |"))
        XCTAssertTrue(
            lines.contains("| interim (1xx) | documented | 1 | 27 | 25 | -2 | -7.41% | 7.41% | 7.41% | 7.41% |"))
        XCTAssertTrue(lines.contains("- documented: 1 response with no estimate (100 B on the wire), left out."))
        XCTAssertTrue(lines.contains("- 1 response unmeasured (no known wire size), left out."))
    }

    func testEndpointsRankedByAbsoluteDocumentedError() {
        let lines = section("Endpoints")
        // Σ|documented error|: /users/{id} 200 + 96 = 296; /upload 50 + 2 + 2 = 54; the long path 10; ? 0.
        let firstRows = lines.filter {
            $0.hasPrefix("| ") && !$0.hasPrefix("|  |") && !$0.hasPrefix("| #") && !$0.hasPrefix("| ---")
        }
        XCTAssertEqual(
            firstRows.map { $0.components(separatedBy: " | ")[1] },
            [
                "`GET api.test /users/{id}`", "`POST api.test /upload`",
                "`GET api.test /v1/organizations/acme/projects/…/settings`", "`? 10.0.0.2:80 ?`",
            ])
        XCTAssertTrue(
            lines.contains(
                "| 1 | `GET api.test /users/{id}` | request | 2 | 400 | 200 | -200 | -50.00% | 50.00% | 50.00% |"))
        // S1 98/1000 and S2 2/500: median (rank 1) 0.004, p95 (rank 2) 0.098; 1,596 − 1,500 = +96 (+6.40%).
        XCTAssertTrue(lines.contains("|  |  | response | 2 | 1,500 | 1,596 | +96 | +6.40% | 0.40% | 9.80% |"))
        XCTAssertTrue(lines.contains("|  |  | interim | 1 | 27 | 25 | -2 | -7.41% | 7.41% | 7.41% |"))
        XCTAssertTrue(lines.contains("|  |  | response | 1 † | 0 | n/a | n/a | n/a | n/a | n/a |"))
        XCTAssertTrue(lines.contains("| 4 | `? 10.0.0.2:80 ?` | response | 1 † | 100 | n/a | n/a | n/a | n/a | n/a |"))
    }

    func testEndpointRowsAreLimited() {
        let text = MarkdownReport.render(ReportFixture.run, endpointRows: 2, explainedEndpoints: 1)
        XCTAssertTrue(text.contains("The first 2 are shown; endpoints.csv and report.json hold them all."))
        XCTAssertTrue(text.contains("| 2 | `POST api.test /upload` |"))
        let endpoints = try! XCTUnwrap(text.components(separatedBy: "## Endpoints").last)
        XCTAssertFalse(endpoints.contains("| 3 | `"))
        XCTAssertTrue(text.contains("### 1. `GET api.test /users/{id}`"))
        XCTAssertFalse(text.contains("### 2."))
    }

    func testCauses() {
        let lines = section("Where the error comes from")
        // All requests, documented: stack-added −120 −120 −70 −20 = −330 over 4 (−82.5 each); line +10 × 4;
        // formatting +10 × 3. Components: line +40, headers 2×(60−170) + (100−160) + (100−120) = −300.
        XCTAssertTrue(lines.contains("- documented: -260 B (-4.64%): line +40 B, headers -300 B, body 0 B"))
        XCTAssertTrue(
            lines.contains("  - stack-added request fields: -82.50 B per request (4 requests), -330 B in all"))
        XCTAssertTrue(
            lines.contains(
                "  - request line written as \"host method path HTTP/1.1 query\\n\": +10 B per request (4 requests), +40 B in all"
            ))
        XCTAssertTrue(
            lines.contains(
                "  - header formatting (merged fields, spacing, line ends): +10 B per request (3 requests), +30 B in all"
            ))
        XCTAssertTrue(
            lines.contains(
                "- documented: +94 B (+5.88%): line -6 B, headers 0 B, body +100 B; 1 response not estimated"))
        XCTAssertTrue(lines.contains("  - status-line CRLF: -2 B per response (3 responses), -6 B in all"))
        XCTAssertTrue(
            lines.contains("  - status-line CRLF: -2 B per interim response (1 interim response), -2 B in all"))
        // Causes of equal size: by name.
        let users = lines.drop { $0 != "### 1. `GET api.test /users/{id}`" }
        let formatting = users.firstIndex { $0.hasPrefix("  - header formatting") }!
        let requestLine = users.firstIndex { $0.hasPrefix("  - request line written") }!
        XCTAssertLessThan(formatting, requestLine)
        // The third endpoint's response is unmeasured.
        XCTAssertTrue(lines.contains("- nothing to compare: no wire size is known."))
        XCTAssertTrue(lines.contains("### 3. `GET api.test \(ReportFixture.longPath)`"))
        XCTAssertFalse(lines.contains { $0.hasPrefix("### 4.") }, "an endpoint without error is not explained")
    }

    func testDataQuality() {
        let lines = section("Data quality")
        XCTAssertTrue(
            lines.contains("- Unpaired: 0 requests without a response, 1 response without a request (fixture.pcap 1)."))
        XCTAssertTrue(lines.contains("  Interim responses are never paired and not counted here."))
        XCTAssertTrue(
            lines.contains("- Incomplete (the message's end is not in the capture): 1 response (fixture.pcap 1)."))
        XCTAssertTrue(lines.contains("- Unmeasured (no known wire size, left out of every byte figure): 1 response."))
        XCTAssertTrue(lines.contains("- Gaps in the captured streams: 2 gaps, 1,448 B missing (fixture.pcap 2)."))
        XCTAssertTrue(
            lines.contains("- Bodies whose content coding failed to decode (damaged or cut): 1 (fixture.pcap 1)."))
        XCTAssertTrue(lines.contains("- No documented estimate (body-not-decoded): 1 record (fixture.pcap 1)."))
        XCTAssertTrue(
            lines.contains(
                "- TLS connections (encrypted, not measured): 1, 5,120 B not decrypted (fixture.pcap 1); server names `secure.test`."
            )
        )
        XCTAssertTrue(lines.contains("- Packets not decoded: not-tcp 34."))
    }

    func testInputsTellTheTLSConnectionsNotDecrypted() {
        let lines = section("Inputs")
        // ReportFixture: one TLS connection, no key, 5,120 B of TCP payload to secure.test.
        XCTAssertTrue(lines.contains("TLS: 1 connection, 0 decrypted; not decrypted: 1 no-key."), "\(lines)")
        XCTAssertTrue(lines.contains("- `secure.test`: 5,120 B"), "\(lines)")
    }

    func testEmptyRun() {
        let run = RunReport(
            inputs: [],
            aggregation: Aggregation(
                estimatorNames: ReportFixture.estimators, rankingEstimator: ReportFixture.rankingEstimator))
        let text = MarkdownReport.render(run)
        XCTAssertTrue(text.contains("MeterAudit read 0 inputs (0 TCP connections) and found no HTTP message."))
        XCTAssertTrue(text.contains("No endpoints."))
        XCTAssertTrue(text.contains("- Gaps in the captured streams: none."))
        XCTAssertEqual(TerminalSummary.render(run), "No HTTP messages found.\n")
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(JSONReport.render(run).utf8)))
    }
}

final class JSONReportTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    private func document() throws -> [String: Any] {
        let text = JSONReport.render(ReportFixture.run)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func testTopLevel() throws {
        let json = try document()
        XCTAssertEqual(json["schema"] as? String, "meteraudit-report")
        XCTAssertEqual(json["schema_version"] as? Int, 1)
        XCTAssertEqual(json["estimators"] as? [String], ["naive", "documented"])
        XCTAssertEqual(json["ranking_estimator"] as? String, "documented")
        let settings = try XCTUnwrap(json["settings"] as? [[String: String]])
        XCTAssertEqual(settings, [["name": "profile", "value": "urlsession"], ["name": "gzip level", "value": "6"]])
    }

    func testTotals() throws {
        let totals = try XCTUnwrap(try document()["totals"] as? [String: [String: Any]])
        XCTAssertEqual(Set(totals.keys), ["request", "response", "interim"])
        let response = try XCTUnwrap(totals["response"])
        XCTAssertEqual(response["records"] as? Int, 5)
        XCTAssertEqual(response["unpaired"] as? Int, 1)
        XCTAssertEqual(response["incomplete"] as? Int, 1)
        XCTAssertEqual(response["unmeasured"] as? Int, 1)
        XCTAssertEqual(response["wire_bytes"] as? Int, 1700)
        let documented = try XCTUnwrap((response["estimators"] as? [String: [String: Any]])?["documented"])
        XCTAssertEqual(documented["count"] as? Int, 3)
        XCTAssertEqual(documented["unestimated"] as? Int, 1)
        XCTAssertEqual(documented["wire"] as? Int, 1600)
        XCTAssertEqual(documented["estimated"] as? Int, 1694)
        XCTAssertEqual(documented["error"] as? Int, 94)
        XCTAssertEqual(documented["error_pct"] as? Double, 5.875)
        // (0.098 + 0.004 + 0.02) / 3 = 0.040667 (6 decimals).
        XCTAssertEqual(documented["mean_abs_rel"] as? Double, 0.040667)
        XCTAssertEqual(documented["median_abs_rel"] as? Double, 0.02)
        XCTAssertEqual(documented["p95_abs_rel"] as? Double, 0.098)
        XCTAssertEqual(documented["max_abs_rel"] as? Double, 0.098)
        XCTAssertEqual(documented["line_error"] as? Int, -6)
        XCTAssertEqual(documented["headers_error"] as? Int, 0)
        XCTAssertEqual(documented["body_error"] as? Int, 100)
        let causes = try XCTUnwrap(documented["causes"] as? [[String: Any]])
        XCTAssertEqual(
            causes.map { $0["name"] as? String }, ["decoded body counted instead of the coded one", "status-line CRLF"])
        XCTAssertEqual(causes.map { $0["bytes"] as? Int }, [100, -6])
        XCTAssertEqual(causes.map { $0["records"] as? Int }, [1, 3])
        XCTAssertEqual(causes.map { $0["bytes_per_record"] as? Double }, [100, -2])
    }

    func testEndpointsInRankOrderWithNullsWhereUndefined() throws {
        let endpoints = try XCTUnwrap(try document()["endpoints"] as? [[String: Any]])
        XCTAssertEqual(
            endpoints.map { $0["endpoint"] as? String },
            [
                "GET api.test /users/{id}", "POST api.test /upload", "GET api.test " + ReportFixture.longPath,
                "? 10.0.0.2:80 ?",
            ])
        XCTAssertEqual(endpoints.map { $0["rank"] as? Int }, [1, 2, 3, 4])
        XCTAssertEqual(endpoints.map { $0["rank_abs_error"] as? Int }, [296, 54, 10, 0])
        let upload = try XCTUnwrap(endpoints[1]["directions"] as? [String: [String: Any]])
        XCTAssertEqual(Set(upload.keys), ["request", "response", "interim"])
        let unpaired = try XCTUnwrap(endpoints[3]["directions"] as? [String: [String: Any]])
        let documented = try XCTUnwrap((unpaired["response"]?["estimators"] as? [String: [String: Any]])?["documented"])
        XCTAssertEqual(documented["count"] as? Int, 0)
        XCTAssertEqual(documented["unestimated"] as? Int, 1)
        XCTAssertEqual((documented["causes"] as? [[String: Any]])?.count, 0)
        for key in [
            "wire", "estimated", "error", "error_pct", "mean_abs_rel", "median_abs_rel", "p95_abs_rel", "max_abs_rel",
            "line_error",
            "headers_error", "body_error",
        ] {
            XCTAssertTrue(documented[key] is NSNull, key)
        }
        let naive = try XCTUnwrap((unpaired["response"]?["estimators"] as? [String: [String: Any]])?["naive"])
        XCTAssertEqual(naive["error_pct"] as? Double, -80)
    }

    func testInputs() throws {
        let inputs = try XCTUnwrap(try document()["inputs"] as? [[String: Any]])
        XCTAssertEqual(inputs.count, 2)
        XCTAssertEqual(inputs[0]["source"] as? String, "fixture.pcap")
        XCTAssertEqual((inputs[0]["gaps"] as? [String: Int])?["bytes"], 1448)
        XCTAssertEqual((inputs[0]["connections"] as? [String: Int])?["skipped_bytes"], 4000)
        XCTAssertEqual((inputs[0]["tls"] as? [String: Any])?["server_names"] as? [String], ["secure.test"])
        XCTAssertEqual((inputs[0]["unestimated"] as? [String: [String: Int]])?["documented"]?["body-not-decoded"], 1)
        XCTAssertTrue(inputs[0]["error"] is NSNull)
        XCTAssertEqual(inputs[1]["readable"] as? Bool, false)
        XCTAssertEqual(inputs[1]["error"] as? String, "broken_file.pcap: not a capture file")
    }

    func testSlashesAreNotEscaped() {
        XCTAssertTrue(JSONReport.render(ReportFixture.run).contains("\"endpoint\" : \"GET api.test /users/{id}\""))
    }
}

final class TerminalSummaryTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    func testLines() {
        let lines = Reporters.terminalSummary(ReportFixture.run).split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        XCTAssertEqual(
            lines,
            [
                "Wire bytes against the estimates (error = estimate - wire):",
                "up (4 requests): wire 5,600 B, documented 5,340 B (-4.64%), naive 4,800 B (-14.29%)",
                "down (5 responses): wire 1,700 B, documented 1,694 B (+5.88% of 1,600 B estimable), naive 1,120 B (-34.12%)",
                "interim (1 response): wire 27 B, documented 25 B (-7.41%), naive 0 B (-100.00%)",
                "Largest documented errors:",
                "1. GET api.test /users/{id}: request -200 B (-50.00%), response +96 B (+6.40%)",
                "2. POST api.test /upload: request -50 B (-1.00%), response -2 B (-2.00%), interim -2 B (-7.41%)",
                "3. GET api.test /v1/organizations/acme/projects/…/settings: request -10 B (-5.00%)",
                "Findings: no endpoint is polling, runaway or bursting.",
            ])
    }

    func testTopLimitsTheEndpoints() {
        let text = Reporters.terminalSummary(ReportFixture.run, top: 1)
        XCTAssertTrue(text.contains("1. GET api.test /users/{id}"))
        XCTAssertFalse(text.contains("2. POST"))
        XCTAssertFalse(Reporters.terminalSummary(ReportFixture.run, top: 0).contains("Largest"))
    }

    func testColumnsAlign() {
        let lines = Reporters.terminalSummary(ReportFixture.run).split(separator: "\n")
        let wireColumns = lines.filter { $0.contains(" wire ") }.map {
            $0.range(of: " wire ")!.lowerBound.utf16Offset(in: $0)
        }
        XCTAssertEqual(Set(wireColumns).count, 1)
    }
}

final class DeterminismTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    /// endpoints.csv of the fixture against `scripts/endpoint-figures` (Python, exact
    /// fractions, docs/FIGURES.md read literally), run on the fixture's own messages.csv:
    /// Tests/Fixtures/reports/fixture.messages.csv → fixture.endpoints.csv. Regenerate the pair
    /// when the fixture changes: write the first file from this test's failure output, then
    /// `scripts/endpoint-figures Tests/Fixtures/reports/fixture.messages.csv --out Tests/Fixtures/reports/fixture.endpoints.csv`.
    func testEndpointsCSVMatchesTheIndependentFigures() throws {
        let messages = CSVWriter.text(
            [MessagesCSV.columns(estimators: ReportFixture.estimators)]
                + ReportFixture.records.map(MessagesCSV.row(for:)))
        let committedMessages = try String(
            contentsOfFile: Fixtures.path("reports/fixture.messages.csv"), encoding: .utf8)
        if messages != committedMessages {
            let written = NSTemporaryDirectory() + "fixture.messages.csv"
            try? messages.write(toFile: written, atomically: true, encoding: .utf8)
            XCTFail("the fixture's messages.csv changed (now in \(written)); regenerate Tests/Fixtures/reports/")
        }
        let oracle = try String(contentsOfFile: Fixtures.path("reports/fixture.endpoints.csv"), encoding: .utf8)
        XCTAssertEqual(EndpointsReporter.render(ReportFixture.run), oracle)
    }

    func testRecordOrderDoesNotMatter() {
        let records = ReportFixture.records
        let forward = ReportFixture.run
        var reversed = forward
        reversed.aggregation = ReportFixture.aggregation(records.reversed())
        // Built in two halves, then merged the other way round.
        var merged = ReportFixture.aggregation(Array(records[5...]))
        merged.merge(ReportFixture.aggregation(Array(records[..<5])))
        var halves = forward
        halves.aggregation = merged
        for reporter in [MarkdownReport.self, JSONReport.self] as [any RunReporter.Type] {
            XCTAssertEqual(reporter.render(forward), reporter.render(reversed), reporter.name)
            XCTAssertEqual(reporter.render(forward), reporter.render(halves), reporter.name)
        }
        XCTAssertEqual(Reporters.terminalSummary(forward), Reporters.terminalSummary(reversed))
    }

    func testManyRecordsInShuffledOrders() {
        // Means of many fractions summed in different orders: the rounded text must not move.
        var generator = SystemRandomNumberGenerator()
        let base = ReportFixture.records
        var records: [MessageRecord] = []
        for copy in 0..<300 {
            for var record in base {
                record.wire.body! += copy % 7
                record.wire.total! += copy % 7
                records.append(record)
            }
        }
        var run = ReportFixture.run
        run.aggregation = ReportFixture.aggregation(records)
        let expected = JSONReport.render(run) + MarkdownReport.render(run)
        for _ in 0..<3 {
            run.aggregation = ReportFixture.aggregation(records.shuffled(using: &generator))
            XCTAssertEqual(JSONReport.render(run) + MarkdownReport.render(run), expected)
        }
    }
}

final class RegistryTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    func testNames() {
        XCTAssertEqual(Reporters.names, ["endpoints", "markdown", "json", "html"])
        XCTAssertEqual(Reporters.all.map { $0.fileName }, ["endpoints.csv", "report.md", "report.json", "report.html"])
        XCTAssertTrue(Reporters.named("html") == HTMLReport.self)
        XCTAssertTrue(Reporters.named("markdown") == MarkdownReport.self)
        XCTAssertTrue(Reporters.named("json") == JSONReport.self)
        XCTAssertTrue(Reporters.named("endpoints") == EndpointsReporter.self)
        XCTAssertNil(Reporters.named("messages"))
        XCTAssertNil(Reporters.named("Markdown"))
    }

    func testWritesFiles() throws {
        let directory = NSTemporaryDirectory() + "reports-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = ReportFixture.run
        let written = try Reporters.write(run, names: ["json", "markdown"], directory: directory)
        XCTAssertEqual(written, [directory + "/report.md", directory + "/report.json"])
        XCTAssertEqual(
            try String(contentsOfFile: directory + "/report.md", encoding: .utf8), MarkdownReport.render(run))
        XCTAssertEqual(try String(contentsOfFile: directory + "/report.json", encoding: .utf8), JSONReport.render(run))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/endpoints.csv"))

        XCTAssertEqual(try Reporters.write(run, directory: directory).count, 4)
        // endpoints.csv comes from EndpointsCSV; render gives the same bytes.
        let csv = try Data(contentsOf: URL(fileURLWithPath: directory + "/endpoints.csv"))
        XCTAssertEqual(String(decoding: csv, as: UTF8.self), EndpointsReporter.render(run))
    }

    func testUnwritablePath() {
        XCTAssertThrowsError(try JSONReport.write(ReportFixture.run, to: "/nonexistent-dir/report.json")) { error in
            XCTAssertTrue(String(describing: error).hasPrefix("/nonexistent-dir/report.json: cannot write"))
        }
    }
}
