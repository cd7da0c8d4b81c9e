/// A connection ID (RFC 9000 §5.1, at most 20 bytes), held inline so that looking one up never
/// allocates.
public struct QUICConnectionID: Hashable, Sendable, CustomStringConvertible {
    public static let maxLength = 20
    private var a: UInt64 = 0
    private var b: UInt64 = 0
    private var c: UInt32 = 0
    public private(set) var length: Int = 0

    /// nil when `bytes` is longer than 20.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.maxLength else { return nil }
        length = bytes.count
        for (index, byte) in bytes.enumerated() {
            switch index {
            case 0..<8: a |= UInt64(byte) << (8 * UInt64(index))
            case 8..<16: b |= UInt64(byte) << (8 * UInt64(index - 8))
            default: c |= UInt32(byte) << (8 * UInt32(index - 16))
            }
        }
    }

    public init?(_ bytes: [UInt8]) {
        guard let id = bytes.withUnsafeBytes({ QUICConnectionID($0) }) else { return nil }
        self = id
    }

    public var bytes: [UInt8] {
        (0..<length).map { index in
            switch index {
            case 0..<8: return UInt8(truncatingIfNeeded: a >> (8 * UInt64(index)))
            case 8..<16: return UInt8(truncatingIfNeeded: b >> (8 * UInt64(index - 8)))
            default: return UInt8(truncatingIfNeeded: c >> (8 * UInt32(index - 16)))
            }
        }
    }

    public var description: String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}

/// A bounds-checked reader of QUIC's fields: bytes, big-endian integers and variable-length
/// integers (RFC 9000 §16). Reads past the end return nil.
struct QUICReader {
    let bytes: UnsafeRawBufferPointer
    var at: Int
    let end: Int

    init(_ bytes: UnsafeRawBufferPointer, from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.at = start
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var remaining: Int { end &- at }

    mutating func u8() -> UInt8? {
        guard at < end else { return nil }
        defer { at &+= 1 }
        return bytes[at]
    }

    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        var value: UInt32 = 0
        for index in 0..<4 { value = value << 8 | UInt32(bytes[at &+ index]) }
        at &+= 4
        return value
    }

    mutating func varint() -> UInt64? {
        guard let first = u8() else { return nil }
        let extra = (1 << Int(first >> 6)) &- 1
        guard remaining >= extra else { return nil }
        var value = UInt64(first & 0x3F)
        for _ in 0..<extra {
            value = value << 8 | UInt64(bytes[at])
            at &+= 1
        }
        return value
    }

    /// A varint that is a length within what is left.
    mutating func length() -> Int? {
        guard let value = varint(), value <= UInt64(remaining) else { return nil }
        return Int(value)
    }

    mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remaining >= count else { return nil }
        defer { at &+= count }
        return UnsafeRawBufferPointer(rebasing: bytes[at..<(at &+ count)])
    }

    mutating func skip(_ count: Int) -> Bool { take(count) != nil }
}

/// A packet's header as read before header protection is removed (RFC 9000 §17): its type,
/// connection IDs, and where its packet number and its end are, in datagram offsets.
public struct QUICPacketHeader: Sendable {
    public var type: QUICPacketType
    /// nil for a short header.
    public var version: UInt32?
    public var destination: QUICConnectionID
    public var source: QUICConnectionID?
    /// Offset of the (protected) packet number.
    public var packetNumberOffset: Int
    /// Offset just past the packet (a long header's Length; a short header runs to the datagram's end).
    public var end: Int

    /// Reads the header of the packet at `start` of a datagram. `shortDestinationLength` is the
    /// length of the connection ID a short header's receiver chose (it is not on the wire).
    /// Returns nil when the bytes cannot be a QUIC packet.
    public static func read(
        _ datagram: UnsafeRawBufferPointer, at start: Int, shortDestinationLength: Int
    ) -> QUICPacketHeader? {
        var reader = QUICReader(datagram, from: start)
        guard let first = reader.u8() else { return nil }
        if first & 0x80 == 0 {
            // Short header: fixed bit set (RFC 9000 §17.3; no grease here).
            guard first & 0x40 != 0, let dcid = reader.take(shortDestinationLength),
                let destination = QUICConnectionID(dcid)
            else { return nil }
            return QUICPacketHeader(
                type: .oneRTT, version: nil, destination: destination, source: nil, packetNumberOffset: reader.at,
                end: datagram.count)
        }
        guard let version = reader.u32(), let dcidLength = reader.u8(), let dcid = reader.take(Int(dcidLength)),
            let destination = QUICConnectionID(dcid), let scidLength = reader.u8(),
            let scid = reader.take(Int(scidLength)), let source = QUICConnectionID(scid)
        else { return nil }
        if version == 0 {
            return QUICPacketHeader(
                type: .versionNegotiation, version: 0, destination: destination, source: source,
                packetNumberOffset: reader.at, end: datagram.count)
        }
        guard let known = QUICVersion(rawValue: version) else { return nil }
        let type = known.longPacketType(first >> 4)
        if type == .retry {
            return QUICPacketHeader(
                type: .retry, version: version, destination: destination, source: source, packetNumberOffset: reader.at,
                end: datagram.count)
        }
        if type == .initial {
            guard let tokenLength = reader.length(), reader.skip(tokenLength) else { return nil }
        }
        // The Length covers the packet number and the protected payload; at least 4 + 16 for a sample.
        guard let length = reader.length(), length >= 20 else { return nil }
        return QUICPacketHeader(
            type: type, version: version, destination: destination, source: source, packetNumberOffset: reader.at,
            end: reader.at &+ length)
    }

    /// Whether a datagram's first bytes look like a QUIC long header of version 1 or 2 (the probe
    /// of a new UDP flow: never by port).
    public static func beginsLongHeader(_ datagram: UnsafeRawBufferPointer) -> Bool {
        guard datagram.count >= 7, datagram[0] & 0xC0 == 0xC0 else { return false }
        let version = UInt32(datagram[1]) << 24 | UInt32(datagram[2]) << 16 | UInt32(datagram[3]) << 8 | UInt32(datagram[4])
        guard QUICVersion(rawValue: version) != nil else { return false }
        return read(datagram, at: 0, shortDestinationLength: 0) != nil
    }
}

/// Header protection and packet numbers (RFC 9001 §5.4, RFC 9000 §17.1, Appendix A.3).
public enum QUICHeaderProtection {
    /// Removes header protection in place from the packet at `start` (whose header is
    /// `header`) and returns the truncated packet number's length and value, and the first
    /// byte unmasked; nil when the packet is too short to sample.
    public static func remove(
        _ buffer: UnsafeMutableRawBufferPointer, at start: Int, header: QUICPacketHeader, keys: QUICPacketKeys
    ) -> (length: Int, truncated: UInt64, first: UInt8)? {
        let sampleStart = header.packetNumberOffset &+ 4
        guard sampleStart &+ 16 <= header.end, header.end <= buffer.count else { return nil }
        guard let mask = keys.mask(sample: UnsafeRawBufferPointer(rebasing: buffer[sampleStart..<(sampleStart &+ 16)]))
        else { return nil }
        let isLong = buffer[start] & 0x80 != 0
        buffer[start] ^= mask[0] & (isLong ? 0x0F : 0x1F)
        let first = buffer[start]
        let length = Int(first & 3) &+ 1
        var truncated: UInt64 = 0
        for index in 0..<length {
            buffer[header.packetNumberOffset &+ index] ^= mask[1 &+ index]
            truncated = truncated << 8 | UInt64(buffer[header.packetNumberOffset &+ index])
        }
        return (length, truncated, first)
    }

    /// The full packet number from its truncated form and the largest one received in its
    /// space so far (RFC 9000 Appendix A.3).
    public static func decode(truncated: UInt64, length: Int, largest: UInt64?) -> UInt64 {
        let expected = largest.map { $0 &+ 1 } ?? 0
        let window: UInt64 = 1 << UInt64(length * 8)
        let half = window / 2
        let mask = window &- 1
        let candidate = (expected & ~mask) | truncated
        if expected >= half, candidate <= expected &- half, candidate < (1 << 62) &- window {
            return candidate &+ window
        }
        if candidate > expected &+ half, candidate >= window {
            return candidate &- window
        }
        return candidate
    }
}
