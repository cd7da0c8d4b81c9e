import ContentCoding
import Estimation
import Foundation
@testable import MeterAuditKit
import TestSupport
import XCTest

/// The body workers: memos by wire body and by decoded content, their byte bound, pooled
/// deflate state. Oracles: Tests/Fixtures/contentcoding/manifest.json (Python's zlib), and
/// the `gzip` command for the same content at other levels.
final class BodyWorkerTests: XCTestCase {
    /// plain.txt: 107,636 bytes; zlib.compressobj(6, DEFLATED, 31) of it: 13,437 bytes (manifest).
    static let plainLength = 107_636
    static let plainGzippedAtSix = 13_437

    private let gzipDecoded = BodyRecipe(codings: ["gzip"], needs: .gzipDecoded)

    /// `content` compressed by the gzip command at `level`.
    private func gzipCommand(_ content: [UInt8], level: Int) throws -> [UInt8] {
        let tool = try XCTUnwrap(executable("gzip"), "gzip command missing")
        let input = try CaptureFileWriter.temporaryFile(named: "content.bin", containing: content)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-\(level)", "-n", "-c", input]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return Array(data)
    }

    func testOneContentAtThreeGzipLevelsIsDecodedThriceAndDeflatedOnce() throws {
        let plain = try Fixtures.bytes("contentcoding/plain.txt")
        let bodies = try [1, 6, 9].map { try gzipCommand(plain, level: $0) }
        XCTAssertEqual(Set(bodies).count, 3, "three different wire bodies")
        let worker = BodyWorker(level: 6, limits: DecodingLimits())
        let measurements = bodies.map { worker.submit($0, gzipDecoded) }.map { $0.wait() }
        for measurement in measurements {
            XCTAssertEqual(measurement.outcome, .decoded)
            XCTAssertEqual(measurement.decodedLength, Self.plainLength)
            XCTAssertEqual(measurement.gzippedDecoded, Self.plainGzippedAtSix)
        }
        let statistics = worker.statistics
        XCTAssertEqual(statistics.measured, 3)
        XCTAssertEqual(statistics.deflated, 1)
        XCTAssertEqual(statistics.deflateReused, 2)
    }

    func testEveryCodingOfOneContentSharesOneDeflate() throws {
        // gzip, zlib-wrapped deflate, raw deflate, br and stored-block gzip of plain.txt.
        let bodies: [([UInt8], String)] = try [
            (Fixtures.bytes("contentcoding/body.gzip"), "gzip"),
            (Fixtures.bytes("contentcoding/body.zlib"), "deflate"),
            (Fixtures.bytes("contentcoding/body.rawdeflate"), "deflate"),
            (Fixtures.bytes("contentcoding/body.br"), "br"),
            (CaptureFileWriter.gzip(Fixtures.bytes("contentcoding/plain.txt")), "gzip"),
        ]
        let worker = BodyWorker(level: 6, limits: DecodingLimits())
        let jobs = bodies.map { worker.submit($0.0, BodyRecipe(codings: [$0.1], needs: .gzipDecoded)) }
        for (job, body) in zip(jobs, bodies) {
            let measurement = job.wait()
            XCTAssertEqual(measurement.decodedLength, Self.plainLength, body.1)
            XCTAssertEqual(measurement.gzippedDecoded, Self.plainGzippedAtSix, body.1)
        }
        XCTAssertEqual(worker.statistics.measured, 5)
        XCTAssertEqual(worker.statistics.deflated, 1)
    }

    func testContentTooLongToKeepIsDecodedAgainIntoDeflate() throws {
        var bounds = Limits.BodyWork()
        bounds.maxRetainedDecodedBody = 1000 // plain.txt decodes to 107,636 bytes
        let worker = BodyWorker(level: 6, limits: DecodingLimits(), bounds: bounds)
        let measurement = worker.submit(try Fixtures.bytes("contentcoding/body.gzip"), gzipDecoded).wait()
        XCTAssertEqual(measurement.decodedLength, Self.plainLength)
        XCTAssertEqual(measurement.gzippedDecoded, Self.plainGzippedAtSix)
    }

    func testIdentityBodyAndTransferDecodedNeeds() throws {
        // mixed.bin, 300,000 bytes, gzipped at 1 / 6 / 9: 49,454 / 47,108 / 46,843 (manifest).
        let mixed = try Fixtures.bytes("contentcoding/mixed.bin")
        for (level, expected) in [(Int32(1), 49_454), (6, 47_108), (9, 46_843)] {
            let worker = BodyWorker(level: level, limits: DecodingLimits())
            let both = worker.submit(mixed, BodyRecipe(codings: [], needs: [.gzipDecoded, .gzipTransferDecoded])).wait()
            XCTAssertEqual(both.outcome, .identity)
            XCTAssertEqual(both.decodedLength, 300_000)
            XCTAssertEqual(both.gzippedDecoded, expected)
            XCTAssertEqual(both.gzippedTransferDecoded, expected)
            // A request body sent gzip: gzippedData returns data with the gzip magic unchanged.
            let gzipped = try Fixtures.bytes("contentcoding/body.gzip")
            let request = worker.submit(gzipped, BodyRecipe(codings: ["gzip"], needs: .gzipTransferDecoded)).wait()
            XCTAssertEqual(request.gzippedTransferDecoded, 13_437)
            XCTAssertNil(request.gzippedDecoded)
            XCTAssertEqual(worker.statistics.deflated, 1, "mixed.bin once; the gzip body needs no deflate")
        }
    }

    func testUndecodableBodiesGetNoDecodedGzipLength() throws {
        let worker = BodyWorker(level: 6, limits: DecodingLimits())
        let truncated = worker.submit(try Fixtures.bytes("contentcoding/body.truncated.gzip"), gzipDecoded).wait()
        XCTAssertEqual(truncated.outcome, .failed("data ends before the end of the gzip stream"))
        XCTAssertNil(truncated.gzippedDecoded)
        let unsupported = worker.submit(Array("abc".utf8), BodyRecipe(codings: ["zstd"], needs: .gzipDecoded)).wait()
        XCTAssertEqual(unsupported.outcome, .unsupported("zstd"))
        XCTAssertNil(unsupported.gzippedDecoded)
        // bomb.gzip decodes to 64 MiB; a 1 MiB bound stops it.
        let bomb = BodyWorker(level: 6, limits: DecodingLimits(maxDecodedBytes: 1 << 20))
            .submit(try Fixtures.bytes("contentcoding/bomb.gzip"), gzipDecoded).wait()
        XCTAssertEqual(bomb.outcome, .overLimit)
        XCTAssertNil(bomb.gzippedDecoded)
        XCTAssertEqual(worker.statistics.deflated, 0)
    }

    func testSameBodyWhileMeasuredFollowsTheFirstJob() throws {
        let body = try Fixtures.bytes("contentcoding/body.gzip")
        let worker = BodyWorker(level: 6, limits: DecodingLimits())
        let jobs = (0..<20).map { _ in worker.submit(body, gzipDecoded) }
        XCTAssertEqual(jobs.map { $0.wait().gzippedDecoded }, Array(repeating: Self.plainGzippedAtSix, count: 20))
        XCTAssertEqual(worker.statistics.measured, 1)
        XCTAssertEqual(worker.statistics.reused, 19)
    }

    func testMemoStaysWithinItsByteBound() throws {
        var bounds = Limits.BodyWork()
        // Room for a few entries per memo: 4 KiB split in two, 256 B per wire entry.
        bounds.maxMemoBytes = 4096
        let worker = BodyWorker(level: 6, limits: DecodingLimits(), bounds: bounds)
        let bodies = (0..<100).map { index in
            Array("body number \(index) ".utf8) + Array(repeating: UInt8(index), count: 100)
        }
        let first = bodies.map { worker.submit($0, BodyRecipe(codings: [], needs: .gzipDecoded)) }.map { $0.wait() }
        // The oldest were dropped: measured again, with the same answers.
        let again = bodies.prefix(3).map { worker.submit($0, BodyRecipe(codings: [], needs: .gzipDecoded)) }.map {
            $0.wait()
        }
        XCTAssertEqual(Array(first.prefix(3)), again)
        for (body, measurement) in zip(bodies, first) {
            XCTAssertEqual(measurement.gzippedDecoded, GzipSizer.length(of: body, level: 6))
        }
        let statistics = worker.statistics
        XCTAssertEqual(statistics.measured, 103)
        XCTAssertEqual(statistics.reused, 0)
        XCTAssertGreaterThan(statistics.evicted, 150)
    }

    func testQueueBoundHoldsTheSubmitterNotTheResults() throws {
        var bounds = Limits.BodyWork()
        bounds.maxQueuedBytes = 1 // one body at a time
        bounds.maxQueuedBodies = 1
        bounds.workerThreads = 1
        let worker = BodyWorker(level: 6, limits: DecodingLimits(), bounds: bounds)
        let body = try Fixtures.bytes("contentcoding/body.gzip")
        let jobs = (0..<5).map { index in
            worker.submit(body + [UInt8(index)], BodyRecipe(codings: [], needs: .gzipTransferDecoded))
        }
        // Identity bodies starting with the gzip magic are returned unchanged by gzippedData.
        XCTAssertEqual(jobs.map { $0.wait().gzippedTransferDecoded }, Array(repeating: 13_438, count: 5))
    }

    func testADeclaredLengthIsTrustedWithAtMostAQuarterMebibyte() throws {
        // A capture may declare a long body and send 10 bytes of it, on any number of
        // streams: the collection holds room for at most 256 KiB (262,144 bytes), not 8 MB.
        let worker = BodyWorker(level: 6, limits: DecodingLimits())
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { scratch.deallocate() }
        let tenBytes: [UInt8] = Array("0123456789".utf8)
        let declaredLong = BodyMeter(
            gzipDecoded, worker: worker, scratch: scratch, expectedLength: Int64(worker.maxCollectedBody))
        tenBytes.withUnsafeBytes { declaredLong.bodyBytes($0) }
        XCTAssertGreaterThanOrEqual(declaredLong.collectedCapacity, 256 << 10)
        XCTAssertLessThan(declaredLong.collectedCapacity, 2 * (256 << 10))
        // A short declared length gets its room at once; the body's bytes are all kept.
        let declaredShort = BodyMeter(gzipDecoded, worker: worker, scratch: scratch, expectedLength: 5_000)
        tenBytes.withUnsafeBytes { declaredShort.bodyBytes($0) }
        XCTAssertGreaterThanOrEqual(declaredShort.collectedCapacity, 5_000)
        XCTAssertLessThan(declaredShort.collectedCapacity, 256 << 10)
        // A length past what is collected at all reserves nothing beyond the bytes.
        let declaredHuge = BodyMeter(gzipDecoded, worker: worker, scratch: scratch, expectedLength: 1 << 40)
        tenBytes.withUnsafeBytes { declaredHuge.bodyBytes($0) }
        XCTAssertLessThan(declaredHuge.collectedCapacity, 4_096)
    }

}

final class LRUMemoTests: XCTestCase {
    func testDropsTheLeastRecentlyUsedPastTheBound() {
        var memo = LRUMemo<String, Int>(maxCost: 30)
        XCTAssertEqual(memo.insert(1, for: "a", cost: 10), 0)
        XCTAssertEqual(memo.insert(2, for: "b", cost: 10), 0)
        XCTAssertEqual(memo.insert(3, for: "c", cost: 10), 0)
        XCTAssertEqual(memo.value(for: "a"), 1) // a is now the most recent; b the least
        XCTAssertEqual(memo.insert(4, for: "d", cost: 10), 1)
        XCTAssertNil(memo.value(for: "b"))
        XCTAssertEqual(memo.value(for: "a"), 1)
        XCTAssertEqual(memo.value(for: "c"), 3)
        XCTAssertEqual(memo.totalCost, 30)
        // One large entry pushes out as many as it needs: c(10) + a(10) + d(10) + 25 > 30.
        XCTAssertEqual(memo.insert(5, for: "e", cost: 25), 3)
        XCTAssertEqual(memo.count, 1)
        XCTAssertEqual(memo.totalCost, 25)
    }

    func testReplacingAKeyReplacesItsCost() {
        var memo = LRUMemo<Int, Int>(maxCost: 100)
        memo.insert(1, for: 7, cost: 60)
        memo.insert(2, for: 7, cost: 30)
        XCTAssertEqual(memo.totalCost, 30)
        XCTAssertEqual(memo.value(for: 7), 2)
    }

    func testManyLookupsKeepTheRecencyQueueSmall() {
        var memo = LRUMemo<Int, Int>(maxCost: 1000)
        for key in 0..<10 { memo.insert(key, for: key, cost: 1) }
        for round in 0..<10_000 { _ = memo.value(for: round % 10) }
        XCTAssertEqual(memo.count, 10)
        // Still correct after sweeps: the least recent is the one looked up longest ago.
        memo = LRUMemo<Int, Int>(maxCost: 3)
        for key in 0..<3 { memo.insert(key, for: key, cost: 1) }
        for _ in 0..<500 {
            _ = memo.value(for: 0)
            _ = memo.value(for: 2)
        }
        memo.insert(9, for: 9, cost: 1)
        XCTAssertNil(memo.value(for: 1))
        XCTAssertEqual(memo.value(for: 0), 0)
    }
}
