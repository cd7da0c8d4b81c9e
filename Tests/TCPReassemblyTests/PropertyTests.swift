@testable import TCPReassembly
import PacketLayers
import TestSupport
import XCTest

/// Seeded random exchanges: whatever the segmentation, reordering and retransmission, the
/// delivered streams equal what was sent, without gaps, and repeats are counted exactly.
final class PropertyTests: XCTestCase {
    func testRandomExchangesDeliverTheOriginalStreams() {
        var generator = SplitMix64(seed: 0x7C9_2024)
        var reordered = 0
        var repeated = 0
        for iteration in 0..<200 {
            let request = (0..<Int.random(in: 0...4_000, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let response = (0..<Int.random(in: 1...30_000, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            var exchange = Exchange(
                request: request, response: response,
                requestSizes: randomSizes(using: &generator), responseSizes: randomSizes(using: &generator))
            exchange.flow.clientISN = randomISN(using: &generator)
            exchange.flow.serverISN = randomISN(using: &generator)
            exchange.receiverAcks = Int.random(in: 0..<4, using: &generator) != 0
            exchange.finOnLastResponseSegment = Bool.random(using: &generator)
            exchange.requestSends = scrambled(exchange.requestSends, length: request.count, using: &generator)
            exchange.responseSends = scrambled(exchange.responseSends, length: response.count, using: &generator)
            if aheadOfHole(exchange.responseSends) + aheadOfHole(exchange.requestSends) > 0 { reordered += 1 }
            if repeatedBytes(exchange.responseSends) + repeatedBytes(exchange.requestSends) > 0 { repeated += 1 }
            let problems = intactDeliveryProblems(exchange, checkOutOfOrder: false)
            if !problems.isEmpty {
                return XCTFail(
                    "iteration \(iteration) (ISNs \(exchange.flow.clientISN), \(exchange.flow.serverISN), "
                        + "acks \(exchange.receiverAcks), fin on data \(exchange.finOnLastResponseSegment)): \(problems)\n"
                        + "request sends \(exchange.requestSends)\nresponse sends \(exchange.responseSends)")
            }
        }
        // The generator really exercises the buffer and the overlap trimming.
        XCTAssertGreaterThan(reordered, 100)
        XCTAssertGreaterThan(repeated, 100)
    }

    private func randomSizes(using generator: inout SplitMix64) -> [Int] {
        (0..<Int.random(in: 1...8, using: &generator)).map { _ in
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: return Int.random(in: 1...10, using: &generator)
            case 1: return Int.random(in: 11...500, using: &generator)
            default: return Int.random(in: 501...1_460, using: &generator)
            }
        }
    }

    /// Often close enough to 2^32 that the stream wraps.
    private func randomISN(using generator: inout SplitMix64) -> UInt32 {
        Bool.random(using: &generator)
            ? UInt32.max - UInt32.random(in: 0...40_000, using: &generator)
            : UInt32.random(in: 0...UInt32.max, using: &generator)
    }
}
