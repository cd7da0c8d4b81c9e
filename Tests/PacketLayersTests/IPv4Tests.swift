import CaptureIO
import PacketLayers
import TestSupport
import XCTest

final class IPv4Tests: XCTestCase {
    private let a = endpoint("10.0.0.1:40000")
    private let b = endpoint("10.0.0.2:80")

    func testOptionsAreSkipped() throws {
        // Record route (7), 11 bytes, padded to 12: header length 32.
        let recordRoute: [UInt8] = [7, 11, 4] + [UInt8](repeating: 0, count: 8)
        let bytes = PacketBuilder.tcp(from: a, to: b, seq: 55, payload: [1, 2, 3, 4], ipv4Options: recordRoute)
        XCTAssertEqual(bytes[14], 0x48)
        let segment = try decodeSegment(bytes)
        XCTAssertEqual(segment.source, a)
        XCTAssertEqual(segment.sequence, 55)
        XCTAssertEqual(segment.payload, [1, 2, 3, 4])
        XCTAssertEqual(segment.ipLength, 32 + 20 + 4)
        // The maximum: 40 bytes of options (IHL 15).
        let maximum = PacketBuilder.tcp(from: a, to: b, payload: [7], ipv4Options: [UInt8](repeating: 1, count: 40))
        XCTAssertEqual(try decodeSegment(maximum).payload, [7])
    }

    func testEthernetPaddingIsTrimmed() throws {
        // 14 + 20 + 20 + 6 = 60: a minimum-size frame with exactly 6 payload bytes.
        let six = PacketBuilder.tcp(from: a, to: b, payload: Array("abcdef".utf8), padToMinimum: true)
        XCTAssertEqual(six.count, 60)
        let segment = try decodeSegment(six)
        XCTAssertEqual(segment.payload.count, 6)
        XCTAssertEqual(segment.payloadLength, 6)
        // Shorter payloads get NIC padding, which must not become data.
        for count in 0..<6 {
            let padded = PacketBuilder.tcp(
                from: a, to: b, payload: [UInt8](repeating: 0x41, count: count), padToMinimum: true)
            XCTAssertEqual(padded.count, 60)
            let decoded = try decodeSegment(padded)
            XCTAssertEqual(decoded.payload, [UInt8](repeating: 0x41, count: count))
            XCTAssertEqual(decoded.payloadLength, count)
            XCTAssertEqual(decoded.frameLength, 60)
            XCTAssertEqual(decoded.ipLength, 40 + count)
        }
        // A trailer (e.g. a captured FCS) after a full-size datagram is trimmed too.
        let withTrailer = PacketBuilder.tcp(from: a, to: b, payload: [1, 2, 3]) + [0xDE, 0xAD, 0xBE, 0xEF]
        XCTAssertEqual(try decodeSegment(withTrailer).payload, [1, 2, 3])
    }

    func testSnaplenTruncatedFrameKeepsTheSentLength() throws {
        let payload = [UInt8](repeating: 0x5A, count: 1400)
        let full = PacketBuilder.tcp(from: a, to: b, seq: 1, payload: payload)
        let captured = Array(full.prefix(96)) // tcpdump's classic snaplen
        let segment = try decodeSegment(captured, originalLength: full.count)
        XCTAssertEqual(segment.payloadLength, 1400)
        XCTAssertEqual(segment.payload.count, 96 - 54)
        XCTAssertEqual(segment.payload, Array(payload.prefix(42)))
        XCTAssertEqual(segment.frameLength, full.count)
        XCTAssertEqual(segment.ipLength, 1440)
        // Cut right after the TCP header: nothing captured, all of it sent.
        let headersOnly = try decodeSegment(Array(full.prefix(54)), originalLength: full.count)
        XCTAssertEqual(headersOnly.payload, [])
        XCTAssertEqual(headersOnly.payloadLength, 1400)
    }

    func testSnaplenCutInsideHeaders() {
        let full = PacketBuilder.tcp(from: a, to: b, options: PacketBuilder.TCPOption.mss(1460), payload: [1, 2, 3])
        // Inside the IP header, inside the TCP header, inside the TCP options.
        for keep in [15, 20, 33, 34, 40, 53, 54, 57] {
            XCTAssertEqual(
                decodeOutcome(Array(full.prefix(keep)), originalLength: full.count),
                .skipped(.truncatedHeader), "cut at \(keep)")
        }
        XCTAssertNotNil(decodeOutcome(Array(full.prefix(58)), originalLength: full.count).segment)
    }

    func testMalformedHeaders() {
        let good = PacketBuilder.tcp(from: a, to: b, payload: [1, 2, 3, 4])
        func patched(_ body: (inout [UInt8]) -> Void) -> [UInt8] {
            var bytes = good
            body(&bytes)
            return bytes
        }
        // Version 5 under an IPv4 EtherType.
        XCTAssertEqual(decodeOutcome(patched { $0[14] = 0x55 }), .skipped(.malformedIPv4))
        // IHL below 5.
        XCTAssertEqual(decodeOutcome(patched { $0[14] = 0x44 }), .skipped(.malformedIPv4))
        // IHL beyond the total length (60 bytes of header announced in a 44-byte datagram).
        XCTAssertEqual(decodeOutcome(patched { $0[14] = 0x4F }), .skipped(.malformedIPv4))
        // Total length below the header length.
        XCTAssertEqual(
            decodeOutcome(
                patched {
                    $0[16] = 0
                    $0[17] = 19
                }), .skipped(.malformedIPv4))
        // Total length beyond a frame that was not truncated.
        XCTAssertEqual(
            decodeOutcome(
                patched {
                    $0[16] = 0x05
                    $0[17] = 0xDC
                }), .skipped(.malformedIPv4))
        // Total length beyond even the wire length of a truncated frame.
        XCTAssertEqual(
            decodeOutcome(
                patched {
                    $0[16] = 0x05
                    $0[17] = 0xDC
                }, originalLength: 100),
            .skipped(.malformedIPv4))
        // Too short for a TCP header by its own length.
        XCTAssertEqual(
            decodeOutcome(
                patched {
                    $0[16] = 0
                    $0[17] = 39
                }), .skipped(.malformedTCP))
    }

    func testIHLBeyondCapturedBytesIsTruncated() {
        // An IHL of 15 in a frame cut 40 bytes into the IP header: the options cannot be read.
        var bytes = PacketBuilder.tcp(from: a, to: b, payload: [UInt8](repeating: 0, count: 100))
        bytes[14] = 0x4F
        XCTAssertEqual(decodeOutcome(Array(bytes.prefix(54)), originalLength: bytes.count), .skipped(.truncatedHeader))
        XCTAssertEqual(decodeOutcome(Array(bytes.prefix(30)), originalLength: bytes.count), .skipped(.truncatedHeader))
    }

    func testOtherProtocolsAreNotTCP() {
        for protocolNumber: UInt8 in [1, 47, 50, 132] {
            let ip = PacketBuilder.ipv4(
                source: a.address, destination: b.address, protocolNumber: protocolNumber,
                payload: [UInt8](repeating: 0, count: 28))
            XCTAssertEqual(decodeOutcome(PacketBuilder.frame(ip)), .skipped(.notTCP))
            // Fragments of other protocols are not held either.
            let fragment = PacketBuilder.ipv4(
                source: a.address, destination: b.address, protocolNumber: protocolNumber,
                payload: [UInt8](repeating: 0, count: 24), moreFragments: true)
            XCTAssertEqual(decodeOutcome(PacketBuilder.frame(fragment)), .skipped(.notTCP))
        }
    }

    func testZeroTotalLengthUsesTheWireLength() throws {
        // TSO/GSO super-segments captured on the sender carry total length 0.
        let payload = [UInt8](repeating: 0x33, count: 3000)
        var bytes = PacketBuilder.tcp(from: a, to: b, seq: 9, payload: payload)
        bytes[16] = 0
        bytes[17] = 0
        let segment = try decodeSegment(bytes)
        XCTAssertEqual(segment.payloadLength, 3000)
        XCTAssertEqual(segment.payload, payload)
        XCTAssertEqual(segment.ipLength, 3040)
    }

    func testDontFragmentIsNotAFragment() throws {
        let ip = PacketBuilder.ipv4(
            source: a.address, destination: b.address,
            payload: PacketBuilder.tcpSegment(from: a, to: b, seq: 1, ack: 0, flags: [.syn]),
            dontFragment: true)
        XCTAssertEqual(try decodeSegment(PacketBuilder.frame(ip)).flags, [.syn])
    }
}
