import Estimation
import XCTest

@testable import Analysis

/// A cause counts under its name, whether an estimator numbered it or named it as text.
final class CauseTalliesTests: XCTestCase {
    func testKnownCausesByNumberAndByNameShareOneTally() {
        var figures = CauseTallies()
        figures.add(RecordCause(ErrorCause(.line, .statusLineCRLF, -2)))
        figures.add(RecordCause(ErrorCause(.line, "status-line CRLF", -2)))
        figures.add(RecordCause(ErrorCause(.headers, "merged set-cookie fields", -12)))
        figures.add(RecordCause(ErrorCause(.headers, "merged set-cookie fields", -24)))
        let tallies = Dictionary(uniqueKeysWithValues: figures.all.map { ($0.name, $0.tally) })
        // -2 + -2 over two records; -12 + -24 over two records.
        XCTAssertEqual(tallies.count, 2)
        XCTAssertEqual(tallies["status-line CRLF"]?.bytes, -4)
        XCTAssertEqual(tallies["status-line CRLF"]?.records, 2)
        XCTAssertEqual(tallies["merged set-cookie fields"]?.bytes, -36)
        XCTAssertEqual(tallies["merged set-cookie fields"]?.records, 2)
    }

    func testMergedTalliesEqualTalliesCountedTogether() {
        let causes = [
            ErrorCause(.body, .chunkFraming, 17), ErrorCause(.headers, "merged via fields", -5),
            ErrorCause(.body, "chunk framing", 3),
        ]
        var together = CauseTallies()
        for cause in causes { together.add(RecordCause(cause)) }
        var first = CauseTallies()
        var second = CauseTallies()
        first.add(RecordCause(causes[0]))
        second.add(RecordCause(causes[1]))
        second.add(RecordCause(causes[2]))
        first.merge(second)
        XCTAssertEqual(first, together)
        // Merged into an empty table, the slots are taken as they are.
        var empty = CauseTallies()
        empty.merge(together)
        XCTAssertEqual(empty, together)
        XCTAssertNotEqual(CauseTallies(), together)
    }

    func testEveryKnownNameIsFoundByItsText() {
        for known in KnownCause.allCases { XCTAssertEqual(KnownCause.named(known.name), known) }
        XCTAssertNil(KnownCause.named("merged via fields"))
    }
}
