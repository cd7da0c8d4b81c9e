import CaptureIO
import PacketLayers
import TestSupport
import XCTest

/// Random and mutated frames must never trap, and every segment must stay inside its bytes.
final class FuzzTests: XCTestCase {
    private static let linkTypes: [Int32] = [0, 1, 12, 14, 101, 108, 113, 228, 229, 276, 147]

    /// Decodes and checks the segment invariants.
    /// - Returns: whether a segment came out.
    @discardableResult
    private func check(
        _ decoder: PacketDecoder, _ bytes: [UInt8], linkType: Int32, originalLength: Int,
        timestamp: Int64 = 0, context: @autoclosure () -> String
    ) -> Bool {
        PacketBuilder.withCapturedFrame(
            bytes, linkType: linkType, timestamp: timestamp,
            originalLength: originalLength
        ) { frame in
            guard case .segment(let segment) = decoder.decode(frame) else { return false }
            XCTAssertLessThanOrEqual(segment.payload.count, segment.payloadLength, context())
            XCTAssertGreaterThanOrEqual(segment.ipLength, segment.payloadLength + 20, context())
            if segment.payload.count > 0, let base = frame.bytes.baseAddress, let payload = segment.payload.baseAddress,
                payload >= base, payload < base + frame.bytes.count
            {
                // Borrowed from the frame: must end inside it.
                XCTAssertLessThanOrEqual(payload + segment.payload.count, base + frame.bytes.count, context())
            }
            _ = segment.payload.reduce(0, &+) // touch every byte
            return true
        }
    }

    func testRandomBytes() {
        var random = SplitMix64(seed: 0xC0FFEE)
        let decoder = PacketDecoder(maxPendingFragmentBytes: 64 << 10)
        for iteration in 0..<6000 {
            let length = Int.random(in: 0...160, using: &random)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let linkType = Self.linkTypes.randomElement(using: &random)!
            // Often make the link header plausible so the IP and TCP layers get exercised.
            if Bool.random(using: &random), length > 20 {
                switch linkType {
                case 1:
                    bytes[12] = 0x08
                    bytes[13] = Bool.random(using: &random) ? 0x00 : 0x86
                    if bytes[13] == 0x86 {
                        bytes[13] = 0xDD
                        bytes[14] = 0x60
                    } else {
                        bytes[14] = 0x45
                    }
                case 101, 228: bytes[0] = 0x45
                case 229: bytes[0] = 0x60
                default: break
                }
            }
            let originalLength = length + (Bool.random(using: &random) ? 0 : Int.random(in: -10...3000, using: &random))
            check(
                decoder, bytes, linkType: linkType, originalLength: originalLength,
                context: "random #\(iteration)")
        }
    }

    func testMutatedValidFrames() {
        var random = SplitMix64(seed: 42)
        let decoder = PacketDecoder(maxPendingFragmentBytes: 32 << 10)
        var segments = 0
        let links = PacketBuilder.Link.all(ipv6: false) + PacketBuilder.Link.all(ipv6: true)
        for iteration in 0..<6000 {
            let ipv6 = Bool.random(using: &random)
            let link = links.filter { ipv6 ? $0 != .rawLinkType(228) : $0 != .rawLinkType(229) }
                .randomElement(using: &random)!
            let payload = [UInt8](repeating: 0x61, count: Int.random(in: 0...300, using: &random))
            let options = Bool.random(using: &random) ? PacketBuilder.TCPOption.timestamps(1, echo: 2) : []
            var extensions: [PacketBuilder.IPv6Extension] = []
            if ipv6, Bool.random(using: &random) { extensions = [.hopByHop(), .routing(), .destinationOptions()] }
            var bytes = PacketBuilder.tcp(
                from: ipv6 ? "[2001:db8::1]:1000" : "10.0.0.1:1000", to: ipv6 ? "[2001:db8::2]:80" : "10.0.0.2:80",
                seq: random.next32(), ack: random.next32(), options: options, payload: payload, link: link,
                ipv4Options: !ipv6 && Bool.random(using: &random) ? [1, 1, 1, 1] : [], ipv6Extensions: extensions)
            let originalLength = bytes.count
            // Flip a few bytes, mostly in the headers.
            for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
                let index = Int.random(in: 0..<min(bytes.count, 120), using: &random)
                bytes[index] = UInt8.random(in: 0...255, using: &random)
            }
            // Sometimes cut it (snaplen) or pad it.
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
            case 1: bytes += [UInt8](repeating: 0, count: Int.random(in: 1...20, using: &random))
            default: break
            }
            if check(
                decoder, bytes, linkType: link.linkType, originalLength: max(originalLength, bytes.count),
                context: "mutated #\(iteration) \(link)")
            {
                segments += 1
            }
        }
        // The mutations must leave plenty of decodable frames, or the test exercises little.
        XCTAssertGreaterThan(segments, 1000)
    }

    func testFragmentStorms() {
        var random = SplitMix64(seed: 7)
        let decoder = PacketDecoder(maxPendingFragmentBytes: 16 << 10)
        var time: Int64 = 0
        var segments = 0
        // Eight datagrams in flight, each a real TCP segment, renewed once completed.
        let a = endpoint("10.0.0.1:1000")
        let b = endpoint("10.0.0.2:80")
        func newDatagram() -> [UInt8] {
            PacketBuilder.tcpSegment(
                from: a, to: b, seq: random.next32(), ack: 0, flags: [.ack],
                payload: [UInt8](repeating: 0x55, count: Int.random(in: 0...600, using: &random)))
        }
        var datagrams = (0..<8).map { _ in newDatagram() }
        for iteration in 0..<4000 {
            let id = Int.random(in: 0..<8, using: &random)
            let datagram = datagrams[id]
            var start = Int.random(in: 0...(datagram.count / 8), using: &random) * 8
            var end = min(datagram.count, start + 8 * Int.random(in: 1...30, using: &random))
            if start >= datagram.count {
                start = max(0, (datagram.count - 1) / 8 * 8)
                end = datagram.count
            }
            var data = Array(datagram[start..<end])
            var moreFragments = end < datagram.count
            // Now and then something goes wrong: odd sizes, wrong flags, changed bytes.
            switch Int.random(in: 0..<20, using: &random) {
            case 0: data.removeLast(min(data.count, Int.random(in: 1...7, using: &random)))
            case 1: moreFragments.toggle()
            case 2 where !data.isEmpty: data[Int.random(in: 0..<data.count, using: &random)] ^= 0x80
            case 3: start += 8 * Int.random(in: 1...8200, using: &random)
            default: break
            }
            let packet = PacketBuilder.ipv4(
                source: a.address, destination: b.address, payload: data,
                identification: UInt16(id), moreFragments: moreFragments,
                fragmentOffset: start & 0xFFF8)
            var bytes = PacketBuilder.frame(packet)
            if Int.random(in: 0..<10, using: &random) == 0 {
                bytes[Int.random(in: 14..<34, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            time += Int64.random(in: 0...400_000_000, using: &random)
            if check(
                decoder, bytes, linkType: LinkType.ethernet, originalLength: bytes.count, timestamp: time,
                context: "fragment #\(iteration)")
            {
                segments += 1
                datagrams[id] = newDatagram()
            }
            XCTAssertLessThanOrEqual(decoder.pendingFragmentBytes, 16 << 10)
        }
        XCTAssertGreaterThan(segments, 20)
        XCTAssertGreaterThan(decoder.evictedFragmentDatagrams + decoder.expiredFragmentDatagrams, 0)
    }
}

extension SplitMix64 {
    mutating func next32() -> UInt32 { UInt32(truncatingIfNeeded: next()) }
}
