import Flows
import XCTest

@testable import QUIC

/// The independent oracles: RFC 9001 Appendix A (QUIC v1) and RFC 9369 Appendix A (v2), their
/// bytes copied verbatim. Every key, mask and plaintext here comes from the RFCs, not this code.
final class RFCVectorTests: XCTestCase {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

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

    static let clientPacket = hex(
        """
        c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11
        d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399
        1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c
        8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212
        30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5
        457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208
        4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec
        4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3
        485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db
        059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c
        7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8
        9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556
        be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74
        68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a
        c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00
        f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632
        291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964
        25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd
        14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff
        ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198
        e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd
        c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73
        203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f
        cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e
        fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade
        a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047
        90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2
        162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4
        40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0
        6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e
        8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0
        be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400
        54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab
        760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9
        f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4
        056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064
        7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241
        e221af44860018ab0856972e194cd934
        """)

    // RFC 9001 A.3: the server Initial (an ACK and a CRYPTO frame with the ServerHello).
    static let serverPayload = hex(
        """
        02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf739
        88cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c94
        0d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00
        020304
        """)
    static let serverPacket = hex(
        """
        cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a
        5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3
        dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84
        022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4
        2158407dd074ee
        """)

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
            let (length, truncated, _) = try XCTUnwrap(QUICHeaderProtection.remove(raw, at: 0, header: header, keys: keys))
            let number = QUICHeaderProtection.decode(truncated: truncated, length: length, largest: largest)
            let end = header.packetNumberOffset + length
            let plaintext = try XCTUnwrap(
                keys.open(
                    header: UnsafeRawBufferPointer(rebasing: raw[0..<end]), packetNumber: number,
                    sealed: UnsafeRawBufferPointer(rebasing: raw[end..<header.end])))
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
        Self.clientPacket.withUnsafeBytes { connection.datagram($0, from: .up, time: 0) }
        XCTAssertEqual(connection.version, .v1)
        XCTAssertEqual(connection.clientHello?.serverName, "example.com")
        XCTAssertEqual(connection.clientHello?.offeredALPN, ["alpn"])
        XCTAssertEqual(connection.figures[0].decrypted, 1)
        XCTAssertEqual(connection.figures[0].cryptoBytes, 241) // the CRYPTO frame's length, 0x40f1
        XCTAssertEqual(connection.figures[0].paddingBytes, 917)
        XCTAssertEqual(connection.notDecrypted, .noKey)
        // The server's answer (A.3) tells the suite.
        Self.serverPacket.withUnsafeBytes { connection.datagram($0, from: .down, time: 1) }
        XCTAssertEqual(connection.serverHello?.cipherSuite, 0x1301)
        XCTAssertEqual(connection.cipher, .aes128GCM)
        XCTAssertEqual(connection.figures[1].ackFrames, 1)
    }
}
