import Crypto

#if canImport(CCryptoBoringSSL)
import CCryptoBoringSSL
#endif

/// An AES-CBC key's decryption schedule set up once per direction, in the BoringSSL that
/// swift-crypto runs on (its `CCryptoBoringSSL` module, on which its `_CryptoExtras` product
/// depends), and a record's blocks decrypted in place by BoringSSL's CBC mode. swift-crypto's
/// API has no CBC that keeps its key and writes in place (`AES._CBC.decrypt` makes a `Data`
/// per call, `AES.inversePermute` expands the key per block). BoringSSL is the cipher and the
/// mode; nothing here is either. Nil without the module: `RecordDecryptor.decryptCBCInPlace`.
final class KeptCBCKey: @unchecked Sendable {
    // @unchecked: after init, BoringSSL only reads the key schedule.
    #if canImport(CCryptoBoringSSL)
    private let schedule: UnsafeMutablePointer<AES_KEY>

    init?(_ key: SymmetricKey) {
        let bytes = key.withUnsafeBytes { Array($0) }
        guard bytes.count == 16 || bytes.count == 32 else { return nil }
        schedule = .allocate(capacity: 1)
        guard CCryptoBoringSSL_AES_set_decrypt_key(bytes, UInt32(bytes.count * 8), schedule) == 0 else {
            schedule.deallocate()
            return nil
        }
    }

    deinit { schedule.deallocate() }

    /// Decrypts `blocks` (a whole number of 16-byte blocks) in place after `iv` (16 bytes).
    func decrypt(_ blocks: UnsafeMutableRawBufferPointer, iv: UnsafeRawBufferPointer) {
        precondition(blocks.count % 16 == 0 && iv.count == 16)
        guard let base = blocks.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var chain = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &chain) { chainBytes in
            chainBytes.copyMemory(from: iv)
            CCryptoBoringSSL_AES_cbc_encrypt(
                base, base, blocks.count, schedule, chainBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                AES_DECRYPT)
        }
    }
    #else
    init?(_ key: SymmetricKey) { return nil }
    func decrypt(_ blocks: UnsafeMutableRawBufferPointer, iv: UnsafeRawBufferPointer) {}
    #endif
}
