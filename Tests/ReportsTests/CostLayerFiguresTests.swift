import Analysis
import Estimation
import Foundation
import MessageModel
import Records
import XCTest
@testable import Reports

/// A small run with every cost layer known, counted by hand (docs/FIGURES.md, Cost layers).
///
/// Connection 0, cleartext (wire_tls = wire_total), estimators naive then documented:
///
/// | record | group | wire_total | tcp (retransmitted) | ip | frame | naive | documented |
/// | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |
/// | R1 | GET /a request | 100 | 100 | 140 (1 packet) | 154 | 0 | 90 |
/// | R2 | GET /b request | 300 | 400 (100) | 480 (2 packets) | 508 | 200 | 280 |
/// | S1 | GET /a response | 500 | 500 | 540 | 554 | 400 | none |
/// | S2 | GET /b response | 1000 | 1000 | 1040 | 1054 | 900 | 1000 |
/// | H1 | GET /a request, HAR | 110 | — | — | — | 0 | 95 |
///
/// Connection 0's overhead: up 4 empty packets (ip 160, frame 216), 1 segment of 100 B sent
/// again; down 3 empty packets (ip 120, frame 162) and 10 unclaimed bytes in one packet
/// (tcp 10, ip 50, frame 64). Connection 1 (TLS not decrypted, no record): up 2 empty packets
/// (ip 80, frame 108) and a TLS handshake (tls 200, tcp 200, ip 240, frame 254); down 1 empty
/// packet (ip 40, frame 54) and a TLS handshake (tls 1000, tcp 1000, ip 1080, frame 1108).
enum CostFixture {
    static let client = ReportFixture.client
    static let server = ReportFixture.server

    static func record(
        _ message: HTTPMessage, connection: Int = 0, wire: (Int, Int, Int), lower: LowerLayers?, naive: Int,
        documented: Int?, har: Bool = false
    ) -> MessageRecord {
        let total = wire.0 + wire.1 + wire.2
        let size =
            har
            ? WireSize(total: total, source: .harTransferSize)
            : WireSize(
                line: wire.0, headers: wire.1, body: wire.2, total: total, source: .capture, tls: total, lower: lower)
        let source: RecordSource =
            har
            ? .har(HAREntrySource(entry: 0, rule: .reportedSizes, connection: nil, time: nil, server: ""))
            : .capture(CaptureFlow(connection: connection, client: client, server: server, time: 1))
        return MessageRecord(
            input: har ? "fixture.har" : "fixture.pcap", source: source, message: message, wire: size,
            measured: true, bodyDecoded: wire.2, decoding: .identity,
            estimates: [
                .success(Estimate(line: 0, headers: 0, body: naive)),
                documented.map { .success(Estimate(line: 0, headers: 0, body: $0)) } ?? .failure(.bodyNotDecoded),
            ])
    }

    static var records: [MessageRecord] {
        let r1 = ReportFixture.request(conn: 0, index: 0, target: "/a", pair: 0, wire: (20, 80, 0))
        let r2 = ReportFixture.request(conn: 0, index: 1, target: "/b", pair: 1, wire: (20, 80, 200))
        let s1 = ReportFixture.response(conn: 0, index: 0, answering: r1, pair: 0, wire: (17, 83, 400))
        let s2 = ReportFixture.response(conn: 0, index: 1, answering: r2, pair: 1, wire: (17, 83, 900))
        return [
            record(
                r1.message, wire: r1.wire, lower: LowerLayers(tcp: 100, ip: 140, frame: 154, packets: 1), naive: 0,
                documented: 90),
            record(
                r2.message, wire: r2.wire,
                lower: LowerLayers(tcp: 400, ip: 480, frame: 508, retransmitted: 100, packets: 2), naive: 200,
                documented: 280),
            record(
                s1.message, wire: s1.wire, lower: LowerLayers(tcp: 500, ip: 540, frame: 554), naive: 400,
                documented: nil),
            record(
                s2.message, wire: s2.wire, lower: LowerLayers(tcp: 1000, ip: 1040, frame: 1054), naive: 900,
                documented: 1000),
            record(r1.message, wire: (20, 90, 0), lower: nil, naive: 0, documented: 95, har: true),
        ]
    }

    static var rows: [ConnectionRow] {
        var first = ConnectionRow(
            input: "fixture.pcap", connection: 0, client: client.description, server: server.description,
            protocolKind: .http1)
        first.clientCost.emptyPackets = LayerBytes(ip: 160, frame: 216)
        first.clientCost.emptyPacketCount = 4
        first.clientCost.retransmittedSegments = 1
        first.clientCost.retransmittedBytes = 100
        first.serverCost.emptyPackets = LayerBytes(ip: 120, frame: 162)
        first.serverCost.emptyPacketCount = 3
        first.serverCost.unclaimed = LayerBytes(tcp: 10, ip: 50, frame: 64)
        var second = ConnectionRow(
            input: "fixture.pcap", connection: 1, client: client.description, server: server.description,
            protocolKind: .tlsUndecrypted)
        second.clientCost.emptyPackets = LayerBytes(ip: 80, frame: 108)
        second.clientCost.tlsControl = LayerBytes(tls: 200, tcp: 200, ip: 240, frame: 254)
        second.serverCost.emptyPackets = LayerBytes(ip: 40, frame: 54)
        second.serverCost.tlsControl = LayerBytes(tls: 1000, tcp: 1000, ip: 1080, frame: 1108)
        return [first, second]
    }

    /// Records and rows through the aggregation as AuditRun feeds them, `rowsFirst` or after.
    static func aggregation(rowsFirst: Bool = false) -> Aggregation {
        var aggregation = Aggregation(estimatorNames: ["naive", "documented"], rankingEstimator: 1)
        var sharing = OverheadSharing()
        if rowsFirst {
            for row in rows {
                aggregation.add(row)
                sharing.add(row)
            }
        }
        for record in records {
            aggregation.add(record)
            sharing.add(record)
        }
        if !rowsFirst {
            for row in rows {
                aggregation.add(row)
                sharing.add(row)
            }
        }
        aggregation.add(sharing.finish())
        return aggregation
    }

    static func run(rankBy: RankLayer = .http) -> RunReport {
        RunReport(inputs: [], aggregation: aggregation(), rankBy: rankBy)
    }
}

final class CostLayerFiguresTests: XCTestCase {
    private func group(
        _ endpoint: String, _ direction: RecordClass, in aggregation: Aggregation = CostFixture.aggregation()
    )
        -> GroupFigures
    {
        aggregation.groups[GroupKey(endpoint: endpoint, direction: direction)]!
    }

    func testLayerSumsAndTheRecordsTheyCover() {
        let a = group("GET api.test /a", .request)
        // R1 and the HAR record: 100 + 110 B of HTTP; only R1 has the layers under it.
        XCTAssertEqual(a.wireBytes, 210)
        XCTAssertEqual(a.layers.tlsRecords, 1)
        XCTAssertEqual(a.layers.tls, 100)
        XCTAssertEqual(a.layers.lowerRecords, 1)
        XCTAssertEqual([a.layers.tcp, a.layers.ip, a.layers.frame], [100, 140, 154])
        XCTAssertEqual(a.layers.lowerBoundRecords, 0)
        let b = group("GET api.test /b", .request)
        XCTAssertEqual(
            [b.layers.tls, b.layers.tcp, b.layers.ip, b.layers.frame, b.layers.retransmitted],
            [300, 400, 480, 508, 100])
    }

    func testLowerBoundRecordsAreCountedAndFlagged() {
        var aggregation = Aggregation(estimatorNames: ["naive"], rankingEstimator: 0)
        let request = ReportFixture.request(conn: 0, index: 0, target: "/a", pair: nil, wire: (20, 80, 0))
        var record = CostFixture.record(
            request.message, wire: request.wire,
            lower: LowerLayers(tcp: 60, ip: 100, frame: 114, lowerBound: true), naive: 0, documented: nil)
        record.estimates = [.success(Estimate(line: 0, headers: 0, body: 0))]
        aggregation.add(record)
        let figures = aggregation.groups.values.first!
        XCTAssertEqual(figures.layers.lowerRecords, 1)
        XCTAssertEqual(figures.layers.lowerBoundRecords, 1)
        XCTAssertEqual(figures.layers.ip, 100)
        // The network figures take the HTTP bytes only as far as the payload carried them:
        // 60 of the 100 (the rest was never captured), TCP/IP headers 40, link 14.
        let up = aggregation.network[.up]!
        XCTAssertEqual(up.lowerBoundRecords, 1)
        XCTAssertEqual([up.http, up.tlsOverhead, up.headers, up.link], [60, 0, 40, 14])
    }

    func testShareOfEachConnectionsOverhead() {
        // Up, connection 0: 160 B over R1 (ip 140) and R2 (ip 480) of 620: 160·140/620 = 36 r 80,
        // 160·480/620 = 123 r 540; the byte left goes to the larger remainder: 36 and 124.
        XCTAssertEqual(group("GET api.test /a", .request).layers.ipShare, 140 + 36)
        XCTAssertEqual(group("GET api.test /b", .request).layers.ipShare, 480 + 124)
        // Down: 120 + 50 = 170 B over S1 (540) and S2 (1040) of 1580: 58 r 160 and 111 r 1420: 58 and 112.
        XCTAssertEqual(group("GET api.test /a", .response).layers.ipShare, 540 + 58)
        XCTAssertEqual(group("GET api.test /b", .response).layers.ipShare, 1040 + 112)
        // The totals hold every record's IP bytes plus all of connection 0's overhead, exactly.
        let aggregation = CostFixture.aggregation()
        XCTAssertEqual(aggregation.totals[.request]!.layers.ipShare, 140 + 480 + 160)
        XCTAssertEqual(aggregation.totals[.response]!.layers.ipShare, 540 + 1040 + 170)
        // Connection 1 has no record: its 80 + 240 up and 40 + 1080 down stay unshared.
        XCTAssertEqual(aggregation.network[.up]!.unsharedIP, 320)
        XCTAssertEqual(aggregation.network[.down]!.unsharedIP, 1120)
    }

    func testSharesDoNotDependOnWhetherTheRowComesFirst() {
        XCTAssertEqual(CostFixture.aggregation(rowsFirst: true), CostFixture.aggregation(rowsFirst: false))
    }

    func testLargestRemainderSumsExactlyAndBreaksTiesInKeyOrder() {
        func key(_ endpoint: String) -> ShareKey {
            ShareKey(group: GroupKey(endpoint: endpoint, direction: .request), estimators: 1)
        }
        // 10 over three equal weights: 3 each, the byte left to the first key.
        let even = OverheadSharing.largestRemainder(10, weights: [key("b"): 5, key("a"): 5, key("c"): 5])!
        XCTAssertEqual(even, [key("a"): 4, key("b"): 3, key("c"): 3])
        // 7 over 1:2:4: exactly 1, 2, 4.
        XCTAssertEqual(
            OverheadSharing.largestRemainder(7, weights: [key("a"): 1, key("b"): 2, key("c"): 4]),
            [key("a"): 1, key("b"): 2, key("c"): 4])
        // 100 over 1:1:1 → 33.33 each: 34, 33, 33.
        let thirds = OverheadSharing.largestRemainder(100, weights: [key("a"): 1, key("b"): 1, key("c"): 1])!
        XCTAssertEqual(thirds.values.reduce(0, +), 100)
        XCTAssertEqual(thirds[key("a")], 34)
        // Weights near Int.max do not overflow: 3 × (Int.max / 2) is past Int.max; 2 r 1 and 0 r (total − 1).
        let large = OverheadSharing.largestRemainder(3, weights: [key("a"): Int.max / 2, key("b"): Int.max / 4])!
        XCTAssertEqual(large, [key("a"): 2, key("b"): 1])
        XCTAssertNil(OverheadSharing.largestRemainder(5, weights: [key("a"): 0]))
    }

    func testASideWithoutRecordsGivesItsOverheadToTheOtherSide() {
        // A request never answered: the server's ACKs (40 B) go to the request.
        let request = ReportFixture.request(conn: 7, index: 0, target: "/a", pair: nil, wire: (20, 80, 0))
        let record = CostFixture.record(
            request.message, connection: 7, wire: request.wire, lower: LowerLayers(tcp: 100, ip: 140, frame: 154),
            naive: 0, documented: 90)
        var row = ConnectionRow(input: "x", connection: 7, client: "", server: "", protocolKind: .http1)
        row.serverCost.emptyPackets = LayerBytes(ip: 40, frame: 54)
        var sharing = OverheadSharing()
        sharing.add(record)
        sharing.add(row)
        let shares = sharing.finish()
        XCTAssertEqual(shares.shares.values.reduce(0, +), 40)
        XCTAssertEqual(shares.unshared, [:])
    }

    func testEachEstimatorsErrorAgainstEachLayer() throws {
        let aggregation = CostFixture.aggregation()
        let a = group("GET api.test /a", .request, in: aggregation).estimators[1].layers
        // documented on R1 (90) against tls 100, tcp 100, ip 140, frame 154, ip_share 176.
        XCTAssertEqual(a.tlsCount, 1)
        XCTAssertEqual(a.lowerCount, 1)
        XCTAssertEqual(CostLayer.allCases.map { a.error($0) }, [-10, -10, -50, -64, -86])
        XCTAssertEqual(FixedDecimal.format(try XCTUnwrap(a.errorPercent(.ip)), decimals: 2), "-35.71") // 50 / 140
        XCTAssertEqual(FixedDecimal.format(try XCTUnwrap(a.errorPercent(.ipShare)), decimals: 2), "-48.86") // 86 / 176
        // The response to /a has no documented estimate: nothing counted, and its share of
        // overhead is not the documented estimator's.
        let s1 = group("GET api.test /a", .response, in: aggregation)
        XCTAssertEqual(s1.estimators[1].layers.lowerCount, 0)
        XCTAssertNil(s1.estimators[1].layers.error(.ipShare))
        XCTAssertEqual(s1.estimators[0].layers.error(.ipShare), 400 - 598)
        // GET /b request, documented 280 against ip_share 604: -324 (-53.64%).
        let b = group("GET api.test /b", .request, in: aggregation).estimators[1].layers
        XCTAssertEqual(b.error(.ipShare), -324)
        XCTAssertEqual(FixedDecimal.format(try XCTUnwrap(b.errorPercent(.ipShare)), decimals: 2), "-53.64")
        XCTAssertEqual(b.error(.frame), 280 - 508)
    }

    func testEndpointsCSVCarriesTheLayers() {
        let rows = EndpointsCSV.render(CostFixture.aggregation()).components(separatedBy: "\r\n").map {
            $0.components(separatedBy: ",")
        }
        let header = rows[0]
        func cell(_ endpoint: String, _ direction: String, _ column: String) -> String {
            let row = rows.first { $0.count > 1 && $0[0] == endpoint && $0[1] == direction }!
            return row[header.firstIndex(of: column)!]
        }
        XCTAssertEqual(header.count, 8 + 2 * 13 + 8 + 2 * 12) // the counts with `protocol`
        XCTAssertEqual(cell("GET api.test /a", "request", "tls_bytes"), "100")
        XCTAssertEqual(cell("GET api.test /a", "request", "tls_records"), "1")
        XCTAssertEqual(cell("GET api.test /a", "request", "ip_share"), "176")
        XCTAssertEqual(cell("GET api.test /a", "request", "documented_ip_share_error"), "-86")
        XCTAssertEqual(cell("GET api.test /a", "request", "documented_frame_error_pct"), "-41.56") // 64 / 154
        XCTAssertEqual(cell("GET api.test /a", "response", "documented_lower_count"), "0")
        XCTAssertEqual(cell("GET api.test /a", "response", "documented_ip_share_error"), "")
        XCTAssertEqual(cell("*", "request", "ip_share"), "780")
        XCTAssertEqual(cell("*", "response", "ip_share"), "1750")
        XCTAssertEqual(cell("*", "request", "lower_records"), "2")
    }

    func testRankByIPBytes() {
        // HTTP: /a |−10 − 15| = 25 against /b |−20| = 20 (no documented estimate for S1).
        XCTAssertEqual(CostFixture.run().endpointRanking().map(\.endpoint), ["GET api.test /a", "GET api.test /b"])
        XCTAssertEqual(CostFixture.run().endpointRanking().map(\.absoluteError), [25, 20])
        // IP: /a |−86| = 86 against /b |−324| + |1000 − 1152| = 476.
        let byIP = CostFixture.run(rankBy: .ip).endpointRanking()
        XCTAssertEqual(byIP.map(\.endpoint), ["GET api.test /b", "GET api.test /a"])
        XCTAssertEqual(byIP.map(\.absoluteError), [476, 86])
        let markdown = MarkdownReport.render(CostFixture.run(rankBy: .ip))
        XCTAssertTrue(
            markdown.contains(
                "| 1 | `GET api.test /b` | request | 1 | 300 | 280 | -20 | -6.67% | 6.67% | 6.67% | 604 | -324 | -53.64% |"
            ), markdown)
        XCTAssertFalse(MarkdownReport.render(CostFixture.run()).contains("ip_share B"))
    }

    func testWhatTheNetworkCarried() {
        let markdown = MarkdownReport.render(CostFixture.run())
        let lines = markdown.components(separatedBy: "\n")
        let start = lines.firstIndex(of: "## What the network carried")!
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") }!
        // Up: HTTP 100 + 300; TLS: connection 1's handshake 200; sent again 100; TCP/IP headers
        // 40 + 80 + (240 - 200); handshakes and ACKs 160 + 80; link 14 + 28 + 56 + 28 + 14.
        // Total 1,240 = the frames: 154 + 508 + 216 + 108 + 254.
        // Down: HTTP 500 + 1000; TLS 1,000; headers 40 + 40 + 40 + 80; ACKs 120 + 40; other 10;
        // link 14 + 14 + 42 + 14 + 14 + 28. Total 2,996 = 554 + 1054 + 162 + 64 + 54 + 1108.
        XCTAssertEqual(
            Array(lines[start..<end]),
            [
                "## What the network carried", "",
                "Every frame of the captured connections, by what it carried: the HTTP messages' bytes,",
                "then what TLS, TCP/IP and the link added, retransmitted message bytes, and the packets",
                "and records no message owns. Shares are of the direction's frame bytes.", "",
                "| part | up B | up % | down B | down % |",
                "| --- | ---: | ---: | ---: | ---: |",
                "| HTTP bytes | 400 | 32.26% | 1,500 | 50.07% |",
                "| TLS overhead | 200 | 16.13% | 1,000 | 33.38% |",
                "| retransmissions | 100 | 8.06% | 0 | 0.00% |",
                "| TCP/IP headers | 160 | 12.90% | 200 | 6.68% |",
                "| handshakes and ACKs | 240 | 19.35% | 160 | 5.34% |",
                "| other connection overhead | 0 | 0.00% | 10 | 0.33% |",
                "| link-layer headers | 140 | 11.29% | 126 | 4.21% |",
                "| frame bytes (all) | 1,240 | 100.00% | 2,996 | 100.00% |",
                "",
                "- Up: 2 records with their layers on 2 connections.",
                "  Sent again: 100 B of TCP payload in 1 segment, 100 B of it message bytes; the rest is in the connection overhead.",
                "  320 B of IP overhead is in no endpoint's ip_share: its connections have no measured record.",
                "- Down: 2 records with their layers on 2 connections.",
                "  1,120 B of IP overhead is in no endpoint's ip_share: its connections have no measured record.",
                "- 1 record HTTP only (HAR), in no figure here.",
                "",
            ])
    }

    func testReportJSONCarriesTheLayers() throws {
        let json = JSONReport.render(CostFixture.run(rankBy: .ip))
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        XCTAssertEqual(object["rank_by"] as? String, "ip")
        let network = object["network"] as! [String: [String: Any]]
        XCTAssertEqual(network["up"]?["frame_total"] as? Int, 1240)
        XCTAssertEqual(network["down"]?["unshared_ip"] as? Int, 1120)
        let endpoints = object["endpoints"] as! [[String: Any]]
        XCTAssertEqual(endpoints.first?["endpoint"] as? String, "GET api.test /b")
        let request = (endpoints.first?["directions"] as! [String: [String: Any]])["request"]!
        let layers = request["layers"] as! [String: Any]
        XCTAssertEqual((layers["ip_share"] as! [String: Any])["bytes"] as? Int, 604)
        XCTAssertEqual((layers["tcp"] as! [String: Any])["records"] as? Int, 1)
        XCTAssertEqual(layers["retransmitted"] as? Int, 100)
        let documented = (request["estimators"] as! [String: [String: Any]])["documented"]!
        let ipShare = (documented["layer_errors"] as! [String: [String: Any]])["ip_share"]!
        XCTAssertEqual(ipShare["error"] as? Int, -324)
        XCTAssertEqual(ipShare["layer"] as? Int, 604)
        // Keys in byte order and layout as JSONEncoder writes them (the test oracle knows the new keys).
        XCTAssertEqual(json, JSONReportOracle.render(CostFixture.run(rankBy: .ip)))
    }

    func testHTMLDrawsTheLayersPerDirection() {
        let page = HTMLReport.render(CostFixture.run())
        XCTAssertFalse(page.contains("class=\"placeholder\""))
        XCTAssertTrue(page.contains("Bytes per layer, stacked per direction"))
        XCTAssertTrue(page.contains("<title>up, HTTP bytes: 400 B (32.26%)</title>"))
        XCTAssertTrue(page.contains("<title>down, TLS overhead: 1,000 B (33.38%)</title>"))
        XCTAssertTrue(page.contains("bytes on the wire (frame bytes, link layer included)"))
        XCTAssertTrue(page.contains("<td class=\"n\">2,996</td>"))
    }
}
