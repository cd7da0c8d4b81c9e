import Foundation
import TestSupport
import XCTest

/// The cost layers of docs/METERING.md §2c against the raw packets: for every sample capture,
/// per connection and direction, the records' layers plus the connection's overhead add up
/// to the connection's totals, and those equal what `scripts/layer-totals` (tshark alone, no
/// code shared with MeterAudit) sums over the packets: original frame lengths, IP lengths,
/// TCP payload lengths with every retransmitted copy. On the loss sample, the retransmitted
/// bytes and segments equal what each sender's kernel counted (`ss -E`, Samples/
/// python-loss.loss.json, written by scripts/make-loss-sample).
final class LayerTotalsTests: XCTestCase {
    /// connections.csv columns, per direction: `up` is client to server (the `client` column).
    static func total(_ direction: String, _ layer: String) -> String { "\(direction)_\(layer)" }
    static func overhead(_ direction: String, _ layer: String) -> String { "\(direction)_\(layer)_overhead" }
    static func retransmittedSegments(_ direction: String) -> String { "\(direction)_retransmitted_segments" }
    static func retransmittedBytes(_ direction: String) -> String { "\(direction)_retransmitted_bytes" }
    /// messages.csv columns.
    static func messageLayer(_ layer: String) -> String { "wire_\(layer)" }
    static let messageRetransmitted = "retransmitted"
    static let layers = ["tcp", "ip", "frame"]

    /// What scripts/layer-totals prints for one direction (src sent it to dst).
    struct OracleDirection: Decodable {
        var src: String
        var dst: String
        var packets: Int
        var frame: Int
        var ip: Int
        var tcp: Int
        var retransmitted_segments: Int
        var retransmitted_bytes: Int
        var retransmitted_control: Int

        func layer(_ name: String) -> Int {
            switch name {
            case "tcp": tcp
            case "ip": ip
            default: frame
            }
        }
    }

    struct OracleConnection: Decodable {
        var stream: Int
        var client_to_server: OracleDirection
        var server_to_client: OracleDirection
    }

    struct OracleCapture: Decodable {
        var file: String
        var connections: [OracleConnection]
    }

    /// Samples/python-loss.loss.json: what each sending socket's kernel counted.
    struct LossTruth: Decodable {
        struct Socket: Decodable {
            var src: String
            var dst: String
            var bytes_retrans: Int
            var retrans: Int
        }
        var namespace: [String: Int]
        var sockets: [Socket]
        var tcpdump: [String: Int]
    }

    /// One table read from a CSV file, by column name.
    struct Table {
        var header: [String]
        var rows: [[String]]

        init(path: String) throws {
            let parsed = EndpointFiguresTests.parseCSV(try Data(contentsOf: URL(fileURLWithPath: path)))
            header = parsed.first ?? []
            rows = Array(parsed.dropFirst()).filter { $0 != [""] }
        }

        func column(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
            guard let index = header.firstIndex(of: name) else {
                XCTFail("no column \(name) in \(header)", file: file, line: line)
                throw CocoaError(.fileReadCorruptFile)
            }
            return index
        }
    }

    static var samplesDirectory: String { Fixtures.root.appendingPathComponent("Samples").path }

    /// Every capture in Samples/ (with or without a truth file: the TLS sample without keys and
    /// the HTTP/2 ones too).
    static func sampleCaptures() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: samplesDirectory).sorted()
            .filter { name in SampleTruthTests.captureExtensions.contains { name.hasSuffix($0) } }
            .map { samplesDirectory + "/" + $0 }
    }

    /// scripts/layer-totals over `captures`, by file name.
    static func oracle(_ captures: [String]) throws -> [String: OracleCapture] {
        let script = Fixtures.root.appendingPathComponent("scripts/layer-totals")
        let (status, stdout, stderr) = try BuiltExecutable.run(script, captures)
        guard status == 0 else {
            XCTFail("scripts/layer-totals failed (it needs python3 and tshark: scripts/setup): \(stderr)")
            throw CocoaError(.executableLoad)
        }
        var result: [String: OracleCapture] = [:]
        for line in stdout.split(separator: "\n") {
            let capture = try JSONDecoder().decode(OracleCapture.self, from: Data(line.utf8))
            result[(capture.file as NSString).lastPathComponent] = capture
        }
        XCTAssertEqual(result.count, captures.count, "layer-totals: one document per capture")
        return result
    }

    /// The built meteraudit over `captures` with every key log of Samples/: (messages.csv,
    /// connections.csv).
    static func analyze(_ captures: [String]) throws -> (messages: Table, connections: Table) {
        let out = NSTemporaryDirectory() + "meteraudit-layer-totals-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let keys = try Fixtures.sampleKeyLogs().flatMap { ["--keylog", $0] }
        let arguments = ["analyze"] + captures + ["--out", out, "--format", "messages,connections"] + keys
        let (status, _, stderr) = try BuiltExecutable.run(try BuiltExecutable.meteraudit(), arguments)
        XCTAssertEqual(status, 0, stderr)
        return (try Table(path: out + "/messages.csv"), try Table(path: out + "/connections.csv"))
    }

    /// Key of a connection: its input's file name and its two endpoints in either order.
    static func connectionKey(source: String, _ a: String, _ b: String) -> String {
        "\((source as NSString).lastPathComponent) \(min(a, b)) \(max(a, b))"
    }

    /// Per connection (connectionKey) and sending endpoint: each layer's total and overhead,
    /// and the retransmissions. Rows sharing a 4-tuple are summed: a proxy tunnel is a row of
    /// its own beside its carrier's (tls13-proxy-curl, same `conn`, `tunnel_host` set), and
    /// every packet byte lands in exactly one of them, so together they equal the packets.
    struct ProducedDirection {
        var total: [String: Int] = [:]
        var overhead: [String: Int] = [:]
        var records: [String: Int] = [:]
        var recordsRetransmitted = 0
        var retransmittedSegments = 0
        var retransmittedBytes = 0
    }

    static func produced(messages: Table, connections: Table) throws -> [String: [String: ProducedDirection]] {
        let source = try connections.column("source")
        let conn = try connections.column("conn")
        let client = try connections.column("client")
        let server = try connections.column("server")
        var columns: [String: (total: [String: Int], overhead: [String: Int], segments: Int, bytes: Int)] = [:]
        for direction in ["up", "down"] {
            var totals: [String: Int] = [:]
            var overheads: [String: Int] = [:]
            for layer in layers {
                totals[layer] = try connections.column(total(direction, layer))
                overheads[layer] = try connections.column(overhead(direction, layer))
            }
            columns[direction] = (
                totals, overheads, try connections.column(retransmittedSegments(direction)),
                try connections.column(retransmittedBytes(direction))
            )
        }
        var result: [String: [String: ProducedDirection]] = [:]
        var keyOfConnection: [String: (key: String, client: String, server: String)] = [:]
        // An unreadable cell counts -1, so that it cannot match a real count. An empty one counts
        // 0 in connections.csv (a tunnel's row may leave a layer to its carrier's row), -1 in
        // messages.csv (every captured record has its layers).
        func cellOfConnection(_ cell: String) -> Int { cell.isEmpty ? 0 : Int(cell) ?? -1 }
        func number(_ cell: String) -> Int { Int(cell) ?? -1 }
        for row in connections.rows {
            let key = connectionKey(source: row[source], row[client], row[server])
            keyOfConnection["\(row[source]) \(row[conn])"] = (key, row[client], row[server])
            for (direction, sender) in [("up", row[client]), ("down", row[server])] {
                guard let at = columns[direction] else { continue }
                var produced = result[key, default: [:]][sender, default: ProducedDirection()]
                for layer in layers {
                    produced.total[layer, default: 0] += cellOfConnection(row[at.total[layer]!])
                    produced.overhead[layer, default: 0] += cellOfConnection(row[at.overhead[layer]!])
                }
                produced.retransmittedSegments += cellOfConnection(row[at.segments])
                produced.retransmittedBytes += cellOfConnection(row[at.bytes])
                result[key, default: [:]][sender] = produced
            }
        }
        let messageSource = try messages.column("source")
        let messageConn = try messages.column("conn")
        let kind = try messages.column("kind")
        let anomalies = try messages.column("anomalies")
        let retransmitted = try messages.column(messageRetransmitted)
        var layerColumns: [String: Int] = [:]
        for layer in layers { layerColumns[layer] = try messages.column(messageLayer(layer)) }
        for row in messages.rows {
            guard let connection = keyOfConnection["\(row[messageSource]) \(row[messageConn])"] else {
                XCTFail("message of \(row[messageSource]) conn \(row[messageConn]) has no row in connections.csv")
                continue
            }
            // A pushed request (HTTP/2 PUSH_PROMISE) is the server's.
            let fromClient = row[kind] == "request" && !row[anomalies].split(separator: " ").contains("pushed")
            let sender = fromClient ? connection.client : connection.server
            var produced = result[connection.key, default: [:]][sender, default: ProducedDirection()]
            for layer in layers {
                produced.records[layer, default: 0] += number(row[layerColumns[layer]!])
            }
            produced.recordsRetransmitted += number(row[retransmitted])
            result[connection.key, default: [:]][sender] = produced
        }
        return result
    }

    /// For every sample capture, connection and direction: Σ records + overhead = the
    /// connection's total = the packets' total, at the TCP, IP and frame layers; and the
    /// retransmissions counted in sequence space.
    func testRecordsPlusOverheadAddUpToThePackets() throws {
        let captures = try Self.sampleCaptures()
        // 26 captures when this was written: nginx-curl and its 4 variants, 9 python-*, 2 h2c-*,
        // curl-python, 9 TLS; more may come.
        XCTAssertGreaterThanOrEqual(captures.count, 26)
        let oracle = try Self.oracle(captures)
        let (messages, connections) = try Self.analyze(captures)
        let produced = try Self.produced(messages: messages, connections: connections)
        var checkedDirections = 0
        var oracleKeys: Set<String> = []
        for (file, capture) in oracle.sorted(by: { $0.key < $1.key }) {
            // A 4-tuple reused by two tshark streams is one key: sum them.
            var expected: [String: [String: OracleDirection]] = [:]
            for connection in capture.connections {
                for direction in [connection.client_to_server, connection.server_to_client] {
                    let key = Self.connectionKey(source: file, direction.src, direction.dst)
                    if var seen = expected[key]?[direction.src] {
                        seen.packets += direction.packets
                        seen.frame += direction.frame
                        seen.ip += direction.ip
                        seen.tcp += direction.tcp
                        seen.retransmitted_segments += direction.retransmitted_segments
                        seen.retransmitted_bytes += direction.retransmitted_bytes
                        seen.retransmitted_control += direction.retransmitted_control
                        expected[key, default: [:]][direction.src] = seen
                    } else {
                        expected[key, default: [:]][direction.src] = direction
                    }
                }
            }
            for (key, directions) in expected.sorted(by: { $0.key < $1.key }) {
                oracleKeys.insert(key)
                guard let producedDirections = produced[key] else {
                    XCTFail("\(key): connection missing from connections.csv")
                    continue
                }
                for (sender, want) in directions.sorted(by: { $0.key < $1.key }) {
                    let where_ = "\(key) from \(sender)"
                    guard let got = producedDirections[sender] else {
                        XCTFail("\(where_): direction missing from connections.csv")
                        continue
                    }
                    for layer in Self.layers {
                        let records = got.records[layer, default: 0]
                        let overhead = got.overhead[layer, default: 0]
                        XCTAssertEqual(
                            records + overhead, got.total[layer],
                            "\(where_) \(layer): records \(records) + overhead \(overhead) ≠ connections.csv total")
                        XCTAssertEqual(got.total[layer], want.layer(layer), "\(where_) \(layer): connections.csv vs packets")
                    }
                    XCTAssertEqual(got.retransmittedBytes, want.retransmitted_bytes, "\(where_): retransmitted bytes")
                    // Repeated SYNs and FINs are retransmissions too: the kernel counts them.
                    XCTAssertEqual(
                        got.retransmittedSegments, want.retransmitted_segments + want.retransmitted_control,
                        "\(where_): retransmitted segments")
                    XCTAssertLessThanOrEqual(got.recordsRetransmitted, got.retransmittedBytes, where_)
                    checkedDirections += 1
                }
            }
        }
        let producedKeys = Set(produced.keys)
        XCTAssertEqual(producedKeys.subtracting(oracleKeys), [], "connections in connections.csv, not in the packets")
        // At least the 2 directions of the 3 nginx-curl connections in each of 5 variants.
        XCTAssertGreaterThanOrEqual(checkedDirections, 30)
    }

    /// python-loss: retransmitted bytes and segments per connection and direction equal what the
    /// sending socket's kernel counted (tcp_info as the socket was destroyed), and every
    /// retransmitted byte belongs to a message (every payload byte of this sample is HTTP), so
    /// the records' `retransmitted` add up to it too and `wire_tcp` = `wire_total` + `retransmitted`.
    func testLossSampleRetransmissionsMatchTheSenders() throws {
        let capture = Self.samplesDirectory + "/python-loss.pcap.gz"
        let truth = try JSONDecoder().decode(
            LossTruth.self,
            from: Data(contentsOf: URL(fileURLWithPath: Self.samplesDirectory + "/python-loss.loss.json")))
        XCTAssertEqual(truth.tcpdump["dropped_by_kernel"], 0)
        // 2 connections, 2 directions each.
        XCTAssertEqual(truth.sockets.count, 4)
        // The sample is worth having only if packets were lost and resent.
        XCTAssertGreaterThan(truth.sockets.map(\.bytes_retrans).reduce(0, +), 0)
        let (messages, connections) = try Self.analyze([capture])
        let produced = try Self.produced(messages: messages, connections: connections)
        var resent = 0
        for socket in truth.sockets {
            let key = Self.connectionKey(source: capture, socket.src, socket.dst)
            guard let got = produced[key]?[socket.src] else {
                XCTFail("\(key) from \(socket.src): not in connections.csv")
                continue
            }
            XCTAssertEqual(got.retransmittedBytes, socket.bytes_retrans, "\(key) from \(socket.src): bytes")
            XCTAssertEqual(got.retransmittedSegments, socket.retrans, "\(key) from \(socket.src): segments")
            XCTAssertEqual(got.recordsRetransmitted, socket.bytes_retrans, "\(key) from \(socket.src): records")
            resent += got.retransmittedSegments
        }
        XCTAssertEqual(resent, truth.namespace["TcpRetransSegs"], "the namespace's TcpRetransSegs")

        let wireTotal = try messages.column("wire_total")
        let wireTCP = try messages.column(Self.messageLayer("tcp"))
        let retransmitted = try messages.column(Self.messageRetransmitted)
        // python-loss.truth.jsonl: 7 requests + 7 responses.
        XCTAssertEqual(messages.rows.count, 14)
        for row in messages.rows {
            XCTAssertEqual(
                Int(row[wireTCP]), (Int(row[wireTotal]) ?? 0) + (Int(row[retransmitted]) ?? 0),
                "wire_tcp = wire_total + retransmitted: \(row)")
        }
    }
}
