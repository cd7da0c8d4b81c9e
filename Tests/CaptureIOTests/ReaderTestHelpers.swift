import CaptureIO
import Foundation
import TestSupport
import XCTest

/// A frame copied out of the reader (its bytes are only borrowed until the next call).
struct ReadFrame: Equatable {
    var number: Int
    var timestamp: Int64
    var linkType: Int32
    var interface: Int
    var originalLength: Int
    var bytes: [UInt8]

    init(number: Int, timestamp: Int64, linkType: Int32, interface: Int = 0, originalLength: Int, bytes: [UInt8]) {
        self.number = number
        self.timestamp = timestamp
        self.linkType = linkType
        self.interface = interface
        self.originalLength = originalLength
        self.bytes = bytes
    }

    init(_ frame: CapturedFrame) {
        self.init(
            number: frame.number, timestamp: frame.timestamp, linkType: frame.linkType,
            interface: frame.interface, originalLength: frame.originalLength, bytes: Array(frame.bytes))
    }
}

/// Everything a reader returns for a file: the frames before any error, and the error.
struct ReadResult {
    var frames: [ReadFrame]
    var error: CaptureError?
}

/// Reads `path` to its end or first error.
func readAll(_ path: String) throws -> ReadResult {
    let reader = try CaptureReader(path: path)
    var frames: [ReadFrame] = []
    do {
        while let frame = try reader.next() { frames.append(ReadFrame(frame)) }
        return ReadResult(frames: frames, error: nil)
    } catch let error as CaptureError {
        return ReadResult(frames: frames, error: error)
    }
}

/// The error `CaptureReader(path:)` throws, failing the test when it throws none.
func openError(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> CaptureError? {
    do {
        _ = try CaptureReader(path: path)
        XCTFail("\(path) opened without error", file: file, line: line)
        return nil
    } catch let error as CaptureError {
        return error
    } catch {
        XCTFail("unexpected error type \(error)", file: file, line: line)
        return nil
    }
}

/// Deterministic frame content: `count` bytes starting at `seed`.
func payload(_ count: Int, seed: UInt8) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0) }
}

/// Path of a committed fixture under Tests/Fixtures/captureio.
func fixturePath(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/captureio/\(name)").path
}
