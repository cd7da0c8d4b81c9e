import Analysis
import CostAccounting
import Flows
import Foundation
import MeterAuditKit
import Records
import TestSupport
import XCTest

/// QUIC's cost layers through the whole run (docs/METERING.md §2d), per UDP sample with a QUIC
/// connection, against tshark (which shares no code with meteraudit): per direction, Σ
/// udp.length, Σ IP bytes (ip.len, or ipv6.plen + 40) and Σ frame.len. The records' layers plus
/// the connection's overhead must give those totals exactly, at the QUIC (UDP payload), UDP, IP
/// and frame layers; and the STREAM bytes sent again equal the sender's own count (the qlog
/// truth's `retransmitted_stream_bytes`, Tests/Fixtures/h3/NAME.truth.json). h3-midconn, found
/// mid-way by trial of its key log's 1-RTT secrets, is held to the same sums (its truth counts
/// what was sent after the cut: the capture's own packets).
final class QUICCostLayerSampleTests: XCTestCase {
    struct Totals: Equatable {
        var datagrams = 0, udp = 0, ip = 0, frame = 0
    }

    /// tshark's totals per direction of the datagrams to (`up`) and from (`down`) `serverPort`.
    private func oracle(_ path: String, serverPort: Int) throws -> (up: Totals, down: Totals) {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark not installed") }
        let out = try runTool(
            tshark,
            ["-r", path, "-Y", "udp", "-T", "fields", "-E", "separator=,", "-e", "udp.dstport", "-e", "udp.length",
             "-e", "ip.len", "-e", "ipv6.plen", "-e", "frame.len"])
        var up = Totals()
        var down = Totals()
        for line in out.split(separator: "\n") {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard cells.count == 5, let port = cells[0], let udp = cells[1], let frame = cells[4] else { continue }
            let ip = cells[2] ?? (cells[3].map { $0 + 40 } ?? 0)
            let add = { (totals: inout Totals) in
                totals.datagrams += 1
                totals.udp += udp
                totals.ip += ip
                totals.frame += frame
            }
            if port == serverPort { add(&up) } else { add(&down) }
        }
        return (up, down)
    }

    private func truthRetransmitted(_ name: String) throws -> (up: Int, down: Int) {
        let url = URL(fileURLWithPath: Fixtures.path("h3/\(name).truth.json"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var up = 0
        var down = 0
        for connection in json["connections"] as! [[String: Any]] {
            let directions = connection["directions"] as! [String: [String: Any]]
            up += directions["up"]!["retransmitted_stream_bytes"] as! Int
            down += directions["down"]!["retransmitted_stream_bytes"] as! Int
        }
        return (up, down)
    }

    func testRecordsPlusOverheadAddUpToTheDatagrams() throws {
        var checkedDirections = 0
        var recordsWithLayers = 0
        var retransmittedChecked = 0
        for name in ["h3-mixed", "h3-v2", "h3-loss", "h3-download", "h3-nokey", "h3-midconn"] {
            guard let pcap = [".pcap", ".pcap.gz"].map({ Fixtures.sample(name + $0) })
                .first(where: FileManager.default.fileExists(atPath:))
            else { throw XCTSkip("Samples/\(name).pcap is missing") }
            var options = AnalysisOptions()
            let keys = Fixtures.sample(name + ".keys")
            if FileManager.default.fileExists(atPath: keys) { try options.loadKeyLogs([keys]) }
            var records: [MessageRecord] = []
            var rows: [ConnectionRow] = []
            _ = InputAnalyzer(options: options).analyze(path: pcap, connection: { rows.append($0) }) {
                records.append($0)
            }
            let quicRows = rows.filter { $0.protocolKind == .h3 || $0.protocolKind == .quic }
            XCTAssertEqual(quicRows.count, 1, name)
            guard let row = quicRows.first, let port = Int(row.server.split(separator: ":").last ?? "") else { continue }
            let truth = try oracle(pcap, serverPort: port)
            let retransmitted = try truthRetransmitted(name)
            for (label, cost, oracle, resent) in [
                ("up", row.clientCost, truth.up, retransmitted.up), ("down", row.serverCost, truth.down, retransmitted.down),
            ] {
                let context = "\(name) \(label)"
                XCTAssertGreaterThan(oracle.datagrams, 0, context)
                XCTAssertEqual(cost.total.tcp, oracle.udp - 8 * oracle.datagrams, "\(context): UDP payload")
                XCTAssertEqual(cost.udp, oracle.udp, "\(context): UDP")
                XCTAssertEqual(cost.total.ip, oracle.ip, "\(context): IP")
                XCTAssertEqual(cost.total.frame, oracle.frame, "\(context): frame")
                let sent = records.filter { record in
                    guard case let .capture(flow) = record.source, flow.connection == row.connection else { return false }
                    let fromClient = record.message.kind == .request && !record.message.anomalies.contains(.pushed)
                    return fromClient == (label == "up")
                }
                var quic = cost.overhead.tcp
                var udp = cost.overheadUDP
                var ip = cost.overhead.ip
                var frame = cost.overhead.frame
                var recordsResent = 0
                for record in sent {
                    guard let lower = record.wire.lower, let recordUDP = lower.udp else {
                        XCTFail("\(context): a QUIC record without QUIC layers")
                        continue
                    }
                    recordsWithLayers += 1
                    quic += lower.tcp
                    udp += recordUDP
                    ip += lower.ip
                    frame += lower.frame
                    recordsResent += lower.retransmitted
                    XCTAssertLessThanOrEqual(lower.tcp, recordUDP, context)
                    XCTAssertLessThanOrEqual(recordUDP, lower.ip, context)
                    XCTAssertLessThanOrEqual(lower.ip, lower.frame, context)
                    // A message's QUIC bytes hold at least its HTTP/3 frames (all captured, once each).
                    if !lower.lowerBound, let total = record.wire.total {
                        XCTAssertGreaterThanOrEqual(lower.tcp, total, "\(context) stream \(record.message.protocolFacts.stream ?? 0)")
                    }
                }
                XCTAssertEqual(quic, oracle.udp - 8 * oracle.datagrams, "\(context): Σ wire_quic + overhead")
                XCTAssertEqual(udp, oracle.udp, "\(context): Σ wire_udp + overhead")
                XCTAssertEqual(ip, oracle.ip, "\(context): Σ wire_ip + overhead")
                XCTAssertEqual(frame, oracle.frame, "\(context): Σ wire_frame + overhead")
                XCTAssertEqual(cost.retransmittedBytes, resent, "\(context): STREAM bytes sent again")
                XCTAssertLessThanOrEqual(recordsResent, cost.retransmittedBytes, context)
                if resent > 0 { retransmittedChecked += 1 }
                checkedDirections += 1
            }
        }
        XCTAssertEqual(checkedDirections, 12)
        XCTAssertGreaterThan(recordsWithLayers, 46)
        XCTAssertGreaterThanOrEqual(retransmittedChecked, 3)
    }

    /// report.md's "What the network carried" over a QUIC-only capture: no byte is called TCP or
    /// TLS; the parts add up to tshark's frame bytes, the link layer is tshark's frame bytes less
    /// its IP bytes, and the HTTP bytes are the records' own.
    func testNetworkPartsCallQUICBytesQUIC() throws {
        for name in ["h3-mixed", "h3-loss"] {
            guard let pcap = [".pcap", ".pcap.gz"].map({ Fixtures.sample(name + $0) })
                .first(where: FileManager.default.fileExists(atPath:))
            else { throw XCTSkip("Samples/\(name).pcap is missing") }
            var options = AnalysisOptions()
            try options.loadKeyLogs([Fixtures.sample(name + ".keys")])
            var aggregation = Aggregation(estimators: options.estimators)
            var rows: [ConnectionRow] = []
            var http: [Direction: Int] = [:]
            _ = InputAnalyzer(options: options).analyze(path: pcap, connection: { rows.append($0) }) { record in
                aggregation.add(record)
                if record.wire.lower != nil { http[Direction.of(record), default: 0] += record.wire.total ?? 0 }
            }
            for row in rows { aggregation.add(row) }
            guard let row = rows.first(where: { $0.protocolKind == .h3 }),
                let port = Int(row.server.split(separator: ":").last ?? "")
            else { return XCTFail("\(name): no h3 row") }
            let truth = try oracle(pcap, serverPort: port)
            for (side, oracle) in [(Direction.up, truth.up), (.down, truth.down)] {
                let parts = Dictionary(uniqueKeysWithValues: (aggregation.network[side]?.parts ?? []).map { ($0.name, $0.bytes) })
                let context = "\(name) \(side)"
                XCTAssertEqual(parts["TLS overhead"], 0, context)
                XCTAssertEqual(parts["TCP/IP headers"], 0, context)
                XCTAssertGreaterThan(parts["QUIC overhead"] ?? 0, 0, context)
                XCTAssertGreaterThan(parts["UDP/IP headers"] ?? 0, 0, context)
                XCTAssertLessThanOrEqual(parts["UDP/IP headers"] ?? 0, 28 * oracle.datagrams, "\(context): at most 28 B a datagram")
                XCTAssertEqual(parts["HTTP bytes"], http[side] ?? 0, context)
                XCTAssertEqual(parts["link-layer headers"], oracle.frame - oracle.ip, context)
                XCTAssertEqual(parts.values.reduce(0, +), oracle.frame, "\(context): the parts add up to the frames")
            }
        }
    }
}
