import Analysis
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// Every capture in Samples/ against the ground truth its senders logged while writing the
/// bytes (scripts/make-samples): each message's wire_line, wire_headers, wire_body and
/// body_decoded, and no record the senders did not send.
final class SampleTruthTests: XCTestCase {
    struct Truth: Decodable {
        var client: String
        var server: String
        var kind: String
        var index: Int
        var wire_line: Int
        var wire_headers: Int
        var wire_body: Int
        var body_decoded: Int
        var complete: Bool
        var method: String?
        var status: Int?
    }

    static let captureExtensions = [".pcap", ".pcapng", ".pcap.gz", ".pcapng.gz"]

    /// (capture path, truth path) for every truth file in Samples/.
    static func samplePairs() throws -> [(String, String)] {
        let samples = Fixtures.root.appendingPathComponent("Samples").path
        let names = try FileManager.default.contentsOfDirectory(atPath: samples).sorted()
        return names.filter { $0.hasSuffix(".truth.jsonl") }.compactMap { truthName in
            let base = String(truthName.dropLast(".truth.jsonl".count))
            guard let capture = captureExtensions.map({ base + $0 }).first(where: names.contains) else { return nil }
            return (samples + "/" + capture, samples + "/" + truthName)
        }
    }

    func testSamplesExistWithTruth() throws {
        let pairs = try Self.samplePairs()
        XCTAssertGreaterThanOrEqual(pairs.count, 8, "Samples/ should hold the generated captures")
    }

    /// Every TLS sample (a capture with its key log in Samples/, or with its secrets inside: the
    /// -dsb pcapng) has its senders' truth, so the test below checks its decrypted records:
    /// curl's --trace (both directions), pyhttp.py's logs, or for tls13-keyupdate the requests
    /// written to openssl s_client and nginx's logs. tls13-nokey has no key and no truth;
    /// h2-nginx-curl (HTTP/2) is tshark's to check; meter-app (an app's meters, TLS in part) has
    /// its tags as truth (meter-app.tags.jsonl, checked by MeterRunTests and, against tshark, by
    /// scripts/meter-app/check.py when it is made).
    func testEveryTLSSampleHasTruth() throws {
        let names = try FileManager.default.contentsOfDirectory(
            atPath: Fixtures.root.appendingPathComponent("Samples").path)
        let keyed = names.filter { $0.hasSuffix(".keys") }.map { String($0.dropLast(".keys".count)) }
        let embedded = names.filter { $0.hasSuffix("-dsb.pcapng") }.map { String($0.dropLast(".pcapng".count)) }
        // The HTTP/2 ones over TLS (h2-*) have tshark's decoding as their truth, checked by
        // HTTP2SampleTests.testTLSSampleAgreesWithTshark.
        // The HTTP/3 ones (h3-*, QUIC) have their peers' qlog as truth in Tests/Fixtures/h3/,
        // checked by HTTP3SampleTests.
        let tlsSamples = Set(keyed + embedded).filter { !$0.hasPrefix("h2-") && !$0.hasPrefix("h3-") && $0 != "meter-app" }
        for sample in Set(keyed).filter({ $0.hasPrefix("h3-") }) {
            XCTAssertTrue(
                FileManager.default.fileExists(atPath: Fixtures.path("h3/\(sample).truth.json")), "\(sample) has no truth")
        }
        // tls12-nginx-curl, tls12-python, tls12-resume, tls13-keyupdate, tls13-nginx-curl,
        // tls13-nginx-curl-dsb, tls13-proxy-curl, tls13-python
        XCTAssertEqual(tlsSamples.count, 8)
        let checked = try Self.samplePairs().map { ($0.0 as NSString).lastPathComponent }
        for sample in tlsSamples.sorted() {
            XCTAssertTrue(names.contains(sample + ".truth.jsonl"), "\(sample) has no truth")
            XCTAssertTrue(checked.contains { $0.hasPrefix(sample + ".pcap") }, "\(sample) is not checked")
        }
    }

    func testEveryMessageMatchesItsSendersLog() throws {
        var checked = 0
        for (capture, truthPath) in try Self.samplePairs() {
            let truths = try String(contentsOfFile: truthPath, encoding: .utf8)
                .split(separator: "\n").map { try JSONDecoder().decode(Truth.self, from: Data($0.utf8)) }
            var records: [MessageRecord] = []
            let diagnostics = InputAnalyzer(options: try .withSampleKeys()).analyze(path: capture) {
                records.append($0)
            }
            let name = (capture as NSString).lastPathComponent
            XCTAssertNil(diagnostics.error, name)
            XCTAssertEqual(records.count, truths.count, "\(name): record count")
            var byKey: [String: MessageRecord] = [:]
            for record in records {
                byKey["\(record.source.client) \(record.message.kind.rawValue) \(record.message.index)"] = record
            }
            for truth in truths {
                let key = "\(truth.client) \(truth.kind) \(truth.index)"
                guard let record = byKey[key] else {
                    XCTFail("\(name): no record for \(key)")
                    continue
                }
                let message = record.message
                let context = "\(name) \(key)"
                XCTAssertEqual(record.source.server, truth.server, context)
                XCTAssertEqual(record.wire.line, truth.wire_line, "\(context) wire_line")
                XCTAssertEqual(record.wire.headers, truth.wire_headers, "\(context) wire_headers")
                XCTAssertEqual(record.wire.body, truth.wire_body, "\(context) wire_body")
                XCTAssertEqual(record.bodyDecoded, truth.body_decoded, "\(context) body_decoded")
                XCTAssertEqual(message.complete, truth.complete, "\(context) complete")
                if let method = truth.method {
                    XCTAssertEqual(message.method ?? record.requestSummary?.method, method, context)
                }
                if let status = truth.status { XCTAssertEqual(message.status, status, context) }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 50)
    }
}
