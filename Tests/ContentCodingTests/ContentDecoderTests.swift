import ContentCoding
import Foundation
import TestSupport
import XCTest

/// Decoded sizes are checked against Python's zlib and the brotli command
/// (Tests/Fixtures/contentcoding/manifest.json, written by scripts/make-coding-fixtures),
/// never against this module's own output.
final class ContentDecoderTests: XCTestCase {
    private var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private let plainLength = 107_636 // manifest.json "plain.txt".decoded

    override func tearDown() { scratch.deallocate() }

    private func decode(
        _ bytes: [UInt8], codings: [String], pieces: Int? = nil,
        limits: DecodingLimits = DecodingLimits()
    ) -> (DecodingOutcome, Int, [UInt8]) {
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
        let (outcome, length, _) = decode(
            try Fixtures.bytes("contentcoding/body.gzip.gzip"), codings: ["gzip", "gzip"])
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
        let bomb = try Fixtures.bytes("contentcoding/bomb.gzip") // 65,250 B → 64 MiB of zeros
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

    // MARK: brotli

    private func manifestDecoded(_ name: String) throws -> Int {
        let manifest = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: Data(Fixtures.bytes("contentcoding/manifest.json"))) as? [String: [String: Any]])
        return try XCTUnwrap(manifest[name]?["decoded"] as? Int, name)
    }

    func testBrDecodesToThePlainText() throws {
        let plain = try Fixtures.bytes("contentcoding/plain.txt")
        let expected = try manifestDecoded("body.br")
        for coding in ["br", "BR"] {
            let (outcome, length, output) = decode(try Fixtures.bytes("contentcoding/body.br"), codings: [coding])
            XCTAssertEqual(outcome, .decoded, coding)
            XCTAssertEqual(length, expected, coding)
            XCTAssertEqual(output, plain, coding)
        }
    }

    func testBrByteByByteAndOddPiecesGiveTheSameResult() throws {
        let bytes = try Fixtures.bytes("contentcoding/body.br")
        let whole = decode(bytes, codings: ["br"])
        for pieces in [1, 2, 997, 4096] {
            let split = decode(bytes, codings: ["br"], pieces: pieces)
            XCTAssertEqual(split.0, .decoded, "\(pieces)")
            XCTAssertEqual(split.1, whole.1, "\(pieces)")
            XCTAssertEqual(split.2, whole.2, "\(pieces)")
        }
    }

    func testStackedGzipAndBrDecodeInReverseOrder() throws {
        let plain = try Fixtures.bytes("contentcoding/plain.txt")
        // File names list the codings in the order applied, as Content-Encoding does.
        for (name, codings) in [("body.gzip.br", ["gzip", "br"]), ("body.br.gzip", ["br", "gzip"])] {
            let bytes = try Fixtures.bytes("contentcoding/\(name)")
            let expected = try manifestDecoded(name)
            for pieces in [nil, 1, 997] {
                let (outcome, length, output) = decode(bytes, codings: codings, pieces: pieces)
                XCTAssertEqual(outcome, .decoded, "\(name) \(String(describing: pieces))")
                XCTAssertEqual(length, expected, name)
                XCTAssertEqual(output, plain, name)
            }
        }
        // The other order takes the outer br stream for gzip.
        let (outcome, _, _) = decode(try Fixtures.bytes("contentcoding/body.gzip.br"), codings: ["br", "gzip"])
        guard case .failed = outcome else { return XCTFail("codings in the wrong order decoded: \(outcome)") }
    }

    func testTruncatedBrFails() throws {
        for pieces in [nil, 1] {
            let (outcome, _, _) = decode(
                try Fixtures.bytes("contentcoding/body.truncated.br"), codings: ["br"], pieces: pieces)
            guard case let .failed(reason) = outcome else { return XCTFail("expected failure, got \(outcome)") }
            XCTAssertTrue(reason.contains("ends before the end of the br stream"), reason)
        }
    }

    func testDamagedBrFails() {
        let (outcome, _, _) = decode([UInt8](repeating: 0xff, count: 64), codings: ["br"])
        guard case let .failed(reason) = outcome else { return XCTFail("expected failure, got \(outcome)") }
        XCTAssertTrue(reason.contains("br data is damaged"), reason)
    }

    func testEmptyBrBodyFails() {
        let (outcome, _, _) = decode([], codings: ["br"])
        XCTAssertEqual(outcome, .failed("empty br data"))
    }

    func testBytesAfterTheEndOfABrStreamAreIgnored() throws {
        let bytes = try Fixtures.bytes("contentcoding/body.br") + [1, 2, 3, 0x1f, 0x8b]
        let (outcome, length, _) = decode(bytes, codings: ["br"])
        XCTAssertEqual(outcome, .decoded)
        XCTAssertEqual(length, try manifestDecoded("body.br"))
    }

    func testGapInBrBodyFails() throws {
        let bytes = try Fixtures.bytes("contentcoding/body.br")
        let decoder = ContentDecoder(codings: ["br"], limits: DecodingLimits(), scratch: scratch)
        bytes[0..<100].withUnsafeBytes { decoder.feed($0) }
        decoder.gap(100)
        bytes[200...].withUnsafeBytes { decoder.feed($0) }
        XCTAssertEqual(decoder.finish(), .failed("100 bytes missing from the capture"))
    }

    func testBrBombIsStoppedByTheLimits() throws {
        let bomb = try Fixtures.bytes("contentcoding/bomb.br") // 54 B → 64 MiB of zeros
        let ratio = ContentDecoder(
            codings: ["br"],
            limits: DecodingLimits(
                maxDecodedBytes: 1 << 30, maxRatio: 100,
                ratioGrace: 1 << 20), scratch: scratch)
        bomb.withUnsafeBytes { ratio.feed($0) }
        XCTAssertEqual(ratio.finish(), .overLimit)
        // Stopped within one scratch buffer of the grace.
        XCTAssertLessThanOrEqual(ratio.decodedLength, (1 << 20) + (1 << 16))

        let size = ContentDecoder(
            codings: ["br"],
            limits: DecodingLimits(
                maxDecodedBytes: 4 << 20, maxRatio: 1 << 30,
                ratioGrace: 0), scratch: scratch)
        for byte in bomb { [byte].withUnsafeBytes { size.feed($0) } }
        XCTAssertEqual(size.finish(), .overLimit)
        XCTAssertLessThanOrEqual(size.decodedLength, (4 << 20) + (1 << 16))
    }

    func testBrBombWithinLimitsDecodesFully() throws {
        let bomb = try Fixtures.bytes("contentcoding/bomb.br")
        let limits = DecodingLimits(maxDecodedBytes: 1 << 30, maxRatio: 1 << 30, ratioGrace: 0)
        let decoder = ContentDecoder(codings: ["br"], limits: limits, scratch: scratch)
        bomb.withUnsafeBytes { decoder.feed($0) }
        XCTAssertEqual(decoder.finish(), .decoded)
        XCTAssertEqual(decoder.decodedLength, try manifestDecoded("bomb.br"))
    }

    func testLimitStopsStackedCodings() throws {
        // The limit is reached in the last stage; the outer ones must stop with it.
        for (name, codings) in [("body.gzip.br", ["gzip", "br"]), ("body.gzip.gzip", ["gzip", "gzip"])] {
            let limits = DecodingLimits(maxDecodedBytes: 10_000, maxRatio: 1 << 30, ratioGrace: 0)
            let decoder = ContentDecoder(codings: codings, limits: limits, scratch: scratch)
            var seen = 0
            decoder.sink = { seen += $0.count }
            try Fixtures.bytes("contentcoding/\(name)").withUnsafeBytes { decoder.feed($0) }
            XCTAssertEqual(decoder.finish(), .overLimit, name)
            XCTAssertEqual(seen, decoder.decodedLength, name)
            XCTAssertLessThanOrEqual(decoder.decodedLength, 10_000 + (1 << 16), name)
        }
    }
}
