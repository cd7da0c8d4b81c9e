import Analysis
import Estimation
import Foundation
import MessageModel
import MeterAuditKit
import TestSupport
import XCTest

/// The HTTP/2 samples (scripts/make-h2-samples) against the frames and header blocks their
/// Python peers logged while sending or receiving them (Samples/NAME.h2truth.jsonl), and
/// frame by frame against tshark (the only oracle of the curl + nginx sample over TLS).
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
        /// Null where the HPACK state is unknown (h2c-midconn).
        var header_list: Int?
        var body_decoded: Int
    }

    /// The samples whose truth is a Python h2 peer's frame log.
    static let pythonPeerSamples = ["h2c-prior", "h2c-upgrade", "h2c-more", "h2c-midconn", "h2c-curl"]

    func analyze(_ name: String, keys: [String] = []) throws -> (
        records: [MessageRecord], connections: [ConnectionRow]
    ) {
        var records: [MessageRecord] = []
        var connections: [ConnectionRow] = []
        var options = AnalysisOptions()
        try options.loadKeyLogs(keys.map { Fixtures.sample($0) })
        let diagnostics = InputAnalyzer(options: options).analyze(
            path: Fixtures.sample(name), connection: { connections.append($0) }
        ) { records.append($0) }
        XCTAssertNil(diagnostics.error, name)
        return (records, connections)
    }

    /// Every HTTP/2 record of every Python-peer sample equals its frame log, byte for byte:
    /// wire_headers, wire_body, frames, header_list, body_decoded, complete, pushed; and no
    /// HTTP/2 record is left without a truth line.
    func testEveryPythonPeerSampleMatchesItsFrameLog() throws {
        for name in Self.pythonPeerSamples {
            let (records, _) = try analyze("\(name).pcap")
            let truths = try truths("\(name).h2truth.jsonl")
            let http2Records = records.filter { $0.message.protocolFacts.wireProtocol == .h2 }
            XCTAssertEqual(http2Records.count, truths.count, "\(name): HTTP/2 records")
            for truth in truths {
                let matching = http2Records.filter {
                    $0.source.client == truth.client && $0.message.kind.rawValue == truth.kind
                        && $0.message.protocolFacts.stream.map { Int($0) } == truth.stream
                        && $0.message.isInterim == truth.interim
                }
                let label = "\(name) \(truth.client) \(truth.kind) stream \(truth.stream)"
                XCTAssertEqual(matching.count, 1, label)
                guard let record = matching.first else { continue }
                XCTAssertEqual(record.wire.line, 0, label)
                XCTAssertEqual(record.wire.headers, truth.wire_headers, label)
                XCTAssertEqual(record.wire.body, truth.wire_body, label)
                XCTAssertEqual(record.message.protocolFacts.frames, truth.frames, label)
                if name != "h2c-midconn" {
                    // h2c-midconn's truth has no fields: which are known is
                    // HTTP2MidConnectionTests' (partial decoding, §2a).
                    XCTAssertEqual(record.message.protocolFacts.headerListSize, truth.header_list, label)
                    XCTAssertEqual(
                        record.message.anomalies.contains(.hpackStateUnknown), truth.header_list == nil, label)
                }
                if name != "h2c-midconn" || record.message.values(of: "content-encoding").isEmpty {
                    // h2c-midconn's truth did not know the upload's Content-Encoding: now decoded.
                    XCTAssertEqual(record.bodyDecoded, truth.body_decoded, label)
                }
                XCTAssertEqual(record.message.complete, truth.complete, label)
                XCTAssertEqual(record.message.anomalies.contains(.pushed), truth.pushed, label)
            }
        }
    }

    /// The estimates of every HTTP/2 record equal what `scripts/expected-h2-estimates` computes
    /// on its own from the frame logs (Python, zlib; docs/METERING.md §4 with §2a's rules: no
    /// pseudo-fields, `HTTP/2 {status}`), and so do the reasons of those that cannot be made:
    /// a record whose fields are unknown (h2c-midconn) gets no figure that needs them (§4.5
    /// `fields-unknown`), and its endpoint is `? <server> ?` (§5).
    func testEstimatesMatchTheIndependentScript() throws {
        guard let python = executable("python3") else { throw XCTSkip("python3 not installed") }
        struct Expected: Decodable {
            var client: String
            var kind: String
            var stream: Int
            var interim: Bool
            var est_documented_line: Int?
            var est_documented_headers: Int?
            var est_documented_body: Int?
            var est_naive_body: Int?
            var est_documented_unavailable: String?
            var est_naive_unavailable: String?

            func expected(_ reason: String?, _ estimate: () -> Estimate) -> Result<Estimate, EstimateUnavailable>? {
                guard let reason else { return .success(estimate()) }
                return EstimateUnavailable(rawValue: reason).map { .failure($0) }
            }
        }
        let names = AnalysisOptions().estimators.names
        let naiveAt = try XCTUnwrap(names.firstIndex(of: "naive"))
        let documentedAt = try XCTUnwrap(names.firstIndex(of: "documented"))
        var checked = 0
        var unavailable = 0
        var decodedAfterCut = 0
        for name in Self.pythonPeerSamples {
            let output = try runTool(
                python,
                [
                    Fixtures.root.appendingPathComponent("scripts/expected-h2-estimates").path,
                    Fixtures.sample("\(name).h2truth.jsonl"),
                ])
            let expected = try output.split(separator: "\n").map {
                try JSONDecoder().decode(Expected.self, from: Data($0.utf8))
            }
            let (records, _) = try analyze("\(name).pcap")
            for want in expected {
                let label = "\(name) \(want.client) \(want.kind) stream \(want.stream)"
                let matching = records.filter {
                    $0.source.client == want.client && $0.message.kind.rawValue == want.kind
                        && $0.message.protocolFacts.stream.map { Int($0) } == want.stream
                        && $0.message.isInterim == want.interim
                }
                guard matching.count == 1, let record = matching.first else {
                    XCTFail("\(label): \(matching.count) records")
                    continue
                }
                if name == "h2c-midconn", record.message.fieldsKnown {
                    // Its truth has no fields; this head is wholly decoded (§2a partial
                    // decoding): estimated, as the same block's record of h2c-more is.
                    XCTAssertNotNil(try? record.estimates[documentedAt].get(), label)
                    checked += 1
                    decodedAfterCut += 1
                    continue
                }
                let documented = want.expected(want.est_documented_unavailable) {
                    Estimate(
                        line: want.est_documented_line ?? -1, headers: want.est_documented_headers ?? -1,
                        body: want.est_documented_body ?? -1)
                }
                let naive = want.expected(want.est_naive_unavailable) {
                    Estimate(line: 0, headers: 0, body: want.est_naive_body ?? -1)
                }
                XCTAssertEqual(record.estimates[documentedAt], documented, label)
                XCTAssertEqual(record.estimates[naiveAt], naive, label)
                if want.est_documented_unavailable != nil {
                    // The authority was never seen: the endpoint says so, as §5 does.
                    XCTAssertEqual(record.endpoint, "? \(record.source.server) ?", label)
                    unavailable += 1
                }
                checked += 1
            }
        }
        // 17 + 1 + 12 + 10 + 8 records; h2c-midconn's 10 have unknown fields but one (the 304,
        // every field static or literal): 5 requests, 4 responses.
        XCTAssertEqual(checked, 48)
        XCTAssertEqual(unavailable, 9)
        XCTAssertEqual(decodedAfterCut, 1)
    }

    /// The samples cover what docs/SAMPLES.md says they do: checked on the truth, so a
    /// regenerated sample that lost a case fails here.
    func testSamplesCoverTheIssuesList() throws {
        let more = try truths("h2c-more.h2truth.jsonl")
        let large = try XCTUnwrap(more.first { $0.kind == "response" && $0.stream == 7 })
        XCTAssertGreaterThan(large.body, 65535, "a body over the initial window: WINDOW_UPDATEs")
        let cancelled = try XCTUnwrap(more.first { $0.kind == "response" && $0.stream == 9 })
        XCTAssertFalse(cancelled.complete)
        XCTAssertGreaterThan(cancelled.body, 0, "reset mid-body")
        let (records, connections) = try analyze("h2c-more.pcap")
        XCTAssertEqual(Set(records.compactMap(\.message.status)), [200, 201, 304])
        XCTAssertTrue(records.contains { $0.requestSummary?.method == "HEAD" })
        let overhead = try XCTUnwrap(connections.first?.counters[.h2Frames])
        XCTAssertGreaterThan(overhead.client["WINDOW_UPDATE"]?.frames ?? 0, 0)
        XCTAssertEqual(overhead.client["RST_STREAM"], FrameTypeCount(frames: 1, bytes: 13))
        // The cut capture: no preface; every header block but the 304's refers to entries
        // inserted before the capture began.
        let (cut, cutConnections) = try analyze("h2c-midconn.pcap")
        XCTAssertNil(cutConnections.first?.counters[.h2Frames]?.client["preface"])
        XCTAssertEqual(cut.filter { $0.message.anomalies.contains(.hpackStateUnknown) }.count, 9)
        // curl with prior knowledge: one connection per request, all h2.
        let (_, curlConnections) = try analyze("h2c-curl.pcap")
        XCTAssertEqual(curlConnections.map(\.protocolKind), Array(repeating: .h2, count: 4))
    }

    /// Per connection and direction, the messages' bytes and the connection's frames add up to
    /// the TCP payload: every byte is a message's or the overhead's.
    func testEveryByteOfEveryCleartextSampleIsCounted() throws {
        for name in Self.pythonPeerSamples where name != "h2c-upgrade" {
            let (records, connections) = try analyze("\(name).pcap")
            XCTAssertFalse(connections.isEmpty, name)
            for connection in connections {
                let overhead = try XCTUnwrap(connection.counters[.h2Frames], name)
                let mine = records.filter { $0.source.client == connection.client }
                let fromClient = mine.filter { $0.message.kind == .request && !$0.message.anomalies.contains(.pushed) }
                let fromServer = mine.filter { $0.message.kind == .response || $0.message.anomalies.contains(.pushed) }
                XCTAssertEqual(
                    fromClient.reduce(overhead.clientBytes) { $0 + ($1.wire.total ?? 0) }, connection.clientTCPBytes,
                    "\(name) \(connection.client) client")
                XCTAssertEqual(
                    fromServer.reduce(overhead.serverBytes) { $0 + ($1.wire.total ?? 0) }, connection.serverTCPBytes,
                    "\(name) \(connection.client) server")
                XCTAssertEqual(overhead.counts[1], 0, name)  // h2_errors
            }
        }
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
                $0.message.kind.rawValue == truth.kind && $0.message.protocolFacts.stream.map { Int($0) } == truth.stream
                    && $0.message.isInterim == truth.interim
            }
            XCTAssertEqual(matching.count, 1, "\(truth.kind) on stream \(truth.stream)")
            guard let record = matching.first else { continue }
            let label = "\(truth.kind) stream \(truth.stream)"
            XCTAssertEqual(record.source.client, truth.client, label)
            XCTAssertEqual(record.wire.line, 0, label)
            XCTAssertEqual(record.wire.headers, truth.wire_headers, label)
            XCTAssertEqual(record.wire.body, truth.wire_body, label)
            XCTAssertEqual(record.message.protocolFacts.frames, truth.frames, label)
            XCTAssertEqual(record.message.complete, truth.complete, label)
            XCTAssertEqual(record.message.anomalies.contains(.pushed), truth.pushed, label)
            XCTAssertNotNil(record.message.protocolFacts.headerListSize, label)
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
        let overhead = try XCTUnwrap(connection.counters[.h2Frames])
        let clientMessages = records.filter { $0.message.kind == .request && !$0.message.anomalies.contains(.pushed) }
        let serverMessages = records.filter { $0.message.kind == .response || $0.message.anomalies.contains(.pushed) }
        XCTAssertEqual(
            clientMessages.reduce(overhead.clientBytes) { $0 + ($1.wire.total ?? 0) }, connection.clientTCPBytes)
        XCTAssertEqual(
            serverMessages.reduce(overhead.serverBytes) { $0 + ($1.wire.total ?? 0) }, connection.serverTCPBytes)
        XCTAssertEqual(overhead.client["preface"], FrameTypeCount(frames: 1, bytes: 24))
        XCTAssertEqual(overhead.server["RST_STREAM"], FrameTypeCount(frames: 1, bytes: 13))
        XCTAssertEqual(overhead.counts[1], 0)  // h2_errors (after h2_streams)
    }

    /// curl's `Upgrade: h2c`: the request and the 101 are HTTP/1.1 records, the response comes
    /// as stream 1's frames, paired with the upgraded request; one row, protocol h2.
    func testUpgradeHandsTheConnectionToHTTP2() throws {
        let (records, connections) = try analyze("h2c-upgrade.pcap")
        let truth = try XCTUnwrap(try truths("h2c-upgrade.h2truth.jsonl").first)
        XCTAssertEqual(records.map { $0.message.status }, [nil, 101, 200])
        let request = records[0]
        let response = records[2]
        XCTAssertEqual(request.message.protocolFacts, ProtocolFacts())
        XCTAssertEqual(request.message.version, "HTTP/1.1")
        XCTAssertEqual(response.message.protocolFacts.stream, 1)
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
        let overhead = try XCTUnwrap(connection.counters[.h2Frames])
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
        XCTAssertEqual(diagnostics.counters[.h2Frames]?.connections, 1)
        XCTAssertEqual(diagnostics.counters[.h2Frames]?.client["preface"], FrameTypeCount(frames: 1, bytes: 24))
        XCTAssertEqual(diagnostics.counters[.h2Frames]?.server, overhead.server)
    }

    func testRepeatedRequestHeaderBlockIsSmallerThanTheFirst() throws {
        let (records, _) = try analyze("h2c-prior.pcap")
        let gets = records.filter {
            $0.message.kind == .request
                && $0.requestSummary.map { Array(RequestTarget($0.target).path) } == Array("/a".utf8)
        }
        XCTAssertEqual(gets.map { $0.message.protocolFacts.stream }, [1, 11])
        XCTAssertLessThan(gets[1].wire.headers ?? .max, gets[0].wire.headers ?? 0)
        // Same decoded fields, so the same header list size.
        XCTAssertEqual(gets[0].message.protocolFacts.headerListSize, gets[1].message.protocolFacts.headerListSize)
    }

    /// tshark's HTTP/2 dissector as the oracle: per stream and frame type, the frames and their
    /// bytes (9 + length) equal what the records and the connection's overhead counted.
    func testFramesAgreeWithTshark() throws {
        // tshark stops decompressing h2c-prior's 20,000-byte field (http2.header_size_exceeded):
        // header lists are the frame logs' to check there.
        try assertFramesAgreeWithTshark("h2c-prior.pcap", serverPort: 18520, decodeAs: true, compareHeaderLists: false)
        try assertFramesAgreeWithTshark("h2c-more.pcap", serverPort: 18522, decodeAs: true)
    }

    /// h2 over TLS between curl and nginx: no peer logged anything, tshark's decoding (with the
    /// key log curl wrote) is the truth: per stream and direction the header-block and DATA
    /// bytes, their frames, the header list size (RFC 7541 §4.1 from tshark's name and value
    /// lengths), and every connection frame by type.
    func testTLSSampleAgreesWithTshark() throws {
        let (records, connections) = try analyze("h2-nginx-curl.pcap", keys: ["h2-nginx-curl.keys"])
        XCTAssertEqual(connections.map(\.protocolKind), [.h2])
        XCTAssertEqual(connections.first?.decrypted, "yes")
        XCTAssertEqual(records.count, 10, "5 requests and 5 responses")
        // nginx answers the POST and resets stream 9 before curl's body arrives: the body is
        // still the request's (3,000 bytes in one DATA frame), which ends complete, stream-reset.
        let post = try XCTUnwrap(records.first { $0.message.kind == .request && $0.message.protocolFacts.stream == 9 })
        XCTAssertEqual(post.wire.body, 9 + 3000)
        XCTAssertTrue(post.message.complete)
        XCTAssertTrue(post.message.anomalies.contains(.streamReset))
        XCTAssertEqual(
            records.filter { $0.message.kind == .response }.compactMap(\.message.status), [200, 200, 200, 304, 200])
        try assertFramesAgreeWithTshark(
            "h2-nginx-curl.pcap", serverPort: 18524, keys: "h2-nginx-curl.keys", records: records,
            connections: connections)
    }

    /// Sums per key: "S N headers" / "S N body" (S: from the server, N: stream) → bytes and
    /// header list, "S N" → frames; "S type T" → bytes of the frames no message owns.
    struct FrameSums: Equatable, CustomStringConvertible {
        var bytes: [String: Int] = [:]
        var frames: [String: Int] = [:]
        var headerList: [String: Int] = [:]
        var description: String {
            "bytes \(bytes.sorted { $0.key < $1.key })\nframes \(frames.sorted { $0.key < $1.key })\nheader lists \(headerList.sorted { $0.key < $1.key })"
        }
    }

    func assertFramesAgreeWithTshark(
        _ name: String, serverPort: Int, keys: String? = nil, decodeAs: Bool = false, compareHeaderLists: Bool = true,
        records given: [MessageRecord]? = nil, connections givenConnections: [ConnectionRow]? = nil
    ) throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark not installed") }
        var arguments = ["-r", Fixtures.sample(name)]
        if decodeAs { arguments += ["-d", "tcp.port==\(serverPort),http2"] }
        if let keys { arguments += ["-o", "tls.keylog_file:\(Fixtures.sample(keys))"] }
        arguments += [
            "-Y", "http2", "-T", "fields", "-e", "tcp.srcport", "-e", "http2.streamid", "-e", "http2.type", "-e",
            "http2.length", "-e", "http2.header.count", "-e", "http2.header.name.length", "-e",
            "http2.header.value.length", "-e", "http2.push_promise.promised_stream_id",
        ]
        let output = try runTool(tshark, arguments)
        var oracle = FrameSums()
        for line in output.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map {
                $0.split(separator: ",").map(String.init)
            }
            guard columns.count == 8, let port = columns[0].first else { continue }
            let fromServer = port == String(serverPort)
            let (streams, types, lengths) = (columns[1], columns[2], columns[3])
            var headerCounts = columns[4].compactMap { Int($0) }[...]
            var names = columns[5].compactMap { Int($0) }[...]
            var values = columns[6].compactMap { Int($0) }[...]
            var promised = columns[7][...]
            for i in 0..<min(streams.count, types.count, lengths.count) {
                guard let length = Int(lengths[i]), let type = Int(types[i]) else { continue }
                // A PUSH_PROMISE's block belongs to the promised stream's request.
                var stream = streams[i]
                if type == 5, let id = promised.popFirst() { stream = id }
                let key: String
                switch type {
                case 0: key = "\(fromServer) \(stream) body"
                case 1, 5, 9: key = "\(fromServer) \(stream) headers"
                default: key = "\(fromServer) type \(type)"
                }
                oracle.bytes[key, default: 0] += 9 + length
                if [0, 1, 5, 9].contains(type) { oracle.frames["\(fromServer) \(stream)", default: 0] += 1 }
                if type == 1 || type == 5, let count = headerCounts.popFirst(), compareHeaderLists {
                    // RFC 7541 §4.1: each field costs its name, its value and 32.
                    for _ in 0..<count {
                        oracle.headerList[key, default: 0] += (names.popFirst() ?? 0) + (values.popFirst() ?? 0) + 32
                    }
                }
            }
        }
        let (records, connections) = try given.map { ($0, givenConnections ?? []) } ?? analyze(name)
        var ours = FrameSums()
        for record in records {
            let facts = record.message.protocolFacts
            guard facts.wireProtocol == .h2, let stream = facts.stream, let frames = facts.frames else { continue }
            let fromServer = record.message.kind == .response || record.message.anomalies.contains(.pushed)
            for (part, size) in [("headers", record.wire.headers), ("body", record.wire.body)] {
                guard let size, size > 0 else { continue }
                ours.bytes["\(fromServer) \(stream) \(part)", default: 0] += size
            }
            ours.frames["\(fromServer) \(stream)", default: 0] += frames
            if let headers = record.wire.headers, headers > 0, compareHeaderLists {
                ours.headerList["\(fromServer) \(stream) headers", default: 0] += facts.headerListSize ?? 0
            }
        }
        let overhead = try XCTUnwrap(connections.first?.counters[.h2Frames], name)
        let types = ["SETTINGS": 4, "PING": 6, "GOAWAY": 7, "WINDOW_UPDATE": 8, "RST_STREAM": 3, "PRIORITY": 2]
        for (fromServer, counts) in [(false, overhead.client), (true, overhead.server)] {
            for (name, count) in counts where name != "preface" {
                ours.bytes["\(fromServer) type \(types[name] ?? -1)", default: 0] += count.bytes
            }
        }
        XCTAssertFalse(oracle.bytes.isEmpty, name)
        XCTAssertEqual(ours.bytes, oracle.bytes, name)
        XCTAssertEqual(ours.frames, oracle.frames, name)
        XCTAssertEqual(ours.headerList, oracle.headerList, name)
    }

    /// The HTTP/2 headers figures of report.md over h2c-prior (docs/FIGURES.md, HTTP/2 headers):
    /// Σ wire_headers per direction equals the sender's frame log over the complete messages,
    /// and the one reset response (incomplete, unmeasured) is left out.
    func testHeaderCompressionTotalsMatchTheFrameLog() throws {
        let options = AnalysisOptions()
        var aggregation = Aggregation(estimators: options.estimators)
        for record in try analyze("h2c-prior.pcap").records { aggregation.add(record) }
        let truths = try truths("h2c-prior.h2truth.jsonl")
        for direction in [RecordClass.request, .response, .interim] {
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
