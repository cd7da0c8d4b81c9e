import CaptureIO
import Foundation
import TestSupport
import XCTest

/// Files that cannot be read, or not to the end: which error, which frame, which frames before.
final class CaptureErrorTests: XCTestCase {
    private typealias Frame = CaptureFileWriter.Frame

    private let frames = [
        Frame(timestamp: 1_700_000_000_000_001_000, bytes: payload(40, seed: 1)),
        Frame(timestamp: 1_700_000_000_000_002_000, bytes: payload(41, seed: 2)),
        Frame(timestamp: 1_700_000_000_000_003_000, bytes: payload(42, seed: 3)),
    ]

    // MARK: Opening

    func testMissingFile() throws {
        let path = NSTemporaryDirectory() + "meteraudit-does-not-exist-\(UUID().uuidString).pcap"
        guard case let .cannotOpen(errorPath, reason)? = openError(path) else { return XCTFail("expected cannotOpen") }
        XCTAssertEqual(errorPath, path)
        XCTAssertTrue(reason.contains("No such file"), reason)
        XCTAssertTrue(openError(path)?.description.contains(path) ?? false)
    }

    func testDirectory() throws {
        let path = try CaptureFileWriter.temporaryFile(named: "x", containing: [])
        let directory = (path as NSString).deletingLastPathComponent
        guard case .cannotOpen(directory, _)? = openError(directory) else { return XCTFail("expected cannotOpen") }
    }

    func testTextFile() throws {
        let path = try CaptureFileWriter.temporaryFile(
            named: "notes.pcap", containing: Array("GET / HTTP/1.1\r\n\r\n".utf8))
        guard case let .notACapture(errorPath, reason)? = openError(path) else {
            return XCTFail("expected notACapture")
        }
        XCTAssertEqual(errorPath, path)
        XCTAssertTrue(reason.contains("magic"), reason)
    }

    func testEmptyFile() throws {
        let path = try CaptureFileWriter.temporaryFile(named: "empty.pcap", containing: [])
        XCTAssertEqual(openError(path), .notACapture(path: path, reason: "empty file"))
    }

    func testTinyAndRandomFiles() throws {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Random bytes could start with a magic number by chance; make sure they do not.
        let noMagic = [0x00, 0x01] + random
        for (name, bytes) in [("two", [UInt8]([0xD4, 0xC3])), ("random", noMagic)] {
            let path = try CaptureFileWriter.temporaryFile(named: name, containing: bytes)
            guard case .notACapture(path, _)? = openError(path) else { return XCTFail("\(name): expected notACapture") }
        }
    }

    func testGzipOfNonCapture() throws {
        for content in [Array("hello, not a capture\n".utf8), []] {
            let path = try CaptureFileWriter.temporaryFile(
                named: "text.gz", containing: CaptureFileWriter.gzip(content))
            guard case .notACapture(path, _)? = openError(path) else { return XCTFail("expected notACapture") }
        }
    }

    func testDamagedGzipHeader() throws {
        let path = try CaptureFileWriter.temporaryFile(
            named: "bad.gz", containing: [0x1F, 0x8B, 0x08, 0xE0] + payload(64, seed: 0))
        guard case .notACapture(path, _)? = openError(path) else { return XCTFail("expected notACapture") }
    }

    func testPcapHeaderCutShort() throws {
        let bytes = Array(CaptureFileWriter.pcap(frames)[0..<10])
        let path = try CaptureFileWriter.temporaryFile(named: "short.pcap", containing: bytes)
        guard case let .notACapture(_, reason)? = openError(path) else { return XCTFail("expected notACapture") }
        XCTAssertTrue(reason.contains("truncated"), reason)
    }

    func testPcapngSectionHeaderDamaged() throws {
        var bytes = CaptureFileWriter.pcapng(frames)
        bytes[8] = 0x77 // byte-order magic
        let path = try CaptureFileWriter.temporaryFile(named: "bom.pcapng", containing: bytes)
        guard case let .notACapture(_, reason)? = openError(path) else { return XCTFail("expected notACapture") }
        XCTAssertTrue(reason.contains("byte-order"), reason)

        let cut = try CaptureFileWriter.temporaryFile(
            named: "cut.pcapng", containing: Array(CaptureFileWriter.pcapng(frames)[0..<20]))
        guard case .notACapture(cut, _)? = openError(cut) else { return XCTFail("expected notACapture") }
    }

    // MARK: pcap cut or damaged after some frames

    func testPcapTruncatedInsideRecordData() throws {
        let bytes = CaptureFileWriter.pcap(frames)
        try assertTwoFramesThenTruncated(Array(bytes[0..<(bytes.count - 10)]), name: "data.pcap")
    }

    func testPcapTruncatedInsideRecordHeader() throws {
        let bytes = CaptureFileWriter.pcap(frames)
        try assertTwoFramesThenTruncated(Array(bytes[0..<(bytes.count - 42 - 9)]), name: "header.pcap")
    }

    func testPcapImpossibleCapturedLength() throws {
        var bytes = CaptureFileWriter.pcap(frames)
        // Third record's captured length (little-endian) set to 0x7fffffff.
        let third = 24 + 16 + 40 + 16 + 41
        bytes.replaceSubrange((third + 8)..<(third + 12), with: [0xFF, 0xFF, 0xFF, 0x7F])
        let path = try CaptureFileWriter.temporaryFile(named: "caplen.pcap", containing: bytes)
        let result = try readAll(path)
        XCTAssertEqual(result.frames.count, 2)
        guard case .corrupt(path, 3, _)? = result.error else {
            return XCTFail("got \(String(describing: result.error))")
        }
    }

    // MARK: pcapng cut or damaged after some frames

    /// Three EPBs, and where each block starts.
    private func pcapngWithOffsets(bigEndian: Bool = false) -> (bytes: [UInt8], blocks: [Int]) {
        var builder = PcapngBuilder()
        builder.section(bigEndian: bigEndian)
        builder.interface(CaptureFileWriter.Interface())
        var offsets: [Int] = []
        for frame in frames {
            offsets.append(builder.bytes.count)
            builder.enhancedPacket(frame)
        }
        return (builder.bytes, offsets)
    }

    func testPcapngTruncatedInsideBlock() throws {
        let (bytes, blocks) = pcapngWithOffsets()
        try assertTwoFramesThenTruncated(Array(bytes[0..<(blocks[2] + 30)]), name: "mid.pcapng")
        try assertTwoFramesThenTruncated(Array(bytes[0..<(blocks[2] + 5)]), name: "header.pcapng")
        try assertTwoFramesThenTruncated(Array(bytes[0..<(bytes.count - 2)]), name: "trailer.pcapng")
    }

    func testPcapngCutAtBlockBoundaryIsCleanEnd() throws {
        let (bytes, blocks) = pcapngWithOffsets()
        let path = try CaptureFileWriter.temporaryFile(
            named: "boundary.pcapng", containing: Array(bytes[0..<blocks[2]]))
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames.map(\.number), [1, 2])
    }

    func testPcapngBlockLengthNotMultipleOfFour() throws {
        try assertCorruptThirdBlock(reasonContains: "multiple of 4") { bytes, block in
            bytes[block + 4] += 2
        }
    }

    func testPcapngBlockLengthBelowTwelve() throws {
        try assertCorruptThirdBlock(reasonContains: "below 12") { bytes, block in
            bytes.replaceSubrange((block + 4)..<(block + 8), with: [8, 0, 0, 0])
        }
    }

    func testPcapngTrailingLengthMismatch() throws {
        try assertCorruptThirdBlock(reasonContains: "trailing length") { bytes, _ in
            bytes[bytes.count - 4] += 4
        }
    }

    func testPcapngCapturedLengthLargerThanBlock() throws {
        try assertCorruptThirdBlock(reasonContains: "captured length") { bytes, block in
            bytes[block + 20] = 200
        }
    }

    func testPcapngEnormousBlockLength() throws {
        try assertCorruptThirdBlock(reasonContains: "exceeds") { bytes, block in
            bytes.replaceSubrange((block + 4)..<(block + 8), with: [0xF0, 0xFF, 0xFF, 0xFF])
        }
    }

    func testPcapngUnknownInterface() throws {
        try assertCorruptThirdBlock(reasonContains: "interface 3") { bytes, block in
            bytes[block + 8] = 3
        }
    }

    func testPcapngSimplePacketWithoutInterface() throws {
        var builder = PcapngBuilder()
        builder.section()
        builder.simplePacket(originalLength: 4, bytes: [1, 2, 3, 4])
        let path = try CaptureFileWriter.temporaryFile(named: "spb.pcapng", containing: builder.bytes)
        let result = try readAll(path)
        guard case .corrupt(path, 1, _)? = result.error else {
            return XCTFail("got \(String(describing: result.error))")
        }
    }

    func testErrorsRepeatAndNameFileAndPacket() throws {
        let (bytes, blocks) = pcapngWithOffsets(bigEndian: true)
        let path = try CaptureFileWriter.temporaryFile(
            named: "again.pcapng", containing: Array(bytes[0..<(blocks[2] + 30)]))
        let reader = try CaptureReader(path: path)
        XCTAssertEqual(try reader.next()?.number, 1)
        XCTAssertEqual(try reader.next()?.number, 2)
        var first: CaptureError?
        XCTAssertThrowsError(try reader.next()) { first = $0 as? CaptureError }
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual($0 as? CaptureError, first) }
        let description = try XCTUnwrap(first).description
        XCTAssertTrue(description.contains(path) && description.contains("packet 3"), description)
    }

    // MARK: Arbitrary damage

    /// Random byte flips, cuts and length patches must end in frames or a CaptureError, never a
    /// crash; a fixed seed keeps failures reproducible.
    func testRandomDamageNeverCrashes() throws {
        var random = SplitMix64(seed: 0x5EED)
        var builder = PcapngBuilder()
        builder.section(bigEndian: true)
        builder.interface(CaptureFileWriter.Interface(timestampResolution: 0x80 | 20))
        builder.interface(CaptureFileWriter.Interface(linkType: LinkType.raw, snaplen: 16, timestampResolution: 9))
        for frame in frames { builder.enhancedPacket(frame) }
        builder.simplePacket(originalLength: 30, bytes: payload(16, seed: 4))
        builder.obsoletePacket(Frame(timestamp: 5, interface: 1, bytes: [1, 2]))
        builder.block(type: 5, body: payload(20, seed: 0))
        let originals = [builder.bytes, CaptureFileWriter.pcap(frames), CaptureFileWriter.gzip(builder.bytes)]
        let directory = (try CaptureFileWriter.temporaryFile(named: "seed", containing: []) as NSString)
            .deletingLastPathComponent
        let path = directory + "/fuzz"
        var outcomes = [0, 0, 0] // opened and read to the end, read error, open error
        for round in 0..<600 {
            var bytes = originals[round % originals.count]
            for _ in 0...Int(random.next() % 4) {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.removeSubrange(index...)
                case 2: bytes[index] ^= 0x80
                default:
                    // Plausible-looking small lengths are the most likely to fool a reader.
                    let value = UInt32(truncatingIfNeeded: random.next() % 96)
                    for k in 0..<4 where index + k < bytes.count {
                        bytes[index + k] = UInt8(truncatingIfNeeded: value >> (8 * k))
                    }
                }
                if bytes.isEmpty { break }
            }
            try CaptureFileWriter.write(bytes, to: path)
            do {
                let result = try readAll(path)
                outcomes[result.error == nil ? 0 : 1] += 1
                for frame in result.frames where frame.bytes.count > 262_144 {
                    XCTFail("frame of \(frame.bytes.count) bytes")
                }
            } catch is CaptureError {
                outcomes[2] += 1
            }
        }
        XCTAssertTrue(outcomes.allSatisfy { $0 > 0 }, "\(outcomes)")
    }

    // MARK: Helpers

    private func assertTwoFramesThenTruncated(
        _ bytes: [UInt8], name: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let path = try CaptureFileWriter.temporaryFile(named: name, containing: bytes)
        let result = try readAll(path)
        XCTAssertEqual(result.frames.map(\.number), [1, 2], name, file: file, line: line)
        XCTAssertEqual(result.frames.map(\.bytes), [frames[0].bytes, frames[1].bytes], name, file: file, line: line)
        XCTAssertEqual(
            result.frames.map(\.timestamp), [frames[0].timestamp, frames[1].timestamp], name, file: file, line: line)
        guard case let .truncated(errorPath, frame, _)? = result.error else {
            return XCTFail(
                "\(name): expected truncated, got \(String(describing: result.error))", file: file, line: line)
        }
        XCTAssertEqual(errorPath, path, file: file, line: line)
        XCTAssertEqual(frame, 3, name, file: file, line: line)
    }

    private func assertCorruptThirdBlock(
        reasonContains expected: String, file: StaticString = #filePath, line: UInt = #line,
        damage: (inout [UInt8], Int) -> Void
    ) throws {
        var (bytes, blocks) = pcapngWithOffsets()
        damage(&bytes, blocks[2])
        let path = try CaptureFileWriter.temporaryFile(named: "damaged.pcapng", containing: bytes)
        let result = try readAll(path)
        XCTAssertEqual(result.frames.map(\.number), [1, 2], file: file, line: line)
        guard case let .corrupt(errorPath, frame, reason)? = result.error else {
            return XCTFail("expected corrupt, got \(String(describing: result.error))", file: file, line: line)
        }
        XCTAssertEqual(errorPath, path, file: file, line: line)
        XCTAssertEqual(frame, 3, file: file, line: line)
        XCTAssertTrue(reason.contains(expected), reason, file: file, line: line)
    }
}
