import CaptureIO
import XCTest

/// The pipeline's one saturating add, at both ends of Int (counts) and Int64 (timestamps).
final class SaturatingSumTests: XCTestCase {
    func testInt() {
        XCTAssertEqual(saturatingSum(Int.max, 1), .max)
        XCTAssertEqual(saturatingSum(Int.max - 5, 10), .max)
        XCTAssertEqual(saturatingSum(1, Int.max), .max)
        XCTAssertEqual(saturatingSum(Int.min, -1), .min)
        XCTAssertEqual(saturatingSum(Int.max, Int.min), -1)
        XCTAssertEqual(saturatingSum(40, 2), 42)
        XCTAssertEqual(saturatingSum(0, 0), 0)
    }

    func testInt64() {
        XCTAssertEqual(saturatingSum(Int64.max, 1), .max)
        XCTAssertEqual(saturatingSum(Int64.min, -1), .min)
        XCTAssertEqual(saturatingSum(Int64.max - 1_000_000_000, 1_000_000_000), .max)
        XCTAssertEqual(saturatingSum(Int64(5), -7), -2)
    }
}
