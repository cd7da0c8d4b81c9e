import Analysis
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// HTTP/3 through the whole run (UDP, QUIC decryption, stream ordering, the HTTP/3 reader):
/// every record of each keyed HTTP/3 sample against the peers' own qlog, as
/// scripts/h3-truth wrote it (Tests/Fixtures/h3/NAME.truth.json): per message, its stream,
/// HEADERS and DATA frame bytes, frames, header list size, decoded body and completeness.
final class HTTP3RunTests: XCTestCase {
    struct Key: Hashable, CustomStringConvertible {
        var stream: Int, kind: String, interim: Bool, pushed: Bool
        var description: String { "stream \(stream) \(pushed ? "pushed " : "")\(kind)\(interim ? " (interim)" : "")" }
    }
    struct Figures: Equatable {
        var wireHeaders: Int, wireBody: Int, frames: Int, headerList: Int?, bodyDecoded: Int?, complete: Bool
    }

    private func truth(_ name: String) throws -> [Key: Figures] {
        let url = URL(fileURLWithPath: Fixtures.path("h3/\(name).truth.json"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var result: [Key: Figures] = [:]
        for connection in json["connections"] as! [[String: Any]] {
            for message in connection["messages"] as! [[String: Any]] {
                let key = Key(
                    stream: message["stream"] as! Int, kind: message["kind"] as! String,
                    interim: message["interim"] as! Bool, pushed: message["pushed"] as! Bool)
                XCTAssertNil(result[key], "\(name): two messages at \(key)")
                result[key] = Figures(
                    wireHeaders: message["wire_headers"] as! Int, wireBody: message["wire_body"] as! Int,
                    frames: message["frames"] as! Int, headerList: message["header_list"] as? Int,
                    bodyDecoded: message["body_decoded"] as? Int, complete: message["complete"] as! Bool)
            }
        }
        return result
    }

    private func records(_ name: String) throws -> [Key: Figures] {
        guard let pcap = [".pcap", ".pcap.gz"].map({ Fixtures.sample(name + $0) })
            .first(where: FileManager.default.fileExists(atPath:))
        else { throw XCTSkip("Samples/\(name).pcap is missing") }
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample(name + ".keys")])
        var result: [Key: Figures] = [:]
        _ = InputAnalyzer(options: options).analyze(path: pcap) { record in
            let facts = record.message.protocolFacts
            XCTAssertEqual(facts.wireProtocol, .h3)
            let key = Key(
                stream: Int(facts.stream ?? UInt64.max), kind: record.message.kind == .request ? "request" : "response",
                interim: record.message.isInterim, pushed: record.message.anomalies.contains(.pushed))
            XCTAssertNil(result[key], "\(name): two records at \(key)")
            result[key] = Figures(
                wireHeaders: record.wire.headers ?? -1, wireBody: record.wire.body ?? -1, frames: facts.frames ?? -1,
                headerList: facts.headFieldsKnown ? facts.headerListSize : nil,
                bodyDecoded: record.bodyDecoded, complete: record.message.complete)
        }
        return result
    }

    /// h3-midconn, a capture cut 0.75 s into a pause after the first exchange: no handshake, only
    /// short headers. Its connection is found by trial of the key log's 1-RTT secrets, and its
    /// records equal what the peers logged as sent after the cut (the truth's `--after`) in frame
    /// bytes, frames, DATA payload and completeness; header list and decoded body only where the
    /// head is known (fields referring to QPACK inserts sent before the cut are unknown).
    func testMidConnectionCaptureEqualsThePeersLogsAfterTheCut() throws {
        let name = "h3-midconn"
        let expected = try truth(name)
        let url = URL(fileURLWithPath: Fixtures.path("h3/\(name).truth.json"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var bodies: [Key: Int] = [:]
        for message in (json["connections"] as! [[String: Any]])[0]["messages"] as! [[String: Any]] {
            let key = Key(
                stream: message["stream"] as! Int, kind: message["kind"] as! String,
                interim: message["interim"] as! Bool, pushed: message["pushed"] as! Bool)
            bodies[key] = message["body"] as? Int
        }
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample(name + ".keys")])
        var actual: [Key: (figures: Figures, body: Int, known: Bool)] = [:]
        var rows: [ConnectionRow] = []
        _ = InputAnalyzer(options: options).analyze(path: Fixtures.sample(name + ".pcap"), connection: { rows.append($0) }) {
            record in
            let facts = record.message.protocolFacts
            XCTAssertEqual(facts.wireProtocol, .h3)
            let key = Key(
                stream: Int(facts.stream ?? UInt64.max), kind: record.message.kind == .request ? "request" : "response",
                interim: record.message.isInterim, pushed: record.message.anomalies.contains(.pushed))
            XCTAssertNil(actual[key], "\(name): two records at \(key)")
            actual[key] = (
                Figures(
                    wireHeaders: record.wire.headers ?? -1, wireBody: record.wire.body ?? -1, frames: facts.frames ?? -1,
                    headerList: facts.headFieldsKnown ? facts.headerListSize : nil,
                    bodyDecoded: facts.headFieldsKnown ? record.bodyDecoded : nil, complete: record.message.complete),
                record.message.bodyLength, facts.headFieldsKnown
            )
        }
        XCTAssertEqual(expected.count, 6)
        XCTAssertEqual(Set(actual.keys), Set(expected.keys))
        var known = 0
        for (key, figures) in expected {
            guard let got = actual[key] else { continue }
            var wanted = figures
            if !got.known {
                wanted.headerList = nil
                wanted.bodyDecoded = nil
            } else {
                known += 1
            }
            XCTAssertEqual(got.figures, wanted, "\(name) \(key)")
            XCTAssertEqual(got.body, bodies[key], "\(name) \(key): DATA payload")
        }
        // The first request's fields are all static or literal; the others refer to inserts
        // the capture never saw.
        XCTAssertEqual(known, 1)
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(row.protocolKind, .h3)
        XCTAssertEqual(row.decrypted, "mid-connection")
        XCTAssertEqual(row.client, "127.0.0.1:58847") // the sender of the first datagram, the client's secret opening it
        XCTAssertEqual(row.tlsVersion, "QUIC v1")
        // 48-byte secrets: AES-256-GCM, the AEAD whose tag verified (aioquic prefers it).
        XCTAssertEqual(row.cipherSuite, "TLS_AES_256_GCM_SHA384")
        XCTAssertEqual(row.records, 6)
        XCTAssertEqual(row.serverName, "")
    }

    func testEveryKeyedSampleEqualsThePeersLogs() throws {
        for name in ["h3-mixed", "h3-v2", "h3-loss", "h3-download"] {
            let expected = try truth(name)
            let actual = try records(name)
            XCTAssertFalse(expected.isEmpty, name)
            XCTAssertEqual(Set(actual.keys), Set(expected.keys), name)
            for (key, figures) in expected {
                guard var got = actual[key] else { continue }
                // The truth has a decoded size only where the peers logged one.
                if figures.bodyDecoded == nil { got.bodyDecoded = nil }
                if figures.headerList == nil { got.headerList = nil }
                XCTAssertEqual(got, figures, "\(name) \(key)")
            }
        }
    }
}
