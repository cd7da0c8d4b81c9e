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

    public init(number: Int, timestamp: Int64, linkType: Int32, interface: Int,
                originalLength: Int, bytes: UnsafeRawBufferPointer) {
        self.number = number
        self.timestamp = timestamp
        self.linkType = linkType
        self.interface = interface
        self.originalLength = originalLength
        self.bytes = bytes
    }
}

/// Link types the packet decoder understands (libpcap `LINKTYPE_` values as DLTs on Linux).
public enum LinkType {
    public static let null: Int32 = 0            // BSD loopback, host-order family
    public static let ethernet: Int32 = 1
    public static let raw: Int32 = 101           // LINKTYPE_RAW (DLT_RAW is 12 or 14 on some systems)
    public static let rawAlternatives: [Int32] = [12, 14]
    public static let loop: Int32 = 108          // OpenBSD loopback, network-order family
    public static let linuxSLL: Int32 = 113
    public static let ipv4: Int32 = 228
    public static let ipv6: Int32 = 229
    public static let linuxSLL2: Int32 = 276
}
