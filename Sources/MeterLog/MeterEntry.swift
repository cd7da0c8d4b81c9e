/// Which message of an exchange an entry (or a wire record) describes.
public enum MeterDirection: UInt8, Sendable, Hashable, CustomStringConvertible {
    case request = 0
    case response = 1

    public var description: String { self == .request ? "request" : "response" }
}

/// One message as an app's meter logged it. A compact value (60 bytes, stride 64): its strings
/// (method, URL, id, meter name) live once in the `MeterLog`'s tables and are named here by
/// index; absent numbers are sentinels behind optional accessors.
public struct MeterEntry: Sendable, Equatable {
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Half of a line that described a whole exchange (`request_bytes` / `response_bytes`).
        public static let fromExchange = Flags(rawValue: 1)
        /// `line`, `headers` and `body` were all given and do not sum to `bytes` (reported; kept).
        public static let componentsDoNotSum = Flags(rawValue: 2)
    }

    /// When the meter recorded the message, in nanoseconds since 1970 on the meter's clock.
    public var time: Int64
    /// The meter's total for the message.
    public var bytes: Int64
    var storedLine: Int64
    var storedHeaders: Int64
    var storedBody: Int64
    /// The line of the log the entry was read from (1-based; saturates at UInt32.max).
    public var logLine: UInt32
    var urlIndex: UInt32
    var idIndex: UInt32
    var methodIndex: UInt16
    var meterIndex: UInt16
    var storedStatus: UInt16
    public var direction: MeterDirection
    public var flags: Flags

    static let absent: Int64 = -1
    static let noID = UInt32.max

    /// The components when logged.
    public var lineBytes: Int64? { storedLine < 0 ? nil : storedLine }
    public var headersBytes: Int64? { storedHeaders < 0 ? nil : storedHeaders }
    public var bodyBytes: Int64? { storedBody < 0 ? nil : storedBody }
    /// The response's status when logged (100...999); nil on requests and when absent.
    public var status: Int? { storedStatus == 0 ? nil : Int(storedStatus) }
    public var hasID: Bool { idIndex != Self.noID }
}
