/// Where a record's wire size came from (the `wire_source` column).
public enum WireSource: String, Sendable, CaseIterable {
    /// Counted in TCP sequence space from a capture.
    case capture
    /// A HAR's `headersSize + bodySize`.
    case har
    /// Chrome's `_transferSize`, when `headersSize` is unknown.
    case harTransferSize = "har-transfer-size"
    /// Recomputed from the listed fields, for exporters whose sizes are known to be wrong.
    case reconstructed
    /// Not known: the record is unmeasured.
    case unknown
}

/// A message's wire size as far as it is known; nil parts are unknown.
public struct WireSize: Sendable, Equatable {
    public var line: Int?
    public var headers: Int?
    public var body: Int?
    public var total: Int?
    public var source: WireSource

    public init(line: Int?, headers: Int?, body: Int?, total: Int?, source: WireSource) {
        self.line = line
        self.headers = headers
        self.body = body
        self.total = total
        self.source = source
    }

    /// A captured message's sizes, all counted.
    public init(captured message: HTTPMessage) {
        self.init(line: message.wireLine, headers: message.wireHeaders, body: message.wireBody,
                  total: message.wireTotal, source: .capture)
    }

    /// True when line, headers and body are each known, so errors split by component.
    public var hasComponents: Bool { line != nil && headers != nil && body != nil }
}

/// Where a message was seen, as `messages.csv` writes it.
public struct MessageOrigin: Sendable, Equatable {
    /// The connection's number in its file, or a HAR entry's `connection` text; empty when unknown.
    public var connection: String
    /// Nanoseconds since the epoch; nil when unknown.
    public var time: Int64?
    /// `ip:port`, IPv6 in brackets; empty when unknown.
    public var client: String
    public var server: String

    public init(connection: String, time: Int64?, client: String, server: String) {
        self.connection = connection
        self.time = time
        self.client = client
        self.server = server
    }

    public init(captured message: HTTPMessage) {
        self.init(connection: String(message.connection), time: message.time,
                  client: message.client.description, server: message.server.description)
    }
}
