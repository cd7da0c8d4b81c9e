import XCTest
@testable import TLS

final class KeyScheduleTests: XCTestCase {
    /// The TLS 1.2 PRF test vectors published on the IETF TLS working group list (P_SHA256,
    /// 100 bytes; P_SHA384, 148 bytes).
    func testTLS12PRFVectors() {
        let sha256 = KeySchedule.prf12(
            .sha256, secret: hexBytes("9bbe436ba940f017b17652849a71db35"), label: "test label",
            seed: hexBytes("a0ba9f936cda311827a6f796ffd5198c"), length: 100)
        XCTAssertEqual(
            hexString(sha256),
            "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a"
                + "6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab"
                + "4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701"
                + "87347b66")
        let sha384 = KeySchedule.prf12(
            .sha384, secret: hexBytes("b80b733d6ceefcdc71566ea48e5567df"), label: "test label",
            seed: hexBytes("cd665cf6a8447dd6ff8b27555edb7465"), length: 148)
        XCTAssertEqual(
            hexString(sha384),
            "7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cd"
                + "e9ca0faa60be9fe34f82b1233c9146a0e534cb400fed2700884f9dc236f80edd"
                + "8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d918425"
                + "9b5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee6"
                + "91c8f3a26854308d5eaa3be85e0990703d73e56f")
    }

    /// RFC 8448 §3: traffic keys and IVs from the handshake and application traffic secrets.
    func testRFC8448TrafficKeys() {
        let suite = CipherSuite.lookup(0x1301)!
        let cases: [(secret: String, key: String, iv: String)] = [
            (RFC8448.serverHandshakeSecret, "3fce516009c21727d0f2e4e86ee403bc", "5d313eb2671276ee13000b30"),
            (RFC8448.clientHandshakeSecret, "dbfaa693d1762c5b666af5d950258d01", "5bd3c71b836e0b76bb73265f"),
            (RFC8448.serverApplicationSecret, "9f02283b6c9c07efc26bb9f2ac92e356", "cf782b88dd83549aadf1e984"),
            (RFC8448.clientApplicationSecret, "17422dda596ed5d9acd890e3c63f5051", "5b78923dee08579033e523d9"),
        ]
        for c in cases {
            let keys = KeySchedule.trafficKeys13(suite, secret: hexBytes(c.secret))
            XCTAssertEqual(hexString(keys.key), c.key)
            XCTAssertEqual(hexString(keys.iv), c.iv)
        }
    }

    /// RFC 8448 §3: the client's first application_data record under the client application keys.
    func testRFC8448RecordDecryption() {
        let suite = CipherSuite.lookup(0x1301)!
        var decryptor = RecordDecryptor(tls13: suite, trafficSecret: hexBytes(RFC8448.clientApplicationSecret))
        var output: [UInt8] = []
        let record = hexBytes(RFC8448.clientApplicationData)
        let result = record.withUnsafeBytes { decryptor.decrypt(record: $0, into: &output) }
        XCTAssertEqual(result, .plaintext(contentType: 23))
        XCTAssertEqual(output, Array(0...0x31)) // 50 bytes 00..31
        XCTAssertEqual(decryptor.sequence, 1)
        // the same record again: sequence 1 gives another nonce, so the tag fails
        let again = record.withUnsafeBytes { decryptor.decrypt(record: $0, into: &output) }
        XCTAssertEqual(again, .authenticationFailed)
    }

    /// KeyUpdate: next secret = HKDF-Expand-Label(secret, "traffic upd", "", 32). Checked against
    /// the same derivation spelled out through HKDF-Expand-Label's definition with the "key" label.
    func testKeyUpdateDerivesFromTrafficUpdLabel() {
        let suite = CipherSuite.lookup(0x1301)!
        let secret = hexBytes(RFC8448.clientApplicationSecret)
        let next = KeySchedule.nextTrafficSecret13(suite, secret: secret)
        XCTAssertEqual(next.count, 32)
        XCTAssertNotEqual(next, secret)
        // HkdfLabel = length 0x0020, label "tls13 traffic upd" (17 bytes), empty context
        let info: [UInt8] = [0x00, 0x20, 17] + Array("tls13 traffic upd".utf8) + [0]
        XCTAssertEqual(info.count, 2 + 1 + 17 + 1)
        XCTAssertEqual(next, KeySchedule.hmac(.sha256, key: secret, [info + [1]])) // T(1) of HKDF-Expand, 32 bytes
    }
}
