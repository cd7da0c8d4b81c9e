import PacketLayers

/// Where a record came from: a connection of a capture, or an entry of a HAR file. Each kind
/// keeps what it knows and nothing made up (a HAR has no client address, a capture no entry).
public enum RecordSource: Sendable, Equatable {
    case capture(CaptureFlow)
    case har(HAREntrySource)
    case charles(CharlesTransactionSource)

    /// The connection as `messages.csv` writes it: its number in the file, or the HAR's
    /// `connection` text; empty when unknown.
    public var connectionLabel: String {
        switch self {
        case let .capture(flow): return String(flow.connection)
        case let .har(entry): return entry.connection ?? ""
        case .charles: return ""
        }
    }

    /// When the message started (ns since the epoch); nil when unknown.
    public var time: Int64? {
        switch self {
        case let .capture(flow): return flow.time
        case let .har(entry): return entry.time
        case let .charles(transaction): return transaction.time
        }
    }

    /// `ip:port`, IPv6 in brackets; empty when unknown.
    public var client: String {
        switch self {
        case let .capture(flow): return flow.client.description
        case .har: return ""
        case let .charles(transaction): return transaction.client
        }
    }

    /// `ip:port`, IPv6 in brackets; empty when unknown.
    public var server: String {
        switch self {
        case let .capture(flow): return flow.server.description
        case let .har(entry): return entry.server
        case let .charles(transaction): return transaction.server
        }
    }

    /// `tcp` or `tls` for a capture; nil for a HAR, which does not tell.
    public var transport: Transport? {
        switch self {
        case let .capture(flow): return flow.transport
        case .har: return nil
        case let .charles(transaction): return transaction.transport
        }
    }

    /// The host of the proxy `CONNECT` whose tunnel carried the message; nil otherwise.
    public var tunnelHost: String? {
        if case let .capture(flow) = self { return flow.tunnelHost }
        return nil
    }

    public var isHAR: Bool {
        if case .har = self { return true }
        return false
    }

    /// A HAR entry or a Charles transaction: a recorded message, not one read from packets.
    public var isRecorded: Bool {
        if case .capture = self { return false }
        return true
    }
}

/// What carried a captured message's bytes (the `transport` column).
public enum Transport: String, Sendable {
    /// Cleartext TCP.
    case tcp
    /// TLS records over TCP, decrypted.
    case tls
    /// QUIC packets over UDP, decrypted (docs/METERING.md §2d).
    case quic
}

/// A message's place in a capture.
public struct CaptureFlow: Sendable, Equatable {
    /// The connection's number in its file (order of first packet, from 0).
    public var connection: Int
    public var client: TransportEndpoint
    public var server: TransportEndpoint
    /// Capture time of the packet holding the message's first byte (ns since the epoch).
    public var time: Int64
    public var transport: Transport
    /// The host a proxy was asked to `CONNECT` to, when the message travelled in that tunnel.
    public var tunnelHost: String?

    public init(
        connection: Int, client: TransportEndpoint, server: TransportEndpoint, time: Int64,
        transport: Transport = .tcp, tunnelHost: String? = nil
    ) {
        self.connection = connection
        self.client = client
        self.server = server
        self.time = time
        self.transport = transport
        self.tunnelHost = tunnelHost
    }
}

/// A message's HAR entry, and how its exporter's sizes were read.
public struct HAREntrySource: Sendable, Equatable {
    /// The entry's 0-based index in `log.entries`.
    public var entry: Int
    public var rule: ExporterRule
    /// The entry's `connection` text, when the exporter wrote one.
    public var connection: String?
    /// `startedDateTime` (ns since the epoch), when it parses.
    public var time: Int64?
    /// `serverIPAddress` with the URL's port (`ip:port`, IPv6 in brackets); empty when unknown.
    public var server: String

    public init(entry: Int, rule: ExporterRule, connection: String?, time: Int64?, server: String) {
        self.entry = entry
        self.rule = rule
        self.connection = connection
        self.time = time
        self.server = server
    }
}

/// How an exporter's sizes are read (docs/HAR.md, "Per exporter").
public enum ExporterRule: Sendable, Equatable {
    /// `headersSize + bodySize`, else Chrome's `_transferSize`.
    case reportedSizes
    /// The exporter's `headersSize` is known to be wrong (mitmproxy: the length of a Python
    /// repr): the head is serialized from the listed fields as HTTP/1.1.
    case reconstructedHead
}

/// A message's Charles transaction (docs/CHARLES.md).
public struct CharlesTransactionSource: Sendable, Equatable {
    /// The transaction's 0-based position in the session.
    public var transaction: Int
    /// `times.start` for the request, `times.responseBegin` (else `start`) for the response (ns since the epoch).
    public var time: Int64?
    /// `clientAddress:clientPort`, IPv6 in brackets; empty when unknown.
    public var client: String
    /// The server's address (`remoteAddress`) and `actualPort`; empty when unknown.
    public var server: String
    /// `tls` for an `https` transaction Charles decrypted, `tcp` for `http`.
    public var transport: Transport?

    public init(transaction: Int, time: Int64?, client: String, server: String, transport: Transport?) {
        self.transaction = transaction
        self.time = time
        self.client = client
        self.server = server
        self.transport = transport
    }
}
