import CaptureIO
import Foundation
import TestSupport
import XCTest

/// Checks the reader against Wireshark: files written by Wireshark's tools (committed fixtures),
/// and tshark's reading of files written by the test writer.
final class WiresharkOracleTests: XCTestCase {
    /// What tshark says about each frame: number, length, captured length, epoch time in ns.
    private struct TsharkFrame: Equatable {
        var number: Int
        var length: Int
        var capturedLength: Int
        var timestamp: Int64
    }

    private func tsharkFrames(_ path: String) throws -> [TsharkFrame] {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark not installed") }
        let output = try runTool(
            tshark,
            [
                "-r", path, "-T", "fields", "-e", "frame.number", "-e", "frame.len",
                "-e", "frame.cap_len", "-e", "frame.time_epoch",
            ])
        return try output.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 4, let number = Int(fields[0]), let length = Int(fields[1]),
                let captured = Int(fields[2])
            else { throw NSError(domain: "tshark line: \(line)", code: 1) }
            return TsharkFrame(
                number: number, length: length, capturedLength: captured,
                timestamp: try nanoseconds(fields[3]))
        }
    }

    /// "1700000000.000000001" → ns, exactly (no Double on the way).
    private func nanoseconds(_ text: String) throws -> Int64 {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let seconds = Int64(parts[0]) else { throw NSError(domain: "time \(text)", code: 1) }
        let fraction = parts.count > 1 ? String(parts[1].prefix(9)) : ""
        guard let nanos = Int64(fraction.padding(toLength: 9, withPad: "0", startingAt: 0)) else {
            throw NSError(domain: "time \(text)", code: 1)
        }
        return seconds * 1_000_000_000 + nanos
    }

    private func assertAgreesWithTshark(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let ours = try readAll(path)
        XCTAssertNil(ours.error, file: file, line: line)
        let theirs = try tsharkFrames(path)
        XCTAssertFalse(theirs.isEmpty, file: file, line: line)
        XCTAssertEqual(
            ours.frames.map {
                TsharkFrame(
                    number: $0.number, length: $0.originalLength, capturedLength: $0.bytes.count,
                    timestamp: $0.timestamp)
            }, theirs, file: file, line: line)
    }

    func testWriterPcapngWithTwoLinkTypesAgreesWithTshark() throws {
        typealias Frame = CaptureFileWriter.Frame
        let interfaces = [
            CaptureFileWriter.Interface(linkType: LinkType.ethernet, timestampResolution: 6),
            CaptureFileWriter.Interface(linkType: LinkType.raw, timestampResolution: 9),
            CaptureFileWriter.Interface(linkType: LinkType.ethernet, timestampResolution: 0x80 | 10),
        ]
        let frames = [
            Frame(timestamp: 1_700_000_000_123_456_000, interface: 0, bytes: payload(60, seed: 1)),
            Frame(
                timestamp: 1_700_000_000_123_456_789, interface: 1, originalLength: 1500, bytes: payload(40, seed: 2)),
            Frame(timestamp: 1_700_000_001_500_000_000, interface: 2, bytes: payload(14, seed: 3)),
            Frame(timestamp: 1_700_000_002_000_000_001, interface: 1, bytes: payload(20, seed: 4)),
            Frame(
                timestamp: 1_700_000_003_000_000_000, interface: 0, originalLength: 9000, bytes: payload(128, seed: 5)),
        ]
        let path = try CaptureFileWriter.temporaryFile(
            named: "oracle.pcapng", containing: CaptureFileWriter.pcapng(frames, interfaces: interfaces))
        try assertAgreesWithTshark(path)
        XCTAssertEqual(try readAll(path).frames.map(\.linkType), [1, 101, 1, 101, 1])
    }

    func testWriterPcapAgreesWithTshark() throws {
        let frames = [
            CaptureFileWriter.Frame(
                timestamp: 1_600_000_000_000_000_123, originalLength: 80, bytes: payload(64, seed: 1)),
            CaptureFileWriter.Frame(timestamp: 1_600_000_000_999_999_999, bytes: payload(64, seed: 2)),
        ]
        let path = try CaptureFileWriter.temporaryFile(
            named: "oracle.pcap", containing: CaptureFileWriter.pcap(frames, bigEndian: true, nanosecond: true))
        try assertAgreesWithTshark(path)
    }

    /// two-linktypes.pcapng was written by text2pcap + mergecap (see make-fixtures.sh).
    private let fixtureFrames = [
        (number: 1, interface: 0, linkType: LinkType.ethernet, length: 34, timestamp: Int64(1_700_000_000_000_000_001)),
        (number: 2, interface: 1, linkType: LinkType.raw, length: 20, timestamp: Int64(1_700_000_000_250_000_000)),
        (number: 3, interface: 0, linkType: LinkType.ethernet, length: 16, timestamp: Int64(1_700_000_000_500_000_000)),
        (number: 4, interface: 1, linkType: LinkType.raw, length: 24, timestamp: Int64(1_700_000_001_000_000_999)),
        (number: 5, interface: 0, linkType: LinkType.ethernet, length: 22, timestamp: Int64(1_700_000_001_250_000_123)),
    ]

    func testWiresharkWrittenFixture() throws {
        for name in ["two-linktypes.pcapng", "two-linktypes.pcapng.gz"] {
            let path = fixturePath(name)
            let reader = try CaptureReader(path: path)
            XCTAssertEqual(reader.format, .pcapng)
            XCTAssertEqual(reader.isCompressed, name.hasSuffix(".gz"))
            let result = try readAll(path)
            XCTAssertNil(result.error, name)
            XCTAssertEqual(result.frames.count, fixtureFrames.count, name)
            for (frame, expected) in zip(result.frames, fixtureFrames) {
                XCTAssertEqual(frame.number, expected.number, name)
                XCTAssertEqual(frame.interface, expected.interface, name)
                XCTAssertEqual(frame.linkType, expected.linkType, name)
                XCTAssertEqual(frame.originalLength, expected.length, name)
                XCTAssertEqual(frame.bytes.count, expected.length, name)
                XCTAssertEqual(frame.timestamp, expected.timestamp, name)
            }
            XCTAssertEqual(
                result.frames[1].bytes,
                [
                    0x45, 0x00, 0x00, 0x14, 0x00, 0x02, 0x00, 0x00, 0x40, 0x11,
                    0x00, 0x00, 0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8, 0x00, 0x02,
                ])
            XCTAssertEqual(result.frames[2].bytes.suffix(4), [0x86, 0xDD, 0x60, 0x00])
        }
    }

    func testWiresharkWrittenFixtureAgreesWithTshark() throws {
        try assertAgreesWithTshark(fixturePath("two-linktypes.pcapng"))
    }
}
