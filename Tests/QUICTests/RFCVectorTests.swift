import Flows
import TestSupport
import XCTest

@testable import QUIC

/// The independent oracles: RFC 9001 Appendix A (QUIC v1) and RFC 9369 Appendix A (v2), their
/// bytes copied verbatim. Every key, mask and plaintext here comes from the RFCs, not this code.
final class RFCVectorTests: XCTestCase {
    static func hex(_ text: String) -> [UInt8] { HexText.bytes(text) }

    static let dcid = hex("8394c8f03e515708")

    // RFC 9001 A.2: the client Initial's payload (a CRYPTO frame with the ClientHello, then 917 bytes of PADDING).
    static let clientPayload =
        hex(
            """
            060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868
            04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578
            616d706c652e636f6dff01000100000a00080006001d00170018001000070005
            04616c706e000500050100000000003300260024001d00209370b2c9caa47fba
            baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400
            0d0010000e0403050306030203080408050806002d00020101001c0002400100
            3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000
            75300901100f088394c8f03e51570806048000ffff
            """) + [UInt8](repeating: 0, count: 917)

    static let clientPacket = RFC9001Packets.clientInitial

    // RFC 9001 A.3: the server Initial (an ACK and a CRYPTO frame with the ServerHello).
    static let serverPayload = hex(
        """
        02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf739
        88cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c94
        0d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00
        020304
        """)
    static let serverPacket = RFC9001Packets.serverInitial

    // RFC 9369 A.3: the same server Initial under QUIC v2.
    static let serverPacketV2 = hex(
        """
        dc6b3343cf0008f067a5502a4262b5004075d92faaf16f05d8a4398c47089698
        baeea26b91eb761d9b89237bbf87263017915358230035f7fd3945d88965cf17
        f9af6e16886c61bfc703106fbaf3cb4cfa52382dd16a393e42757507698075b2
        c984c707f0a0812d8cd5a6881eaf21ceda98f4bd23f6fe1a3e2c43edd9ce7ca8
        4bed8521e2e140
        """)

    // RFC 9001 A.5 and RFC 9369 A.5: a ChaCha20-Poly1305 short header packet (a PING, packet number 654360564).
    static let chachaSecret = hex("9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b")

    /// Opens one packet alone in its datagram, as the reader does: header, header protection, AEAD.
    private func open(
        _ packet: [UInt8], keys: QUICPacketKeys, shortLength: Int = 0, largest: UInt64? = nil
    ) throws -> (number: UInt64, plaintext: [UInt8], header: QUICPacketHeader) {
        var buffer = packet
        return try buffer.withUnsafeMutableBytes { raw in
            let header = try XCTUnwrap(
                QUICPacketHeader.read(UnsafeRawBufferPointer(raw), at: 0, shortDestinationLength: shortLength))
            // Both ways to the mask agree: the kept cipher's and swift-crypto's API's (`AES.permute`, ChaCha20CTR).
            let publicKeys = QUICPacketKeys(
                secret: keys.secret, cipher: keys.cipher, version: keys.version, headerKey: nil, keepsCipher: false)
            let sample = UnsafeRawBufferPointer(rebasing: raw[(header.packetNumberOffset + 4)..<(header.packetNumberOffset + 20)])
            XCTAssertNotNil(keys.kept, "the RFC's packets are read with the kept cipher")
            XCTAssertEqual(keys.mask(sample: sample), try XCTUnwrap(publicKeys.mask(sample: sample)))
            let (length, truncated, _) = try XCTUnwrap(QUICHeaderProtection.remove(raw, at: 0, header: header, keys: keys))
            let number = QUICHeaderProtection.decode(truncated: truncated, length: length, largest: largest)
            let end = header.packetNumberOffset + length
            let plaintext = try XCTUnwrap(
                keys.open(
                    header: UnsafeRawBufferPointer(rebasing: raw[0..<end]), packetNumber: number,
                    sealed: UnsafeRawBufferPointer(rebasing: raw[end..<header.end])))
            // The same packet through swift-crypto's public API, one context per call.
            let publicPlaintext = publicKeys.open(
                header: UnsafeRawBufferPointer(rebasing: raw[0..<end]), packetNumber: number,
                sealed: UnsafeRawBufferPointer(rebasing: raw[end..<header.end]))
            XCTAssertEqual(publicPlaintext, plaintext, "the public API opens the packet to the same bytes")
            return (number, Array(plaintext), header)
        }
    }

    func testInitialKeysV1() {
        let keys = QUICPacketKeys.initial(connectionID: Self.dcid, version: .v1)
        XCTAssertEqual(keys.client.secret, Self.hex("c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea"))
        XCTAssertEqual(keys.client.keyBytes, Self.hex("1f369613dd76d5467730efcbe3b1a22d"))
        XCTAssertEqual(keys.client.iv, Self.hex("fa044b2f42a3fd3b46fb255c"))
        XCTAssertEqual(keys.client.headerKeyBytes, Self.hex("9f50449e04a0e810283a1e9933adedd2"))
        XCTAssertEqual(keys.server.secret, Self.hex("3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b"))
        XCTAssertEqual(keys.server.keyBytes, Self.hex("cf3a5331653c364c88f0f379b6067e37"))
        XCTAssertEqual(keys.server.iv, Self.hex("0ac1493ca1905853b0bba03e"))
        XCTAssertEqual(keys.server.headerKeyBytes, Self.hex("c206b8d9b9f0f37644430b490eeaa314"))
    }

    func testClientInitialV1() throws {
        let keys = QUICPacketKeys.initial(connectionID: Self.dcid, version: .v1)
        let opened = try open(Self.clientPacket, keys: keys.client)
        XCTAssertEqual(opened.number, 2)
        XCTAssertEqual(opened.plaintext, Self.clientPayload)
        XCTAssertEqual(opened.header.type, .initial)
        XCTAssertEqual(opened.header.end, 1200)
        // The same packet under the server's keys: its tag does not verify, so nothing is taken.
        var buffer = Self.clientPacket
        let wrong = buffer.withUnsafeMutableBytes { raw -> Data? in
            guard let header = QUICPacketHeader.read(UnsafeRawBufferPointer(raw), at: 0, shortDestinationLength: 0),
                let (length, truncated, _) = QUICHeaderProtection.remove(raw, at: 0, header: header, keys: keys.server)
            else { return nil }
            let end = header.packetNumberOffset + length
            return keys.server.open(
                header: UnsafeRawBufferPointer(rebasing: raw[0..<end]), packetNumber: truncated,
                sealed: UnsafeRawBufferPointer(rebasing: raw[end..<header.end]))
        }
        XCTAssertNil(wrong)
        // A packet after a longer one, through one kept buffer; then the longer one damaged.
        let server = QUICPacketKeys.initial(connectionID: Self.dcid, version: .v1).server
        var plaintext: [UInt8] = []
        for (packet, damage) in [(Self.clientPacket, false), (Self.serverPacket, false), (Self.serverPacket, true)] {
            var bytes = packet
            let result = bytes.withUnsafeMutableBytes { raw -> Int?? in
                let keys = packet == Self.clientPacket ? keys.client : server
                guard let header = QUICPacketHeader.read(UnsafeRawBufferPointer(raw), at: 0, shortDestinationLength: 0),
                    let (length, truncated, _) = QUICHeaderProtection.remove(raw, at: 0, header: header, keys: keys)
                else { return nil }
                let end = header.packetNumberOffset + length
                if damage { raw[header.end - 1] ^= 1 }
                return keys.open(
                    header: UnsafeRawBufferPointer(rebasing: raw[0..<end]), packetNumber: truncated,
                    sealed: UnsafeRawBufferPointer(rebasing: raw[end..<header.end]), into: &plaintext)
            }
            let opened = try XCTUnwrap(result).map { Array(plaintext[0..<$0]) }
            switch (packet == Self.clientPacket, damage) {
            case (true, _): XCTAssertEqual(opened, Self.clientPayload)
            case (false, false): XCTAssertEqual(opened, Self.serverPayload)
            case (false, true): XCTAssertNil(opened, "a damaged tag does not verify")
            }
        }
    }

    func testServerInitialV1AndV2() throws {
        for (version, packet) in [(QUICVersion.v1, Self.serverPacket), (.v2, Self.serverPacketV2)] {
            let keys = QUICPacketKeys.initial(connectionID: Self.dcid, version: version)
            let opened = try open(packet, keys: keys.server)
            XCTAssertEqual(opened.number, 1, "\(version)")
            XCTAssertEqual(opened.plaintext, Self.serverPayload, "\(version)")
            XCTAssertEqual(opened.header.source?.bytes, Self.hex("f067a5502a4262b5"))
        }
        // RFC 9369 A.1: v2's client Initial keys.
        let v2 = QUICPacketKeys.initial(connectionID: Self.dcid, version: .v2)
        XCTAssertEqual(v2.client.keyBytes, Self.hex("8b1a0bc121284290a29e0971b5cd045d"))
        XCTAssertEqual(v2.client.iv, Self.hex("91f73e2351d8fa91660e909f"))
        XCTAssertEqual(v2.client.headerKeyBytes, Self.hex("45b95e15235d6f45a6b19cbcb0294ba9"))
    }

    func testChaCha20ShortHeaderV1AndV2() throws {
        let cases: [(QUICVersion, String, String, String, String, String)] = [
            (
                .v1, "c6d98ff3441c3fe1b2182094f69caa2ed4b716b65488960a7a984979fb23e1c8", "e0459b3474bdd0e44a41c144",
                "25a282b9e82f06f21f488917a4fc8f1b73573685608597d0efcb076b0ab7a7a4",
                "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9",
                "4cfe4189655e5cd55c41f69080575d7999c25a5bfb"
            ),
            (
                .v2, "3bfcddd72bcf02541d7fa0dd1f5f9eeea817e09a6963a0e6c7df0f9a1bab90f2", "a6b5bc6ab7dafce30ffff5dd",
                "d659760d2ba434a226fd37b35c69e2da8211d10c4f12538787d65645d5d1b8e2",
                "c69374c49e3d2a9466fa689e49d476db5d0dfbc87d32ceeaa6343fd0ae4c7d88",
                "5558b1c60ae7b6b932bc27d786f4bc2bb20f2162ba"
            ),
        ]
        for (version, key, iv, hp, ku, packet) in cases {
            let keys = QUICPacketKeys(secret: Self.chachaSecret, cipher: .chaCha20Poly1305, version: version)
            XCTAssertEqual(keys.keyBytes, Self.hex(key))
            XCTAssertEqual(keys.iv, Self.hex(iv))
            XCTAssertEqual(keys.headerKeyBytes, Self.hex(hp))
            XCTAssertEqual(keys.updated().secret, Self.hex(ku), "key update secret, \(version)")
            XCTAssertEqual(keys.updated().headerKeyBytes, Self.hex(hp), "the header key survives key updates")
            // The packet number's 3 bytes decode to 654360564 next to the one before it.
            let opened = try open(Self.hex(packet), keys: keys, largest: 654_360_563)
            XCTAssertEqual(opened.number, 654_360_564)
            XCTAssertEqual(opened.plaintext, [0x01])
        }
    }

    /// The whole reader on RFC 9001 A.2's datagram: the ClientHello from its CRYPTO frame.
    func testConnectionReadsTheClientHello() throws {
        let connection = QUICConnection(secrets: { _ in nil })
        _ = Self.clientPacket.withUnsafeBytes { connection.datagram($0, from: .up, time: 0) }
        XCTAssertEqual(connection.version, .v1)
        XCTAssertEqual(connection.clientHello?.serverName, "example.com")
        XCTAssertEqual(connection.clientHello?.offeredALPN, ["alpn"])
        XCTAssertEqual(connection.figures[0].decrypted, 1)
        XCTAssertEqual(connection.figures[0].cryptoBytes, 241) // the CRYPTO frame's length, 0x40f1
        XCTAssertEqual(connection.figures[0].paddingBytes, 917)
        XCTAssertEqual(connection.notDecrypted, .noKey)
        // The server's answer (A.3) tells the suite.
        _ = Self.serverPacket.withUnsafeBytes { connection.datagram($0, from: .down, time: 1) }
        XCTAssertEqual(connection.serverHello?.cipherSuite, 0x1301)
        XCTAssertEqual(connection.cipher, .aes128GCM)
        XCTAssertEqual(connection.figures[1].ackFrames, 1)
    }
}
