import Flows
import XCTest

@testable import QUIC

/// Frames built by hand (RFC 9000 §19) and streams put in order, counted by hand.
final class FrameAndStreamTests: XCTestCase {
    private func frames(_ bytes: [UInt8]) -> (names: [String], lengths: [Int], error: QUICFrameError?) {
        var names: [String] = []
        var lengths: [Int] = []
        let error = bytes.withUnsafeBytes { raw in
            QUICFrameReader.read(raw) { frame, length in
                lengths.append(length)
                switch frame {
                case .stream(let id, let offset, let data, let fin): names.append("stream \(id)@\(offset)+\(data.count)\(fin ? " fin" : "")")
                case .ack(let largest, let ecn): names.append("ack \(largest)\(ecn ? " ecn" : "")")
                case .padding: names.append("padding")
                case .crypto(let offset, let data): names.append("crypto \(offset)+\(data.count)")
                case .connectionClose(let error, let application): names.append("close \(error) \(application)")
                case .newConnectionID(let sequence, let id): names.append("ncid \(sequence) \(id)")
                default: names.append("other")
                }
            }
        }
        return (names, lengths, error)
    }

    func testEveryStreamVariantAndOthers() {
        let packet: [UInt8] =
            [0x0A, 0x04, 0x02, 0x61, 0x62]  // STREAM LEN: id 4, 2 bytes (5 bytes)
            + [0x0F, 0x04, 0x02, 0x01, 0x63]  // STREAM OFF LEN FIN: id 4 @2, 1 byte (5)
            + [0x03, 0x05, 0x00, 0x01, 0x02, 0x01, 0x01, 0x00, 0x02, 0x00]  // ACK_ECN largest 5, delay 0, 1 range, first 2, gap 1 len 1, ECN 0 2 0 (10)
            + [0x06, 0x00, 0x03, 0x01, 0x02, 0x03]  // CRYPTO @0, 3 bytes (6)
            + [0x18, 0x01, 0x00, 0x04, 0xAA, 0xBB, 0xCC, 0xDD] + [UInt8](repeating: 7, count: 16)  // NEW_CONNECTION_ID (24)
            + [0x1D, 0x00, 0x00]  // CONNECTION_CLOSE application, no reason (3)
            + [0x1E, 0x01]  // HANDSHAKE_DONE, PING (1 + 1)
            + [0x00, 0x00, 0x00]  // PADDING run (3)
            + [0x0D, 0x08, 0x40, 0x10, 0x78, 0x79]  // STREAM OFF FIN, no length: id 8 @16, to the end (6)
        let read = frames(packet)
        XCTAssertNil(read.error)
        XCTAssertEqual(
            read.names,
            [
                "stream 4@0+2", "stream 4@2+1 fin", "ack 5 ecn", "crypto 0+3", "ncid 1 aabbccdd", "close 0 true", "other",
                "other", "padding", "stream 8@16+2 fin",
            ])
        XCTAssertEqual(read.lengths, [5, 5, 10, 6, 24, 3, 1, 1, 3, 6])
        XCTAssertEqual(read.lengths.reduce(0, +), packet.count)
        // An unknown type stops the packet; a frame past the end is malformed.
        XCTAssertEqual(frames([0x01, 0x21, 0x00]).error, .unknownType(0x21))
        XCTAssertEqual(frames([0x0A, 0x00, 0x05, 0x61]).error, .malformed)
    }

    func testOutOfOrderOverlapAndRepeats() {
        var stream = OrderedStream()
        var delivered: [(UInt64, [UInt8])] = []
        func add(_ text: String, _ offset: UInt64) -> Int {
            Array(text.utf8).withUnsafeBytes { raw in stream.add(raw, at: offset) { delivered.append(($1, Array($0))) } }
        }
        XCTAssertEqual(add("world", 6), 5)  // held
        XCTAssertEqual(add("hello ", 0), -5)  // fills the hole: both delivered
        XCTAssertEqual(delivered.map(\.0), [0, 6])
        XCTAssertEqual(String(decoding: delivered.flatMap(\.1), as: UTF8.self), "hello world")
        XCTAssertEqual(add("lo wor", 3), 0)  // all repeated
        XCTAssertEqual(add("ld!", 9), 0)  // 2 repeated, 1 new
        XCTAssertEqual(String(decoding: delivered.flatMap(\.1), as: UTF8.self), "hello world!")
        XCTAssertEqual(stream.repeatedBytes, 6 + 2)
        XCTAssertEqual(stream.delivered, 12)
        // A hole given up: 3 bytes reported as a gap, then what follows.
        _ = add("xyz", 15)
        var gaps: [(Int, UInt64)] = []
        _ = stream.skipHole(gap: { gaps.append(($0, $1)) }, deliver: { delivered.append(($1, Array($0))) })
        XCTAssertEqual(gaps.map(\.0), [3])
        XCTAssertEqual(gaps.map(\.1), [12])
        XCTAssertEqual(stream.delivered, 18)
    }
}
