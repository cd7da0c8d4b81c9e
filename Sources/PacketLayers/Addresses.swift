// INTERFACE — implementation may be completed by the PacketLayers work.

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
