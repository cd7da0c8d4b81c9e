import Crypto
import _CryptoExtras

/// What came of decrypting one record.
enum DecryptResult: Equatable {
    /// Plaintext is in the output buffer; the content type is the inner one for TLS 1.3.
    case plaintext(contentType: UInt8)
    /// The tag or MAC did not verify, or the padding is wrong: not this connection's key.
    case authenticationFailed
    /// The record is too short for the cipher's nonce, tag or MAC, or TLS 1.3 plaintext
    /// holds only padding.
    case malformed
}

/// One direction's record protection: cipher, keys and the record sequence number. Decrypts
/// with swift-crypto into a caller-owned buffer that keeps its capacity from record to record.
struct RecordDecryptor {
    let suite: CipherSuite
    let isTLS13: Bool
    private(set) var secret: [UInt8] // TLS 1.3: the current traffic secret (KeyUpdate)
    private var key: SymmetricKey
    private var macKey: [UInt8]
    private var iv: [UInt8]
    private(set) var sequence: UInt64 = 0
    private var nonce = [UInt8](repeating: 0, count: 12)
    private var additionalData = [UInt8](repeating: 0, count: 13)

    /// TLS 1.3, from a traffic secret.
    init(tls13 suite: CipherSuite, trafficSecret: [UInt8]) {
        let keys = KeySchedule.trafficKeys13(suite, secret: trafficSecret)
        self.suite = suite
        self.isTLS13 = true
        self.secret = trafficSecret
        self.key = SymmetricKey(data: keys.key)
        self.macKey = []
        self.iv = keys.iv
    }

    /// TLS 1.2, from one direction's part of the key block.
    init(tls12 suite: CipherSuite, keys: DirectionKeys, encryptThenMAC: Bool) {
        self.suite = suite
        self.isTLS13 = false
        self.secret = []
        self.key = SymmetricKey(data: keys.key)
        self.macKey = keys.macKey
        self.iv = keys.iv
        self.encryptThenMAC = encryptThenMAC
        if case .aesCBC = suite.cipher { cbcKey = KeptCBCKey(key) }
    }

    private var encryptThenMAC = false
    /// AES-CBC suites: the key's decryption schedule, set up once (nil: `decryptCBCInPlace`).
    private var cbcKey: KeptCBCKey?

    /// TLS 1.3 KeyUpdate: the next traffic secret, its key and IV, and the sequence back to 0.
    mutating func updateTrafficSecret() {
        self = RecordDecryptor(tls13: suite, trafficSecret: KeySchedule.nextTrafficSecret13(suite, secret: secret))
    }

    /// Decrypts `record` (the 5-byte header and the fragment) into `output` (replaced).
    mutating func decrypt(record: UnsafeRawBufferPointer, into output: inout [UInt8]) -> DecryptResult {
        output.removeAll(keepingCapacity: true)
        let fragment = UnsafeRawBufferPointer(rebasing: record[5...])
        let result: DecryptResult
        switch suite.cipher {
        case .aesGCM, .chaCha20Poly1305:
            result =
                isTLS13
                ? openTLS13(record: record, fragment: fragment, into: &output)
                : openAEAD12(record: record, fragment: fragment, into: &output)
        case .aesCBC:
            result = openCBC12(record: record, fragment: fragment, into: &output)
        }
        if case .plaintext = result { sequence &+= 1 }
        return result
    }

    /// The per-record nonce: the IV XOR the sequence number, left-padded to 12 bytes
    /// (TLS 1.3 and TLS 1.2 ChaCha20-Poly1305).
    private mutating func xorNonce() {
        for i in 0..<12 { nonce[i] = iv[i] }
        for i in 0..<8 { nonce[4 + i] ^= UInt8(truncatingIfNeeded: sequence >> (56 - 8 * i)) }
    }

    /// seq_num(8) + type + version + length(2): the TLS 1.2 AEAD additional data and MAC header.
    private mutating func fillHeader12(record: UnsafeRawBufferPointer, length: Int) {
        for i in 0..<8 { additionalData[i] = UInt8(truncatingIfNeeded: sequence >> (56 - 8 * i)) }
        additionalData[8] = record[0]
        additionalData[9] = record[1]
        additionalData[10] = record[2]
        additionalData[11] = UInt8(truncatingIfNeeded: length >> 8)
        additionalData[12] = UInt8(truncatingIfNeeded: length)
    }

    private func open(
        nonce: [UInt8], ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        additionalData: UnsafeRawBufferPointer, into output: inout [UInt8]
    ) -> DecryptResult {
        do {
            switch suite.cipher {
            case .aesGCM:
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                let plain = try AES.GCM.open(box, using: key, authenticating: additionalData)
                plain.withUnsafeBytes { output.append(contentsOf: $0) }
            case .chaCha20Poly1305:
                let box = try ChaChaPoly.SealedBox(
                    nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                let plain = try ChaChaPoly.open(box, using: key, authenticating: additionalData)
                plain.withUnsafeBytes { output.append(contentsOf: $0) }
            case .aesCBC:
                return .malformed
            }
            return .plaintext(contentType: 0)
        } catch {
            return .authenticationFailed
        }
    }

    private mutating func openTLS13(
        record: UnsafeRawBufferPointer, fragment: UnsafeRawBufferPointer,
        into output: inout [UInt8]
    ) -> DecryptResult {
        guard fragment.count >= 17 else { return .malformed } // tag + inner content type
        xorNonce()
        let split = fragment.count - 16
        let result = open(
            nonce: nonce, ciphertext: UnsafeRawBufferPointer(rebasing: fragment[..<split]),
            tag: UnsafeRawBufferPointer(rebasing: fragment[split...]),
            additionalData: UnsafeRawBufferPointer(rebasing: record[..<5]), into: &output)
        guard result == .plaintext(contentType: 0) else { return result }
        // TLSInnerPlaintext: content, the real content type, then zero padding.
        while let last = output.last, last == 0 { output.removeLast() }
        guard let type = output.popLast() else { return .malformed }
        return .plaintext(contentType: type)
    }

    private mutating func openAEAD12(
        record: UnsafeRawBufferPointer, fragment: UnsafeRawBufferPointer,
        into output: inout [UInt8]
    ) -> DecryptResult {
        let explicitNonce: Int
        if case .aesGCM = suite.cipher {
            explicitNonce = 8
            guard fragment.count >= explicitNonce + 16 else { return .malformed }
            for i in 0..<4 { nonce[i] = iv[i] }
            for i in 0..<8 { nonce[4 + i] = fragment[i] }
        } else {
            explicitNonce = 0
            guard fragment.count >= 16 else { return .malformed }
            xorNonce()
        }
        let split = fragment.count - 16
        fillHeader12(record: record, length: split - explicitNonce)
        let nonceCopy = nonce
        let result = additionalData.withUnsafeBytes { aad in
            open(
                nonce: nonceCopy, ciphertext: UnsafeRawBufferPointer(rebasing: fragment[explicitNonce..<split]),
                tag: UnsafeRawBufferPointer(rebasing: fragment[split...]), additionalData: aad, into: &output)
        }
        guard result == .plaintext(contentType: 0) else { return result }
        return .plaintext(contentType: record[0])
    }

    /// AES-CBC decryption of whole blocks, in place, without `KeptCBCKey`'s module: each block goes through swift-crypto's AES
    /// block function (`AES.inversePermute`, _CryptoExtras) and is XORed with the ciphertext
    /// block before it (the IV for the first), which is what `AES._CBC.decrypt` does, block for
    /// block. Walking from the last block back keeps each previous ciphertext block intact until
    /// it is used. `AES._CBC.decrypt` itself goes through generic slices and a new `Data` per
    /// record, and an `UnsafeMutableBufferPointer` block through generic storage lookups: an
    /// Array block takes the fast path, 4x faster than `AES._CBC.decrypt` on the TLS benchmark
    /// (docs/BENCHMARK.md). False if swift-crypto rejects the key.
    static func decryptCBCInPlace(_ blocks: inout [UInt8], iv: UnsafeRawBufferPointer, key: SymmetricKey) -> Bool {
        precondition(blocks.count % 16 == 0 && iv.count == 16)
        var block = [UInt8](repeating: 0, count: 16)
        // Bytes moved and XORed as two 64-bit words through raw pointers: the per-byte
        // subscripts of both arrays cost as much as the AES calls.
        return blocks.withUnsafeMutableBytes { all in
            var start = all.count - 16
            while start >= 0 {
                let cipher = UnsafeRawBufferPointer(rebasing: all[start..<(start + 16)])
                block.withUnsafeMutableBytes { $0.copyMemory(from: cipher) }
                do { try AES.inversePermute(&block, key: key) } catch { return false }
                let chain = start == 0 ? iv : UnsafeRawBufferPointer(rebasing: all[(start - 16)..<start])
                block.withUnsafeBytes { plain in
                    for word in 0..<2 {
                        let value =
                            plain.loadUnaligned(fromByteOffset: 8 * word, as: UInt64.self)
                            ^ chain.loadUnaligned(fromByteOffset: 8 * word, as: UInt64.self)
                        all.storeBytes(of: value, toByteOffset: start + 8 * word, as: UInt64.self)
                    }
                }
                start -= 16
            }
            return true
        }
    }

    /// AES-CBC with HMAC, MAC-then-encrypt or encrypt_then_mac (RFC 7366). The padding is
    /// checked here: swift-crypto decrypts without removing it.
    private mutating func openCBC12(
        record: UnsafeRawBufferPointer, fragment: UnsafeRawBufferPointer,
        into output: inout [UInt8]
    ) -> DecryptResult {
        guard let macKind = suite.mac else { return .malformed }
        let macLength = macKind.length
        var ciphertextEnd = fragment.count
        if encryptThenMAC {
            guard fragment.count >= 16 + 16 + macLength else { return .malformed }
            ciphertextEnd = fragment.count - macLength
            fillHeader12(record: record, length: ciphertextEnd)
            let expected = KeySchedule.recordMAC(
                macKind, key: macKey, header: additionalData,
                body: UnsafeRawBufferPointer(rebasing: fragment[..<ciphertextEnd]))
            guard expected.elementsEqual(fragment[ciphertextEnd...]) else { return .authenticationFailed }
        }
        // IV block, then at least one block of ciphertext, a whole number of blocks
        guard ciphertextEnd >= 32, ciphertextEnd % 16 == 0 else { return .malformed }
        output.append(contentsOf: fragment[16..<ciphertextEnd])
        let iv = UnsafeRawBufferPointer(rebasing: fragment[..<16])
        if let cbcKey {
            output.withUnsafeMutableBytes { cbcKey.decrypt($0, iv: iv) }
        } else {
            guard Self.decryptCBCInPlace(&output, iv: iv, key: key) else { return .authenticationFailed }
        }
        // padding_length byte, preceded by that many bytes of the same value
        let padding = Int(output[output.count - 1])
        let trailer = encryptThenMAC ? padding + 1 : padding + 1 + macLength
        guard trailer <= output.count else { return .authenticationFailed }
        for i in (output.count - padding - 1)..<output.count where Int(output[i]) != padding {
            return .authenticationFailed
        }
        let plaintextLength = output.count - trailer
        if !encryptThenMAC {
            fillHeader12(record: record, length: plaintextLength)
            let header = additionalData
            let expected = output.withUnsafeBytes {
                KeySchedule.recordMAC(
                    macKind, key: macKey, header: header, body: UnsafeRawBufferPointer(rebasing: $0[..<plaintextLength])
                )
            }
            guard expected.elementsEqual(output[plaintextLength..<(plaintextLength + macLength)]) else {
                return .authenticationFailed
            }
        }
        output.removeLast(trailer)
        return .plaintext(contentType: record[0])
    }
}
