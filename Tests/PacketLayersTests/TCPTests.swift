import CaptureIO
import PacketLayers
import TestSupport
import XCTest

final class TCPTests: XCTestCase {
    private let a = endpoint("172.16.0.1:65535")
    private let b = endpoint("172.16.0.2:1")

    func testHeaderFields() throws {
        let bytes = PacketBuilder.tcp(
            from: a, to: b, seq: 0xFFFF_FFFF, ack: 0x8000_0001,
            flags: [.syn, .ack, .ece, .cwr, .urg, .fin, .rst, .psh], window: 0xBEEF)
        let segment = try decodeSegment(bytes)
        XCTAssertEqual(segment.source.port, 65535)
        XCTAssertEqual(segment.destination.port, 1)
        XCTAssertEqual(segment.sequence, 0xFFFF_FFFF)
        XCTAssertEqual(segment.acknowledgment, 0x8000_0001)
        XCTAssertEqual(segment.flags.rawValue, 0xFF)
        XCTAssertEqual(segment.window, 0xBEEF)
        XCTAssertEqual(segment.payload, [])
        XCTAssertEqual(segment.payloadLength, 0)
    }

    func testOptionsAreSkipped() throws {
        let options =
            PacketBuilder.TCPOption.mss(1460) + [1] + PacketBuilder.TCPOption.windowScale(7)
            + PacketBuilder.TCPOption.sackPermitted + PacketBuilder.TCPOption.timestamps(1, echo: 0)
        let bytes = PacketBuilder.tcp(from: a, to: b, flags: [.syn], options: options, payload: [0xAA, 0xBB])
        let segment = try decodeSegment(bytes)
        XCTAssertEqual(segment.payload, [0xAA, 0xBB])
        XCTAssertEqual(segment.ipLength, 20 + 40 + 2)
        // 40 bytes of options: data offset 15.
        let maximum = PacketBuilder.tcp(from: a, to: b, options: [UInt8](repeating: 1, count: 40), payload: [1])
        XCTAssertEqual(try decodeSegment(maximum).payload, [1])
    }

    func testImpossibleDataOffsets() {
        let good = PacketBuilder.tcp(from: a, to: b, payload: [1, 2, 3, 4])
        for dataOffset: UInt8 in 0..<5 {
            var bytes = good
            bytes[14 + 20 + 12] = dataOffset << 4
            XCTAssertEqual(decodeOutcome(bytes), .skipped(.malformedTCP), "data offset \(dataOffset)")
        }
        // Beyond the segment: 24 bytes in all, 28 announced.
        var beyond = good
        beyond[14 + 20 + 12] = 7 << 4
        XCTAssertEqual(decodeOutcome(beyond), .skipped(.malformedTCP))
        // Exactly the segment: all options, no payload.
        var exact = good
        exact[14 + 20 + 12] = 6 << 4
        XCTAssertEqual(decodeOutcome(exact).segment?.payloadLength, 0)
    }

    func testTruncatedInsideTheHeader() {
        let bytes = PacketBuilder.tcp(
            from: a, to: b, options: PacketBuilder.TCPOption.timestamps(5, echo: 6),
            payload: [UInt8](repeating: 1, count: 100))
        for keep in (14 + 20)..<(14 + 20 + 32) {
            XCTAssertEqual(
                decodeOutcome(Array(bytes.prefix(keep)), originalLength: bytes.count),
                .skipped(.truncatedHeader), "cut at \(keep)")
        }
    }
}
