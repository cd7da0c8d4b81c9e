import Foundation
@testable import FuzzEntries
import XCTest

/// The input formats of the stream targets (documented in StreamEntries.swift and written by
/// scripts/make-fuzz-corpus) decode as documented: a hand-written exchange gives the records
/// it holds.
final class EntryFormatTests: XCTestCase {
    // "GET / HTTP/1.1\r\n" 16 + "Host: a\r\n" 9 + "\r\n" 2 = 27 bytes.
    let request = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
    // "HTTP/1.1 200 OK\r\n" 17 + "Content-Length: 2\r\n" 19 + "\r\n" 2 + "hi" 2 = 40 bytes.
    let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".utf8)

    /// A 6-byte segment header: control, flags, sequence delta, length, time step (1 µs).
    private func segment(_ control: UInt8, _ flags: UInt8, delta: Int16 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let raw = UInt16(bitPattern: delta)
        return [control, flags, UInt8(raw >> 8), UInt8(raw & 0xFF), UInt8(payload.count), 1] + payload
    }

    func testTCPSegmentsCarryAnExchange() {
        let client: UInt8 = 0x08
        let server: UInt8 = 0x09 // acknowledge all; bit 0 the direction
        let input =
            segment(client, 0x02) + segment(server, 0x12) + segment(client, 0x10)
            + segment(client, 0x18, request) + segment(server, 0x18, response)
            + segment(client, 0x11) + segment(server, 0x11)
        let sink = input.withUnsafeBytes { TCPAssemblerEntry.run($0) }
        XCTAssertEqual(sink.connections, 1)
        XCTAssertEqual(sink.records, 2)
        XCTAssertEqual(sink.recordBytes, 27 + 40)
        XCTAssertEqual(sink.tallyBytes, 0)
    }

    func testANegativeSequenceDeltaIsARetransmission() {
        let client: UInt8 = 0x08
        let server: UInt8 = 0x09
        // The request sent twice: the second copy starts 27 bytes back, at the first's start.
        let input =
            segment(client, 0x02) + segment(server, 0x12) + segment(client, 0x10)
            + segment(client, 0x18, request) + segment(client, 0x18, delta: -27, request)
            + segment(server, 0x18, response) + segment(client, 0x11) + segment(server, 0x11)
        let sink = input.withUnsafeBytes { TCPAssemblerEntry.run($0) }
        XCTAssertEqual(sink.records, 2)
        XCTAssertEqual(sink.recordBytes, 27 + 40, "the copy is not counted twice")
    }

    func testHTTP1InputSplitsTheDirections() {
        // Handshake seen, FIN ends; 5-byte pieces; the client's bytes end at 27.
        let input: [UInt8] = [0x03, 4, 0, 27, 0] + request + response
        let sink = input.withUnsafeBytes { HTTP1Entry.run($0) }
        XCTAssertEqual(sink.records, 2)
        XCTAssertEqual(sink.recordBytes, 67)
        XCTAssertEqual(sink.tallyBytes, 0)
    }

    func testHTTP1GapIsCountedOnce() {
        // As above, with a 10-byte gap (length byte 9) in the server's stream before its bytes.
        let input: [UInt8] = [0x1B, 4, 0, 27, 9] + request + response
        let sink = input.withUnsafeBytes { HTTP1Entry.run($0) }
        XCTAssertEqual(sink.recordBytes + sink.tallyBytes, 67 + 10)
        XCTAssertEqual(sink.requests, 1, "the request is untouched by the server's gap")
    }
}

/// FuzzQUIC's seed (RFC 9001 A.2 and A.3 as two datagrams) reads as the RFC says: both Initial
/// packets decrypted, the ClientHello's SNI found.
final class QUICEntryFormatTests: XCTestCase {
    func testTheRFCSeedDecrypts() throws {
        let seed = try [UInt8](
            Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures/fuzz/FuzzQUIC/rfc9001-initials")))
        XCTAssertEqual(seed.count, 3 + 1200 + 3 + 135)
        let (connection, checker) = seed.withUnsafeBytes { QUICEntry.run($0) }
        XCTAssertEqual(connection.figures.map(\.decrypted), [1, 1])
        XCTAssertEqual(connection.clientHello?.serverName, "example.com")
        XCTAssertEqual(checker.bytes, 0) // Initial packets carry no STREAM frames
    }
}
