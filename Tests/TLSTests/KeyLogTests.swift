import XCTest
@testable import TLS

final class KeyLogTests: XCTestCase {
    let random = String(repeating: "ab", count: 32)
    let secret48 = String(repeating: "01", count: 48)
    let secret32 = String(repeating: "02", count: 32)

    func testReadsEveryLabelAndSkipsOthers() {
        let text = """
            # comment line
            CLIENT_RANDOM \(random) \(secret48)
            CLIENT_HANDSHAKE_TRAFFIC_SECRET \(random) \(secret32)
            SERVER_HANDSHAKE_TRAFFIC_SECRET \(random) \(secret32)
            CLIENT_TRAFFIC_SECRET_0 \(random) \(secret32)
            SERVER_TRAFFIC_SECRET_0 \(random) \(secret32)
            EXPORTER_SECRET \(random) \(secret32)
            CLIENT_EARLY_TRAFFIC_SECRET \(random) \(secret32)\r

            """
        let log = KeyLog(text: Array(text.utf8), file: "k.log")
        XCTAssertEqual(log.issues, [])
        let entry = log.secrets(forClientRandom: hexBytes(random))
        XCTAssertEqual(entry?.masterSecret, hexBytes(secret48))
        XCTAssertEqual(entry?.clientHandshakeTrafficSecret, hexBytes(secret32))
        XCTAssertEqual(entry?.serverTrafficSecret0, hexBytes(secret32))
        XCTAssertEqual(log.secrets.count, 1)
    }

    /// Broken lines are reported with their 1-based line numbers; the good lines around them
    /// are kept.
    func testBrokenLinesAreReportedAndTheRestUsed() {
        let other = String(repeating: "cd", count: 32)
        let text = """
            CLIENT_RANDOM \(random) \(secret48)
            CLIENT_RANDOM \(random)
            CLIENT_RANDOM abcd \(secret48)
            CLIENT_RANDOM \(other) 0102zz
            CLIENT_RANDOM \(other) \(secret32)
            this is not a key log line
            CLIENT_TRAFFIC_SECRET_0 \(other) \(secret32)
            """
        let log = KeyLog(text: Array(text.utf8), file: "broken.keys")
        XCTAssertEqual(log.issues.map(\.line), [2, 3, 4, 5, 6])
        XCTAssertEqual(
            log.issues.map(\.problem), [.wrongFieldCount, .badClientRandom, .badSecret, .badSecret, .wrongFieldCount])
        XCTAssertEqual(log.issues[0].description, "broken.keys:2: expected LABEL CLIENT_RANDOM SECRET")
        XCTAssertEqual(log.secrets(forClientRandom: hexBytes(random))?.masterSecret, hexBytes(secret48))
        XCTAssertEqual(log.secrets(forClientRandom: hexBytes(other))?.clientTrafficSecret0, hexBytes(secret32))
        XCTAssertNil(log.secrets(forClientRandom: hexBytes(other))?.masterSecret)
    }

    /// A pcapng Decryption Secrets Block body: type 0x544c534b, length, the key log text,
    /// padding to 4 bytes; both byte orders.
    func testDecryptionSecretsBlock() {
        let text = Array("CLIENT_RANDOM \(random) \(secret48)\n".utf8) // 14 + 64 + 1 + 96 + 1 = 176 bytes
        XCTAssertEqual(text.count, 176)
        let little: [UInt8] = [0x4b, 0x53, 0x4c, 0x54, 176, 0, 0, 0] + text
        let big: [UInt8] = [0x54, 0x4c, 0x53, 0x4b, 0, 0, 0, 176] + text + [0, 0, 0, 0]
        for (body, bigEndian) in [(little, false), (big, true)] {
            let log = KeyLog(decryptionSecretsBlockBody: body, bigEndian: bigEndian, file: "x.pcapng")
            XCTAssertEqual(log.issues, [])
            XCTAssertEqual(log.secrets(forClientRandom: hexBytes(random))?.masterSecret, hexBytes(secret48))
        }
        let wrongType = KeyLog(
            decryptionSecretsBlockBody: [0x57, 0x47, 0x4b, 0x42, 0, 0, 0, 0], bigEndian: true, file: "x")
        XCTAssertEqual(wrongType.issues.map(\.problem), [.notTLSKeyLog])
        let truncated = KeyLog(
            decryptionSecretsBlockBody: [0x54, 0x4c, 0x53, 0x4b, 0, 0, 1, 0], bigEndian: true, file: "x")
        XCTAssertEqual(truncated.issues.map(\.problem), [.truncatedBlock])
    }

    func testMissingFileIsAnError() {
        XCTAssertThrowsError(try KeyLog.load(path: "/nonexistent/keys.log")) { error in
            XCTAssertTrue("\(error)".hasPrefix("/nonexistent/keys.log: "))
        }
    }
}
