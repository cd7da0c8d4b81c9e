import XCTest

@testable import Analysis

final class HTTPProtocolTests: XCTestCase {
    /// `order` is written out by hand (a switch) for speed: it must stay each case's place in
    /// `allCases`, which `<` and `ProtocolCounts` were defined by.
    func testOrderIsThePlaceInAllCases() {
        for (place, wireProtocol) in HTTPProtocol.allCases.enumerated() {
            XCTAssertEqual(wireProtocol.order, place, "\(wireProtocol)")
        }
        XCTAssertEqual(HTTPProtocol.allCases.sorted(), [.http1, .h2, .h3, .unknown])
    }

    /// Each protocol counts on its own: 1 http1, 2 h2, 0 h3, 3 unknown.
    func testCountsKeepEachProtocolApart() {
        var counts = ProtocolCounts()
        counts[.http1] += 1
        counts[.h2] += 2
        counts[.unknown] += 3
        XCTAssertEqual(counts[.http1], 1)
        XCTAssertEqual(counts[.h2], 2)
        XCTAssertEqual(counts[.h3], 0)
        XCTAssertEqual(counts[.unknown], 3)
        XCTAssertEqual(counts.present.map(\.wireProtocol), [.http1, .h2, .unknown])
        XCTAssertEqual(counts.present.map(\.records), [1, 2, 3])
    }
}
