/// HTTP/2 frame types (RFC 9113 §6); any other type is unknown and skipped (§4.1).
public enum FrameType: UInt8, Sendable, CaseIterable {
    case data = 0x0
    case headers = 0x1
    case priority = 0x2
    case rstStream = 0x3
    case settings = 0x4
    case pushPromise = 0x5
    case ping = 0x6
    case goaway = 0x7
    case windowUpdate = 0x8
    case continuation = 0x9

    /// The name used in outputs (connections.csv, diagnostics.json).
    public var name: String {
        switch self {
        case .data: return "DATA"
        case .headers: return "HEADERS"
        case .priority: return "PRIORITY"
        case .rstStream: return "RST_STREAM"
        case .settings: return "SETTINGS"
        case .pushPromise: return "PUSH_PROMISE"
        case .ping: return "PING"
        case .goaway: return "GOAWAY"
        case .windowUpdate: return "WINDOW_UPDATE"
        case .continuation: return "CONTINUATION"
        }
    }
}

/// Frame flags (RFC 9113 §6).
public enum FrameFlags {
    public static let endStream: UInt8 = 0x1
    public static let ack: UInt8 = 0x1
    public static let endHeaders: UInt8 = 0x4
    public static let padded: UInt8 = 0x8
    public static let priority: UInt8 = 0x20
}

/// The 9-byte frame header (RFC 9113 §4.1).
public struct FrameHeader: Sendable, Equatable {
    public static let size = 9
    /// Payload length (24 bits).
    public var length: Int
    public var type: UInt8
    public var flags: UInt8
    /// Stream identifier, the reserved bit cleared.
    public var streamID: UInt32

    public init(length: Int, type: UInt8, flags: UInt8, streamID: UInt32) {
        self.length = length
        self.type = type
        self.flags = flags
        self.streamID = streamID
    }

    /// Reads a header from the first 9 bytes of `bytes` (which must hold them).
    public init<Bytes: Collection>(parsing bytes: Bytes) where Bytes.Element == UInt8 {
        var i = bytes.startIndex
        func next() -> UInt8 {
            defer { i = bytes.index(after: i) }
            return bytes[i]
        }
        length = Int(next()) << 16 | Int(next()) << 8 | Int(next())
        type = next()
        flags = next()
        let id = UInt32(next()) << 24 | UInt32(next()) << 16 | UInt32(next()) << 8 | UInt32(next())
        streamID = id & 0x7fff_ffff
    }

    public var knownType: FrameType? { FrameType(rawValue: type) }

    public func has(_ flag: UInt8) -> Bool { flags & flag != 0 }

    /// The frame's size on the wire, header included.
    public var wireSize: Int { Self.size + length }
}
