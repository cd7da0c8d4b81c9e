/// One frame as the capture file holds it.
///
/// `bytes` is borrowed from the reader: it is valid only until the next call to
/// `CaptureReader.next()`; copy what must be kept.
public struct CapturedFrame {
    /// 1-based position of the frame in its file (what Wireshark calls the frame number).
    public var number: Int
    /// Capture time, nanoseconds since the Unix epoch.
    public var timestamp: Int64
    /// The libpcap `DLT_`/`LINKTYPE_` value of the interface that captured the frame.
    public var linkType: Int32
    /// The capture interface (pcapng interface id; always 0 for pcap).
    public var interface: Int
    /// The frame's length on the wire, which exceeds `bytes.count` when snaplen truncated it.
    public var originalLength: Int
    /// The captured bytes (borrowed, see above).
    public var bytes: UnsafeRawBufferPointer
    /// How the reader had to adjust `timestamp`; empty for a timestamp read as written.
    public var timestampFlags: TimestampFlags

    public init(
        number: Int, timestamp: Int64, linkType: Int32, interface: Int,
        originalLength: Int, bytes: UnsafeRawBufferPointer, timestampFlags: TimestampFlags = []
    ) {
        self.number = number
        self.timestamp = timestamp
        self.linkType = linkType
        self.interface = interface
        self.originalLength = originalLength
        self.bytes = bytes
        self.timestampFlags = timestampFlags
    }
}

/// What a reader did to a frame's timestamp to keep it usable.
public struct TimestampFlags: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The file's time lay outside what `CapturedFrame.timestamp` holds (before 1970-01-01 or
    /// after 2262-04-11, the end of Int64 nanoseconds) and was clamped to the nearest end.
    public static let clamped = TimestampFlags(rawValue: 1)
    /// The interface's pcapng `if_tsresol` was unusable (10^-n with n > 19, 2^-n with n > 63),
    /// so the default resolution, microseconds, was assumed.
    public static let resolutionAssumed = TimestampFlags(rawValue: 2)
}

/// Capture time as Int64 nanoseconds since the epoch, from a wider exact value.
enum CaptureTime {
    /// The latest representable time, 2262-04-11T23:47:16.854775807Z.
    static let latest = Int128(Int64.max)

    /// `nanoseconds` clamped to 1970-01-01 ... 2262-04-11, and whether it had to be.
    @inline(__always)
    static func clamped(_ nanoseconds: Int128) -> (value: Int64, clamped: Bool) {
        if nanoseconds < 0 { return (0, true) }
        if nanoseconds > latest { return (.max, true) }
        return (Int64(nanoseconds), false)
    }
}

/// Link types the packet decoder understands (libpcap `LINKTYPE_` values as DLTs on Linux).
/// The one definition of these numbers: `@inlinable` so that the decoder's per-packet switch
/// in another module still compiles to constants.
public enum LinkType {
    /// BSD loopback, host-order family.
    @inlinable public static var null: Int32 { 0 }
    @inlinable public static var ethernet: Int32 { 1 }
    /// LINKTYPE_RAW (DLT_RAW is 12 or 14 on some systems, see `rawAlternatives`).
    @inlinable public static var raw: Int32 { 101 }
    @inlinable public static var rawAlternative12: Int32 { 12 }
    @inlinable public static var rawAlternative14: Int32 { 14 }
    @inlinable public static var rawAlternatives: [Int32] { [rawAlternative12, rawAlternative14] }
    /// OpenBSD loopback, network-order family.
    @inlinable public static var loop: Int32 { 108 }
    @inlinable public static var linuxSLL: Int32 { 113 }
    @inlinable public static var ipv4: Int32 { 228 }
    @inlinable public static var ipv6: Int32 { 229 }
    /// Linux netfilter NFLOG (`nflog:` captures): a 4-byte header, then TLVs, one of them the packet.
    @inlinable public static var nflog: Int32 { 239 }
    @inlinable public static var linuxSLL2: Int32 { 276 }
}
