import Analysis
import Foundation
import HTTP1
import MeterAuditKit
import TestSupport
import XCTest

/// The h2c samples (scripts/make-h2-samples) against the frames their peers logged while
/// sending them (Samples/NAME.h2truth.jsonl), and frame by frame against tshark.
final class HTTP2SampleTests: XCTestCase {
    struct Truth: Decodable {
        var client: String
        var kind: String
        var stream: Int
        var interim: Bool
        var pushed: Bool
        var wire_headers: Int
        var wire_body: Int
        var frames: Int
        var body: Int
        var complete: Bool
    }

    func analyze(_ name: String) throws -> (records: [MessageRecord], connections: [ConnectionRow]) {
        var records: [MessageRecord] = []
        var connections: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: AnalysisOptions()).analyze(
            path: Fixtures.sample(name), connection: { connections.append($0) }
        ) { records.append($0) }
        XCTAssertNil(diagnostics.error, name)
        return (records, connections)
    }

    func truths(_ name: String) throws -> [Truth] {
        try String(contentsOfFile: Fixtures.sample(name), encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(Truth.self, from: Data($0.utf8)) }
    }

    func testEveryPriorKnowledgeMessageMatchesItsSendersFrames() throws {
        let (records, connections) = try analyze("h2c-prior.pcap")
        let truths = try truths("h2c-prior.h2truth.jsonl")
        XCTAssertEqual(records.count, truths.count)
        XCTAssertEqual(truths.count, 17, "the sample's 8 requests (one pushed) and 9 responses (one 103)")
        for truth in truths {
            let matching = records.filter {
                $0.message.kind.rawValue == truth.kind && $0.message.http2.map { Int($0.stream) } == truth.stream
                    && $0.message.isInterim == truth.interim
            }
            XCTAssertEqual(matching.count, 1, "\(truth.kind) on stream \(truth.stream)")
            guard let record = matching.first else { continue }
            let label = "\(truth.kind) stream \(truth.stream)"
            XCTAssertEqual(record.source.client, truth.client, label)
            XCTAssertEqual(record.wire.line, 0, label)
            XCTAssertEqual(record.wire.headers, truth.wire_headers, label)
            XCTAssertEqual(record.wire.body, truth.wire_body, label)
            XCTAssertEqual(record.message.http2?.frames, truth.frames, label)
            XCTAssertEqual(record.message.complete, truth.complete, label)
            XCTAssertEqual(record.message.anomalies.contains(.pushed), truth.pushed, label)
            XCTAssertNotNil(record.message.http2?.headerListSize, label)
            if record.message.contentCodings.isEmpty {
                XCTAssertEqual(record.bodyDecoded, truth.body, label)
            } else {
                // The gzip response: the sender's 20,000 bytes of text before compression.
                XCTAssertEqual(record.bodyDecoded, 20000, label)
            }
        }
        XCTAssertEqual(connections.map(\.protocolKind), [.h2])
        // Every byte of each direction is a message's or a connection frame's.
        let connection = try XCTUnwrap(connections.first)
        let overhead = try XCTUnwrap(connection.http2)
        let clientMessages = records.filter { $0.message.kind == .request && !$0.message.anomalies.contains(.pushed) }
        let serverMessages = records.filter { $0.message.kind == .response || $0.message.anomalies.contains(.pushed) }
        XCTAssertEqual(
            clientMessages.reduce(overhead.clientBytes) { $0 + ($1.wire.total ?? 0) }, connection.clientTCPBytes)
        XCTAssertEqual(
            serverMessages.reduce(overhead.serverBytes) { $0 + ($1.wire.total ?? 0) }, connection.serverTCPBytes)
        XCTAssertEqual(overhead.client["preface"], FrameTypeCount(frames: 1, bytes: 24))
        XCTAssertEqual(overhead.server["RST_STREAM"], FrameTypeCount(frames: 1, bytes: 13))
        XCTAssertEqual(overhead.clientErrors + overhead.serverErrors, 0)
    }

    /// curl's `Upgrade: h2c`: the request and the 101 are HTTP/1.1 records, the response comes
    /// as stream 1's frames, paired with the upgraded request; one row, protocol h2.
    func testUpgradeHandsTheConnectionToHTTP2() throws {
        let (records, connections) = try analyze("h2c-upgrade.pcap")
        let truth = try XCTUnwrap(try truths("h2c-upgrade.h2truth.jsonl").first)
        XCTAssertEqual(records.map { $0.message.status }, [nil, 101, 200])
        let request = records[0]
        let response = records[2]
        XCTAssertNil(request.message.http2)
        XCTAssertEqual(request.message.version, "HTTP/1.1")
        XCTAssertEqual(response.message.http2?.stream, 1)
        XCTAssertEqual(response.message.pair, request.message.index)
        XCTAssertEqual(response.requestSummary?.method, "GET")
        XCTAssertEqual(response.wire.line, 0)
        XCTAssertEqual(response.wire.headers, truth.wire_headers)
        XCTAssertEqual(response.wire.body, truth.wire_body)
        XCTAssertEqual(response.bodyDecoded, truth.body)
        XCTAssertEqual(response.message.complete, truth.complete)
        let connection = try XCTUnwrap(connections.first)
        XCTAssertEqual(connections.count, 1)
        XCTAssertEqual(connection.protocolKind, .h2)
        XCTAssertEqual(connection.records, 3)
        let overhead = try XCTUnwrap(connection.http2)
        XCTAssertEqual(overhead.client["preface"], FrameTypeCount(frames: 1, bytes: 24))
        XCTAssertEqual(
            (request.wire.total ?? 0) + overhead.clientBytes, connection.clientTCPBytes,
            "the client's bytes: its HTTP/1.1 request, then the preface and its frames")
        XCTAssertEqual(
            (records[1].wire.total ?? 0) + (response.wire.total ?? 0) + overhead.serverBytes, connection.serverTCPBytes)
        // diagnostics.json: the frames by type, and nothing left as unread tunnel bytes.
        let diagnostics = InputAnalyzer(options: AnalysisOptions()).analyze(path: Fixtures.sample("h2c-upgrade.pcap")) {
            _ in
        }
        XCTAssertEqual(diagnostics.connections.tunnelBytes, 0)
        XCTAssertEqual(diagnostics.connections.http, 1)
        XCTAssertEqual(diagnostics.h2?.connections, 1)
        XCTAssertEqual(diagnostics.h2?.client["preface"], FrameTypeCount(frames: 1, bytes: 24))
        XCTAssertEqual(diagnostics.h2?.server, overhead.server)
    }

    func testRepeatedRequestHeaderBlockIsSmallerThanTheFirst() throws {
        let (records, _) = try analyze("h2c-prior.pcap")
        let gets = records.filter {
            $0.message.kind == .request && $0.requestSummary.map { RequestTarget($0.target).path } == Array("/a".utf8)
        }
        XCTAssertEqual(gets.map { $0.message.http2?.stream }, [1, 11])
        XCTAssertLessThan(gets[1].wire.headers ?? .max, gets[0].wire.headers ?? 0)
        // Same decoded fields, so the same header list size.
        XCTAssertEqual(gets[0].message.http2?.headerListSize, gets[1].message.http2?.headerListSize)
    }

    /// tshark's HTTP/2 dissector as the oracle: per stream and frame type, the frames and their
    /// bytes (9 + length) equal what the records and the connection's overhead counted.
    func testFramesAgreeWithTshark() throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark not installed") }
        let output = try runTool(
            tshark,
            [
                "-r", Fixtures.sample("h2c-prior.pcap"), "-d", "tcp.port==18520,http2", "-Y", "http2", "-T", "fields",
                "-e", "tcp.srcport", "-e", "http2.streamid", "-e", "http2.type", "-e", "http2.length",
            ])
        // (from server?, stream, type) → bytes; tshark lists a packet's frames comma-separated.
        var oracle: [String: Int] = [:]
        for line in output.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count == 4 else { continue }
            let fromServer = columns[0] == "18520"
            let streams = columns[1].split(separator: ",")
            let types = columns[2].split(separator: ",")
            let lengths = columns[3].split(separator: ",")
            for i in 0..<min(streams.count, types.count, lengths.count) {
                guard let length = Int(lengths[i]) else { continue }
                let type = Int(types[i]) ?? -1
                // Header-block and DATA frames per stream; the rest per type, connection-wide.
                let key =
                    [0, 1, 5, 9].contains(type)
                    ? "\(fromServer) \(streams[i]) \(type == 0 ? "body" : "headers")" : "\(fromServer) type \(type)"
                oracle[key, default: 0] += 9 + length
            }
        }
        let (records, connections) = try analyze("h2c-prior.pcap")
        var ours: [String: Int] = [:]
        for record in records {
            guard let facts = record.message.http2 else { continue }
            let fromServer = record.message.kind == .response || record.message.anomalies.contains(.pushed)
            // A PUSH_PROMISE travels on its parent stream (1 in this sample), not the promised one.
            let stream = record.message.anomalies.contains(.pushed) ? 1 : facts.stream
            if let headers = record.wire.headers, headers > 0 {
                ours["\(fromServer) \(stream) headers", default: 0] += headers
            }
            if let body = record.wire.body, body > 0 { ours["\(fromServer) \(stream) body", default: 0] += body }
        }
        let overhead = try XCTUnwrap(connections.first?.http2)
        let types = ["SETTINGS": 4, "PING": 6, "GOAWAY": 7, "WINDOW_UPDATE": 8, "RST_STREAM": 3, "PRIORITY": 2]
        for (fromServer, counts) in [(false, overhead.client), (true, overhead.server)] {
            for (name, count) in counts where name != "preface" {
                ours["\(fromServer) type \(types[name] ?? -1)", default: 0] += count.bytes
            }
        }
        XCTAssertFalse(oracle.isEmpty)
        XCTAssertEqual(ours, oracle)
    }

    /// The HTTP/2 headers figures of report.md over h2c-prior (docs/FIGURES.md, HTTP/2 headers):
    /// Σ wire_headers per direction equals the sender's frame log over the complete messages,
    /// and the one reset response (incomplete, unmeasured) is left out.
    func testHeaderCompressionTotalsMatchTheFrameLog() throws {
        let options = AnalysisOptions()
        var aggregation = Aggregation(estimators: options.estimators)
        for record in try analyze("h2c-prior.pcap").records { aggregation.add(record) }
        let truths = try truths("h2c-prior.h2truth.jsonl")
        for direction in [Direction.request, .response, .interim] {
            let sent = truths.filter {
                $0.kind == (direction == .request ? "request" : "response") && $0.interim == (direction == .interim)
            }
            let complete = sent.filter(\.complete)
            let figures = try XCTUnwrap(aggregation.headerCompressionTotals[direction], "\(direction)")
            XCTAssertEqual(figures.records, complete.count, "\(direction)")
            XCTAssertEqual(figures.leftOut, sent.count - complete.count, "\(direction)")
            XCTAssertEqual(figures.wireHeaders, complete.reduce(0) { $0 + $1.wire_headers }, "\(direction)")
            XCTAssertEqual(
                aggregation.protocolTotals[ProtocolKey(wireProtocol: .h2, direction: direction)]?.records, sent.count)
        }
        XCTAssertEqual(aggregation.headerCompressionTotals[.response]?.leftOut, 1, "the RST_STREAM response")
        XCTAssertNil(aggregation.protocolTotals[ProtocolKey(wireProtocol: .http1, direction: .request)])
    }
}
