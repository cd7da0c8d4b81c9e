import ContentCoding
import Foundation
import TestSupport
import XCTest

/// Decoded sizes are checked against Python's zlib (Tests/Fixtures/contentcoding/manifest.json,
/// written by scripts/make-coding-fixtures), never against this module's own output.
final class ContentDecoderTests: XCTestCase {
    private var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private let plainLength = 107_636  // manifest.json "plain.txt".decoded

    override func tearDown() { scratch.deallocate() }

    private func decode(_ bytes: [UInt8], codings: [String], pieces: Int? = nil,
                        limits: DecodingLimits = DecodingLimits()) -> (DecodingOutcome, Int, [UInt8]) {
        let decoder = ContentDecoder(codings: codings, limits: limits, scratch: scratch)
        var output: [UInt8] = []
        decoder.sink = { output.append(contentsOf: $0) }
        let step = pieces ?? max(bytes.count, 1)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + step)
            bytes[start..<end].withUnsafeBytes { decoder.feed($0) }
            start = end
        }
        let outcome = decoder.finish()
        return (outcome, decoder.decodedLength, output)
    }

    func testGzipAndXGzipDecodeToThePlainText() throws {
        let plain = try Fixtures.bytes("contentcoding/plain.txt")
        XCTAssertEqual(plain.count, plainLength)
        for coding in ["gzip", "x-gzip", "GZIP"] {
            let (outcome, length, output) = decode(try Fixtures.bytes("contentcoding/body.gzip"), codings: [coding])
            XCTAssertEqual(outcome, .decoded, coding)
            XCTAssertEqual(length, plainLength, coding)
            XCTAssertEqual(output, plain, coding)
        }
    }

    func testDeflateZlibWrappedAndRaw() throws {
        for name in ["body.zlib", "body.rawdeflate"] {
            let (outcome, length, _) = decode(try Fixtures.bytes("contentcoding/\(name)"), codings: ["deflate"])
            XCTAssertEqual(outcome, .decoded, name)
            XCTAssertEqual(length, plainLength, name)
        }
    }

    func testStackedCodingsDecodeInReverseOrder() throws {
        let (outcome, length, _) = decode(try Fixtures.bytes("contentcoding/body.gzip.gzip"), codings: ["gzip", "gzip"])
        XCTAssertEqual(outcome, .decoded)
        XCTAssertEqual(length, plainLength)
    }

    func testConcatenatedGzipMembers() throws {
        let (outcome, length, _) = decode(try Fixtures.bytes("contentcoding/body.twomembers.gzip"), codings: ["gzip"])
        XCTAssertEqual(outcome, .decoded)
        XCTAssertEqual(length, plainLength)
    }

    func testByteByByteFeedingGivesTheSameResult() throws {
        for (name, coding) in [("body.gzip", "gzip"), ("body.zlib", "deflate"), ("body.rawdeflate", "deflate")] {
            let bytes = try Fixtures.bytes("contentcoding/\(name)")
            let whole = decode(bytes, codings: [coding])
            let single = decode(bytes, codings: [coding], pieces: 1)
            let odd = decode(bytes, codings: [coding], pieces: 997)
            XCTAssertEqual(whole.0, .decoded, name)
            XCTAssertEqual(single.1, whole.1, name)
            XCTAssertEqual(single.2, whole.2, name)
            XCTAssertEqual(odd.2, whole.2, name)
        }
    }

    func testTruncatedGzipFails() throws {
        let (outcome, _, _) = decode(try Fixtures.bytes("contentcoding/body.truncated.gzip"), codings: ["gzip"])
        guard case let .failed(reason) = outcome else { return XCTFail("expected failure, got \(outcome)") }
        XCTAssertTrue(reason.contains("ends before the end"), reason)
    }

    func testDamagedDataFails() {
        let garbage: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3] + Array(repeating: 0xff, count: 64)
        let (outcome, _, _) = decode(garbage, codings: ["gzip"])
        guard case .failed = outcome else { return XCTFail("expected failure, got \(outcome)") }
    }

    func testBombIsStoppedByTheRatioLimit() throws {
        let bomb = try Fixtures.bytes("contentcoding/bomb.gzip")  // 65,250 B → 64 MiB of zeros
        let limits = DecodingLimits(maxDecodedBytes: 1 << 30, maxRatio: 100, ratioGrace: 1 << 20)
        let decoder = ContentDecoder(codings: ["gzip"], limits: limits, scratch: scratch)
        bomb.withUnsafeBytes { decoder.feed($0) }
        XCTAssertEqual(decoder.finish(), .overLimit)
        // Stopped early: within one scratch buffer of the point where 100:1 was passed.
        XCTAssertLessThan(decoder.decodedLength, 100 * bomb.count + (1 << 17))
    }

    func testBombIsStoppedBySizeLimit() throws {
        let bomb = try Fixtures.bytes("contentcoding/bomb.gzip")
        let limits = DecodingLimits(maxDecodedBytes: 4 << 20, maxRatio: 1 << 30, ratioGrace: 0)
        let decoder = ContentDecoder(codings: ["gzip"], limits: limits, scratch: scratch)
        bomb.withUnsafeBytes { decoder.feed($0) }
        XCTAssertEqual(decoder.finish(), .overLimit)
        XCTAssertLessThanOrEqual(decoder.decodedLength, (4 << 20) + (1 << 16))
    }

    func testBombWithinLimitsDecodesFully() throws {
        let bomb = try Fixtures.bytes("contentcoding/bomb.gzip")
        let limits = DecodingLimits(maxDecodedBytes: 1 << 30, maxRatio: 1 << 20, ratioGrace: 0)
        let decoder = ContentDecoder(codings: ["gzip"], limits: limits, scratch: scratch)
        bomb.withUnsafeBytes { decoder.feed($0) }
        XCTAssertEqual(decoder.finish(), .decoded)
        XCTAssertEqual(decoder.decodedLength, 64 << 20)
    }

    func testIdentityCountsBytesAndGaps() {
        let decoder = ContentDecoder(codings: [], limits: DecodingLimits(), scratch: scratch)
        [UInt8](repeating: 65, count: 10).withUnsafeBytes { decoder.feed($0) }
        decoder.gap(5)
        XCTAssertEqual(decoder.finish(), .identity)
        XCTAssertEqual(decoder.decodedLength, 15)
    }

    func testGapInCodedBodyFails() throws {
        let bytes = try Fixtures.bytes("contentcoding/body.gzip")
        let decoder = ContentDecoder(codings: ["gzip"], limits: DecodingLimits(), scratch: scratch)
        bytes[0..<100].withUnsafeBytes { decoder.feed($0) }
        decoder.gap(100)
        bytes[200...].withUnsafeBytes { decoder.feed($0) }
        guard case .failed = decoder.finish() else { return XCTFail("a hole cannot be inflated") }
    }

    func testUnknownCodingIsReported() {
        let (outcome, _, _) = decode([1, 2, 3], codings: ["compress"])
        XCTAssertEqual(outcome, .unsupported("compress"))
    }

    func testEmptyGzipBodyFails() {
        let (outcome, length, _) = decode([], codings: ["gzip"])
        XCTAssertEqual(length, 0)
        guard case .failed = outcome else { return XCTFail("empty gzip data is not a gzip stream: \(outcome)") }
    }
}
