import ContentCoding
import Foundation
import TestSupport
import XCTest

/// gzippedData lengths are checked against Python's zlib (manifest.json "gzipped": the length
/// of `zlib.compressobj(level, DEFLATED, 31)` output, written by scripts/make-coding-fixtures),
/// and streamed results against the one-shot `GzipSizer.length(of:)`.
final class GzipSizerTests: XCTestCase {
    /// Fixture name → level → length, from manifest.json.
    private func oracle() throws -> [String: [Int32: Int]] {
        let manifest = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: Data(Fixtures.bytes("contentcoding/manifest.json"))) as? [String: [String: Any]])
        var result: [String: [Int32: Int]] = [:]
        for (name, entry) in manifest {
            guard let gzipped = entry["gzipped"] as? [String: Int] else { continue }
            result[name] = Dictionary(uniqueKeysWithValues: gzipped.map { (Int32($0.key)!, $0.value) })
        }
        return result
    }

    /// Streams `bytes` through `sizer` in pieces whose lengths come from `split`.
    private func streamed(_ bytes: [UInt8], sizer: GzipSizer, split: () -> Int) -> Int {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + split())
            bytes[start..<end].withUnsafeBytes { sizer.feed($0) }
            start = end
        }
        return sizer.finish()
    }

    private func streamed(_ bytes: [UInt8], level: Int32 = 6, split: () -> Int) -> Int {
        streamed(bytes, sizer: GzipSizer(level: level), split: split)
    }

    func testMatchesPythonZlibAtLevels1_6_9() throws {
        let oracle = try oracle()
        XCTAssertEqual(
            Set(oracle.keys), ["plain.txt", "body.zlib", "body.rawdeflate", "body.br", "mixed.bin", "byte1f.bin"])
        var rng = SplitMix64(seed: 1)
        for (name, levels) in oracle.sorted(by: { $0.key < $1.key }) {
            let bytes = try Fixtures.bytes("contentcoding/\(name)")
            XCTAssertEqual(Set(levels.keys), [1, 6, 9], name)
            for (level, expected) in levels {
                let label = "\(name) level \(level)"
                XCTAssertEqual(GzipSizer.length(of: bytes, level: level), expected, label)
                XCTAssertEqual(streamed(bytes, level: level) { bytes.count }, expected, label)
                for maxPiece in [3, 100, 5000, 70_000] {
                    XCTAssertEqual(
                        streamed(bytes, level: level) { 1 + rng.below(maxPiece) }, expected, "\(label) ≤\(maxPiece)")
                }
            }
        }
    }

    func testByteByByteMatchesPython() throws {
        let oracle = try oracle()
        for name in ["plain.txt", "mixed.bin"] {
            let bytes = try Fixtures.bytes("contentcoding/\(name)")
            for level: Int32 in [1, 9] {
                XCTAssertEqual(streamed(bytes, level: level) { 1 }, oracle[name]?[level], "\(name) level \(level)")
            }
        }
    }

    func testRandomDataAnySplitMatchesOneShot() {
        var rng = SplitMix64(seed: 42)
        // Sizes around the 2-byte magic check, deflate's 32 KiB window, the 64 KiB output
        // buffer, and past them; noise, and noise with repeats (compressible).
        for count in [1, 2, 3, 17, 32_767, 32_768, 65_537, 300_000] {
            for compressible in [false, true] {
                var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b { bytes[0] = 0 }
                if compressible {
                    for i in stride(from: 64, to: count, by: 1) where rng.below(4) != 0 { bytes[i] = bytes[i - 64] }
                }
                for level: Int32 in [1, 6, 9] {
                    let expected = GzipSizer.length(of: bytes, level: level)
                    let label = "\(count) bytes, compressible \(compressible), level \(level)"
                    XCTAssertGreaterThan(expected, 18, label) // gzip header and trailer at least
                    XCTAssertEqual(streamed(bytes, level: level) { count }, expected, label)
                    for maxPiece in [2, 1000, 40_000] {
                        XCTAssertEqual(streamed(bytes, level: level) { 1 + rng.below(maxPiece) }, expected, label)
                    }
                    if count <= 65_537 && level == 6 {
                        XCTAssertEqual(streamed(bytes, level: level) { 1 }, expected, "\(label) byte by byte")
                    }
                }
            }
        }
    }

    func testEmptyInputIsZero() {
        XCTAssertEqual(GzipSizer.length(of: []), 0)
        XCTAssertEqual(GzipSizer().finish(), 0)
        let sizer = GzipSizer()
        [UInt8]().withUnsafeBytes { sizer.feed($0) }
        XCTAssertEqual(sizer.finish(), 0)
    }

    func testGzipMagicComesBackUnchanged() throws {
        let gzip = try Fixtures.bytes("contentcoding/body.gzip")
        XCTAssertEqual(GzipSizer.length(of: gzip), gzip.count)
        XCTAssertEqual(streamed(gzip) { gzip.count }, gzip.count)
        XCTAssertEqual(streamed(gzip) { 1 }, gzip.count) // magic split over two feeds
        XCTAssertEqual(GzipSizer.length(of: [0x1f, 0x8b]), 2)
        XCTAssertEqual(streamed([0x1f, 0x8b]) { 1 }, 2)
        // The magic only counts at the start.
        let later: [UInt8] = [0x41, 0x1f, 0x8b, 0x41]
        XCTAssertGreaterThan(GzipSizer.length(of: later), later.count)
        XCTAssertEqual(streamed(later) { 1 }, GzipSizer.length(of: later))
    }

    func testOneByte1fIsCompressed() throws {
        let expected = try XCTUnwrap(oracle()["byte1f.bin"]?[6]) // Python: 21
        XCTAssertEqual(GzipSizer.length(of: [0x1f]), expected)
        XCTAssertEqual(streamed([0x1f]) { 1 }, expected)
        // 1f then something other than 8b: not magic, both bytes compressed.
        for second: UInt8 in [0x00, 0x8a, 0x1f] {
            XCTAssertEqual(streamed([0x1f, second]) { 1 }, GzipSizer.length(of: [0x1f, second]))
            XCTAssertGreaterThan(GzipSizer.length(of: [0x1f, second]), 2)
        }
    }

    func testLevelIsHonored() throws {
        let plain = try Fixtures.bytes("contentcoding/plain.txt")
        let expected = try XCTUnwrap(oracle()["plain.txt"])
        XCTAssertEqual(Set(expected.values).count, 3, "the oracle's levels differ")
        for (level, length) in expected {
            XCTAssertEqual(GzipSizer.length(of: plain, level: level), length, "\(level)")
            XCTAssertEqual(streamed(plain, level: level) { 4096 }, length, "\(level)")
        }
        // Z_DEFAULT_COMPRESSION is 6, and 6 is the default.
        XCTAssertEqual(GzipSizer.length(of: plain, level: -1), expected[6])
        XCTAssertEqual(streamed(plain, level: -1) { 4096 }, expected[6])
        XCTAssertEqual(GzipSizer.length(of: plain), expected[6])
        XCTAssertEqual(streamed(plain, sizer: GzipSizer()) { 4096 }, expected[6])
    }

    func testResetMakesASizerReusable() throws {
        let oracle = try oracle()
        let plain = try Fixtures.bytes("contentcoding/plain.txt")
        let mixed = try Fixtures.bytes("contentcoding/mixed.bin")
        let gzip = try Fixtures.bytes("contentcoding/body.gzip")
        let sizer = GzipSizer(level: 9)
        XCTAssertEqual(streamed(plain, sizer: sizer) { 1000 }, oracle["plain.txt"]?[9])
        XCTAssertEqual(sizer.finish(), oracle["plain.txt"]?[9], "finish() again gives the same answer")
        for _ in 0..<2 {
            sizer.reset()
            XCTAssertEqual(streamed(mixed, sizer: sizer) { 777 }, oracle["mixed.bin"]?[9])
            sizer.reset()
            XCTAssertEqual(streamed(gzip, sizer: sizer) { 1 }, gzip.count)
            sizer.reset()
            XCTAssertEqual(sizer.finish(), 0)
            sizer.reset()
            XCTAssertEqual(streamed([0x1f], sizer: sizer) { 1 }, oracle["byte1f.bin"]?[9])
            sizer.reset()
            // A body abandoned halfway leaves nothing behind.
            plain[0..<5000].withUnsafeBytes { sizer.feed($0) }
            sizer.reset()
            XCTAssertEqual(streamed(plain, sizer: sizer) { 3000 }, oracle["plain.txt"]?[9])
        }
    }
}
