import CaptureIO
import Foundation
import TestSupport
import XCTest

/// gzip-compressed captures, recognised by content whatever their name.
final class CompressedCaptureTests: XCTestCase {
    private typealias Frame = CaptureFileWriter.Frame

    private let frames = [
        Frame(timestamp: 1_700_000_000_000_001_000, interface: 0, bytes: payload(54, seed: 1)),
        Frame(timestamp: 1_700_000_000_000_000_002, interface: 1, originalLength: 1400, bytes: payload(300, seed: 2)),
        Frame(timestamp: 1_700_000_001_000_003_000, interface: 0, bytes: payload(70_000, seed: 3)),
    ]
    private let interfaces = [
        CaptureFileWriter.Interface(linkType: LinkType.ethernet),
        CaptureFileWriter.Interface(linkType: LinkType.raw, timestampResolution: 9),
    ]

    func testGzippedPcap() throws {
        let pcapFrames = frames.map {
            Frame(timestamp: $0.timestamp / 1000 * 1000, originalLength: $0.originalLength, bytes: $0.bytes)
        }
        let gz = CaptureFileWriter.gzip(CaptureFileWriter.pcap(pcapFrames, bigEndian: true))
        let path = try CaptureFileWriter.temporaryFile(named: "capture.pcap.gz", containing: gz)
        let reader = try CaptureReader(path: path)
        XCTAssertEqual(reader.format, .pcap)
        XCTAssertTrue(reader.isCompressed)
        XCTAssertEqual(reader.fileSize, gz.count)
        XCTAssertNil(reader.bytesConsumed)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(
            result.frames,
            pcapFrames.enumerated().map { index, frame in
                ReadFrame(
                    number: index + 1, timestamp: frame.timestamp, linkType: 1,
                    originalLength: frame.originalLength, bytes: frame.bytes)
            })
    }

    func testGzippedPcapng() throws {
        let gz = CaptureFileWriter.gzip(CaptureFileWriter.pcapng(frames, interfaces: interfaces))
        let path = try CaptureFileWriter.temporaryFile(named: "capture.pcapng.gz", containing: gz)
        let reader = try CaptureReader(path: path)
        XCTAssertEqual(reader.format, .pcapng)
        XCTAssertTrue(reader.isCompressed)
        let result = try readAll(path)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames, expectedPcapngFrames())
    }

    func testRealGzipWithAnyExtension() throws {
        guard let gzip = executable("gzip") else { throw XCTSkip("gzip not installed") }
        let path = try CaptureFileWriter.temporaryFile(
            named: "capture.pcapng", containing: CaptureFileWriter.pcapng(frames, interfaces: interfaces))
        _ = try runTool(gzip, ["-9", "-f", path])
        let renamed = (path as NSString).deletingLastPathComponent + "/capture.bin"
        try FileManager.default.moveItem(atPath: path + ".gz", toPath: renamed)
        let reader = try CaptureReader(path: renamed)
        XCTAssertTrue(reader.isCompressed)
        XCTAssertEqual(reader.format, .pcapng)
        let result = try readAll(renamed)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.frames, expectedPcapngFrames())
    }

    func testTruncatedGzipIsTruncatedCapture() throws {
        let pcap = CaptureFileWriter.pcap(
            Array(frames[0..<2]) + [Frame(timestamp: 3_000, bytes: payload(100, seed: 9))])
        let gz = CaptureFileWriter.gzip(pcap)
        // Cut inside the last frame's data (stored blocks keep the content at the same offsets, plus 15).
        let path = try CaptureFileWriter.temporaryFile(
            named: "cut.pcap.gz", containing: Array(gz[0..<(gz.count - 8 - 50)]))
        let result = try readAll(path)
        XCTAssertEqual(result.frames.map(\.number), [1, 2])
        guard case .truncated(path, 3, _)? = result.error else {
            return XCTFail("got \(String(describing: result.error))")
        }
    }

    func testDamagedGzipChecksumIsAnError() throws {
        // zlib inflates up to 512 KiB ahead, so the file must be larger than that for frames to
        // come back before the damage is noticed.
        let big = (0..<12).map { Frame(timestamp: Int64($0) * 1_000, bytes: payload(70_000, seed: UInt8($0))) }
        var gz = CaptureFileWriter.gzip(CaptureFileWriter.pcapng(big))
        gz[gz.count - 8] ^= 0xFF // CRC-32, checked when zlib reaches the end of the stream
        let path = try CaptureFileWriter.temporaryFile(named: "crc.pcapng.gz", containing: gz)
        let result = try readAll(path)
        XCTAssertGreaterThan(result.frames.count, 0)
        XCTAssertLessThan(result.frames.count, big.count)
        XCTAssertEqual(result.frames.map(\.bytes), big.prefix(result.frames.count).map(\.bytes))
        guard case let .corrupt(errorPath, frame, reason)? = result.error else {
            return XCTFail("got \(String(describing: result.error))")
        }
        XCTAssertEqual(errorPath, path)
        XCTAssertEqual(frame, result.frames.count + 1)
        XCTAssertTrue(reason.contains("read error"), reason)
    }

    func testSmallGzipWithDamagedChecksumIsRejectedAtOpen() throws {
        var gz = CaptureFileWriter.gzip(CaptureFileWriter.pcapng(frames, interfaces: interfaces))
        gz[gz.count - 8] ^= 0xFF
        let path = try CaptureFileWriter.temporaryFile(named: "crc-small.pcapng.gz", containing: gz)
        guard case let .notACapture(errorPath, reason)? = openError(path) else {
            return XCTFail("expected notACapture")
        }
        XCTAssertEqual(errorPath, path)
        XCTAssertTrue(reason.contains("gzip"), reason)
    }

    private func expectedPcapngFrames() -> [ReadFrame] {
        frames.enumerated().map { index, frame in
            ReadFrame(
                number: index + 1, timestamp: frame.timestamp, linkType: interfaces[frame.interface].linkType,
                interface: frame.interface, originalLength: frame.originalLength, bytes: frame.bytes)
        }
    }
}
