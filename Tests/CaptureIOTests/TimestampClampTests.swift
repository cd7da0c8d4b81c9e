@testable import CaptureIO
import TestSupport
import XCTest

/// Timestamps from the file never trap and never leave 1970-01-01 ... 2262-04-11 (Int64
/// nanoseconds); what had to be clamped or assumed is flagged on the frame. The fixtures are
/// written by scripts/make-crasher-fixtures; every expected value is computed by hand below.
final class TimestampClampTests: XCTestCase {
    private func frames(_ fixture: String, file: StaticString = #filePath, line: UInt = #line)
        throws -> [(timestamp: Int64, flags: TimestampFlags)]
    {
        let reader = try CaptureReader(path: Fixtures.path("crashers/" + fixture))
        var out: [(Int64, TimestampFlags)] = []
        while let frame = try reader.next() { out.append((frame.timestamp, frame.timestampFlags)) }
        return out
    }

    func testPcapSecondsAreUnsigned() throws {
        let read = try frames("pcap-ts-sec-high-bit.pcap")
        // 0x80000000 s = 2147483648 s, + 123456 µs; then + 124456 µs; 0xFFFFFFFF s + 999999 µs.
        XCTAssertEqual(
            read.map(\.timestamp),
            [
                2_147_483_648_123_456_000, 2_147_483_648_124_456_000,
                4_294_967_295_999_999_000,
            ])
        XCTAssertEqual(read.map(\.flags), [[], [], []])
    }

    func testPcapngTimeNear2To64MicrosecondsIsClamped() throws {
        let read = try frames("pcapng-timestamp-near-2p64.pcapng")
        // 1.7e15 µs = 1.7e18 ns fits; 2^64 - 500000 µs = 1.8e22 ns does not: Int64.max.
        XCTAssertEqual(read.map(\.timestamp), [1_700_000_000_000_000_000, Int64.max])
        XCTAssertEqual(read.map(\.flags), [[], .clamped])
    }

    func testWholeSecondResolutionOverMicrosecondValuesIsClamped() throws {
        let read = try frames("pcapng-tsresol-zero.pcapng")
        // if_tsresol 0: 1_700_005_816_973_888 s ≈ 1.7e24 ns, over Int64.max (9.2e18).
        XCTAssertEqual(read.map(\.timestamp), [Int64.max, Int64.max])
        XCTAssertEqual(read.map(\.flags), [.clamped, .clamped])
    }

    func testTimeJumpPastInt64IsClamped() throws {
        let read = try frames("pcapng-timestamp-jump.pcapng")
        // (2^64 - 10^18) / 1000 µs ≈ 1.74e19 ns and that + 10^16 µs: both over Int64.max.
        XCTAssertEqual(read.map(\.timestamp), [Int64.max, Int64.max])
        XCTAssertEqual(read.map(\.flags), [.clamped, .clamped])
    }

    func testUnusableResolutionAssumesMicroseconds() throws {
        let read = try frames("pcapng-tsresol-unusable.pcapng")
        // if_tsresol 0x7F (10^-127): read as µs, 1.7e15 µs and 1000 µs later.
        XCTAssertEqual(read.map(\.timestamp), [1_700_000_000_000_000_000, 1_700_000_000_001_000_000])
        XCTAssertEqual(read.map(\.flags), [.resolutionAssumed, .resolutionAssumed])
    }

    func testTimeBeforeTheEpochIsClampedToIt() throws {
        let read = try frames("pcapng-tsoffset-negative.pcapng")
        // 1_700_000_000.5 s - 2_000_000_000 s (if_tsoffset) = -299_999_999.5 s: before 1970.
        XCTAssertEqual(read.map(\.timestamp), [0, 0])
        XCTAssertEqual(read.map(\.flags), [.clamped, .clamped])
    }

    func testResolutionBytes() {
        XCTAssertEqual(PcapngInterface.unitsPerSecond(resolution: 0), 1)
        XCTAssertEqual(PcapngInterface.unitsPerSecond(resolution: 6), 1_000_000)
        XCTAssertEqual(PcapngInterface.unitsPerSecond(resolution: 19), 10_000_000_000_000_000_000)
        XCTAssertNil(PcapngInterface.unitsPerSecond(resolution: 20))
        XCTAssertNil(PcapngInterface.unitsPerSecond(resolution: 0x7F))
        XCTAssertEqual(PcapngInterface.unitsPerSecond(resolution: 0x80 | 10), 1024)
        XCTAssertEqual(PcapngInterface.unitsPerSecond(resolution: 0x80 | 63), 1 << 63)
        XCTAssertNil(PcapngInterface.unitsPerSecond(resolution: 0x80 | 64))
    }

    func testConversionAtTheEdges() {
        let nanosecond = PcapngInterface(
            linkType: 1, snaplen: 0, unitsPerSecond: 1_000_000_000,
            nanosecondsPerUnit: 1, offsetNanoseconds: 0)
        // The last representable nanosecond passes; one more is clamped.
        XCTAssertEqual(nanosecond.nanoseconds(UInt64(Int64.max)).value, .max)
        XCTAssertEqual(nanosecond.nanoseconds(UInt64(Int64.max)).flags, [])
        XCTAssertEqual(nanosecond.nanoseconds(UInt64(Int64.max) + 1).value, .max)
        XCTAssertEqual(nanosecond.nanoseconds(UInt64(Int64.max) + 1).flags, .clamped)
        XCTAssertEqual(nanosecond.nanoseconds(.max).value, .max)

        // if_tsoffset of +1 s: Int64.max - 10^9 ns lands on the edge, one more is over it;
        // -1 s brings anything below 10^9 ns before 1970.
        var shifted = nanosecond
        shifted.offsetNanoseconds = 1_000_000_000
        XCTAssertEqual(shifted.nanoseconds(UInt64(Int64.max) - 1_000_000_000).value, .max)
        XCTAssertEqual(shifted.nanoseconds(UInt64(Int64.max) - 1_000_000_000).flags, [])
        XCTAssertEqual(shifted.nanoseconds(UInt64(Int64.max) - 1_000_000_000 + 1).flags, .clamped)
        shifted.offsetNanoseconds = -1_000_000_000
        XCTAssertEqual(shifted.nanoseconds(999_999_999).value, 0)
        XCTAssertEqual(shifted.nanoseconds(999_999_999).flags, .clamped)
        XCTAssertEqual(shifted.nanoseconds(1_000_000_000).value, 0)
        XCTAssertEqual(shifted.nanoseconds(1_000_000_000).flags, [])

        // 2^-10 s units (not a whole number of ns): 1536 units = 1.5 s; 2^64 - 1 units
        // = 18014398509481983.999 s, far past 2262.
        let binary = PcapngInterface(
            linkType: 1, snaplen: 0, unitsPerSecond: 1024, nanosecondsPerUnit: 0,
            offsetNanoseconds: 0)
        XCTAssertEqual(binary.nanoseconds(1536).value, 1_500_000_000)
        XCTAssertEqual(binary.nanoseconds(.max).value, .max)
        XCTAssertEqual(binary.nanoseconds(.max).flags, .clamped)
    }

    /// The block size bound is the caller's: a 200-byte packet passes the default and is
    /// reported as damage under a 128-byte bound.
    func testMaximumBlockSizeIsAParameter() throws {
        let bytes = CaptureFileWriter.pcapng([
            CaptureFileWriter.Frame(
                timestamp: 1_700_000_000_000_000_000, bytes: [UInt8](repeating: 0xAB, count: 200))
        ])
        let path = try CaptureFileWriter.temporaryFile(named: "block-limit.pcapng", containing: bytes)
        XCTAssertEqual(try CaptureReader(path: path).next()?.bytes.count, 200)

        let bounded = try CaptureReader(path: path, maxPcapngBlockBytes: 128)
        XCTAssertThrowsError(try bounded.next()) { error in
            // EPB: 28 bytes of header fields + 200 bytes of data + the writer's options
            // (opt_comment "comment": 4 + 8 padded; opt_endofopt: 4) + 4 trailer = 248.
            guard case let .corrupt(errorPath, frame, reason) = error as? CaptureError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(errorPath, path)
            XCTAssertEqual(frame, 1)
            XCTAssertTrue(reason.contains("block length 248") && reason.contains("maximum block size"), reason)
        }
    }
}
