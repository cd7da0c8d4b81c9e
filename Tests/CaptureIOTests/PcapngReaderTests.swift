import CaptureIO
import TestSupport
import XCTest

/// The Swift pcapng reader: interfaces, timestamp resolutions, block kinds, sections.
final class PcapngReaderTests: XCTestCase {
    private typealias Frame = CaptureFileWriter.Frame
    private typealias Interface = CaptureFileWriter.Interface

    func testInterfacesWithDifferentLinkTypesAndResolutions() throws {
        let interfaces = [
            Interface(linkType: LinkType.ethernet), // default: 10^-6
            Interface(linkType: LinkType.raw, timestampResolution: 9), // 10^-9
            Interface(linkType: LinkType.linuxSLL, timestampResolution: 6), // explicit 10^-6
            Interface(linkType: LinkType.linuxSLL2, timestampResolution: 0x80 | 10), // 2^-10 s
            Interface(linkType: LinkType.ipv4, timestampResolution: 0x80 | 3), // 2^-3 s
        ]
        let frames = [
            Frame(timestamp: 1_700_000_000_123_456_000, interface: 0, bytes: payload(60, seed: 0)),
            Frame(timestamp: 1_700_000_000_123_456_789, interface: 1, bytes: payload(20, seed: 1)),
            Frame(
                timestamp: 1_700_000_000_000_001_000, interface: 2, originalLength: 1500, bytes: payload(64, seed: 2)),
            // 1/1024 s does not divide 10^9 ns: 0.5 s and 0.25 s are the exact cases.
            Frame(timestamp: 1_700_000_000_500_000_000, interface: 3, bytes: payload(33, seed: 3)),
            Frame(timestamp: 1_700_000_000_250_000_000, interface: 3, bytes: payload(3, seed: 4)),
            Frame(timestamp: 1_700_000_001_375_000_000, interface: 4, bytes: payload(0, seed: 5)),
            Frame(timestamp: 1_700_000_002_000_000_000, interface: 1, bytes: payload(7, seed: 6)),
        ]
        let path = try CaptureFileWriter.temporaryFile(
            named: "mixed.pcapng", containing: CaptureFileWriter.pcapng(frames, interfaces: interfaces))
        let reader = try CaptureReader(path: path)
        XCTAssertEqual(reader.format, .pcapng)
        XCTAssertFalse(reader.isCompressed)

        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(
            result.frames,
            frames.enumerated().map { index, frame in
                ReadFrame(
                    number: index + 1, timestamp: frame.timestamp, linkType: interfaces[frame.interface].linkType,
                    interface: frame.interface, originalLength: frame.originalLength, bytes: frame.bytes)
            })
        XCTAssertEqual(result.frames.map(\.linkType), [1, 101, 113, 276, 276, 228, 101])
        XCTAssertEqual(result.frames[2].originalLength, 1500)
        XCTAssertEqual(result.frames[2].bytes.count, 64)
    }

    func testFineBinaryResolutionTruncatesBelowOneNanosecond() throws {
        // 2^-30 s ≈ 0.93 ns: 1 ns after the second is written as 1 unit and read back as 0 ns.
        let interface = Interface(timestampResolution: 0x80 | 30)
        let frames = [
            Frame(timestamp: 1_700_000_000_000_000_001, bytes: [1]),
            Frame(timestamp: 1_700_000_000_500_000_000, bytes: [2]),
        ]
        let path = try CaptureFileWriter.temporaryFile(
            named: "fine.pcapng", containing: CaptureFileWriter.pcapng(frames, interfaces: [interface]))
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames.map(\.timestamp), [1_700_000_000_000_000_000, 1_700_000_000_500_000_000])
    }

    func testMillisecondResolutionWithOffset() throws {
        // if_tsoffset is added to every timestamp of the interface.
        let interface = Interface(linkType: LinkType.raw, timestampResolution: 3, timestampOffset: 1_600_000_000)
        let frames = [Frame(timestamp: 1_700_000_000_042_000_000, bytes: payload(20, seed: 7))]
        let bytes = CaptureFileWriter.pcapng(frames, interfaces: [interface])
        let path = try CaptureFileWriter.temporaryFile(named: "offset.pcapng", containing: bytes)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames.map(\.timestamp), [1_700_000_000_042_000_000])
        // The file holds 100_000_000.042 s in milliseconds, not the absolute time.
        let stored: [UInt8] = withUnsafeBytes(of: UInt32(100_000_000_042 & 0xFFFF_FFFF).littleEndian, Array.init)
        XCTAssertTrue(bytes.indices.contains { Array(bytes[$0..<min($0 + 4, bytes.count)]) == stored })
    }

    func testBigEndianSection() throws {
        let interfaces = [
            Interface(linkType: LinkType.ethernet), Interface(linkType: LinkType.raw, timestampResolution: 9),
        ]
        let frames = [
            Frame(timestamp: 1_700_000_000_000_002_000, interface: 0, bytes: payload(61, seed: 11)),
            Frame(timestamp: 1_700_000_000_000_000_003, interface: 1, originalLength: 70, bytes: payload(22, seed: 12)),
        ]
        let bytes = CaptureFileWriter.pcapng(frames, interfaces: interfaces, bigEndian: true)
        XCTAssertEqual(Array(bytes[8..<12]), [0x1A, 0x2B, 0x3C, 0x4D])
        let path = try CaptureFileWriter.temporaryFile(named: "be.pcapng", containing: bytes)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(
            result.frames,
            [
                ReadFrame(
                    number: 1, timestamp: 1_700_000_000_000_002_000, linkType: 1, interface: 0,
                    originalLength: 61, bytes: payload(61, seed: 11)),
                ReadFrame(
                    number: 2, timestamp: 1_700_000_000_000_000_003, linkType: 101, interface: 1,
                    originalLength: 70, bytes: payload(22, seed: 12)),
            ])
    }

    func testSectionsResetInterfacesAndOtherBlocksAreSkipped() throws {
        var builder = PcapngBuilder()
        builder.section(bigEndian: true)
        builder.interface(Interface(linkType: LinkType.ethernet))
        builder.interface(Interface(linkType: LinkType.raw))
        builder.enhancedPacket(Frame(timestamp: 1_000_000, interface: 1, bytes: [1, 2, 3]))
        builder.block(type: 5, body: [UInt8](repeating: 0, count: 24)) // Interface Statistics
        builder.section(bigEndian: false)
        builder.block(type: 0x4000_0BAD, body: payload(150_000, seed: 0)) // custom block, larger than the buffer
        builder.interface(Interface(linkType: LinkType.linuxSLL, timestampResolution: 9))
        builder.block(type: 4, body: []) // Name Resolution
        builder.enhancedPacket(Frame(timestamp: 2_000_000_001, interface: 0, bytes: [4, 5]))
        let path = try CaptureFileWriter.temporaryFile(named: "sections.pcapng", containing: builder.bytes)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(
            result.frames,
            [
                ReadFrame(
                    number: 1, timestamp: 1_000_000, linkType: 101, interface: 1, originalLength: 3, bytes: [1, 2, 3]),
                ReadFrame(
                    number: 2, timestamp: 2_000_000_001, linkType: 113, interface: 0, originalLength: 2, bytes: [4, 5]),
            ])
    }

    func testInterfaceOfAnEarlierSectionIsGone() throws {
        var builder = PcapngBuilder()
        builder.section()
        builder.interface(Interface())
        builder.interface(Interface())
        builder.section()
        builder.interface(Interface())
        let packet = builder.bytes.count
        builder.enhancedPacket(Frame(timestamp: 0, interface: 0, bytes: [1]))
        var bytes = builder.bytes
        // Point the packet at interface 1, which only the first section had.
        XCTAssertEqual(bytes[packet], 6)
        bytes[packet + 8] = 1
        let path = try CaptureFileWriter.temporaryFile(named: "gone.pcapng", containing: bytes)
        let result = try readAll(path)
        XCTAssertEqual(result.frames.count, 0)
        guard case let .corrupt(errorPath, frame, reason)? = result.error else {
            return XCTFail("expected corrupt, got \(String(describing: result.error))")
        }
        XCTAssertEqual(errorPath, path)
        XCTAssertEqual(frame, 1)
        XCTAssertTrue(reason.contains("interface 1"), reason)
    }

    func testSimplePacketBlocks() throws {
        var builder = PcapngBuilder()
        builder.section()
        builder.interface(Interface(linkType: LinkType.raw, snaplen: 32))
        builder.simplePacket(originalLength: 20, bytes: payload(20, seed: 1)) // whole packet
        builder.simplePacket(originalLength: 100, bytes: payload(32, seed: 2)) // cut to snaplen
        builder.simplePacket(originalLength: 21, bytes: payload(21, seed: 3)) // padding is not data
        let path = try CaptureFileWriter.temporaryFile(named: "spb.pcapng", containing: builder.bytes)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(
            result.frames,
            [
                ReadFrame(
                    number: 1, timestamp: 0, linkType: 101, interface: 0, originalLength: 20,
                    bytes: payload(20, seed: 1)),
                ReadFrame(
                    number: 2, timestamp: 0, linkType: 101, interface: 0, originalLength: 100,
                    bytes: payload(32, seed: 2)),
                ReadFrame(
                    number: 3, timestamp: 0, linkType: 101, interface: 0, originalLength: 21,
                    bytes: payload(21, seed: 3)),
            ])
    }

    func testSimplePacketWithoutSnaplenIsCutToItsBlock() throws {
        var builder = PcapngBuilder()
        builder.section()
        builder.interface(Interface(linkType: LinkType.ethernet, snaplen: 0))
        builder.simplePacket(originalLength: 1000, bytes: payload(40, seed: 5))
        let path = try CaptureFileWriter.temporaryFile(named: "spb0.pcapng", containing: builder.bytes)
        let result = try readAll(path)
        XCTAssertEqual(result.frames.map(\.bytes), [payload(40, seed: 5)])
        XCTAssertEqual(result.frames.map(\.originalLength), [1000])
    }

    func testObsoletePacketBlocks() throws {
        let interfaces = [
            Interface(linkType: LinkType.ethernet), Interface(linkType: LinkType.null, timestampResolution: 9),
        ]
        let frames = [
            Frame(timestamp: 1_500_000_000_000_001_000, interface: 0, bytes: payload(14, seed: 1)),
            Frame(timestamp: 1_500_000_000_000_000_007, interface: 1, originalLength: 99, bytes: payload(5, seed: 2)),
        ]
        let path = try CaptureFileWriter.temporaryFile(
            named: "pb.pcapng",
            containing: CaptureFileWriter.pcapng(
                frames, interfaces: interfaces, bigEndian: true, packetBlock: .obsolete))
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(
            result.frames,
            [
                ReadFrame(
                    number: 1, timestamp: 1_500_000_000_000_001_000, linkType: 1, interface: 0,
                    originalLength: 14, bytes: payload(14, seed: 1)),
                ReadFrame(
                    number: 2, timestamp: 1_500_000_000_000_000_007, linkType: 0, interface: 1,
                    originalLength: 99, bytes: payload(5, seed: 2)),
            ])
    }

    func testLargeFrameAfterSmallOnes() throws {
        // 200 KB is more than the initial buffer: the buffer must grow and keep working after.
        let frames = [
            Frame(timestamp: 1_000, bytes: payload(10, seed: 1)),
            Frame(timestamp: 2_000, bytes: payload(200_000, seed: 2)),
            Frame(timestamp: 3_000, bytes: payload(11, seed: 3)),
        ]
        let path = try CaptureFileWriter.temporaryFile(
            named: "large.pcapng", containing: CaptureFileWriter.pcapng(frames))
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames.map(\.bytes), frames.map(\.bytes))
        XCTAssertEqual(result.frames.map(\.timestamp), [1_000, 2_000, 3_000])
    }

    func testNoPacketsAndBytesConsumed() throws {
        let bytes = CaptureFileWriter.pcapng([], interfaces: [Interface(), Interface()])
        let path = try CaptureFileWriter.temporaryFile(named: "none.pcapng", containing: bytes)
        let reader = try CaptureReader(path: path)
        XCTAssertNil(try reader.next())
        XCTAssertNil(try reader.next())
        XCTAssertEqual(reader.bytesConsumed, bytes.count)
        XCTAssertEqual(reader.fileSize, bytes.count)
    }
}
