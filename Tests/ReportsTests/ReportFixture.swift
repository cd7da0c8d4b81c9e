import Analysis
import ContentCoding
import Estimation
import MessageModel
import PacketLayers
import Records
@testable import Reports

/// A hand-made run whose every figure is counted by hand in ReportTests.
///
/// Estimators: `naive` then `documented` (the run's order). Records:
///
/// | id | kind | endpoint | wire line/headers/body = total | naive | documented |
/// | --- | --- | --- | --- | --- | --- |
/// | R1, R2 | request | GET api.test /users/{id} | 30/170/0 = 200 | 0 | 40/60/0 = 100 |
/// | S1 | response | same | 17/183/800 = 1000 | 800 | 15/183/900 = 1098 |
/// | S2 | response | same | 17/183/300 = 500 | 300 | 15/183/300 = 498 |
/// | R3 | request | POST api.test /upload | 40/160/4800 = 5000 | 4800 | 50/100/4800 = 4950 |
/// | I1 | interim 100 | same | 25/2/0 = 27 | 0 | 23/2/0 = 25 |
/// | S3 | response | same | 17/83/0 = 100 | 0 | 15/83/0 = 98 |
/// | U1 | response, unpaired | ? 10.0.0.2:80 ? | 17/63/20 = 100 | 20 | body not decoded |
/// | X1 | request | GET api.test /v1/…/settings (83 characters) | 80/120/0 = 200 | 0 | 90/100/0 = 190 |
/// | M1 | response, incomplete, unmeasured | same as X1 | (17/50/10) | 10 | 15/50/10 |
enum ReportFixture {
    static let estimators = ["naive", "documented"]
    /// `documented` ranks the endpoints, as `EstimatorSet.standard` declares.
    static let rankingEstimator = 1
    static let client = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 50000)
    static let server = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80)
    static let longPath = "/v1/organizations/acme/projects/website/repositories/frontend/settings"

    /// A fixture message with its connection and its wire line, headers and body.
    struct Sized {
        var message: HTTPMessage
        var connection: Int
        var wire: (Int, Int, Int)
    }

    static func request(
        conn: Int, index: Int, method: String = "GET", target: String, pair: Int?,
        wire: (Int, Int, Int)
    ) -> Sized {
        var message = HTTPMessage(kind: .request, index: index)
        message.method = method
        message.target = Array(target.utf8)
        message.version = "HTTP/1.1"
        message.startLine = Array("\(method) \(target) HTTP/1.1".utf8)
        message.fields = [HeaderField("Host", "api.test")]
        message.bodyLength = wire.2
        message.complete = true
        message.pair = pair
        return Sized(message: message, connection: conn, wire: wire)
    }

    static func response(
        conn: Int, index: Int, status: Int = 200, answering sizedRequest: Sized?, pair: Int?,
        wire: (Int, Int, Int), complete: Bool = true
    ) -> Sized {
        let request = sizedRequest?.message
        var message = HTTPMessage(kind: .response, index: index)
        message.status = status
        message.version = "HTTP/1.1"
        message.startLine = Array("HTTP/1.1 \(status) X".utf8)
        message.bodyLength = wire.2
        message.complete = complete
        message.pair = pair
        message.request = request.map {
            RequestSummary(index: $0.index, method: $0.method!, target: $0.target, host: $0.requestHost)
        }
        return Sized(message: message, connection: conn, wire: wire)
    }

    static func record(
        _ sized: Sized, measured: Bool = true,
        naive: (Int, Int, Int), naiveCauses: [(WireComponent, String, Int)],
        documented: (Int, Int, Int)?, documentedCauses: [(WireComponent, String, Int)] = []
    ) -> MessageRecord {
        let estimates: [Result<Estimate, EstimateUnavailable>] = [
            .success(Estimate(line: naive.0, headers: naive.1, body: naive.2)),
            documented.map { .success(Estimate(line: $0.0, headers: $0.1, body: $0.2)) } ?? .failure(.bodyNotDecoded),
        ]
        let wire = WireSize(
            line: sized.wire.0, headers: sized.wire.1, body: sized.wire.2,
            total: sized.wire.0 + sized.wire.1 + sized.wire.2, source: .capture,
            tls: sized.wire.0 + sized.wire.1 + sized.wire.2) // cleartext TCP: no TLS overhead
        let source = RecordSource.capture(
            CaptureFlow(
                connection: sized.connection, client: client, server: server,
                time: 1_700_000_000_000_000_000))
        var record = MessageRecord(
            input: "fixture.pcap", source: source, message: sized.message, wire: wire,
            measured: measured, bodyDecoded: sized.wire.2, decoding: .identity, estimates: estimates)
        record.causes = [
            naiveCauses.map { ErrorCause($0.0, $0.1, $0.2) },
            documented == nil ? [] : documentedCauses.map { ErrorCause($0.0, $0.1, $0.2) },
        ]
        return record
    }

    /// Every record of the fixture, in capture order.
    static var records: [MessageRecord] {
        let r1 = request(conn: 0, index: 0, target: "/users/42", pair: 0, wire: (30, 170, 0))
        let r2 = request(conn: 0, index: 1, target: "/users/43?full=1", pair: 1, wire: (30, 170, 0))
        let s1 = response(conn: 0, index: 0, answering: r1, pair: 0, wire: (17, 183, 800))
        let s2 = response(conn: 0, index: 1, answering: r2, pair: 1, wire: (17, 183, 300))
        let r3 = request(conn: 1, index: 0, method: "POST", target: "/upload", pair: 1, wire: (40, 160, 4800))
        let i1 = response(conn: 1, index: 0, status: 100, answering: r3, pair: nil, wire: (25, 2, 0))
        let s3 = response(conn: 1, index: 1, answering: r3, pair: 0, wire: (17, 83, 0))
        let u1 = response(conn: 2, index: 0, answering: nil, pair: nil, wire: (17, 63, 20))
        let x1 = request(conn: 3, index: 0, target: longPath, pair: 0, wire: (80, 120, 0))
        let m1 = response(conn: 3, index: 0, answering: x1, pair: 0, wire: (17, 50, 10), complete: false)

        let documentedRequest: [(WireComponent, String, Int)] = [
            (.line, "request line written as \"host method path HTTP/1.1 query\\n\"", 10),
            (.headers, "stack-added request fields", -120),
            (.headers, "header formatting (merged fields, spacing, line ends)", 10),
        ]
        return [
            record(
                r1, naive: (0, 0, 0),
                naiveCauses: [(.line, "request line not counted", -30), (.headers, "header fields not counted", -170)],
                documented: (40, 60, 0), documentedCauses: documentedRequest),
            record(
                r2, naive: (0, 0, 0),
                naiveCauses: [(.line, "request line not counted", -30), (.headers, "header fields not counted", -170)],
                documented: (40, 60, 0), documentedCauses: documentedRequest),
            record(
                s1, naive: (0, 0, 800),
                naiveCauses: [(.line, "status line not counted", -17), (.headers, "header fields not counted", -183)],
                documented: (15, 183, 900),
                documentedCauses: [
                    (.line, "status-line CRLF", -2), (.body, "decoded body counted instead of the coded one", 100),
                ]),
            record(
                s2, naive: (0, 0, 300),
                naiveCauses: [(.line, "status line not counted", -17), (.headers, "header fields not counted", -183)],
                documented: (15, 183, 300), documentedCauses: [(.line, "status-line CRLF", -2)]),
            record(
                r3, naive: (0, 0, 4800),
                naiveCauses: [(.line, "request line not counted", -40), (.headers, "header fields not counted", -160)],
                documented: (50, 100, 4800),
                documentedCauses: [
                    (.line, "request line written as \"host method path HTTP/1.1 query\\n\"", 10),
                    (.headers, "stack-added request fields", -70),
                    (.headers, "header formatting (merged fields, spacing, line ends)", 10),
                ]),
            record(
                i1, naive: (0, 0, 0),
                naiveCauses: [(.line, "status line not counted", -25), (.headers, "header fields not counted", -2)],
                documented: (23, 2, 0), documentedCauses: [(.line, "status-line CRLF", -2)]),
            record(
                s3, naive: (0, 0, 0),
                naiveCauses: [(.line, "status line not counted", -17), (.headers, "header fields not counted", -83)],
                documented: (15, 83, 0), documentedCauses: [(.line, "status-line CRLF", -2)]),
            record(
                u1, naive: (0, 0, 20),
                naiveCauses: [(.line, "status line not counted", -17), (.headers, "header fields not counted", -63)],
                documented: nil),
            record(
                x1, naive: (0, 0, 0),
                naiveCauses: [(.line, "request line not counted", -80), (.headers, "header fields not counted", -120)],
                documented: (90, 100, 0),
                documentedCauses: [
                    (.line, "request line written as \"host method path HTTP/1.1 query\\n\"", 10),
                    (.headers, "stack-added request fields", -20),
                ]),
            record(m1, measured: false, naive: (0, 0, 10), naiveCauses: [], documented: (15, 50, 10)),
        ]
    }

    static func aggregation(_ records: [MessageRecord]) -> Aggregation {
        var aggregation = Aggregation(estimatorNames: estimators, rankingEstimator: rankingEstimator)
        for record in records { aggregation.add(record) }
        return aggregation
    }

    static var inputs: [InputDiagnostics] {
        var first = InputDiagnostics(source: "fixture.pcap", path: "Samples/fixture.pcap")
        first.format = "pcap"
        first.packets.read = 1234
        first.packets.tcp = 1200
        first.packets.skipped = [.notTCP: 34]
        first.connections.total = 5
        first.connections.http = 4
        first.connections.tls = 1
        first.connections.unterminated = 1
        first.connections.skippedBytes = 4000
        first.gaps.count = 2
        first.gaps.bytes = 1448
        first.records.requests = 4
        first.records.responses = 6
        first.records.interim = 1
        first.records.complete = 9
        first.records.incomplete = 1
        first.records.paired = 8
        first.records.unpaired = 1
        first.tls.connections = 1
        first.tls.bytes = 5120
        first.tls.serverNames = ["secure.test"]
        first.tls.notDecrypted = ["no-key": 1]
        first.tls.undecryptedBytes = ["secure.test": 5120]
        first.unestimated = ["documented": [.bodyNotDecoded: 1]]
        first.notes = [.bodyDecodingFailed: 1]
        var second = InputDiagnostics(source: "broken_file.pcap", path: "broken_file.pcap")
        second.readable = false
        second.error = "broken_file.pcap: not a capture file"
        return [first, second]
    }

    static var run: RunReport {
        RunReport(
            inputs: inputs, aggregation: aggregation(records),
            settings: [("profile", "urlsession"), ("gzip level", "6")])
    }
}
