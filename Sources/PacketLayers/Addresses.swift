/// An IPv4 or IPv6 address held in two words, so that flow keys never allocate.
/// IPv4 addresses live in the low 32 bits of `low`, with `high == 0`.
public struct IPAddress: Hashable, Sendable, Comparable {
    public var high: UInt64
    public var low: UInt64
    public var isIPv6: Bool

    public init(high: UInt64, low: UInt64, isIPv6: Bool) {
        self.high = high
        self.low = low
        self.isIPv6 = isIPv6
    }

    public static func < (a: IPAddress, b: IPAddress) -> Bool {
        (a.isIPv6 ? 1 : 0, a.high, a.low) < (b.isIPv6 ? 1 : 0, b.high, b.low)
    }
}

/// An address and a TCP port.
public struct TransportEndpoint: Hashable, Sendable, Comparable {
    public var address: IPAddress
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    public static func < (a: TransportEndpoint, b: TransportEndpoint) -> Bool {
        (a.address, a.port) < (b.address, b.port)
    }
}

extension IPAddress {
    /// An IPv4 address from its 32-bit value (`0x0A000001` is 10.0.0.1).
    @inline(__always)
    public init(ipv4 value: UInt32) {
        self.init(high: 0, low: UInt64(value), isIPv6: false)
    }

    /// An IPv6 address from its 16 bytes in network order; nil unless there are exactly 16.
    public init?<Bytes: Collection>(ipv6Bytes bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low, isIPv6: true)
    }

    /// The IPv4 value, or nil for an IPv6 address.
    public var ipv4Value: UInt32? {
        isIPv6 ? nil : UInt32(truncatingIfNeeded: low)
    }

    /// The address bytes in network order: 4 for IPv4, 16 for IPv6.
    public var bytes: [UInt8] {
        if !isIPv6 {
            let value = UInt32(truncatingIfNeeded: low)
            return (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
        }
        return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }
}
