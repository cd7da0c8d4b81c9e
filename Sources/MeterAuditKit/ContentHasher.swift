import Crypto
import Foundation

/// The body workers' memo key for a run of bytes: equal bytes give equal fingerprints within a
/// run; two different runs of bytes share one with a probability under 2^-100.
///
/// Each 64 KiB chunk (at fixed offsets from the start, however the bytes arrive) goes through
/// GMAC (swift-crypto's AES-GCM tag over the chunk as associated data, nothing encrypted) under
/// a key drawn at random for the process; the chunks' tags and the byte count go through
/// SHA-256. GHASH on this hardware runs several times faster than SHA-256 over the same bytes
/// (SHA-256 of every body and decoded body was a tenth of the workers' CPU), and as a universal
/// hash with a key the input cannot know, two different chunks get one tag with probability at
/// most (blocks + 1) / 2^128, so two different inputs of up to 1 GiB (16,384 chunks, the
/// decoders' bound) share a fingerprint with probability under 2^-100. The capture is written
/// before the run draws its key, so no input can be made to collide, which a fixed key would
/// not ensure.
/// Fingerprints are never written anywhere: they only tell a worker it has seen the bytes.
struct ContentHasher {
    typealias Fingerprint = SHA256.Digest

    static let chunkBytes = 65_536
    private static let key = SymmetricKey(size: .bits128)
    private static let nonce = try? AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 12))

    private var tags = SHA256()
    /// Bytes of the current chunk not yet hashed (only what arrived in pieces).
    private var pending: [UInt8] = []
    private var count = 0

    init() {}

    /// The fingerprint of `bytes` in one piece.
    static func fingerprint(_ bytes: UnsafeRawBufferPointer) -> Fingerprint {
        // The chunks `update` and `finalize` would make, the last one without a copy.
        var hasher = ContentHasher()
        var at = 0
        while at < bytes.count {
            let end = min(at &+ chunkBytes, bytes.count)
            hasher.absorb(UnsafeRawBufferPointer(rebasing: bytes[at..<end]))
            at = end
        }
        hasher.count = bytes.count
        return hasher.finalize()
    }

    static func fingerprint(_ bytes: [UInt8]) -> Fingerprint {
        bytes.withUnsafeBytes { fingerprint($0) }
    }

    /// Starts over, keeping the chunk buffer.
    mutating func reset() {
        tags = SHA256()
        pending.removeAll(keepingCapacity: true)
        count = 0
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        count &+= bytes.count
        var rest = bytes[...]
        if !pending.isEmpty {
            let taken = min(Self.chunkBytes &- pending.count, rest.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
            rest = rest.dropFirst(taken)
            guard pending.count == Self.chunkBytes else { return }
            pending.withUnsafeBytes { absorb($0) }
            pending.removeAll(keepingCapacity: true)
        }
        while rest.count >= Self.chunkBytes {
            absorb(UnsafeRawBufferPointer(rebasing: rest.prefix(Self.chunkBytes)))
            rest = rest.dropFirst(Self.chunkBytes)
        }
        if !rest.isEmpty {
            if pending.capacity < Self.chunkBytes { pending.reserveCapacity(Self.chunkBytes) }
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest))
        }
    }

    mutating func finalize() -> Fingerprint {
        if !pending.isEmpty {
            pending.withUnsafeBytes { absorb($0) }
            pending.removeAll(keepingCapacity: true)
        }
        withUnsafeBytes(of: UInt64(count).littleEndian) { tags.update(bufferPointer: $0) }
        return tags.finalize()
    }

    /// One whole chunk (or the last, shorter one): its tag into the SHA-256 of tags. Should
    /// AES-GCM ever refuse, the chunk's own bytes go in instead, still a correct key.
    private mutating func absorb(_ chunk: UnsafeRawBufferPointer) {
        if let nonce = Self.nonce,
            let box = try? AES.GCM.seal(Data(), using: Self.key, nonce: nonce, authenticating: chunk)
        {
            box.tag.withUnsafeBytes { tags.update(bufferPointer: $0) }
        } else {
            tags.update(bufferPointer: chunk)
        }
    }
}
