import Analysis
import CostAccounting
import Foundation
import MeterAuditKit
import Records
import TestSupport
import XCTest

/// Every capture in Samples/ against an oracle that shares no code with meteraudit:
/// scripts/layer-totals sums tshark's frame.len, IP length and tcp.len per connection and
/// direction, and counts retransmissions in sequence space. Per connection and direction, the records' layers plus the connection's
/// overhead must give those raw totals exactly, at every layer (docs/METERING.md §2c).
final class CostLayerSampleTests: XCTestCase {
    struct OracleSide: Decodable {
        var src: String
        var dst: String
        var packets: Int
        var frame: Int
        var ip: Int
        var tcp: Int
        var empty_packets: Int
        var empty_frame: Int
        var empty_ip: Int
        var retransmitted_segments: Int
        var retransmitted_bytes: Int
        var retransmitted_control: Int
    }

    struct OracleConnection: Decodable {
        var stream: Int
        var client_to_server: OracleSide
        var server_to_client: OracleSide
    }

    struct OracleCapture: Decodable {
        var file: String
        var connections: [OracleConnection]
    }

    func testRecordsPlusOverheadAddUpToTheRawTotals() throws {
        guard executable("tshark") != nil, let python = executable("python3") else {
            throw XCTSkip("tshark or python3 not installed")
        }
        var options = AnalysisOptions()
        try options.loadKeyLogs(try Fixtures.sampleKeyLogs())
        let captures = try Fixtures.sampleInputs().filter { !$0.hasSuffix(".har") && !$0.hasSuffix(".chlsj") && !$0.hasSuffix(".chlsx") }
        XCTAssertGreaterThan(captures.count, 20)
        var checkedDirections = 0
        var recordsWithLayers = 0
        for capture in captures {
            let name = URL(fileURLWithPath: capture).lastPathComponent
            var records: [MessageRecord] = []
            var rows: [ConnectionRow] = []
            _ = InputAnalyzer(options: options).analyze(path: capture, connection: { rows.append($0) }) {
                records.append($0)
            }
            let oracle = try JSONDecoder().decode(
                OracleCapture.self,
                from: Data(try runTool(python, [Fixtures.root.path + "/scripts/layer-totals", capture]).utf8)
            ).connections
            // A tunnel's row counts its TLS layer; its packets are its outer connection's row's,
            // its records' and its own overhead's (shared out through the outer ledger).
            // TCP only: QUIC's rows are checked against tshark by QUICRunTests.
            let outerRows = rows.filter { $0.tunnelHost.isEmpty && $0.protocolKind != .h3 && $0.protocolKind != .quic }
            XCTAssertEqual(outerRows.count, oracle.count, "\(name): connections")
            for row in outerRows {
                // By the 4-tuple: the oracle's roles come from the SYN or the ports, ours from
                // who sent requests.
                let sides = oracle.flatMap { [$0.client_to_server, $0.server_to_client] }
                let ups = sides.filter { $0.src == row.client && $0.dst == row.server }
                let downs = sides.filter { $0.src == row.server && $0.dst == row.client }
                guard ups.count == 1, downs.count == 1, let up = ups.first, let down = downs.first else {
                    XCTFail("\(name): no single tshark stream for \(row.client) ↔ \(row.server)")
                    continue
                }
                for (label, cost, truth) in [("up", row.clientCost, up), ("down", row.serverCost, down)] {
                    let context = "\(name) conn \(row.connection) \(label)"
                    XCTAssertEqual(cost.total.frame, truth.frame, context)
                    XCTAssertEqual(cost.total.ip, truth.ip, context)
                    XCTAssertEqual(cost.total.tcp, truth.tcp, context)
                    XCTAssertEqual(cost.emptyPacketCount, truth.empty_packets, context)
                    XCTAssertEqual(cost[.emptyPackets].ip, truth.empty_ip, context)
                    XCTAssertEqual(cost[.emptyPackets].frame, truth.empty_frame, context)
                    XCTAssertEqual(
                        cost.retransmittedSegments, truth.retransmitted_segments + truth.retransmitted_control, context)
                    XCTAssertEqual(cost.retransmittedBytes, truth.retransmitted_bytes, context)
                    // The records this direction sent (a pushed request is the server's).
                    let sent = records.filter { record in
                        guard case let .capture(flow) = record.source, flow.connection == row.connection else {
                            return false
                        }
                        let fromClient =
                            record.message.kind == .request && !record.message.anomalies.contains(.pushed)
                        return fromClient == (label == "up")
                    }
                    var sum = cost.overhead
                    for tunnel in rows where !tunnel.tunnelHost.isEmpty && tunnel.connection == row.connection {
                        let overhead = (label == "up" ? tunnel.clientCost : tunnel.serverCost).overhead
                        sum.add(LayerBytes(tls: 0, tcp: overhead.tcp, ip: overhead.ip, frame: overhead.frame))
                    }
                    for record in sent {
                        guard let lower = record.wire.lower else {
                            XCTFail("\(context): a captured record without lower layers")
                            continue
                        }
                        recordsWithLayers += 1
                        sum.add(LayerBytes(tls: 0, tcp: lower.tcp, ip: lower.ip, frame: lower.frame))
                        XCTAssertLessThanOrEqual(lower.tcp, lower.ip, context)
                        XCTAssertLessThanOrEqual(lower.ip, lower.frame, context)
                    }
                    XCTAssertEqual(sum.tcp, truth.tcp, "\(context): Σ wire_tcp + overhead")
                    XCTAssertEqual(sum.ip, truth.ip, "\(context): Σ wire_ip + overhead")
                    XCTAssertEqual(sum.frame, truth.frame, "\(context): Σ wire_frame + overhead")
                    checkedDirections += 1
                }
            }
        }
        XCTAssertGreaterThan(checkedDirections, 60)
        XCTAssertGreaterThan(recordsWithLayers, 200)
    }

    /// Over TLS, with nothing sent twice, a message's TCP bytes are exactly its TLS bytes
    /// (`wire_tls`): the records it owns, headers and overhead included. And TLS's own layer
    /// adds up too: Σ wire_tls + the TLS overhead kinds = the direction's TLS record bytes.
    func testTLSRecordsSplitLikeWireTLS() throws {
        var options = AnalysisOptions()
        try options.loadKeyLogs(try Fixtures.sampleKeyLogs())
        var compared = 0
        for name in [
            "tls12-nginx-curl.pcap", "tls13-nginx-curl.pcap", "tls12-python.pcap", "tls13-python.pcap",
            "tls13-keyupdate.pcap", "tls12-resume.pcap", "h2-nginx-curl.pcap",
        ] {
            var records: [MessageRecord] = []
            var rows: [ConnectionRow] = []
            _ = InputAnalyzer(options: options).analyze(path: Fixtures.sample(name), connection: { rows.append($0) }) {
                records.append($0)
            }
            for record in records {
                // HTTP/2 over TLS too: a record's overhead goes with its first plaintext byte.
                XCTAssertNotNil(record.wire.tls, "\(name) \(record.message.kind) \(record.message.index)")
                guard let lower = record.wire.lower, lower.retransmitted == 0, !lower.lowerBound else { continue }
                XCTAssertEqual(lower.tcp, record.wire.tls, "\(name) \(record.message.kind) \(record.message.index)")
                compared += 1
            }
            for row in rows {
                for (cost, fromClient) in [(row.clientCost, true), (row.serverCost, false)] {
                    let owned = records.filter {
                        guard case let .capture(flow) = $0.source, flow.connection == row.connection else {
                            return false
                        }
                        let sentByClient = $0.message.kind == .request && !$0.message.anomalies.contains(.pushed)
                        return sentByClient == fromClient
                    }.reduce(0) { $0 + ($1.wire.tls ?? 0) }
                    XCTAssertEqual(owned + cost.overhead.tls, cost.total.tls, "\(name) conn \(row.connection)")
                }
            }
        }
        XCTAssertGreaterThan(compared, 20)
    }
}
