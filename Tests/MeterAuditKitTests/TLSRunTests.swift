import Analysis
import CaptureIO
import Foundation
import MeterAuditKit
import Reports
import TestSupport
import XCTest

/// Decrypted TLS through the whole pipeline: connections.csv and wire_tls against tshark
/// with the same key logs, and the connections that cannot be decrypted.
final class TLSRunTests: XCTestCase {
    static let decryptedSamples = [
        "tls13-nginx-curl", "tls12-nginx-curl", "tls12-resume", "tls13-keyupdate", "tls13-python", "tls12-python",
    ]

    /// Runs one input and returns (messages.csv rows, connections.csv rows), each a header-keyed dictionary.
    static func run(_ inputs: [String], options: AnalysisOptions) throws -> (
        messages: [[String: String]], connections: [[String: String]], diagnostics: [InputDiagnostics]
    ) {
        let out = NSTemporaryDirectory() + "meteraudit-tls-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try AuditRun(inputs: inputs, outputDirectory: out, options: options).run()
        func table(_ name: String) throws -> [[String: String]] {
            let rows = EndpointFiguresTests.parseCSV(try Data(contentsOf: URL(fileURLWithPath: out + "/" + name)))
            guard let header = rows.first else { return [] }
            return rows.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        }
        return (try table("messages.csv"), try table("connections.csv"), result.report.inputs)
    }

    /// Per connection and direction, the overhead the records own (wire_tls − wire_total,
    /// summed) plus the handshake, alert and change_cipher_spec bytes connections.csv gives,
    /// plus the plaintext the records carried (wire_total summed: every plaintext byte is in a
    /// message here, and TLSSampleOracleTests checks the plaintext against tshark's), equal
    /// the bytes of every TLS record tshark reads in that direction (5 + length each).
    func testRecordOverheadAddsUpToTsharksRecordBytes() throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark not installed") }
        var checked = 0
        for name in Self.decryptedSamples {
            let capture = Fixtures.sample(name + ".pcap")
            let keys = Fixtures.sample(name + ".keys")
            var options = AnalysisOptions()
            try options.loadKeyLogs([keys])
            let (messages, connections, _) = try Self.run([capture], options: options)
            XCTAssertFalse(connections.isEmpty, name)

            // tshark: bytes of TLS records per (client port, from client)
            let output = try runTool(
                tshark,
                [
                    "-r", capture, "-o", "tls.keylog_file:" + keys, "-Y", "tls", "-T", "fields", "-E",
                    "separator=/t", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tls.record.length",
                ])
            var tsharkBytes: [String: Int] = [:]
            for line in output.split(separator: "\n") {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard fields.count == 3, let source = Int(fields[0]), let destination = Int(fields[1]) else { continue }
                // The servers listen on 184xx; the clients use ephemeral ports above them.
                let fromClient = source > destination
                let clientPort = fromClient ? source : destination
                for length in fields[2].split(separator: ",").compactMap({ Int($0) }) {
                    tsharkBytes["\(clientPort) \(fromClient)", default: 0] += 5 + length
                }
            }

            for connection in connections {
                let context = "\(name) conn \(connection["conn"]!)"
                XCTAssertEqual(connection["decrypted"], "yes", context)
                XCTAssertEqual(connection["protocol"], "http1", context)
                let clientPort = connection["client"]!.split(separator: ":").last.map(String.init)!
                let records = messages.filter { $0["conn"] == connection["conn"] }
                XCTAssertEqual(records.count, Int(connection["records"]!), context)
                for fromClient in [true, false] {
                    let kind = fromClient ? "request" : "response"
                    let sent = records.filter { $0["kind"] == kind }
                    let overhead = sent.reduce(0) { $0 + Int($1["wire_tls"]!)! - Int($1["wire_total"]!)! }
                    let plaintext = sent.reduce(0) { $0 + Int($1["wire_total"]!)! }
                    let control = Int(
                        connection[fromClient ? "up_tls_control_tls" : "down_tls_control_tls"]!)!
                    let recordBytes = Int(connection[fromClient ? "up_tls" : "down_tls"]!)!
                    let expected = tsharkBytes["\(clientPort) \(fromClient)"]
                    XCTAssertEqual(overhead + control + plaintext, expected, "\(context) \(kind)s")
                    XCTAssertEqual(recordBytes, expected, "\(context) \(kind)s: record bytes")
                    checked += 1
                }
                for record in records {
                    XCTAssertEqual(record["transport"], "tls", context)
                    // pipelined messages in one record: its overhead is the first one's
                    XCTAssertGreaterThanOrEqual(Int(record["wire_tls"]!)!, Int(record["wire_total"]!)!, context)
                }
            }
        }
        XCTAssertEqual(checked, 2 * (3 + 7 + 2 + 1 + 2 + 2)) // make-tls-samples: connections per sample
    }

    /// tls13-python.pcap, connection 0, request 0 (GET, 82 B): it went in one TLS 1.3
    /// AES-256-GCM record, 5 header + 1 inner content type + 16 tag = 22 B of overhead.
    func testOneRecordPerMessageCostsHeaderTypeAndTag() throws {
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample("tls13-python.keys")])
        let (messages, _, _) = try Self.run([Fixtures.sample("tls13-python.pcap")], options: options)
        let first = try XCTUnwrap(messages.first { $0["conn"] == "0" && $0["kind"] == "request" && $0["index"] == "0" })
        XCTAssertEqual(first["wire_total"], "82") // truth: wire_line 23 + wire_headers 59
        XCTAssertEqual(first["wire_tls"], "104") // 82 + 22
    }

    /// Without keys nothing is invented: no record, the connection reported with its reason
    /// and bytes, in connections.csv and diagnostics.json.
    func testUndecryptedConnectionsAreReportedWithoutRecords() throws {
        let (messages, connections, diagnostics) = try Self.run(
            [Fixtures.sample("tls13-nokey.pcap"), Fixtures.sample("tls13-nginx-curl.pcap")],
            options: AnalysisOptions())
        XCTAssertEqual(messages.count, 0)
        XCTAssertEqual(connections.count, 4)
        for connection in connections {
            XCTAssertEqual(connection["protocol"], "tls-undecrypted")
            XCTAssertEqual(connection["decrypted"], "no-key")
        }
        let nokey = diagnostics[0].tls
        XCTAssertEqual(nokey.connections, 1)
        XCTAssertEqual(nokey.decrypted, 0)
        XCTAssertEqual(nokey.notDecrypted, ["no-key": 1])
        let row = connections[0]
        // every TCP payload byte of the connection, both directions
        XCTAssertEqual(
            nokey.undecryptedBytes, ["localhost": Int(row["client_tcp_bytes"]!)! + Int(row["server_tcp_bytes"]!)!])
        // the third nginx connection was made by address: no SNI
        XCTAssertEqual(diagnostics[1].tls.undecryptedBytes.keys.sorted(), ["", "localhost"])
    }

    /// The pcapng with its secrets in a Decryption Secrets Block decrypts without --keylog,
    /// to the same records as the pcap with the key log file.
    func testDecryptionSecretsBlockKeysAreUsed() throws {
        let embedded = try Self.run([Fixtures.sample("tls13-nginx-curl-dsb.pcapng")], options: AnalysisOptions())
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample("tls13-nginx-curl.keys")])
        let file = try Self.run([Fixtures.sample("tls13-nginx-curl.pcap")], options: options)
        XCTAssertEqual(embedded.messages.count, 16) // make-tls-samples: (6 + 1 + 1) exchanges of 2 messages
        XCTAssertEqual(embedded.messages.count, file.messages.count)
        let columns = ["conn", "kind", "index", "wire_total", "wire_tls", "transport"]
        XCTAssertEqual(
            embedded.messages.map { row in columns.map { row[$0]! } },
            file.messages.map { row in columns.map { row[$0]! } })
    }

    /// tls13-python.pcap without frame 16 (tshark: the server's second response on connection
    /// 0, 1,126 B of TCP payload): the server's stream has a gap, so its decryption stops
    /// there; what came before is kept (6 requests of the client's untouched stream, the first
    /// response), nothing after it is made up, and the connection says `gap`.
    func testAGapStopsThatDirectionAndIsReported() throws {
        let reader = try CaptureReader(path: Fixtures.sample("tls13-python.pcap"))
        var frames: [CaptureFileWriter.Frame] = []
        while let frame = try reader.next() {
            if frame.number == 16 { continue } // frame numbers from 1, as tshark's
            frames.append(.init(timestamp: frame.timestamp, bytes: Array(frame.bytes)))
        }
        let path = try CaptureFileWriter.temporaryFile(
            named: "tls13-gap.pcap", containing: CaptureFileWriter.pcap(frames))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample("tls13-python.keys")])
        let (messages, connections, diagnostics) = try Self.run([path], options: options)
        let first = try XCTUnwrap(connections.first { $0["conn"] == "0" })
        XCTAssertEqual(first["decrypted"], "gap")
        XCTAssertEqual(first["protocol"], "http1")
        let records = messages.filter { $0["conn"] == "0" }
        XCTAssertEqual(records.filter { $0["kind"] == "request" }.count, 6) // tls13-python.truth.jsonl
        XCTAssertEqual(records.filter { $0["kind"] == "response" }.map { $0["index"]! }, ["0"])
        XCTAssertEqual(diagnostics[0].tls.notDecrypted, ["gap": 1])
        // the other connection is whole
        XCTAssertEqual(connections.first { $0["conn"] == "1" }?["decrypted"], "yes")
    }

    /// A key log line that is not a key is reported with its file and line; the others are used.
    func testBrokenKeyLogLinesAreReportedAndTheRestUsed() throws {
        let path = NSTemporaryDirectory() + "broken-\(UUID().uuidString).keys"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let good = try String(contentsOfFile: Fixtures.sample("tls13-python.keys"), encoding: .utf8)
        try ("CLIENT_RANDOM zz\n" + good).write(toFile: path, atomically: true, encoding: .utf8)
        var options = AnalysisOptions()
        let issues = try options.loadKeyLogs([path])
        XCTAssertEqual(issues.count, 1)
        XCTAssertTrue(issues[0].hasPrefix(path + ":1: "), issues[0])
        let (messages, _, diagnostics) = try Self.run([Fixtures.sample("tls13-python.pcap")], options: options)
        XCTAssertEqual(messages.count, 20) // tls13-python.truth.jsonl: 20 messages
        XCTAssertEqual(diagnostics[0].tls.keyLogIssues, issues)
    }
}

/// A proxy capture: curl → CONNECT proxy → TLS server, only the curl-proxy leg captured.
final class TunnelRunTests: XCTestCase {
    func testTheTunnelIsReadAsAConnectionNamingTheConnectHost() throws {
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample("tls13-proxy-curl.keys")])
        let (messages, connections, diagnostics) = try TLSRunTests.run(
            [Fixtures.sample("tls13-proxy-curl.pcap")], options: options)
        // make-tls-samples: CONNECT and its 200, then 4 exchanges inside the tunnel
        XCTAssertEqual(messages.count, 10)
        let outside = messages.filter { $0["transport"] == "tcp" }
        XCTAssertEqual(outside.map { $0["method"]! }, ["CONNECT", "CONNECT"])
        XCTAssertEqual(outside.map { $0["tunnel_host"]! }, ["", ""])
        let inside = messages.filter { $0["transport"] == "tls" }
        XCTAssertEqual(inside.count, 8)
        XCTAssertEqual(Set(inside.map { $0["tunnel_host"]! }), ["localhost:18490"])
        // indexes go on after the CONNECT exchange on the same TCP connection
        XCTAssertEqual(inside.filter { $0["kind"] == "request" }.map { $0["index"]! }, ["1", "2", "3", "4"])
        XCTAssertEqual(connections.count, 2)
        let tunnel = try XCTUnwrap(connections.first { $0["tunnel_host"] == "localhost:18490" })
        XCTAssertEqual(tunnel["decrypted"], "yes")
        XCTAssertEqual(tunnel["protocol"], "http1")
        XCTAssertEqual(tunnel["records"], "8")
        let outer = try XCTUnwrap(connections.first { $0["tunnel_host"] == "" })
        // the tunnel's bytes are the TCP payload after the CONNECT request (114 B) and its 200 (39 B)
        XCTAssertEqual(Int(outer["client_tcp_bytes"]!)! - 114, Int(tunnel["client_tcp_bytes"]!)!)
        XCTAssertEqual(Int(outer["server_tcp_bytes"]!)! - 39, Int(tunnel["server_tcp_bytes"]!)!)
        // every tunnel byte is a TLS record byte
        XCTAssertEqual(tunnel["client_tcp_bytes"], tunnel["up_tls"])
        XCTAssertEqual(tunnel["server_tcp_bytes"], tunnel["down_tls"])
        XCTAssertEqual(diagnostics[0].connections.total, 1)
        XCTAssertEqual(diagnostics[0].connections.tunnelsRead, 1)
        XCTAssertEqual(diagnostics[0].connections.tunnelBytes, 0) // read, so not left unmeasured
        XCTAssertEqual(diagnostics[0].tls.decrypted, 1)
    }
}
