import Analysis
import Estimation
import Foundation
import MessageModel
import MeterAuditKit
import TestSupport
import XCTest

/// The estimates of every HTTP/3 record against what `scripts/expected-h3-estimates` computes
/// on its own from the peers' logs (Tests/Fixtures/h3/NAME.truth.json and the decrypted STREAM
/// frames; Python, zlib): docs/METERING.md §4 with §2a's rules, the status line `HTTP/3 {status}`.
/// Its output is kept as Tests/Fixtures/h3/NAME.estimates.jsonl.
final class HTTP3EstimateTests: XCTestCase {
    struct Expected: Decodable {
        var stream: Int
        var kind: String
        var interim: Bool
        var pushed: Bool
        var est_documented_line: Int?
        var est_documented_headers: Int?
        var est_documented_body: Int?
        var est_naive_body: Int?
    }

    /// The keyed samples with known heads (h3-midconn's capture begins after the handshake: its
    /// connection is found by trial, but most heads are unknown and no script computes their
    /// estimates; h3-nokey has no key).
    static let samples = ["h3-mixed", "h3-v2", "h3-loss", "h3-download"]

    private func expected(_ name: String) throws -> [Expected] {
        let text = try String(contentsOfFile: Fixtures.path("h3/\(name).estimates.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Expected.self, from: Data($0.utf8)) }
    }

    private func records(_ name: String) throws -> [MessageRecord] {
        guard
            let pcap = [".pcap", ".pcap.gz"].map({ Fixtures.sample(name + $0) })
                .first(where: FileManager.default.fileExists(atPath:))
        else { throw XCTSkip("Samples/\(name).pcap is missing") }
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample(name + ".keys")])
        var records: [MessageRecord] = []
        _ = InputAnalyzer(options: options).analyze(path: pcap) { records.append($0) }
        return records
    }

    /// Every record of the keyed samples has one expected line, and its naive and documented
    /// estimates equal it; no expected line is left without a record.
    func testEstimatesEqualTheIndependentScript() throws {
        let names = AnalysisOptions().estimators.names
        let naiveAt = try XCTUnwrap(names.firstIndex(of: "naive"))
        let documentedAt = try XCTUnwrap(names.firstIndex(of: "documented"))
        var checked = 0
        for name in Self.samples {
            let records = try records(name)
            let expected = try expected(name)
            XCTAssertEqual(records.count, expected.count, name)
            for record in records {
                let facts = record.message.protocolFacts
                XCTAssertEqual(facts.wireProtocol, .h3, name)
                let pushed = record.message.anomalies.contains(.pushed)
                let label =
                    "\(name) stream \(facts.stream ?? 0) \(record.message.kind.rawValue)"
                    + (record.message.isInterim ? " interim" : "") + (pushed ? " pushed" : "")
                let matching = expected.filter {
                    UInt64($0.stream) == facts.stream && $0.kind == record.message.kind.rawValue
                        && $0.interim == record.message.isInterim && $0.pushed == pushed
                }
                guard matching.count == 1, let want = matching.first else {
                    XCTFail("\(label): \(matching.count) expected lines")
                    continue
                }
                checked += 1
                XCTAssertTrue(record.message.fieldsKnown, label)
                XCTAssertEqual(
                    record.estimates[documentedAt],
                    .success(
                        Estimate(
                            line: want.est_documented_line ?? -1, headers: want.est_documented_headers ?? -1,
                            body: want.est_documented_body ?? -1)), label)
                XCTAssertEqual(
                    record.estimates[naiveAt], .success(Estimate(line: 0, headers: 0, body: want.est_naive_body ?? -1)),
                    label)
            }
        }
        // 19 + 4 + 16 + 4 messages in the four truth files: every one has its record.
        XCTAssertEqual(checked, 43)
    }

    /// The fixture is what the script writes today from the truth (skipped without python3).
    func testFixturesAreTheScriptsOutput() throws {
        guard let python = executable("python3") else { throw XCTSkip("python3 not installed") }
        for name in Self.samples {
            var arguments = [
                Fixtures.root.appendingPathComponent("scripts/expected-h3-estimates").path,
                Fixtures.path("h3/\(name).truth.json"),
            ]
            let streams = Fixtures.path("h3/\(name).streams.jsonl")
            if FileManager.default.fileExists(atPath: streams) { arguments += ["--streams", streams] }
            let output = try runTool(python, arguments)
            let fixture = try String(contentsOfFile: Fixtures.path("h3/\(name).estimates.jsonl"), encoding: .utf8)
            XCTAssertEqual(output, fixture, name)
        }
    }
}
