import CaptureIO
import TestSupport
import XCTest

/// Classic pcap through libpcap: byte orders, timestamp precisions, snaplen, link types.
final class PcapReaderTests: XCTestCase {
    private typealias Frame = CaptureFileWriter.Frame

    /// Three frames, the second cut by snaplen; timestamps in whole microseconds.
    private let frames = [
        Frame(timestamp: 1_700_000_000_123_456_000, bytes: payload(60, seed: 1)),
        Frame(timestamp: 1_700_000_001_000_001_000, originalLength: 1514, bytes: payload(96, seed: 2)),
        Frame(timestamp: 1_700_000_002_999_999_000, bytes: payload(1, seed: 3)),
    ]

    private func expected(linkType: Int32 = LinkType.ethernet) -> [ReadFrame] {
        frames.enumerated().map { index, frame in
            ReadFrame(
                number: index + 1, timestamp: frame.timestamp, linkType: linkType,
                originalLength: frame.originalLength, bytes: frame.bytes)
        }
    }

    func testLittleEndianMicrosecond() throws {
        let path = try CaptureFileWriter.temporaryFile(named: "le.pcap", containing: CaptureFileWriter.pcap(frames))
        let reader = try CaptureReader(path: path)
        XCTAssertEqual(reader.format, .pcap)
        XCTAssertFalse(reader.isCompressed)
        XCTAssertEqual(reader.fileSize, 24 + 3 * 16 + 60 + 96 + 1)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames, expected())
        XCTAssertEqual(result.frames[1].originalLength, 1514)
        XCTAssertEqual(result.frames[1].bytes.count, 96)
    }

    func testBigEndianMicrosecond() throws {
        let bytes = CaptureFileWriter.pcap(frames, bigEndian: true)
        XCTAssertEqual(Array(bytes[0..<4]), [0xA1, 0xB2, 0xC3, 0xD4])
        let path = try CaptureFileWriter.temporaryFile(named: "be.pcap", containing: bytes)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames, expected())
    }

    func testNanosecondBothByteOrders() throws {
        let nanoFrames = [
            Frame(timestamp: 1_700_000_000_000_000_001, bytes: payload(42, seed: 9)),
            Frame(timestamp: 1_700_000_000_999_999_999, originalLength: 100, bytes: payload(50, seed: 10)),
        ]
        for bigEndian in [false, true] {
            let path = try CaptureFileWriter.temporaryFile(
                named: "nano.pcap",
                containing: CaptureFileWriter.pcap(nanoFrames, bigEndian: bigEndian, nanosecond: true))
            let result = try readAll(path)
            XCTAssertNil(result.error)
            XCTAssertEqual(result.frames.map(\.timestamp), [1_700_000_000_000_000_001, 1_700_000_000_999_999_999])
            XCTAssertEqual(result.frames.map(\.number), [1, 2])
            XCTAssertEqual(result.frames.map(\.originalLength), [42, 100])
            XCTAssertEqual(result.frames[1].bytes, payload(50, seed: 10))
        }
    }

    func testLinkTypeComesFromTheHeader() throws {
        let path = try CaptureFileWriter.temporaryFile(
            named: "sll.pcap", containing: CaptureFileWriter.pcap(frames, linkType: LinkType.linuxSLL))
        let result = try readAll(path)
        XCTAssertEqual(result.frames, expected(linkType: LinkType.linuxSLL))
    }

    func testRawLinkTypeIsReportedAsLibpcapDLT() throws {
        // libpcap maps LINKTYPE_RAW (101) to its DLT_RAW, which is 12 on Linux.
        let path = try CaptureFileWriter.temporaryFile(
            named: "raw.pcap", containing: CaptureFileWriter.pcap(frames, linkType: LinkType.raw))
        let result = try readAll(path)
        XCTAssertEqual(result.frames.count, 3)
        let linkType = try XCTUnwrap(result.frames.first?.linkType)
        XCTAssertTrue(linkType == LinkType.raw || LinkType.rawAlternatives.contains(linkType), "\(linkType)")
    }

    func testHeaderOnlyFileHasNoFrames() throws {
        let path = try CaptureFileWriter.temporaryFile(named: "empty.pcap", containing: CaptureFileWriter.pcap([]))
        let reader = try CaptureReader(path: path)
        XCTAssertNil(try reader.next())
        XCTAssertNil(try reader.next(), "stays at the end")
    }

    func testBytesConsumedReachesFileSize() throws {
        let path = try CaptureFileWriter.temporaryFile(named: "count.pcap", containing: CaptureFileWriter.pcap(frames))
        let reader = try CaptureReader(path: path)
        while try reader.next() != nil {}
        XCTAssertEqual(reader.bytesConsumed, reader.fileSize)
    }
}
