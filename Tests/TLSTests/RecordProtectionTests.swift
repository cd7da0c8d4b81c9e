import Crypto
import XCTest
import _CryptoExtras

@testable import TLS

/// RecordDecryptor's in-place AES-CBC against swift-crypto's own `AES._CBC`, which encrypts
/// (the ciphertext) and decrypts (the expected plaintext) the same bytes independently.
final class RecordProtectionTests: XCTestCase {
    func testCBCInPlaceEqualsSwiftCryptoCBC() throws {
        var generator = SystemRandomNumberGenerator()
        for keyBytes in [16, 32] {
            let key = SymmetricKey(size: keyBytes == 16 ? .bits128 : .bits256)
            // 1 block, 2 blocks, a TLS record's worth (16,384 + MAC + padding = 1,026 blocks)
            for blockCount in [1, 2, 3, 1_026] {
                let plaintext = (0..<(blockCount * 16)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let ivBytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let iv = try AES._CBC.IV(ivBytes: ivBytes)
                let ciphertext = try AES._CBC.encrypt(plaintext, using: key, iv: iv, noPadding: true)
                XCTAssertEqual(ciphertext.count, blockCount * 16)
                let expected = try AES._CBC.decrypt(ciphertext, using: key, iv: iv, noPadding: true)
                XCTAssertEqual(Array(expected), plaintext)

                var buffer = Array(ciphertext)
                let ok = ivBytes.withUnsafeBytes { RecordDecryptor.decryptCBCInPlace(&buffer, iv: $0, key: key) }
                XCTAssertTrue(ok)
                XCTAssertEqual(buffer, plaintext, "AES-\(keyBytes * 8)-CBC, \(blockCount) blocks")

                // The kept key (BoringSSL's CBC), twice through one schedule: the IV is not kept.
                let kept = try XCTUnwrap(KeptCBCKey(key))
                for round in 0..<2 {
                    var blocks = Array(ciphertext)
                    blocks.withUnsafeMutableBytes { out in ivBytes.withUnsafeBytes { kept.decrypt(out, iv: $0) } }
                    XCTAssertEqual(blocks, plaintext, "kept AES-\(keyBytes * 8)-CBC, \(blockCount) blocks, round \(round)")
                }
            }
        }
    }

    func testCBCInPlaceRejectsABadKeySize() {
        var buffer = [UInt8](repeating: 0, count: 32)
        let iv = [UInt8](repeating: 0, count: 16)
        let key = SymmetricKey(data: [UInt8](repeating: 1, count: 20)) // 160 bits: not an AES key
        let ok = iv.withUnsafeBytes { RecordDecryptor.decryptCBCInPlace(&buffer, iv: $0, key: key) }
        XCTAssertFalse(ok)
        XCTAssertNil(KeptCBCKey(key))
    }
}
