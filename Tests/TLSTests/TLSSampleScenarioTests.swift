import Flows
import Foundation
import TestSupport
import XCTest
@testable import TLS

/// Real captures under the conditions a user meets: a wrong key, a broken key log, a capture
/// that starts after the handshake, a gap, records split byte by byte, KeyUpdate, resumption,
/// no SNI, no key. Each is reported; none crashes.
final class TLSSampleScenarioTests: XCTestCase {
    func testSummariesOfTheNginxSamples() throws {
        let keyLog = try sampleKeyLog("tls13-nginx-curl.keys")
        let summaries = try capturedConnections(Fixtures.sample("tls13-nginx-curl.pcap")).map {
            $0.decode(keyLog: keyLog).0
        }
        // make-tls-samples: one curl run per TLS 1.3 suite; the third by address, so no SNI
        XCTAssertEqual(
            summaries.map(\.cipherSuiteName),
            ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"])
        XCTAssertEqual(summaries.map(\.serverName), ["localhost", "localhost", nil])
        XCTAssertEqual(summaries.map(\.version), [0x0304, 0x0304, 0x0304])
        XCTAssertEqual(summaries.map(\.selectedALPN), ["http/1.1", "http/1.1", "http/1.1"])
        XCTAssertEqual(summaries[0].offeredALPN, ["http/1.1"]) // curl --http1.1
        XCTAssertEqual(summaries.map(\.isDecrypted), [true, true, true])

        let twelve = try capturedConnections(Fixtures.sample("tls12-nginx-curl.pcap"))
            .map { $0.decode(keyLog: try sampleKeyLog("tls12-nginx-curl.keys")).0 }
        XCTAssertEqual(twelve.map { $0.cipherSuite ?? 0 }, [0xC02F, 0xC030, 0xCCA8, 0xC013, 0xC028, 0xC027, 0xC014])
        // CBC on port 18444 negotiates encrypt_then_mac; the 18445 server block turns it off
        XCTAssertEqual(twelve.map(\.encryptThenMAC), [false, false, false, true, true, false, false])
        XCTAssertEqual(twelve.map(\.extendedMasterSecret), Array(repeating: true, count: 7))
        XCTAssertEqual(twelve.map(\.isDecrypted), Array(repeating: true, count: 7))
    }

    func testResumedSession() throws {
        let keyLog = try sampleKeyLog("tls12-resume.keys")
        let summaries = try capturedConnections(Fixtures.sample("tls12-resume.pcap")).map {
            $0.decode(keyLog: keyLog).0
        }
        XCTAssertEqual(summaries.map(\.resumed), [false, true])
        XCTAssertEqual(summaries.map(\.isDecrypted), [true, true])
        // the abbreviated handshake: ServerHello, then the server's ChangeCipherSpec and Finished
        XCTAssertEqual(summaries[1].server.changeCipherSpec.records, 1)
        XCTAssertEqual(summaries[1].server.handshake.records, 2)
    }

    func testKeyUpdateBothWays() throws {
        let keyLog = try sampleKeyLog("tls13-keyupdate.keys")
        let connections = try capturedConnections(Fixtures.sample("tls13-keyupdate.pcap"))
        XCTAssertEqual(connections.count, 1)
        let (summary, log) = connections[0].decode(keyLog: keyLog)
        XCTAssertNil(summary.notDecrypted)
        // s_client sent "K" (update, peer asked to update) then "k": 2 from the client, 1 from nginx
        XCTAssertEqual(summary.client.keyUpdates, 2)
        XCTAssertEqual(summary.server.keyUpdates, 1)
        let requests = String(decoding: log.plaintext[0], as: UTF8.self)
        XCTAssertEqual(requests.components(separatedBy: "GET /").count - 1, 3)
        XCTAssertTrue(String(decoding: log.plaintext[1], as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
    }

    func testMissingKey() throws {
        let keyLog = try sampleKeyLog("tls13-nginx-curl.keys") // keys of other connections
        let connections = try capturedConnections(Fixtures.sample("tls13-nokey.pcap"))
        XCTAssertEqual(connections.count, 1)
        let (summary, log) = connections[0].decode(keyLog: keyLog)
        XCTAssertEqual(summary.notDecrypted, .noKey)
        XCTAssertEqual(summary.serverName, "localhost")
        XCTAssertEqual(log.plaintext, [[], []])
        XCTAssertEqual(summary.client.recordBytes, connections[0].stream(.up).count)
        XCTAssertEqual(summary.server.recordBytes, connections[0].stream(.down).count)
    }

    /// Every secret of the key log changed in its last byte: tags fail, nothing is decrypted.
    func testWrongKeyIsBadKey() throws {
        for name in ["tls13-nginx-curl", "tls12-nginx-curl"] {
            let text = try String(contentsOfFile: Fixtures.sample(name + ".keys"), encoding: .utf8)
            let corrupted = text.split(separator: "\n").map { line -> String in
                var line = String(line)
                let last = line.removeLast()
                return line + (last == "0" ? "1" : "0")
            }.joined(separator: "\n")
            let keyLog = KeyLog(text: Array(corrupted.utf8), file: "corrupted.keys")
            XCTAssertEqual(keyLog.issues, [])
            for connection in try capturedConnections(Fixtures.sample(name + ".pcap")) {
                let (summary, log) = connection.decode(keyLog: keyLog)
                XCTAssertEqual(summary.notDecrypted, .badKey, name)
                XCTAssertEqual(log.plaintext, [[], []], name)
                XCTAssertEqual(summary.server.recordBytes, connection.stream(.down).count, name)
            }
        }
    }

    /// Broken lines in a real key log are reported with their line numbers, and the rest still
    /// decrypts every connection.
    func testBrokenKeyLogLines() throws {
        let text = try String(contentsOfFile: Fixtures.sample("tls12-nginx-curl.keys"), encoding: .utf8)
        var lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 7)
        lines.insert("CLIENT_RANDOM 1234 5678", at: 2) // line 3
        lines.insert("garbage", at: 5) // line 6
        lines.append(String(lines[0].prefix(40))) // line 10: cut short
        let keyLog = KeyLog(text: Array(lines.joined(separator: "\n").utf8), file: "broken.keys")
        XCTAssertEqual(keyLog.issues.map(\.line), [3, 6, 10])
        for connection in try capturedConnections(Fixtures.sample("tls12-nginx-curl.pcap")) {
            XCTAssertNil(connection.decode(keyLog: keyLog).0.notDecrypted)
        }
    }

    /// Each TCP segment fed to the reader one byte at a time: the same records and plaintext.
    func testByteByByte() throws {
        for name in ["tls13-python", "tls12-nginx-curl"] {
            let keyLog = try sampleKeyLog(name + ".keys")
            for connection in try capturedConnections(Fixtures.sample(name + ".pcap")) {
                let (whole, wholeLog) = connection.decode(keyLog: keyLog)
                let (bytewise, bytewiseLog) = connection.decode(keyLog: keyLog, pieceLimit: 1)
                XCTAssertEqual(bytewise, whole)
                XCTAssertEqual(bytewiseLog.plaintext, wholeLog.plaintext)
                XCTAssertEqual(bytewiseLog.records, wholeLog.records)
            }
        }
    }

    /// The capture starts after the handshake: both streams begin at a record boundary after
    /// the client's Finished and the server's first application data.
    func testCaptureStartingAfterTheHandshake() throws {
        let keyLog = try sampleKeyLog("tls13-python.keys")
        let connection = try capturedConnections(Fixtures.sample("tls13-python.pcap"))[0]
        let (_, log) = connection.decode(keyLog: keyLog)
        func tail(_ direction: Direction) -> [UInt8] {
            // skip the records up to the first application_data record
            let lengths = log.records.filter { $0.direction == direction }
            let skip = lengths.prefix { $0.contentType != TLSContentType.applicationData.rawValue }.reduce(0) {
                $0 + $1.wireLength
            }
            return Array(connection.stream(direction).dropFirst(skip))
        }
        let late = TLSConnection(keyLog: keyLog)
        late.receive(tail(.up), from: .up)
        late.receive(tail(.down), from: .down)
        late.finish()
        XCTAssertEqual(late.summary.notDecrypted, .handshakeNotCaptured)
        XCTAssertNil(late.summary.serverName)
        XCTAssertEqual(late.summary.client.recordBytes, tail(.up).count)
        XCTAssertEqual(late.summary.server.recordBytes, tail(.down).count)
    }

    /// A gap in the server's stream: records before it are decrypted, after it the direction is
    /// counted unread with reason gap, the client's side goes on.
    func testGapInsideTheStream() throws {
        let keyLog = try sampleKeyLog("tls13-python.keys")
        let connection = try capturedConnections(Fixtures.sample("tls13-python.pcap"))[0]
        let (_, wholeLog) = connection.decode(keyLog: keyLog)
        let server = connection.stream(.down)
        let cut = server.count / 2
        let log = RecordLog()
        let tls = TLSConnection(keyLog: keyLog, onRecord: log.handler())
        tls.receive(connection.stream(.up), from: .up)
        tls.receive(Array(server[..<cut]), from: .down)
        tls.gap(1000, in: .down)
        tls.receive(Array(server[(cut + 1000)...]), from: .down)
        tls.finish()
        XCTAssertEqual(tls.summary.notDecrypted, .gap)
        XCTAssertEqual(tls.summary.server.notDecrypted, .gap)
        XCTAssertNil(tls.summary.client.notDecrypted)
        XCTAssertEqual(log.plaintext[0], wholeLog.plaintext[0])
        XCTAssertEqual(tls.summary.server.gapBytes, 1000)
        // every server byte is in a record, cut short before the gap, or unread after it
        XCTAssertEqual(tls.summary.server.recordBytes + tls.summary.server.unreadBytes, server.count - 1000)
        XCTAssertTrue(wholeLog.plaintext[1].starts(with: log.plaintext[1]))
        XCTAssertLessThan(log.plaintext[1].count, wholeLog.plaintext[1].count)
    }
}
