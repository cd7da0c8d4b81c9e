import Crypto
import Foundation
import _CryptoExtras
#if canImport(CCryptoBoringSSL)
import CCryptoBoringSSL
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
    /// Both keys set up once (docs/DECISIONS.md); nil opens and masks through swift-crypto's API.
    let kept: KeptPacketCipher?

    /// The keys of a traffic secret (`quic key`, `quic iv`, `quic hp`; `quicv2 ...` in v2).
    public convenience init(secret: [UInt8], cipher: QUICCipher, version: QUICVersion) {
        self.init(secret: secret, cipher: cipher, version: version, headerKey: nil)
    }

    /// `keepsCipher: false` opens and masks every packet through swift-crypto's API, as a build
    /// without BoringSSL's module does (tests compare the two).
    init(secret: [UInt8], cipher: QUICCipher, version: QUICVersion, headerKey: SymmetricKey?, keepsCipher: Bool = true) {
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
        kept = keepsCipher ? KeptPacketCipher(cipher: cipher, key: key, headerKey: self.headerKey) : nil
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
    /// The kept cipher's when there is one (about 320 instructions a packet with the header's
    /// removal); else swift-crypto's `AES.permute` on a copy of the sample in a stack block,
    /// about 1,050, where its CTR mode over 5 zero bytes cost 2,400.
    public func mask(sample: UnsafeRawBufferPointer) -> SIMD8<UInt8>? {
        guard sample.count == 16 else { return nil }
        if let kept { return kept.mask(sample: sample) }
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
    /// the IV XOR the packet number, the header is the associated data.
    public func open(header: UnsafeRawBufferPointer, packetNumber: UInt64, sealed: UnsafeRawBufferPointer) -> Data? {
        var plaintext: [UInt8] = []
        return open(header: header, packetNumber: packetNumber, sealed: sealed, into: &plaintext).map {
            Data(plaintext[0..<$0])
        }
    }

    /// `open(header:packetNumber:sealed:)` into the caller's buffer, kept from packet to packet
    /// and grown as needed: the payload's length, or nil when the tag does not verify. This runs
    /// once per packet, so the kept cipher writes there directly, with no allocation.
    public func open(
        header: UnsafeRawBufferPointer, packetNumber: UInt64, sealed: UnsafeRawBufferPointer, into plaintext: inout [UInt8]
    ) -> Int? {
        guard sealed.count >= 16, iv.count == 12 else { return nil }
        var nonce: (UInt64, UInt32) = (0, 0)
        withUnsafeMutableBytes(of: &nonce) { bytes in
            for index in 0..<12 { bytes[index] = iv[index] }
            for index in 0..<8 { bytes[11 - index] ^= UInt8(truncatingIfNeeded: packetNumber >> (8 * UInt64(index))) }
        }
        let length = sealed.count &- 16
        if plaintext.count < max(length, 1) { plaintext = [UInt8](repeating: 0, count: max(length, 2048)) }
        return withUnsafeBytes(of: nonce) { nonceBytes -> Int? in
            if let kept {
                return plaintext.withUnsafeMutableBytes { kept.open(sealed, nonce: nonceBytes, header: header, into: $0) }
            }
            guard let opened = openThroughSwiftCrypto(sealed, nonce: nonceBytes, header: header), opened.count == length
            else { return nil }
            _ = plaintext.withUnsafeMutableBytes { opened.copyBytes(to: $0) }
            return length
        }
    }

    /// swift-crypto's public API: one AEAD context per call, the bytes in and out as `Data`.
    private func openThroughSwiftCrypto(
        _ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer
    ) -> Data? {
        let tagAt = sealed.count &- 16
        let ciphertext = Data(sealed[0..<tagAt])
        let tag = Data(sealed[tagAt...])
        switch cipher {
        case .aes128GCM, .aes256GCM:
            guard let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            else { return nil }
            return try? AES.GCM.open(box, using: key, authenticating: header)
        case .chaCha20Poly1305:
            guard let box = try? ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            else { return nil }
            return try? ChaChaPoly.open(box, using: key, authenticating: header)
        }
    }
}

/// A packet key's AEAD and header protection set up once, in the BoringSSL that swift-crypto
/// builds and runs on (its `CCryptoBoringSSL` module, which its `_CryptoExtras` product depends
/// on). swift-crypto's `AES.GCM.open` sets up an AEAD context and several `Data` values on every
/// call, and `AES.permute` a key schedule: together three quarters of what a packet's
/// decryption cost. BoringSSL stays the cipher; nothing here is one.
final class KeptPacketCipher: @unchecked Sendable {
    // @unchecked: after init, BoringSSL only reads the context and the key schedule.
    #if canImport(CCryptoBoringSSL)
    private let aead: UnsafeMutablePointer<EVP_AEAD_CTX>
    /// AES header protection: the key schedule. ChaCha20's: the key's 32 bytes.
    private let blockKey: UnsafeMutablePointer<AES_KEY>?
    private let streamKey: [UInt8]

    init?(cipher: QUICCipher, key: SymmetricKey, headerKey: SymmetricKey) {
        let algorithm: OpaquePointer? =
            switch cipher {
            case .aes128GCM: CCryptoBoringSSL_EVP_aead_aes_128_gcm()
            case .aes256GCM: CCryptoBoringSSL_EVP_aead_aes_256_gcm()
            case .chaCha20Poly1305: CCryptoBoringSSL_EVP_aead_chacha20_poly1305()
            }
        guard let context = key.withUnsafeBytes({ bytes in
            CCryptoBoringSSL_EVP_AEAD_CTX_new(
                algorithm, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, 16)
        })
        else { return nil }
        aead = context
        let headerBytes = headerKey.withUnsafeBytes { Array($0) }
        if cipher == .chaCha20Poly1305 {
            guard headerBytes.count == 32 else {
                CCryptoBoringSSL_EVP_AEAD_CTX_free(context)
                return nil
            }
            blockKey = nil
            streamKey = headerBytes
        } else {
            let schedule = UnsafeMutablePointer<AES_KEY>.allocate(capacity: 1)
            guard CCryptoBoringSSL_AES_set_encrypt_key(headerBytes, UInt32(headerBytes.count * 8), schedule) == 0 else {
                schedule.deallocate()
                CCryptoBoringSSL_EVP_AEAD_CTX_free(context)
                return nil
            }
            blockKey = schedule
            streamKey = []
        }
    }

    deinit {
        CCryptoBoringSSL_EVP_AEAD_CTX_free(aead)
        blockKey?.deallocate()
    }

    /// RFC 9001 §5.4.3 and §5.4.4 on a 16-byte sample.
    func mask(sample: UnsafeRawBufferPointer) -> SIMD8<UInt8> {
        var block = SIMD16<UInt8>()
        withUnsafeMutableBytes(of: &block) { out in
            let output = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let input = sample.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if let blockKey {
                CCryptoBoringSSL_AES_encrypt(input, output, blockKey)
            } else {
                let counter = UInt32(littleEndian: sample.loadUnaligned(as: UInt32.self))
                let zeros: SIMD8<UInt8> = .zero
                withUnsafeBytes(of: zeros) { zeros in
                    CCryptoBoringSSL_CRYPTO_chacha_20(
                        output, zeros.baseAddress!.assumingMemoryBound(to: UInt8.self), 5, streamKey, input + 4, counter)
                }
            }
        }
        return SIMD8(block[0], block[1], block[2], block[3], block[4], 0, 0, 0)
    }

    /// Opens `sealed` (ciphertext and 16-byte tag) into `output`, which has room for the
    /// ciphertext: its length, or nil when the tag does not verify.
    func open(
        _ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) -> Int? {
        var written = 0
        let opened = CCryptoBoringSSL_EVP_AEAD_CTX_open(
            aead, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, output.count,
            nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce.count,
            sealed.baseAddress?.assumingMemoryBound(to: UInt8.self), sealed.count,
            header.baseAddress?.assumingMemoryBound(to: UInt8.self), header.count)
        return opened == 1 ? written : nil
    }
    #else
    init?(cipher: QUICCipher, key: SymmetricKey, headerKey: SymmetricKey) { return nil }
    func mask(sample: UnsafeRawBufferPointer) -> SIMD8<UInt8> { .zero }
    func open(
        _ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) -> Int? { nil }
    #endif
}
