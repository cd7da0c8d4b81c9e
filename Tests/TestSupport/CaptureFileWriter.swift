import CaptureIO
import Foundation

/// Writes small capture files for tests: classic pcap, pcapng, and gzip of either.
///
/// Typical use:
///
///     let frames = [CaptureFileWriter.Frame(timestamp: 1_700_000_000_123_456_000, bytes: packet)]
///     let path = try CaptureFileWriter.temporaryFile(named: "one.pcap",
///                                                    containing: CaptureFileWriter.pcap(frames))
///     let reader = try CaptureReader(path: path)
///
/// Timestamps are nanoseconds since the epoch (non-negative); they are written at the file's
/// resolution, so pick values that resolution can hold exactly (whole microseconds for a
/// microsecond pcap, etc.).
public enum CaptureFileWriter {
    /// One frame to write.
    public struct Frame {
        /// Nanoseconds since the epoch.
        public var timestamp: Int64
        /// pcapng interface id (ignored for pcap).
        public var interface: Int
        /// Length on the wire; at least `bytes.count` unless you want a broken file.
        public var originalLength: Int
        /// The captured bytes.
        public var bytes: [UInt8]

        /// `originalLength` defaults to `bytes.count` (nothing cut by snaplen).
        public init(timestamp: Int64, interface: Int = 0, originalLength: Int? = nil, bytes: [UInt8]) {
            self.timestamp = timestamp
            self.interface = interface
            self.originalLength = originalLength ?? bytes.count
            self.bytes = bytes
        }
    }

    /// A pcapng capture interface (Interface Description Block).
    public struct Interface {
        /// `LINKTYPE_` value (see `LinkType`).
        public var linkType: Int32
        /// Largest captured length; 0 means no limit.
        public var snaplen: UInt32
        /// Raw if_tsresol byte: n means 10^-n s, 0x80 | n means 2^-n s; nil writes no option
        /// (microseconds).
        public var timestampResolution: UInt8?
        /// if_tsoffset in seconds; 0 writes no option.
        public var timestampOffset: Int64

        public init(
            linkType: Int32 = LinkType.ethernet, snaplen: UInt32 = 262_144,
            timestampResolution: UInt8? = nil, timestampOffset: Int64 = 0
        ) {
            self.linkType = linkType
            self.snaplen = snaplen
            self.timestampResolution = timestampResolution
            self.timestampOffset = timestampOffset
        }
    }

    /// Which pcapng block carries the packets.
    public enum PacketBlock {
        /// Enhanced Packet Block (what every current tool writes).
        case enhanced
        /// Simple Packet Block: interface 0, no timestamp, captured length implied.
        case simple
        /// The obsolete Packet Block (type 2).
        case obsolete
    }

    /// A classic pcap file: 24-byte header, then a 16-byte header per record.
    public static func pcap(
        _ frames: [Frame], linkType: Int32 = LinkType.ethernet, snaplen: UInt32 = 262_144,
        bigEndian: Bool = false, nanosecond: Bool = false
    ) -> [UInt8] {
        var out = ByteWriter(bigEndian: bigEndian)
        out.u32(nanosecond ? 0xA1B2_3C4D : 0xA1B2_C3D4)
        out.u16(2)
        out.u16(4)
        out.u32(0) // thiszone
        out.u32(0) // sigfigs
        out.u32(snaplen)
        out.u32(UInt32(bitPattern: linkType))
        for frame in frames {
            let seconds = frame.timestamp / 1_000_000_000
            let fraction = frame.timestamp % 1_000_000_000
            out.u32(UInt32(truncatingIfNeeded: seconds))
            out.u32(UInt32(truncatingIfNeeded: nanosecond ? fraction : fraction / 1000))
            out.u32(UInt32(frame.bytes.count))
            out.u32(UInt32(truncatingIfNeeded: frame.originalLength))
            out.bytes += frame.bytes
        }
        return out.bytes
    }

    /// A one-section pcapng file with `interfaces` (ids 0, 1, …) and the frames in order.
    public static func pcapng(
        _ frames: [Frame], interfaces: [Interface] = [Interface()],
        bigEndian: Bool = false, packetBlock: PacketBlock = .enhanced
    ) -> [UInt8] {
        var builder = PcapngBuilder()
        builder.section(bigEndian: bigEndian)
        for interface in interfaces { builder.interface(interface) }
        for frame in frames {
            switch packetBlock {
            case .enhanced: builder.enhancedPacket(frame)
            case .simple: builder.simplePacket(originalLength: frame.originalLength, bytes: frame.bytes)
            case .obsolete: builder.obsoletePacket(frame)
            }
        }
        return builder.bytes
    }

    /// `bytes` as a gzip file made of stored (uncompressed) deflate blocks: valid for every gzip
    /// reader, and needs no zlib in the tests.
    public static func gzip(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        var start = 0
        repeat {
            let count = min(65_535, bytes.count - start)
            let isLast = start + count == bytes.count
            out.append(isLast ? 1 : 0)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += bytes[start..<(start + count)]
            start += count
        } while start < bytes.count
        var trailer = ByteWriter(bigEndian: false)
        trailer.u32(crc32(bytes))
        trailer.u32(UInt32(truncatingIfNeeded: bytes.count))
        return out + trailer.bytes
    }

    /// Writes `bytes` to `path`, replacing any file there.
    public static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Writes `bytes` to a new file `name` in a fresh temporary directory and returns its path
    /// (the directory is left for the system to clean).
    public static func temporaryFile(named name: String, containing bytes: [UInt8]) throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("meteraudit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try write(bytes, to: path)
        return path
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// CRC-32 as gzip uses it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}

/// Builds a pcapng file block by block, for tests that need several sections, unusual blocks
/// or hand-made damage (`bytes` is plain data: cut or patch it freely).
public struct PcapngBuilder {
    /// The file so far.
    public var bytes: [UInt8] = []
    private var bigEndian = false
    private var interfaces: [CaptureFileWriter.Interface] = []

    public init() {}

    /// Starts a section (a Section Header Block) in the given byte order; interface ids start
    /// over at 0.
    public mutating func section(bigEndian: Bool = false) {
        self.bigEndian = bigEndian
        interfaces = []
        var body = ByteWriter(bigEndian: bigEndian)
        body.u32(0x1A2B_3C4D)
        body.u16(1)
        body.u16(0)
        body.u64(UInt64.max) // section length unknown
        block(type: 0x0A0D_0D0A, body: body.bytes)
    }

    /// Adds an Interface Description Block; its id is the number of interfaces before it in
    /// this section.
    public mutating func interface(_ interface: CaptureFileWriter.Interface) {
        interfaces.append(interface)
        var body = ByteWriter(bigEndian: bigEndian)
        body.u16(UInt16(truncatingIfNeeded: interface.linkType))
        body.u16(0)
        body.u32(interface.snaplen)
        // An unrelated option first, so readers must walk the option list.
        body.option(2, Array("test\(interfaces.count - 1)".utf8)) // if_name
        if let resolution = interface.timestampResolution { body.option(9, [resolution]) }
        if interface.timestampOffset != 0 {
            var value = ByteWriter(bigEndian: bigEndian)
            value.u64(UInt64(bitPattern: interface.timestampOffset))
            body.option(14, value.bytes)
        }
        body.option(0, [])
        block(type: 1, body: body.bytes)
    }

    /// Adds an Enhanced Packet Block on `frame.interface`, which must have been added.
    public mutating func enhancedPacket(_ frame: CaptureFileWriter.Frame) {
        var body = ByteWriter(bigEndian: bigEndian)
        body.u32(UInt32(frame.interface))
        packetFields(frame, into: &body)
        body.option(1, Array("comment".utf8)) // opt_comment: options follow the data
        body.option(0, [])
        block(type: 6, body: body.bytes)
    }

    /// Adds an obsolete Packet Block (type 2) on `frame.interface`.
    public mutating func obsoletePacket(_ frame: CaptureFileWriter.Frame) {
        var body = ByteWriter(bigEndian: bigEndian)
        body.u16(UInt16(frame.interface))
        body.u16(0) // drops count
        packetFields(frame, into: &body)
        block(type: 2, body: body.bytes)
    }

    /// Adds a Simple Packet Block (interface 0, no timestamp).
    public mutating func simplePacket(originalLength: Int, bytes data: [UInt8]) {
        var body = ByteWriter(bigEndian: bigEndian)
        body.u32(UInt32(originalLength))
        body.bytes += data
        body.pad()
        block(type: 3, body: body.bytes)
    }

    /// Adds any block: header, `body` padded to 4 bytes, trailing length.
    public mutating func block(type: UInt32, body: [UInt8]) {
        var out = ByteWriter(bigEndian: bigEndian)
        let padded = (body.count + 3) & ~3
        out.u32(type)
        out.u32(UInt32(12 + padded))
        out.bytes += body
        out.pad()
        out.u32(UInt32(12 + padded))
        bytes += out.bytes
    }

    /// Timestamp, captured length, original length, padded data: shared by EPB and PB.
    private func packetFields(_ frame: CaptureFileWriter.Frame, into body: inout ByteWriter) {
        let units = ticks(frame.timestamp, on: interfaces[frame.interface])
        body.u32(UInt32(truncatingIfNeeded: units >> 32))
        body.u32(UInt32(truncatingIfNeeded: units))
        body.u32(UInt32(frame.bytes.count))
        body.u32(UInt32(truncatingIfNeeded: frame.originalLength))
        body.bytes += frame.bytes
        body.pad()
    }

    /// Nanoseconds since the epoch in the interface's units, after its offset.
    private func ticks(_ nanoseconds: Int64, on interface: CaptureFileWriter.Interface) -> UInt64 {
        let local = UInt64(nanoseconds - interface.timestampOffset * 1_000_000_000)
        let resolution = interface.timestampResolution ?? 6
        let exponent = UInt64(resolution & 0x7F)
        if resolution & 0x80 != 0 {
            let (seconds, fraction) = local.quotientAndRemainder(dividingBy: 1_000_000_000)
            return (seconds << exponent) + (fraction << exponent) / 1_000_000_000
        }
        var scale: UInt64 = 1
        for _ in 0..<(exponent > 9 ? exponent - 9 : 9 - exponent) { scale *= 10 }
        return exponent > 9 ? local &* scale : local / scale
    }
}

/// Appends integers in a chosen byte order.
struct ByteWriter {
    var bytes: [UInt8] = []
    let bigEndian: Bool

    init(bigEndian: Bool) { self.bigEndian = bigEndian }

    mutating func u16(_ value: UInt16) { append(UInt64(value), size: 2) }
    mutating func u32(_ value: UInt32) { append(UInt64(value), size: 4) }
    mutating func u64(_ value: UInt64) { append(value, size: 8) }

    /// A pcapng option: code, length, value padded to 4 bytes.
    mutating func option(_ code: UInt16, _ value: [UInt8]) {
        u16(code)
        u16(UInt16(value.count))
        bytes += value
        pad()
    }

    mutating func pad() {
        while bytes.count % 4 != 0 { bytes.append(0) }
    }

    private mutating func append(_ value: UInt64, size: Int) {
        for index in 0..<size {
            let shift = bigEndian ? (size - 1 - index) * 8 : index * 8
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
