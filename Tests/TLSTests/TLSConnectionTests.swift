import Flows
import XCTest
@testable import TLS

/// The RFC 8448 §3 exchange fed through TLSConnection: record framing, the key schedule,
/// decryption, the switch to application keys, and the ways a connection is not decrypted.
final class TLSConnectionTests: XCTestCase {
    var keyLog: KeyLog { KeyLog(text: Array(RFC8448.keyLog.utf8), file: "rfc8448.keys") }

    private func run(keyLog: KeyLog, client: [UInt8], server: [UInt8], piece: Int = .max, serverFirst: Bool = false)
        -> (TLSSummary, RecordLog)
    {
        let log = RecordLog()
        let connection = TLSConnection(keyLog: keyLog, onRecord: log.handler())
        let feeds: [(Direction, [UInt8])] =
            serverFirst ? [(.down, server), (.up, client)] : [(.up, client), (.down, server)]
        for (direction, bytes) in feeds {
            connection.receive(bytes, from: direction, inPiecesOf: min(piece, max(1, bytes.count)))
        }
        connection.finish()
        return (connection.summary, log)
    }

    func testRFC8448ExchangeDecrypts() {
        let (summary, log) = run(keyLog: keyLog, client: RFC8448.clientStream, server: RFC8448.serverStream)
        XCTAssertNil(summary.notDecrypted)
        XCTAssertEqual(summary.serverName, "server")
        XCTAssertEqual(summary.offeredALPN, [])
        XCTAssertNil(summary.selectedALPN)
        XCTAssertEqual(summary.version, 0x0304)
        XCTAssertEqual(summary.cipherSuiteName, "TLS_AES_128_GCM_SHA256")
        XCTAssertEqual(log.plaintext[0], Array(0...0x31))
        XCTAssertEqual(log.plaintext[1], Array(0...0x31))
        XCTAssertEqual(log.plaintextRecords, [[50], [50]])
        // client: ClientHello 201 + Finished 58 handshake, 72 application data, 24 alert
        XCTAssertEqual(summary.client.handshake, TLSRecordTally(records: 2, bytes: 259))
        XCTAssertEqual(summary.client.applicationData, TLSRecordTally(records: 1, bytes: 72))
        XCTAssertEqual(summary.client.alert, TLSRecordTally(records: 1, bytes: 24))
        // server: ServerHello 95 + flight 679 + NewSessionTicket 227 handshake, 72, 24
        XCTAssertEqual(summary.server.handshake, TLSRecordTally(records: 3, bytes: 1001))
        XCTAssertEqual(summary.server.applicationData, TLSRecordTally(records: 1, bytes: 72))
        XCTAssertEqual(summary.server.alert, TLSRecordTally(records: 1, bytes: 24))
        XCTAssertEqual(summary.client.decryptedRecords, 3)
        XCTAssertEqual(summary.server.decryptedRecords, 4)
        XCTAssertEqual(summary.client.recordBytes, RFC8448.clientStream.count)
        XCTAssertEqual(summary.server.recordBytes, RFC8448.serverStream.count)
        XCTAssertEqual(log.wireLengths(.down), [95, 679, 227, 72, 24])
        XCTAssertEqual(log.records.filter { $0.direction == .down }.map(\.contentType), [22, 22, 22, 23, 21])
    }

    /// Every record split byte by byte, and the server's stream fed before the client's: the
    /// same result.
    func testByteByByteAndServerFirst() {
        let (whole, wholeLog) = run(keyLog: keyLog, client: RFC8448.clientStream, server: RFC8448.serverStream)
        for serverFirst in [false, true] {
            let (summary, log) = run(
                keyLog: keyLog, client: RFC8448.clientStream, server: RFC8448.serverStream,
                piece: 1, serverFirst: serverFirst)
            XCTAssertEqual(summary, whole)
            XCTAssertEqual(log.plaintext, wholeLog.plaintext)
            XCTAssertEqual(log.wireLengths(.up), wholeLog.wireLengths(.up))
        }
        // several records in one piece of 1000 bytes, records split at odd places (7)
        for piece in [7, 1000] {
            let (summary, _) = run(
                keyLog: keyLog, client: RFC8448.clientStream, server: RFC8448.serverStream, piece: piece)
            XCTAssertEqual(summary, whole)
        }
    }

    func testWrongKeyIsBadKey() {
        var text = RFC8448.keyLog
        // another server handshake secret: the server's first encrypted record fails its tag
        text = text.replacingOccurrences(of: RFC8448.serverHandshakeSecret, with: String(repeating: "5a", count: 32))
        let (summary, log) = run(
            keyLog: KeyLog(text: Array(text.utf8), file: "wrong.keys"),
            client: RFC8448.clientStream, server: RFC8448.serverStream)
        XCTAssertEqual(summary.notDecrypted, .badKey)
        XCTAssertEqual(summary.server.notDecrypted, .badKey)
        XCTAssertNil(summary.client.notDecrypted) // the client's own secrets were right
        XCTAssertEqual(log.plaintext[1], [])
        XCTAssertEqual(log.plaintext[0], Array(0...0x31))
        // still every record counted: ServerHello read, the 4 encrypted ones by their outer type
        XCTAssertEqual(summary.server.handshake, TLSRecordTally(records: 1, bytes: 95))
        XCTAssertEqual(summary.server.applicationData, TLSRecordTally(records: 4, bytes: 679 + 227 + 72 + 24))
    }

    func testMissingKeyIsNoKey() {
        let (summary, log) = run(keyLog: KeyLog(), client: RFC8448.clientStream, server: RFC8448.serverStream)
        XCTAssertEqual(summary.notDecrypted, .noKey)
        XCTAssertEqual(summary.serverName, "server")
        XCTAssertEqual(summary.cipherSuite, 0x1301)
        XCTAssertEqual(log.plaintext, [[], []])
        XCTAssertEqual(summary.client.records, 4)
        XCTAssertEqual(summary.server.records, 5)
    }

    /// The capture starts after the handshake: the first client record is application data.
    func testCaptureAfterHandshake() {
        let client = hexBytes(RFC8448.clientApplicationData) + hexBytes(RFC8448.clientAlert)
        let server = hexBytes(RFC8448.serverApplicationData) + hexBytes(RFC8448.serverAlert)
        for serverFirst in [false, true] {
            let (summary, _) = run(keyLog: keyLog, client: client, server: server, serverFirst: serverFirst)
            XCTAssertEqual(summary.notDecrypted, .handshakeNotCaptured)
            XCTAssertEqual(summary.client.applicationData, TLSRecordTally(records: 2, bytes: 96))
            XCTAssertEqual(summary.server.applicationData, TLSRecordTally(records: 2, bytes: 96))
        }
        // the server's hello alone, no ClientHello at all
        let (summary, _) = run(keyLog: keyLog, client: [], server: RFC8448.serverStream)
        XCTAssertEqual(summary.notDecrypted, .handshakeNotCaptured)
        XCTAssertEqual(summary.server.records, 5)
    }

    /// A gap in the server's stream after its flight: what came before is decrypted, the rest
    /// is counted unread.
    func testGapStopsTheDirection() {
        let log = RecordLog()
        let connection = TLSConnection(keyLog: keyLog, onRecord: log.handler())
        connection.receive(RFC8448.clientStream, from: .up)
        let head = hexBytes(RFC8448.serverHello) + hexBytes(RFC8448.serverFlight)
        connection.receive(head + Array(hexBytes(RFC8448.newSessionTicket).prefix(100)), from: .down)
        connection.gap(127, in: .down)
        connection.receive(hexBytes(RFC8448.serverApplicationData) + hexBytes(RFC8448.serverAlert), from: .down)
        connection.finish()
        let summary = connection.summary
        XCTAssertEqual(summary.notDecrypted, .gap)
        XCTAssertEqual(summary.server.notDecrypted, .gap)
        XCTAssertNil(summary.client.notDecrypted)
        XCTAssertEqual(summary.server.records, 2)
        XCTAssertEqual(summary.server.gapBytes, 127)
        XCTAssertEqual(summary.server.unreadBytes, 100 + 72 + 24) // the cut record, then all after the gap
        XCTAssertEqual(log.plaintext[0], Array(0...0x31))
    }

    /// Bytes that cannot be a record header stop the direction as malformed; no trap on any
    /// length.
    func testMalformedHeaderAndArbitraryBytes() {
        let (summary, _) = run(
            keyLog: keyLog, client: [0x16, 0x03, 0x01, 0xff, 0xff] + [UInt8](repeating: 0, count: 10),
            server: [])
        XCTAssertEqual(summary.notDecrypted, .malformed)
        XCTAssertEqual(summary.client.unreadBytes, 15)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let client = (0..<Int.random(in: 0..<400, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            var server = RFC8448.serverStream
            for _ in 0..<4 { server[Int.random(in: 0..<server.count)] ^= UInt8.random(in: 1...255) }
            _ = run(keyLog: keyLog, client: RFC8448.clientStream.prefix(201) + client, server: server, piece: 13)
        }
    }
}
