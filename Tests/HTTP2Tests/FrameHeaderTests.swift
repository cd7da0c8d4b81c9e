import XCTest

@testable import HTTP2

final class FrameHeaderTests: XCTestCase {
    func testParsesLengthTypeFlagsAndStreamWithReservedBitCleared() {
        // length 0x010203 = 66051, type HEADERS, flags END_STREAM|END_HEADERS = 5, stream 0x80000003 → 3
        let header = FrameHeader(parsing: [0x01, 0x02, 0x03, 0x01, 0x05, 0x80, 0x00, 0x00, 0x03])
        XCTAssertEqual(header.length, 66051)
        XCTAssertEqual(header.knownType, .headers)
        XCTAssertTrue(header.has(FrameFlags.endStream))
        XCTAssertTrue(header.has(FrameFlags.endHeaders))
        XCTAssertFalse(header.has(FrameFlags.padded))
        XCTAssertEqual(header.streamID, 3)
        XCTAssertEqual(header.wireSize, 66060)
    }
}
