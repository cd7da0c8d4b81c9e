import Foundation
import TestSupport
import XCTest

/// The loss sample's retransmissions against its senders' kernels, through the files a user
/// reads (messages.csv, connections.csv): per connection and direction, the retransmitted
/// bytes and segments equal what each sending socket counted (`ss -E`, Samples/
/// python-loss.loss.json, written by scripts/make-loss-sample), and the records' layers plus
/// the overhead give the connection's totals. (Every sample against tshark's raw totals:
/// CostLayerSampleTests.)
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
            for layer in Self.layers {
                XCTAssertEqual(
                    (got.records[layer] ?? -1) + (got.overhead[layer] ?? -1), got.total[layer],
                    "\(key) from \(socket.src): \(layer) records + overhead")
            }
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
