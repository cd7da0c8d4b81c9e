import Crypto
import Foundation
import _CryptoExtras
#if canImport(CryptoBoringWrapper)
import CryptoBoringWrapper
#endif

/// The AEAD a QUIC connection uses (the TLS 1.3 suite the ServerHello chose; Initial packets
/// always AES-128-GCM): its key length and the hash of its key schedule.
public enum QUICCipher: Sendable, Equatable {
    case aes128GCM, aes256GCM, chaCha20Poly1305

    /// The suite's cipher, for the suites QUIC allows (RFC 9001 §5.3); nil for another.
    public init?(tlsSuite: UInt16) {
        switch tlsSuite {
        case 0x1301: self = .aes128GCM
        case 0x1302: self = .aes256GCM
        case 0x1303: self = .chaCha20Poly1305
        default: return nil
        }
    }

    /// The TLS 1.3 suite of this cipher (RFC 8446 §B.4).
    public var tlsSuite: UInt16 {
        switch self {
        case .aes128GCM: return 0x1301
        case .aes256GCM: return 0x1302
        case .chaCha20Poly1305: return 0x1303
        }
    }

    var keyLength: Int { self == .aes128GCM ? 16 : 32 }
    /// SHA-384 for TLS_AES_256_GCM_SHA384, SHA-256 otherwise.
    var hashLength: Int { self == .aes256GCM ? 48 : 32 }
}

/// HKDF over swift-crypto, with TLS 1.3's HKDF-Expand-Label (RFC 8446 §7.1), as QUIC uses it.
enum QUICKeySchedule {
    static func expandLabel(secret: [UInt8], label: String, length: Int, hashLength: Int) -> [UInt8] {
        let fullLabel = Array("tls13 ".utf8) + Array(label.utf8)
        var info: [UInt8] = [UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        info.append(UInt8(truncatingIfNeeded: fullLabel.count))
        info += fullLabel
        info.append(0) // empty context
        let key: SymmetricKey
        if hashLength == 48 {
            key = HKDF<SHA384>.expand(pseudoRandomKey: secret, info: info, outputByteCount: length)
        } else {
            key = HKDF<SHA256>.expand(pseudoRandomKey: secret, info: info, outputByteCount: length)
        }
        return key.withUnsafeBytes { Array($0) }
    }

    /// The client's and the server's Initial secrets from the client's first Destination
    /// Connection ID (RFC 9001 §5.2).
    static func initialSecrets(connectionID: [UInt8], version: QUICVersion) -> (client: [UInt8], server: [UInt8]) {
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: connectionID), salt: version.initialSalt)
        let initial = prk.withUnsafeBytes { Array($0) }
        return (
            expandLabel(secret: initial, label: "client in", length: 32, hashLength: 32),
            expandLabel(secret: initial, label: "server in", length: 32, hashLength: 32)
        )
    }
}

/// One direction's keys for one epoch (and key phase): the AEAD key and IV, the header
/// protection key, and the secret a key update derives the next ones from (RFC 9001 §5.1, §6).
/// A class: the reader picks a packet's keys once per packet, and copying a reference is one
/// retain where copying the struct was one per stored array and key.
public final class QUICPacketKeys: @unchecked Sendable {
    // @unchecked: every stored property is a constant, SymmetricKey is immutable, and BoringSSL
    // only reads an AEAD context to open a packet.
    public let cipher: QUICCipher
    public let version: QUICVersion
    let secret: [UInt8]
    let key: SymmetricKey
    public let iv: [UInt8]
    let headerKey: SymmetricKey
    #if canImport(CryptoBoringWrapper)
    /// The AEAD key set up once, in swift-crypto's own BoringSSL wrapper (the module its
    /// `_CryptoExtras` builds on): `AES.GCM.open` sets up a context per call, which was half the
    /// cost of opening a packet. Without the module, packets open through the public API.
    let context: BoringSSLAEAD.AEADContext?
    #endif

    /// The keys of a traffic secret (`quic key`, `quic iv`, `quic hp`; `quicv2 ...` in v2).
    public convenience init(secret: [UInt8], cipher: QUICCipher, version: QUICVersion) {
        self.init(secret: secret, cipher: cipher, version: version, headerKey: nil)
    }

    /// `keepsContext: false` opens every packet through swift-crypto's public API, as a build
    /// without the wrapper module does (tests compare the two).
    init(secret: [UInt8], cipher: QUICCipher, version: QUICVersion, headerKey: SymmetricKey?, keepsContext: Bool = true) {
        self.cipher = cipher
        self.version = version
        self.secret = secret
        let prefix = version.labelPrefix
        let hash = cipher.hashLength
        key = SymmetricKey(
            data: QUICKeySchedule.expandLabel(secret: secret, label: prefix + "key", length: cipher.keyLength, hashLength: hash))
        iv = QUICKeySchedule.expandLabel(secret: secret, label: prefix + "iv", length: 12, hashLength: hash)
        self.headerKey =
            headerKey
            ?? SymmetricKey(
                data: QUICKeySchedule.expandLabel(
                    secret: secret, label: prefix + "hp", length: cipher.keyLength, hashLength: hash))
        #if canImport(CryptoBoringWrapper)
        switch cipher {
        case _ where !keepsContext: context = nil
        case .aes128GCM: context = try? BoringSSLAEAD.AEADContext(cipher: .aes128gcm, key: key)
        case .aes256GCM: context = try? BoringSSLAEAD.AEADContext(cipher: .aes256gcm, key: key)
        case .chaCha20Poly1305: context = try? BoringSSLAEAD.AEADContext(cipher: .chacha20, key: key)
        }
        #endif
    }

    /// The Initial keys of both sides for a connection whose client first sent `connectionID`.
    public static func initial(connectionID: [UInt8], version: QUICVersion) -> (client: QUICPacketKeys, server: QUICPacketKeys) {
        let secrets = QUICKeySchedule.initialSecrets(connectionID: connectionID, version: version)
        return (
            QUICPacketKeys(secret: secrets.client, cipher: .aes128GCM, version: version),
            QUICPacketKeys(secret: secrets.server, cipher: .aes128GCM, version: version)
        )
    }

    /// The next key phase's keys (`quic ku`, RFC 9001 §6.1): new AEAD key and IV, same header key.
    public func updated() -> QUICPacketKeys {
        let next = QUICKeySchedule.expandLabel(
            secret: secret, label: version.labelPrefix + "ku", length: cipher.hashLength, hashLength: cipher.hashLength)
        return QUICPacketKeys(secret: next, cipher: cipher, version: version, headerKey: headerKey)
    }

    /// The header protection key's bytes (for tests against RFC 9001's appendix).
    public var headerKeyBytes: [UInt8] { headerKey.withUnsafeBytes { Array($0) } }
    public var keyBytes: [UInt8] { key.withUnsafeBytes { Array($0) } }

    /// The 5-byte header protection mask of a 16-byte sample (RFC 9001 §5.4.3, §5.4.4): AES on
    /// one block, or ChaCha20 with the sample's first 4 bytes as counter and the rest as nonce.
    /// Lanes 0-4 hold the mask. A SIMD value rather than an array: this runs once per packet.
    /// AES is swift-crypto's `AES.permute` on a copy of the sample in a stack block, handed over
    /// as an `UnsafeMutableRawBufferPointer`: about 1,050 instructions a packet, where its CTR
    /// mode over 5 zero bytes (the same block) cost 2,400 and `permute` on an array cost more.
    public func mask(sample: UnsafeRawBufferPointer) -> SIMD8<UInt8>? {
        guard sample.count == 16 else { return nil }
        switch cipher {
        case .aes128GCM, .aes256GCM:
            return withUnsafeTemporaryAllocation(byteCount: 16, alignment: 16) { block -> SIMD8<UInt8>? in
                block.copyMemory(from: sample)
                var payload = block
                guard (try? AES.permute(&payload, key: headerKey)) != nil else { return nil }
                return SIMD8(payload[0], payload[1], payload[2], payload[3], payload[4], 0, 0, 0)
            }
        case .chaCha20Poly1305:
            guard let counter = try? Insecure.ChaCha20CTR.Counter(data: sample[0..<4]),
                let nonce = try? Insecure.ChaCha20CTR.Nonce(data: sample[4..<16]),
                let output = try? Insecure.ChaCha20CTR.encrypt(
                    [UInt8](repeating: 0, count: 5), using: headerKey, counter: counter, nonce: nonce),
                output.count == 5
            else { return nil }
            let at = output.startIndex
            return SIMD8(output[at], output[at + 1], output[at + 2], output[at + 3], output[at + 4], 0, 0, 0)
        }
    }

    /// The payload of a packet, or nil when its tag does not verify (RFC 9001 §5.3): the nonce is
    /// the IV XOR the packet number, the header is the associated data. Data as swift-crypto
    /// returns it (no copy into an array: this runs once per packet).
    public func open(header: UnsafeRawBufferPointer, packetNumber: UInt64, sealed: UnsafeRawBufferPointer) -> Data? {
        var box = Data()
        return open(header: header, packetNumber: packetNumber, sealed: sealed, box: &box)
    }

    /// `open(header:packetNumber:sealed:)` with the caller's buffer, kept from packet to packet:
    /// the sealed bytes are copied into it and handed over as a slice, which costs a copy where
    /// a new `Data` per packet cost an allocation and the storage's checked deinit.
    public func open(
        header: UnsafeRawBufferPointer, packetNumber: UInt64, sealed: UnsafeRawBufferPointer, box: inout Data
    ) -> Data? {
        guard sealed.count >= 16, iv.count == 12 else { return nil }
        var nonce: (UInt64, UInt32) = (0, 0)
        withUnsafeMutableBytes(of: &nonce) { bytes in
            for index in 0..<12 { bytes[index] = iv[index] }
            for index in 0..<8 { bytes[11 - index] ^= UInt8(truncatingIfNeeded: packetNumber >> (8 * UInt64(index))) }
        }
        #if canImport(CryptoBoringWrapper)
        if let context {
            if box.count < sealed.count { box = Data(count: max(sealed.count, 2048)) }
            box.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[0..<sealed.count]).copyMemory(from: sealed) }
            return withUnsafeBytes(of: nonce) { nonceBytes in
                try? context.open(combinedCiphertextAndTag: box[0..<sealed.count], nonce: nonceBytes, authenticatedData: header)
            }
        }
        #endif
        // swift-crypto's public API, one context per call: 12 + sealed bytes (nonce, ciphertext, tag) as one box.
        let count = 12 &+ sealed.count
        if box.count < count { box = Data(count: max(count, 2048)) }
        box.withUnsafeMutableBytes { buffer in
            withUnsafeBytes(of: nonce) { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<12]).copyMemory(from: $0) }
            UnsafeMutableRawBufferPointer(rebasing: buffer[12..<count]).copyMemory(from: sealed)
        }
        let combined = box[0..<count]
        switch cipher {
        case .aes128GCM, .aes256GCM:
            guard let sealedBox = try? AES.GCM.SealedBox(combined: combined) else { return nil }
            return try? AES.GCM.open(sealedBox, using: key, authenticating: header)
        case .chaCha20Poly1305:
            guard let sealedBox = try? ChaChaPoly.SealedBox(combined: combined) else { return nil }
            return try? ChaChaPoly.open(sealedBox, using: key, authenticating: header)
        }
    }
}
