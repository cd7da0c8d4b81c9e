import Analysis
import ContentCoding
import Estimation
import Foundation
import MessageModel
import PacketLayers
import Records
import XCTest
@testable import Reports

/// The protocol split and the HTTP/2 headers figures (docs/FIGURES.md, Protocols and HTTP/2
/// headers) over a hand-made run whose figures are counted by hand below.
///
/// Estimators `naive` then `documented`. Records (wire line/headers/body = total; header list):
///
/// | id | protocol | endpoint | wire | header_list | naive | documented |
/// | --- | --- | --- | --- | --- | --- | --- |
/// | A | h2 request, stream 1 | GET api.test /feed | 0/40/0 = 40 | 300 | 0/0/0 | 30/150/0 = 180 |
/// | B | h2 request, stream 3 | same | 0/12/0 = 12 | 300 | 0/0/0 | 30/150/0 = 180 |
/// | C | h2 response to A | same | 0/30/509 = 539 | 200 | 0/0/500 | 13/120/500 = 633 |
/// | D | h2 response to B, fields unknown | same | 0/25/0 = 25 | unknown | 0/0/0 | 13/100/0 = 113 |
/// | E | HTTP/1.1 request | same | 20/180/0 = 200 | – | 0/0/0 | 40/150/0 = 190 |
/// | F | HAR request, httpVersion "h3" | GET cdn.test /img | total 100 | – | 0/0/0 | 20/60/0 = 80 |
final class ProtocolReportTests: XCTestCase {
    static let client = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 50000)
    static let server = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80)

    static func message(
        _ kind: MessageKind, index: Int, host: String = "api.test", path: String = "/feed", version: String,
        stream: UInt32? = nil, headerList: Int? = nil
    ) -> HTTPMessage {
        var message = HTTPMessage(kind: kind, index: index)
        message.version = version
        message.complete = true
        message.pair = index
        if kind == .request {
            message.method = "GET"
            message.target = Array(path.utf8)
            message.fields = [HeaderField("Host", host)]
        } else {
            message.status = 200
            message.request = RequestSummary(index: index, method: "GET", target: Array(path.utf8), host: host)
        }
        if let stream {
            message.protocolFacts = ProtocolFacts(
                .h2, stream: UInt64(stream), frames: 1, headerListSize: headerList, startLineInHeaderBlock: true)
        }
        return message
    }

    static func record(
        _ message: HTTPMessage, wire: (Int, Int, Int), documented: (Int, Int, Int), naiveBody: Int = 0,
        har: Bool = false
    ) -> MessageRecord {
        let total = wire.0 + wire.1 + wire.2
        let size =
            har
            ? WireSize(total: total, source: .har)
            : WireSize(line: wire.0, headers: wire.1, body: wire.2, total: total, source: .capture, tls: total)
        let source: RecordSource =
            har
            ? .har(HAREntrySource(entry: 0, rule: .reportedSizes, connection: nil, time: nil, server: ""))
            : .capture(CaptureFlow(connection: 0, client: client, server: server, time: 1_700_000_000_000_000_000))
        var record = MessageRecord(
            input: har ? "browser.har" : "h2.pcap", source: source, message: message, wire: size, measured: true,
            bodyDecoded: wire.2, decoding: .identity,
            estimates: [
                .success(Estimate(line: 0, headers: 0, body: naiveBody)),
                .success(Estimate(line: documented.0, headers: documented.1, body: documented.2)),
            ])
        record.causes = [[], []]
        return record
    }

    static var records: [MessageRecord] {
        [
            record(
                message(.request, index: 0, version: "HTTP/2", stream: 1, headerList: 300), wire: (0, 40, 0),
                documented: (30, 150, 0)),
            record(
                message(.request, index: 1, version: "HTTP/2", stream: 3, headerList: 300), wire: (0, 12, 0),
                documented: (30, 150, 0)),
            record(
                message(.response, index: 0, version: "HTTP/2", stream: 1, headerList: 200), wire: (0, 30, 509),
                documented: (13, 120, 500), naiveBody: 500),
            record(
                message(.response, index: 1, version: "HTTP/2", stream: 3, headerList: nil), wire: (0, 25, 0),
                documented: (13, 100, 0)),
            record(message(.request, index: 0, version: "HTTP/1.1"), wire: (20, 180, 0), documented: (40, 150, 0)),
            record(
                message(.request, index: 0, host: "cdn.test", path: "/img", version: "h3"), wire: (0, 0, 100),
                documented: (20, 60, 0), har: true),
        ]
    }

    static var run: RunReport {
        var aggregation = Aggregation(estimatorNames: ["naive", "documented"], rankingEstimator: 1)
        for record in records { aggregation.add(record) }
        return RunReport(inputs: [], aggregation: aggregation)
    }

    func testEachRecordsProtocol() {
        XCTAssertEqual(Self.records.map(\.wireProtocol), [.h2, .h2, .h2, .h2, .http1, .h3])
    }

    func testHARVersions() {
        let cases: [(String, HTTPProtocol)] = [
            ("HTTP/1.1", .http1), ("http/1.0", .http1), ("1.1", .http1), ("HTTP/0.9", .http1),
            ("http/2.0", .h2), ("HTTP/2", .h2), ("h2", .h2), ("H2C", .h2), (" h2 ", .h2),
            ("h3", .h3), ("HTTP/3", .h3), ("h3-29", .h3),
            ("", .unknown), ("spdy/3.1", .unknown), ("HTTP/1.2", .unknown), ("h2x", .unknown),
        ]
        for (text, expected) in cases { XCTAssertEqual(HTTPProtocol(harVersion: text), expected, text) }
    }

    func testMessagesCSVHasTheProtocol() {
        let columns = MessagesCSV.columns(estimators: ["naive", "documented"])
        let at = try! XCTUnwrap(columns.firstIndex(of: "protocol"))
        XCTAssertEqual(columns[at - 1], "transport")
        XCTAssertEqual(Self.records.map { MessagesCSV.row(for: $0)[at] }, ["h2", "h2", "h2", "h2", "http1", "h3"])
        // A HAR entry naming no version: unknown, an empty cell.
        var unknown = Self.records[5]
        unknown.message.version = ""
        XCTAssertEqual(MessagesCSV.row(for: unknown)[at], "")
    }

    func testEndpointsCSVProtocolColumn() {
        let rows = EndpointsReporter.render(Self.run).split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        XCTAssertEqual(Array(rows[0].prefix(4)), ["endpoint", "direction", "protocol", "records"])
        // The /feed requests went over HTTP/1.1 (E) and HTTP/2 (A, B); its responses over HTTP/2 only.
        XCTAssertEqual(
            rows.dropFirst().map { Array($0.prefix(4)) },
            [
                ["GET api.test /feed", "request", "http1+h2", "3"], ["GET api.test /feed", "response", "h2", "2"],
                ["GET cdn.test /img", "request", "h3", "1"], ["*", "request", "http1+h2+h3", "4"],
                ["*", "response", "h2", "2"],
            ])
    }

    func testProtocolTotals() {
        let split = Self.run.protocolTotals
        XCTAssertEqual(
            split.map { "\($0.key.wireProtocol.rawValue) \($0.key.direction.rawValue)" },
            ["http1 request", "h2 request", "h2 response", "h3 request"])
        let h2Requests = split[1].figures
        // A + B: wire 40 + 12 = 52; documented 180 + 180 = 360, error +308.
        XCTAssertEqual(h2Requests.records, 2)
        XCTAssertEqual(h2Requests.wireBytes, 52)
        XCTAssertEqual(h2Requests.estimators[1].estimated, 360)
        XCTAssertEqual(h2Requests.estimators[1].error, 308)
        // C + D: wire 539 + 25 = 564; documented 633 + 113 = 746, error +182.
        XCTAssertEqual(split[2].figures.wireBytes, 564)
        XCTAssertEqual(split[2].figures.estimators[1].error, 182)
        XCTAssertEqual(split[0].figures.estimators[1].error, -10) // E: 190 - 200
    }

    func testHeaderCompressionFigures() throws {
        let totals = Dictionary(
            uniqueKeysWithValues: Self.run.headerCompressionTotals.map { ($0.direction, $0.figures) })
        let requests = try XCTUnwrap(totals[.request])
        // A and B only (E is HTTP/1.1, F a HAR): wire 40 + 12, list 300 + 300, documented 150 + 150.
        XCTAssertEqual(requests.records, 2)
        XCTAssertEqual(requests.leftOut, 0)
        XCTAssertEqual(requests.wireHeaders, 52)
        XCTAssertEqual(requests.headerList, 600)
        XCTAssertEqual(requests.estimatedHeaders, [0, 300])
        XCTAssertEqual(try XCTUnwrap(requests.estimateToWire(1)), 300.0 / 52, accuracy: 1e-12)
        XCTAssertEqual(requests.estimateToHeaderList(1), 0.5)
        XCTAssertEqual(try XCTUnwrap(requests.wireToHeaderList), 52.0 / 600, accuracy: 1e-12)
        let responses = try XCTUnwrap(totals[.response])
        // C only; D's fields are unknown.
        XCTAssertEqual(responses.records, 1)
        XCTAssertEqual(responses.leftOut, 1)
        XCTAssertEqual(responses.wireHeaders, 30)
        XCTAssertEqual(responses.headerList, 200)
        XCTAssertEqual(responses.estimatedHeaders, [0, 120])
        XCTAssertEqual(responses.estimateToWire(1), 4)
        let endpoints = Self.run.headerCompressionEndpoints()
        XCTAssertEqual(endpoints.map(\.endpoint), ["GET api.test /feed"], "the HAR's h3 endpoint has no frames")
    }

    func testMergedHalvesGiveTheWhole() {
        let records = Self.records
        var first = Aggregation(estimatorNames: ["naive", "documented"], rankingEstimator: 1)
        var second = first
        for (index, record) in records.enumerated() {
            if index % 2 == 0 { first.add(record) } else { second.add(record) }
        }
        second.merge(first)
        XCTAssertEqual(second.orderFree, Self.run.aggregation.orderFree)
    }

    func testMarkdownSections() {
        let markdown = MarkdownReport.render(Self.run)
        let lines = markdown.components(separatedBy: "\n")
        XCTAssertEqual(
            lines.filter { $0.hasPrefix("## ") },
            [
                "## Inputs", "## Totals", "## Protocols", "## What the network carried", "## Endpoints",
                "## HTTP/2 headers: the meter against HPACK",
                "## Where the error comes from", "## Data quality",
            ])
        XCTAssertTrue(lines.contains("| HTTP/2 | request | 2 | 0 | 52 | documented | 360 | +308 | +592.31% |"))
        XCTAssertTrue(lines.contains("|  |  |  |  |  | naive | 0 | -52 | -100.00% |"))
        XCTAssertTrue(lines.contains("| HTTP/3 | request | 1 | 0 | 100 | documented | 80 | -20 | -20.00% |"))
        // 300 / 52 = 5.77x, 300 / 600 = 0.50x; responses 120 / 30 = 4.00x, 120 / 200 = 0.60x.
        XCTAssertTrue(lines.contains("- Requests: the documented meter counts 300 B of headers, 5.77x the"))
        XCTAssertTrue(lines.contains("  52 B of HPACK frames on the wire and 0.50x the 600 B header list."))
        XCTAssertTrue(lines.contains("- Responses: the documented meter counts 120 B of headers, 4.00x the"))
        XCTAssertTrue(lines.contains("1 HTTP/2 record left out (unmeasured, fields unknown or not estimated)."))
        XCTAssertTrue(
            lines.contains("| 1 | `GET api.test /feed` | request | 2 | 52 | 600 | 0.09x | 300 | 5.77x | 0.50x |"))
        XCTAssertTrue(lines.contains("|  |  | response | 1 | 30 | 200 | 0.15x | 120 | 4.00x | 0.60x |"))
        XCTAssertTrue(lines.contains("|  | all | request | 2 | 52 | 600 | 0.09x | 300 | 5.77x | 0.50x |"))
        for line in lines where !line.hasPrefix("|") { XCTAssertLessThanOrEqual(line.count, 120, line) }
    }

    func testNoHTTP2SectionWithoutHTTP2() {
        XCTAssertFalse(MarkdownReport.render(ReportFixture.run).contains("HPACK"))
    }

    func testJSON() throws {
        let text = JSONReport.render(Self.run)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let protocols = try XCTUnwrap(json["protocols"] as? [String: [String: [String: Any]]])
        XCTAssertEqual(Set(protocols.keys), ["http1", "h2", "h3"])
        XCTAssertEqual(protocols["h2"]?["response"]?["wire_bytes"] as? Int, 564)
        let totals = try XCTUnwrap(json["totals"] as? [String: [String: Any]])
        XCTAssertEqual(totals["request"]?["protocols"] as? [String: Int], ["http1": 1, "h2": 2, "h3": 1])
        let headers = try XCTUnwrap(json["http2_headers"] as? [String: Any])
        let requests = try XCTUnwrap((headers["totals"] as? [String: [String: Any]])?["request"])
        XCTAssertEqual(requests["records"] as? Int, 2)
        XCTAssertEqual(requests["wire_headers"] as? Int, 52)
        XCTAssertEqual(requests["header_list"] as? Int, 600)
        XCTAssertEqual(requests["left_out"] as? Int, 0)
        XCTAssertEqual(requests["wire_to_header_list"] as? Double, 0.086667) // 52 / 600
        let documented = try XCTUnwrap((requests["estimators"] as? [String: [String: Any]])?["documented"])
        XCTAssertEqual(documented["headers"] as? Int, 300)
        XCTAssertEqual(documented["headers_to_wire"] as? Double, 5.769231) // 300 / 52
        XCTAssertEqual(documented["headers_to_header_list"] as? Double, 0.5)
        let endpoints = try XCTUnwrap(headers["endpoints"] as? [[String: Any]])
        XCTAssertEqual(endpoints.map { $0["endpoint"] as? String }, ["GET api.test /feed"])
        XCTAssertEqual(endpoints.first?["rank"] as? Int, 1)
        // The text against JSONEncoder's: JSONReportStreamingTests.testHTTP2RunMatchesJSONEncoder.
    }

    func testHTMLShowsTheSplitAndTheHeadersTable() {
        let html = HTMLReport.render(Self.run)
        XCTAssertTrue(html.contains("<section id=\"protocols\">"))
        XCTAssertTrue(html.contains("<td>HTTP/2</td><td>request</td><td class=\"n\">2</td>"))
        XCTAssertTrue(html.contains("HTTP/2 headers: the meter against HPACK"))
        XCTAssertTrue(
            html.contains(
                "<td class=\"n\">1</td><td>GET api.test /feed</td><td>request</td><td class=\"n\">2</td>"
                    + "<td class=\"n\">52</td><td class=\"n\">600</td><td class=\"n\">0.09x</td>"
                    + "<td class=\"n\">300</td><td class=\"n\">5.77x</td><td class=\"n\">0.50x</td>"))
        XCTAssertFalse(HTMLReport.render(ReportFixture.run).contains("http2-table"))
    }
}
