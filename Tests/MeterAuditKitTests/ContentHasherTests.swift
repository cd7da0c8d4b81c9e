import Foundation
@testable import MeterAuditKit
import XCTest

/// The body workers' memo key: the same bytes give the same fingerprint however they arrive
/// (one piece, or pieces of any size across the 64 KiB chunk boundaries); bytes that differ in
/// one byte, in length, or only in where the chunks split, do not.
final class ContentHasherTests: XCTestCase {
    /// 200,003 bytes: three whole chunks and a part (65,536 × 3 = 196,608).
    private let bytes: [UInt8] = (0..<200_003).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    private func pieces(_ sizes: [Int]) -> ContentHasher.Fingerprint {
        var hasher = ContentHasher()
        var at = 0
        var index = 0
        bytes.withUnsafeBytes { raw in
            while at < raw.count {
                let end = min(at + sizes[index % sizes.count], raw.count)
                hasher.update(UnsafeRawBufferPointer(rebasing: raw[at..<end]))
                at = end
                index += 1
            }
        }
        return hasher.finalize()
    }

    func testSameBytesInAnyPiecesGiveOneFingerprint() {
        let whole = ContentHasher.fingerprint(bytes)
        XCTAssertEqual(pieces([bytes.count]), whole)
        XCTAssertEqual(pieces([1]), whole)
        XCTAssertEqual(pieces([65_536]), whole)
        XCTAssertEqual(pieces([65_535, 2, 70_000, 1]), whole)
        XCTAssertEqual(pieces([4_096, 131_072, 333]), whole)
        XCTAssertEqual(ContentHasher.fingerprint(Array(bytes)), whole, "a copy of the bytes")
    }

    func testAnyDifferenceGivesAnotherFingerprint() {
        let whole = ContentHasher.fingerprint(bytes)
        for position in [0, 65_535, 65_536, 150_000, bytes.count - 1] {
            var changed = bytes
            changed[position] ^= 0x01
            XCTAssertNotEqual(ContentHasher.fingerprint(changed), whole, "byte \(position) flipped")
        }
        XCTAssertNotEqual(ContentHasher.fingerprint(Array(bytes.dropLast())), whole, "one byte shorter")
        XCTAssertNotEqual(ContentHasher.fingerprint(bytes + [0]), whole, "a zero byte longer")
        XCTAssertNotEqual(ContentHasher.fingerprint([]), ContentHasher.fingerprint([0]))
        // Runs of zeros of two lengths (GHASH alone pads a short block with zeros).
        let zeros = [UInt8](repeating: 0, count: 65_536)
        XCTAssertNotEqual(ContentHasher.fingerprint(zeros), ContentHasher.fingerprint(Array(zeros.prefix(32_768))))
    }

    func testResetStartsOver() {
        var hasher = ContentHasher()
        bytes.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<1_000])) }
        hasher.reset()
        bytes.withUnsafeBytes { hasher.update($0) }
        XCTAssertEqual(hasher.finalize(), ContentHasher.fingerprint(bytes))
    }
}
