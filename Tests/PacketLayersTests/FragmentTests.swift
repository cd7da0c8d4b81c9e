import CaptureIO
import PacketLayers
import TestSupport
import XCTest

final class FragmentTests: XCTestCase {
    private let payload: [UInt8] = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    private let second: Int64 = 1_000_000_000

    /// A 4000-byte TCP payload (4020 bytes of IP payload) in fragments of at most 1480 bytes: 3 frames.
    private func fragments(
        ipID: UInt16 = 0x1234, data: [UInt8]? = nil, size: Int = 1480,
        from: String = "10.0.0.1:1234"
    ) -> [[UInt8]] {
        PacketBuilder.tcpFragments(
            from: from, to: "10.0.0.2:80", seq: 5000, ack: 6000,
            payload: data ?? payload, maxFragmentPayload: size, ipID: ipID)
    }

    /// Feeds frames in order; returns every outcome.
    private func feed(
        _ frames: [[UInt8]], into decoder: PacketDecoder, firstNumber: Int = 1,
        time: (Int) -> Int64 = { Int64($0) * 1000 }
    ) -> [Outcome] {
        frames.enumerated().map { index, bytes in
            decoder.decode(bytes, number: firstNumber + index, timestamp: time(index))
        }
    }

    private func assertReassembled(
        _ outcome: Outcome?, frames: [[UInt8]], lastNumber: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let segment = try XCTUnwrap(outcome?.segment, "got \(String(describing: outcome))", file: file, line: line)
        XCTAssertEqual(segment.payload, payload, file: file, line: line)
        XCTAssertEqual(segment.payloadLength, payload.count, file: file, line: line)
        XCTAssertEqual(segment.sequence, 5000, file: file, line: line)
        XCTAssertEqual(segment.acknowledgment, 6000, file: file, line: line)
        XCTAssertEqual(segment.source, endpoint("10.0.0.1:1234"), file: file, line: line)
        XCTAssertEqual(segment.destination, endpoint("10.0.0.2:80"), file: file, line: line)
        XCTAssertEqual(segment.ipLength, 20 + 20 + payload.count, file: file, line: line)
        XCTAssertEqual(segment.frameLength, frames.reduce(0) { $0 + $1.count }, file: file, line: line)
        XCTAssertEqual(segment.frameNumber, lastNumber, file: file, line: line)
    }

    func testInOrder() throws {
        let frames = fragments()
        XCTAssertEqual(frames.count, 3)
        let decoder = PacketDecoder()
        let outcomes = feed(frames, into: decoder)
        XCTAssertEqual(Array(outcomes.prefix(2)), [.held, .held])
        try assertReassembled(outcomes.last, frames: frames, lastNumber: 3)
        XCTAssertEqual(outcomes.last?.segment?.timestamp, 2000)
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 0)
        XCTAssertEqual(decoder.pendingFragmentBytes, 0)
    }

    func testReversed() throws {
        let frames = fragments()
        let outcomes = feed(frames.reversed(), into: PacketDecoder())
        XCTAssertEqual(Array(outcomes.prefix(2)), [.held, .held])
        try assertReassembled(outcomes.last, frames: frames, lastNumber: 3)
    }

    func testWithDuplicate() throws {
        let frames = fragments()
        let sent = [frames[0], frames[1], frames[0], frames[2]]
        let outcomes = feed(sent, into: PacketDecoder())
        XCTAssertEqual(Array(outcomes.prefix(3)), [.held, .held, .held])
        // The duplicate frame was on the wire too: it counts in the frame length.
        try assertReassembled(outcomes.last, frames: sent, lastNumber: 4)
    }

    func testSmallOverlappingFragmentsInRandomOrder() throws {
        // 8-byte pieces plus overlapping 24-byte copies of the same bytes, shuffled.
        let small = fragments(size: 8)
        let large = fragments(size: 24)
        var generator = SplitMix64(seed: 7)
        let all = (small + large).shuffled(using: &generator)
        let decoder = PacketDecoder()
        var result: Outcome?
        for (index, bytes) in all.enumerated() {
            let outcome = decoder.decode(bytes, number: index + 1)
            if case .segment = outcome {
                result = outcome
                break
            }
            XCTAssertEqual(outcome, .held)
        }
        let segment = try XCTUnwrap(result?.segment)
        XCTAssertEqual(segment.payload, payload)
    }

    func testInterleavedDatagramsAndPlainPackets() throws {
        let first = fragments(ipID: 1)
        let other = fragments(ipID: 2, data: [UInt8](repeating: 9, count: 2000))
        let plain = PacketBuilder.tcp(from: "10.0.0.1:1234", to: "10.0.0.2:80", seq: 1, payload: [1, 2, 3])
        let decoder = PacketDecoder()
        XCTAssertEqual(decoder.decode(first[0]), .held)
        XCTAssertEqual(decoder.decode(other[0]), .held)
        XCTAssertEqual(decoder.decode(plain).segment?.payload, [1, 2, 3])
        XCTAssertEqual(decoder.decode(first[1]), .held)
        XCTAssertEqual(decoder.decode(other[1]).segment?.payload, [UInt8](repeating: 9, count: 2000))
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 1)
        XCTAssertEqual(decoder.decode(first[2]).segment?.payload, payload)
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 0)
    }

    func testReassembledPayloadStaysValidUntilTheNextDecode() {
        let decoder = PacketDecoder()
        let frames = fragments()
        _ = decoder.decode(frames[0])
        _ = decoder.decode(frames[1])
        frames[2].withUnsafeBytes { raw in
            let frame = CapturedFrame(
                number: 3, timestamp: 0, linkType: LinkType.ethernet, interface: 0,
                originalLength: raw.count, bytes: raw)
            guard case .segment(let segment) = decoder.decode(frame) else { return XCTFail("no segment") }
            // Points into the decoder's buffer, not into the last frame.
            let frameRange = UInt(bitPattern: raw.baseAddress!)..<UInt(bitPattern: raw.baseAddress! + raw.count)
            XCTAssertFalse(frameRange.contains(UInt(bitPattern: segment.payload.baseAddress!)))
            XCTAssertEqual(Array(segment.payload), payload)
        }
    }

    func testConflictingOverlapIsRejected() {
        let frames = fragments()
        // Same datagram id and offset, different bytes.
        let changed = fragments(data: payload.map { $0 ^ 0xFF })[1]
        let decoder = PacketDecoder()
        XCTAssertEqual(decoder.decode(frames[0]), .held)
        XCTAssertEqual(decoder.decode(frames[1]), .held)
        XCTAssertEqual(decoder.decode(changed), .skipped(.badFragment))
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 0)
        // The datagram is gone: the last fragment alone does not complete it.
        XCTAssertEqual(decoder.decode(frames[2]), .held)
    }

    func testMalformedFragments() {
        let a = IPAddress("10.0.0.1")!
        let b = IPAddress("10.0.0.2")!
        // Not a multiple of 8 with more fragments to come.
        let odd = PacketBuilder.ipv4(
            source: a, destination: b, payload: [UInt8](repeating: 1, count: 30), moreFragments: true)
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(odd)), .skipped(.badFragment))
        // Empty fragment.
        let empty = PacketBuilder.ipv4(source: a, destination: b, payload: [], moreFragments: true)
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(empty)), .skipped(.badFragment))
        // Past 65535 bytes.
        let huge = PacketBuilder.ipv4(
            source: a, destination: b, payload: [UInt8](repeating: 1, count: 16),
            fragmentOffset: 65_528)
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(huge)), .skipped(.badFragment))
        // Two different "last" fragments.
        let decoder = PacketDecoder()
        let last1 = PacketBuilder.ipv4(
            source: a, destination: b, payload: [UInt8](repeating: 1, count: 16), fragmentOffset: 64)
        let last2 = PacketBuilder.ipv4(
            source: a, destination: b, payload: [UInt8](repeating: 1, count: 16), fragmentOffset: 128)
        XCTAssertEqual(decoder.decode(PacketBuilder.frame(last1)), .held)
        XCTAssertEqual(decoder.decode(PacketBuilder.frame(last2)), .skipped(.badFragment))
        // A fragment cut by snaplen can never complete its datagram.
        let frames = fragments()
        XCTAssertEqual(decoder.decode(frames[0]), .held)
        XCTAssertEqual(
            decoder.decode(Array(frames[1].prefix(200)), originalLength: frames[1].count),
            .skipped(.badFragment))
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 0)
    }

    func testTooShortForTCPAfterReassembly() {
        let a = IPAddress("10.0.0.1")!
        let b = IPAddress("10.0.0.2")!
        let decoder = PacketDecoder()
        let first = PacketBuilder.ipv4(
            source: a, destination: b, payload: [UInt8](repeating: 0, count: 8), moreFragments: true)
        let last = PacketBuilder.ipv4(
            source: a, destination: b, payload: [UInt8](repeating: 0, count: 4), fragmentOffset: 8)
        XCTAssertEqual(decoder.decode(PacketBuilder.frame(first)), .held)
        XCTAssertEqual(decoder.decode(PacketBuilder.frame(last)), .skipped(.malformedTCP))
    }

    func testLimitDropsTheOldestDatagram() throws {
        // Each first fragment holds 1480 bytes; the limit has room for two of them.
        let decoder = PacketDecoder(maxPendingFragmentBytes: 3400)
        let one = fragments(ipID: 1)
        let two = fragments(ipID: 2)
        let three = fragments(ipID: 3)
        XCTAssertEqual(decoder.decode(one[0]), .held)
        XCTAssertEqual(decoder.decode(two[0]), .held)
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 2)
        // The third datagram pushes the first out.
        XCTAssertEqual(decoder.decode(three[0]), .skipped(.badFragment))
        XCTAssertEqual(decoder.evictedFragmentDatagrams, 1)
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 2)
        XCTAssertLessThanOrEqual(decoder.pendingFragmentBytes, 3400)
        // Datagram 2 must grow and is now the oldest: it is dropped itself.
        XCTAssertEqual(decoder.decode(two[1]), .skipped(.badFragment))
        XCTAssertEqual(decoder.evictedFragmentDatagrams, 2)
        // A datagram larger than the whole limit on its own never completes.
        let small = PacketDecoder(maxPendingFragmentBytes: 3000)
        let frames = fragments()
        XCTAssertEqual(small.decode(frames[0]), .held)
        XCTAssertEqual(small.decode(frames[1]), .skipped(.badFragment))
        XCTAssertEqual(small.pendingFragmentDatagrams, 0)
        XCTAssertEqual(small.pendingFragmentBytes, 0)
        // With enough room everything completes.
        let roomy = PacketDecoder(maxPendingFragmentBytes: 5000)
        try assertReassembled(feed(frames, into: roomy).last, frames: frames, lastNumber: 3)
    }

    func testIdleDatagramsExpireAfter30Seconds() throws {
        let frames = fragments()
        let decoder = PacketDecoder()
        let start: Int64 = 1_700_000_000 * 1_000_000_000
        XCTAssertEqual(decoder.decode(frames[0], timestamp: start), .held)
        XCTAssertEqual(decoder.decode(frames[1], timestamp: start + 29 * second), .held)
        // 30.5 s after the last fragment: the datagram has been dropped, this starts a new one.
        XCTAssertEqual(decoder.decode(frames[2], timestamp: start + 59 * second + 500_000_000), .held)
        XCTAssertEqual(decoder.expiredFragmentDatagrams, 1)
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 1)
        // Another datagram's fragment much later sweeps the stale one away.
        let other = fragments(ipID: 99)
        XCTAssertEqual(decoder.decode(other[0], timestamp: start + 200 * second), .held)
        XCTAssertEqual(decoder.expiredFragmentDatagrams, 2)
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 1)
        // Gaps under 30 s each: it still completes.
        XCTAssertEqual(decoder.decode(other[1], timestamp: start + 229 * second), .held)
        try assertReassembled(
            decoder.decode(other[2], number: 3, timestamp: start + 258 * second),
            frames: other, lastNumber: 3)
    }
}
