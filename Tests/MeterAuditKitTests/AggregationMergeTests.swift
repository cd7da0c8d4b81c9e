import Analysis
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// Aggregates are mergeable: two halves of the inputs, merged, give the figures of one run.
final class AggregationMergeTests: XCTestCase {
    func testHalvesMergeIntoTheWhole() throws {
        let captures = try SampleTruthTests.samplePairs().map(\.0)
        XCTAssertGreaterThan(captures.count, 4)
        let analyzer = InputAnalyzer()
        func aggregate(_ paths: [String]) -> Aggregation {
            var aggregation = Aggregation(estimators: analyzer.options.estimators)
            for path in paths { _ = analyzer.analyze(path: path) { aggregation.add($0) } }
            return aggregation
        }
        let whole = aggregate(captures)
        let middle = captures.count / 2
        var merged = aggregate(Array(captures[middle...])) // the second half first: order must not matter
        merged.merge(aggregate(Array(captures[..<middle])))
        XCTAssertEqual(merged.orderFree, whole.orderFree)
        XCTAssertFalse(whole.groups.isEmpty)
        let requests = try XCTUnwrap(whole.totals[.request])
        XCTAssertGreaterThan(requests.records, 50)
    }
}
