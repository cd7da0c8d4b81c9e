import Analysis
import Estimation
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// Every capture in Samples/ against the `naive` and `documented` estimates that
/// `scripts/expected-estimates` computes from the capture bytes on its own (Python, zlib),
/// following docs/METERING.md §4 literally: Tests/Fixtures/estimates/<capture>.estimates.jsonl,
/// one line per truth message. A `null` component means "unavailable" and must be a
/// `.failure` of that estimator.
final class SampleEstimateTests: XCTestCase {
    struct Expected: Decodable {
        var client: String
        var kind: String
        var index: Int
        var est_documented_line: Int?
        var est_documented_headers: Int?
        var est_documented_body: Int?
        var est_naive_body: Int?
    }

    /// (capture path, fixture path) for every estimates fixture.
    static func fixturePairs() throws -> [(String, String)] {
        let dir = Fixtures.path("estimates")
        let samples = Fixtures.root.appendingPathComponent("Samples").path
        let sampleNames = try FileManager.default.contentsOfDirectory(atPath: samples)
        return try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            .filter { $0.hasSuffix(".estimates.jsonl") }
            .map { name in
                let base = String(name.dropLast(".estimates.jsonl".count))
                let capture = SampleTruthTests.captureExtensions.map { base + $0 }.first(where: sampleNames.contains)
                return (capture.map { samples + "/" + $0 } ?? samples + "/" + base + " (no capture)", dir + "/" + name)
            }
    }

    func testEveryMessageMatchesTheIndependentEstimates() throws {
        let analyzer = InputAnalyzer(options: try .withSampleKeys())
        let names = analyzer.options.estimators.names
        let naiveAt = try XCTUnwrap(names.firstIndex(of: "naive"), "estimators: \(names)")
        let documentedAt = try XCTUnwrap(names.firstIndex(of: "documented"), "estimators: \(names)")
        var checked = 0
        var unavailable = 0
        let pairs = try Self.fixturePairs()
        XCTAssertGreaterThanOrEqual(pairs.count, 8, "Tests/Fixtures/estimates should hold one fixture per sample")
        for (capture, fixture) in pairs {
            let name = (capture as NSString).lastPathComponent
            XCTAssertTrue(FileManager.default.fileExists(atPath: capture), "\(fixture): no capture \(capture)")
            let expected = try String(contentsOfFile: fixture, encoding: .utf8)
                .split(separator: "\n").map { try JSONDecoder().decode(Expected.self, from: Data($0.utf8)) }
            var records: [MessageRecord] = []
            let diagnostics = analyzer.analyze(path: capture) { records.append($0) }
            XCTAssertNil(diagnostics.error, name)
            XCTAssertEqual(records.count, expected.count, "\(name): record count")
            var byKey: [String: MessageRecord] = [:]
            for record in records {
                byKey["\(record.source.client) \(record.message.kind.rawValue) \(record.message.index)"] = record
            }
            for want in expected {
                let key = "\(want.client) \(want.kind) \(want.index)"
                let context = "\(name) \(key)"
                guard let record = byKey[key] else {
                    XCTFail("\(name): no record for \(key)")
                    continue
                }
                guard record.estimates.count == names.count else {
                    XCTFail("\(context): \(record.estimates.count) estimates, estimators \(names)")
                    continue
                }
                // naive: line and headers are 0, body is the figure
                switch (record.estimates[naiveAt], want.est_naive_body) {
                case let (.success(got), body?):
                    XCTAssertEqual(got, Estimate(line: 0, headers: 0, body: body), "\(context) naive")
                case let (.success(got), nil):
                    XCTFail("\(context) naive: expected unavailable, got \(got)")
                case let (.failure(why), body?):
                    XCTFail("\(context) naive: expected body \(body), got unavailable (\(why.rawValue))")
                case (.failure, nil):
                    unavailable += 1
                }
                // documented: any null component makes the whole estimate unavailable
                if let line = want.est_documented_line, let headers = want.est_documented_headers,
                    let body = want.est_documented_body
                {
                    switch record.estimates[documentedAt] {
                    case let .success(got):
                        XCTAssertEqual(got.line, line, "\(context) documented line")
                        XCTAssertEqual(got.headers, headers, "\(context) documented headers")
                        XCTAssertEqual(got.body, body, "\(context) documented body")
                    case let .failure(why):
                        XCTFail(
                            "\(context) documented: expected \(line)/\(headers)/\(body), got unavailable (\(why.rawValue))"
                        )
                    }
                } else {
                    if case let .success(got) = record.estimates[documentedAt] {
                        XCTFail(
                            "\(context) documented: expected unavailable "
                                + "(\(String(describing: want.est_documented_line))/\(String(describing: want.est_documented_headers))/"
                                + "\(String(describing: want.est_documented_body))), got \(got)")
                    } else {
                        unavailable += 1
                    }
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 100, "messages checked against the estimates fixtures")
        XCTAssertGreaterThan(unavailable, 0, "the snaplen sample must exercise an unavailable estimate")
    }
}
