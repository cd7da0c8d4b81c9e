import Crypto

/// Key derivation: the TLS 1.2 PRF and TLS 1.3's HKDF-Expand-Label, over swift-crypto's HMAC
/// and HKDF.
enum KeySchedule {
    static func hmac(_ hash: HashKind, key: [UInt8], _ parts: [[UInt8]]) -> [UInt8] {
        func run<H: HashFunction>(_: H.Type) -> [UInt8] {
            var mac = HMAC<H>(key: SymmetricKey(data: key))
            for part in parts { mac.update(data: part) }
            return Array(mac.finalize())
        }
        switch hash {
        case .sha1: return run(Insecure.SHA1.self)
        case .sha256: return run(SHA256.self)
        case .sha384: return run(SHA384.self)
        }
    }

    /// HMAC of a 13-byte record header followed by borrowed record bytes (the CBC record MAC),
    /// without copying the bytes.
    static func recordMAC(_ hash: HashKind, key: [UInt8], header: [UInt8], body: UnsafeRawBufferPointer) -> [UInt8] {
        func run<H: HashFunction>(_: H.Type) -> [UInt8] {
            var mac = HMAC<H>(key: SymmetricKey(data: key))
            mac.update(data: header)
            mac.update(data: body)
            return Array(mac.finalize())
        }
        switch hash {
        case .sha1: return run(Insecure.SHA1.self)
        case .sha256: return run(SHA256.self)
        case .sha384: return run(SHA384.self)
        }
    }

    /// TLS 1.2 PRF: P_hash(secret, label + seed), HMAC chained (RFC 5246 §5).
    static func prf12(_ hash: HashKind, secret: [UInt8], label: String, seed: [UInt8], length: Int) -> [UInt8] {
        let labelSeed = Array(label.utf8) + seed
        var output: [UInt8] = []
        output.reserveCapacity(length + hash.length)
        var a = labelSeed
        while output.count < length {
            a = hmac(hash, key: secret, [a])
            output += hmac(hash, key: secret, [a, labelSeed])
        }
        return Array(output.prefix(length))
    }

    /// HKDF-Expand-Label(secret, label, context, length) of TLS 1.3 (RFC 8446 §7.1).
    static func expandLabel(_ hash: HashKind, secret: [UInt8], label: String, context: [UInt8] = [], length: Int)
        -> [UInt8]
    {
        let fullLabel = Array("tls13 ".utf8) + Array(label.utf8)
        var info: [UInt8] = [UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        info.append(UInt8(truncatingIfNeeded: fullLabel.count))
        info += fullLabel
        info.append(UInt8(truncatingIfNeeded: context.count))
        info += context
        func run<H: HashFunction>(_: H.Type) -> [UInt8] {
            let key = HKDF<H>.expand(pseudoRandomKey: secret, info: info, outputByteCount: length)
            return key.withUnsafeBytes { Array($0) }
        }
        switch hash {
        case .sha1: return run(Insecure.SHA1.self)
        case .sha256: return run(SHA256.self)
        case .sha384: return run(SHA384.self)
        }
    }

    /// The key and IV lengths of a suite's bulk cipher.
    static func keyLength(_ cipher: BulkCipher) -> Int {
        switch cipher {
        case .aesGCM(let length), .aesCBC(let length): return length
        case .chaCha20Poly1305: return 32
        }
    }

    /// TLS 1.3 traffic key and IV from a traffic secret.
    static func trafficKeys13(_ suite: CipherSuite, secret: [UInt8]) -> (key: [UInt8], iv: [UInt8]) {
        (
            expandLabel(suite.prfHash, secret: secret, label: "key", length: keyLength(suite.cipher)),
            expandLabel(suite.prfHash, secret: secret, label: "iv", length: 12)
        )
    }

    /// The next TLS 1.3 traffic secret after a KeyUpdate.
    static func nextTrafficSecret13(_ suite: CipherSuite, secret: [UInt8]) -> [UInt8] {
        expandLabel(suite.prfHash, secret: secret, label: "traffic upd", length: suite.prfHash.length)
    }

    /// TLS 1.2 key block split into each direction's MAC key, cipher key and implicit IV
    /// (RFC 5246 §6.3: client MAC, server MAC, client key, server key, client IV, server IV).
    static func keyBlock12(_ suite: CipherSuite, masterSecret: [UInt8], clientRandom: [UInt8], serverRandom: [UInt8])
        -> (client: DirectionKeys, server: DirectionKeys)
    {
        let macLength = suite.mac?.length ?? 0
        let keyLength = keyLength(suite.cipher)
        let ivLength: Int
        switch suite.cipher {
        case .aesGCM: ivLength = 4 // the salt; the other 8 nonce bytes travel in each record
        case .chaCha20Poly1305: ivLength = 12
        case .aesCBC: ivLength = 0 // TLS 1.1+ CBC records carry their own IV
        }
        let block = prf12(
            suite.prfHash, secret: masterSecret, label: "key expansion",
            seed: serverRandom + clientRandom, length: 2 * (macLength + keyLength + ivLength))
        var at = 0
        func take(_ n: Int) -> [UInt8] {
            defer { at += n }
            return Array(block[at..<(at + n)])
        }
        let clientMAC = take(macLength)
        let serverMAC = take(macLength)
        let clientKey = take(keyLength)
        let serverKey = take(keyLength)
        let clientIV = take(ivLength)
        let serverIV = take(ivLength)
        return (
            DirectionKeys(macKey: clientMAC, key: clientKey, iv: clientIV),
            DirectionKeys(macKey: serverMAC, key: serverKey, iv: serverIV)
        )
    }
}

struct DirectionKeys {
    var macKey: [UInt8]
    var key: [UInt8]
    var iv: [UInt8]
}
