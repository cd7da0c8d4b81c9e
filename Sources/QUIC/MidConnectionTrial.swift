import Flows

/// The 1-RTT secrets of one key log entry (CLIENT_TRAFFIC_SECRET_0, SERVER_TRAFFIC_SECRET_0),
/// to be tried on a connection the capture joined after its handshake (docs/METERING.md §2d,
/// "QUIC detection"). A short header names neither the version nor the suite: a secret's length
/// allows its AEADs (32 bytes: AES-128-GCM or ChaCha20-Poly1305; 48: AES-256-GCM), each with QUIC
/// v1's labels, then v2's. Keys are derived when first tried, key updates (`quic ku`) likewise.
public final class QUICTrialKeys {
    public let clientRandom: [UInt8]
    /// The (AEAD, version) pairs tried, in order: v1 first.
    public let variants: [(cipher: QUICCipher, version: QUICVersion)]
    private let secrets: [[UInt8]]
    /// Derived keys by side (0 the client's secret), variant and key generation.
    private var derived: [[[QUICPacketKeys]]]

    /// nil when the two secrets' length fits no QUIC cipher.
    public init?(clientRandom: [UInt8], client: [UInt8], server: [UInt8]) {
        guard client.count == server.count else { return nil }
        switch client.count {
        case 32: variants = [(.aes128GCM, .v1), (.chaCha20Poly1305, .v1), (.aes128GCM, .v2), (.chaCha20Poly1305, .v2)]
        case 48: variants = [(.aes256GCM, .v1), (.aes256GCM, .v2)]
        default: return nil
        }
        self.clientRandom = clientRandom
        secrets = [client, server]
        derived = [[[QUICPacketKeys]]](repeating: [[QUICPacketKeys]](repeating: [], count: variants.count), count: 2)
    }

    /// The keys `side`'s secret gives under `variant`, after `generation` key updates.
    public func keys(side: Direction, variant: Int, generation: Int) -> QUICPacketKeys {
        let s = side.rawValue
        if derived[s][variant].isEmpty {
            let (cipher, version) = variants[variant]
            derived[s][variant].append(QUICPacketKeys(secret: secrets[s], cipher: cipher, version: version))
        }
        while derived[s][variant].count <= generation {
            derived[s][variant].append(derived[s][variant][derived[s][variant].count - 1].updated())
        }
        return derived[s][variant][generation]
    }
}

/// How far a trial reaches (from `Limits`; docs/METERING.md §2d).
public struct QUICTrialBounds: Sendable {
    /// Full packet numbers tried: the truncated number in each of the first `packetNumberWindows`
    /// windows of its length (with a 1-byte number and 8 windows: 0-2047).
    public var packetNumberWindows: Int
    /// Key generations tried (0 the secret itself), those whose key phase bit the packet shows.
    public var keyGenerations: Int

    public init(packetNumberWindows: Int, keyGenerations: Int) {
        self.packetNumberWindows = max(1, packetNumberWindows)
        self.keyGenerations = max(1, keyGenerations)
    }
}

/// What opened a short-header packet: the entry, whose secret (the packet's sender), the variant,
/// the key generation, the destination connection ID's length and the full packet number.
public struct QUICTrialMatch {
    public let keys: QUICTrialKeys
    /// The sender: `up` when the client's secret opened the packet.
    public let sender: Direction
    public let variant: Int
    public let generation: Int
    public let destinationLength: Int
    public let packetNumber: UInt64

    public var cipher: QUICCipher { keys.variants[variant].cipher }
    public var version: QUICVersion { keys.variants[variant].version }
}

/// The trial of key log secrets on a short-header packet whose connection nothing announced:
/// for each candidate destination connection ID length (0-20), header protection is removed
/// with the secret's `hp` key (reserved bits must be 0), then the AEAD is opened with the
/// candidate full packet numbers. Only a verified tag counts. Each header-protection mask and
/// each AEAD open is one trial, taken from the caller's budget; the cheapest reach comes first
/// (the first packet-number window and the lowest key generation for every candidate, then
/// the next), so a budget cut leaves out the unlikely cases, not entries.
///
/// Which lengths are tried is the caller's (`lengths`, a bit per length): a length a second
/// datagram from the same sender confirms (the same bytes after the first: the ID repeats, the
/// protected packet number and payload do not) is worth every reach (`fullReach`); an
/// unconfirmed one only the cheap first pass, so that UDP that merely looks like QUIC costs little.
public enum QUICShortHeaderTrial {
    /// Form bit 0, fixed bit 1, and room for a packet number sample and a tag.
    public static func looksLikeShortHeader(_ datagram: UnsafeRawBufferPointer) -> Bool {
        datagram.count >= 1 + 4 + 16 && datagram[0] & 0xC0 == 0x40
    }

    /// Every destination connection ID length, 0-20, as a bit per length.
    public static let allLengths: UInt32 = (1 << 21) - 1

    /// The lengths 1-20 that `datagram` and `earlier` (from the same sender) agree on: the
    /// same bytes after the first byte.
    public static func confirmedLengths(_ datagram: UnsafeRawBufferPointer, _ earlier: UnsafeRawBufferPointer) -> UInt32 {
        var lengths: UInt32 = 0
        var length = 1
        while length <= QUICConnectionID.maxLength, length < datagram.count, length < earlier.count,
            datagram[length] == earlier[length]
        {
            lengths |= 1 << UInt32(length)
            length &+= 1
        }
        return lengths
    }

    /// Destination connection ID lengths, the ones implementations use most first.
    static let destinationLengths: [Int] = [8, 0, 20, 16, 4, 18, 12, 10, 5, 6, 7, 9, 11, 13, 14, 15, 17, 19, 1, 2, 3]

    /// The first match, or nil once every reach within `bounds` failed or `trials` ran out.
    /// `sides` are the secrets tried (the sender unknown: both); `variant` restricts the
    /// variants (the peer of a connection found: its own).
    public static func search(
        _ datagram: UnsafeRawBufferPointer, candidates: [QUICTrialKeys], sides: [Direction], variant only: Int? = nil,
        lengths tried: UInt32 = allLengths, fullReach: UInt32 = allLengths, bounds: QUICTrialBounds, trials: inout Int
    ) -> QUICTrialMatch? {
        guard looksLikeShortHeader(datagram), !candidates.isEmpty, !sides.isEmpty, trials > 0 else { return nil }
        let lengths = destinationLengths.filter { 1 &+ $0 &+ 4 &+ 16 <= datagram.count && (tried | fullReach) >> $0 & 1 != 0 }
        let variantCount = candidates.map(\.variants.count).max() ?? 0
        // Unmasked headers per (candidate, side, variant, length): 0 not yet, 1 rejected, else
        // 2 | first byte << 8 | truncated packet number << 16.
        var unmasked = [UInt64](repeating: 0, count: candidates.count &* sides.count &* variantCount &* lengths.count)
        let steps = (bounds.keyGenerations &+ 1) / 2
        // Where each trial's AEAD writes: kept from trial to trial (only whether it opens counts).
        var plaintext: [UInt8] = []
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1 + 20 + 4) { header -> QUICTrialMatch? in
            for window in 0..<bounds.packetNumberWindows {
                for step in 0..<steps {
                    for v in 0..<variantCount where only == nil || only == v {
                        for (ci, candidate) in candidates.enumerated() where v < candidate.variants.count {
                            for (si, side) in sides.enumerated() {
                                for (li, length) in lengths.enumerated()
                                where window == 0 && step == 0 || fullReach >> length & 1 != 0 {
                                    let index = ((ci &* sides.count &+ si) &* variantCount &+ v) &* lengths.count &+ li
                                    if unmasked[index] == 0 {
                                        guard trials > 0 else { return nil }
                                        trials &-= 1
                                        let keys = candidate.keys(side: side, variant: v, generation: 0)
                                        unmasked[index] = unmask(datagram, destinationLength: length, keys: keys)
                                    }
                                    let entry = unmasked[index]
                                    guard entry != 1 else { continue }
                                    let first = UInt8(truncatingIfNeeded: entry >> 8)
                                    let numberLength = Int(first & 3) &+ 1
                                    let truncated = entry >> 16
                                    let generation = step &* 2 &+ (first & 0x04 != 0 ? 1 : 0)
                                    guard generation < bounds.keyGenerations else { continue }
                                    let number = UInt64(window) << UInt64(8 &* numberLength) | truncated
                                    guard number < 1 << 62, trials > 0 else { continue }
                                    trials &-= 1
                                    // The header as sent before protection: the associated data.
                                    let numberOffset = 1 &+ length
                                    let headerEnd = numberOffset &+ numberLength
                                    for at in 0..<headerEnd { header[at] = datagram[at] }
                                    header[0] = first
                                    for at in 0..<numberLength {
                                        header[numberOffset &+ at] = UInt8(
                                            truncatingIfNeeded: truncated >> UInt64(8 &* (numberLength &- 1 &- at)))
                                    }
                                    let keys = candidate.keys(side: side, variant: v, generation: generation)
                                    let opened = keys.open(
                                        header: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(header)[0..<headerEnd]),
                                        packetNumber: number,
                                        sealed: UnsafeRawBufferPointer(rebasing: datagram[headerEnd...]), into: &plaintext)
                                    if opened != nil {
                                        return QUICTrialMatch(
                                            keys: candidate, sender: side, variant: v, generation: generation,
                                            destinationLength: length, packetNumber: number)
                                    }
                                }
                            }
                        }
                    }
                }
            }
            return nil
        }
    }

    /// Header protection removed with `keys` (not in place), for a destination ID of `length`.
    private static func unmask(_ datagram: UnsafeRawBufferPointer, destinationLength length: Int, keys: QUICPacketKeys)
        -> UInt64
    {
        let numberOffset = 1 &+ length
        let sampleStart = numberOffset &+ 4
        guard sampleStart &+ 16 <= datagram.count,
            let mask = keys.mask(sample: UnsafeRawBufferPointer(rebasing: datagram[sampleStart..<(sampleStart &+ 16)]))
        else { return 1 }
        let first = datagram[0] ^ (mask[0] & 0x1F)
        // The reserved bits are 0 in every packet sent (RFC 9000 §17.3.1).
        guard first & 0x18 == 0 else { return 1 }
        let numberLength = Int(first & 3) &+ 1
        var truncated: UInt64 = 0
        for at in 0..<numberLength {
            truncated = truncated << 8 | UInt64(datagram[numberOffset &+ at] ^ mask[1 &+ at])
        }
        return 2 | UInt64(first) << 8 | truncated << 16
    }
}
