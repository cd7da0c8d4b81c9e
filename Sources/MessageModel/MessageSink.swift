import Flows
import PacketLayers

/// Receives body bytes of one message, after transfer decoding (de-chunked).
public protocol BodyObserver: AnyObject {
    /// Body bytes, borrowed for the call.
    func bodyBytes(_ bytes: UnsafeRawBufferPointer)
    /// `length` body bytes are missing from the capture.
    func bodyGap(_ length: Int)
}

/// Where a protocol's reader sends what it finds: messages, body bytes, who owns which bytes.
public protocol MessageSink: AnyObject {
    associatedtype Observer: BodyObserver
    /// A message head was parsed and its body follows; return who should see the body bytes.
    func bodyObserver(for message: HTTPMessage) -> Observer?
    /// A finished record, with the observer that saw its body. Requests come once their
    /// pairing is settled, so `pair` is final.
    func record(_ message: CapturedMessage, body: Observer?)
    /// The connection is over: what it carried besides messages.
    func connectionClosed(_ summary: HTTPConnectionSummary)
    /// A proxy accepted `CONNECT authority`: who reads the tunnel's bytes as a connection of
    /// its own (offsets from the tunnel's first byte; `firstIndexes`: the messages each side
    /// of `connection` already sent on this TCP connection, so indexes go on), or nil to only
    /// count them.
    func tunnelHandler(authority: String, connection: ConnectionInfo, firstIndexes: [Int]) -> ByteStreamHandler?
    /// A `101` switched the connection to HTTP/2 after `Upgrade: h2c`: who reads the frames
    /// that follow (offsets from the first byte after the 101 and after the request), the
    /// upgraded request being stream 1's; nil to only count them.
    func h2cUpgradeHandler(request: RequestSummary, connection: ConnectionInfo, firstIndexes: [Int])
        -> ByteStreamHandler?
    /// Bytes `range` of `side`'s stream belong to `owner` (docs/METERING.md §2c). Claims of a
    /// side come in stream order; a claim may reach past what was read (a frame's length).
    func claim(_ range: Range<Int64>, of side: Direction, by owner: StreamOwner)
    /// Every byte of `side` before `offset` is placed: what no claim took belongs to no message.
    func settle(_ side: Direction, upTo offset: Int64)
    /// The tunnel's bytes of `side` begin at `offset` of its stream (the tunnel's offset 0).
    func tunnelBegins(on side: Direction, at offset: Int64)
    /// True when the reader of the tunnel (an h2c Upgrade's HTTP/2) places its bytes itself,
    /// so this connection leaves them unsettled.
    var tunnelPlacesItsBytes: Bool { get }
}

/// Who a run of stream bytes belongs to (docs/METERING.md §2c).
public enum StreamOwner: Equatable, Sendable {
    /// The message whose first byte is at this offset of the same side's stream (for a server
    /// push, the promised request, whose bytes the server sends).
    case message(startingAt: Int64)
    /// Bytes a protocol spends on itself, of the kind named (HTTP/2's preface and control
    /// frames: `.h2Control`); no message owns them.
    case overhead(OverheadID)
    /// Bytes no message claims: between messages, skipped, tunnels not read.
    case unclaimed
}

extension MessageSink {
    public func tunnelHandler(authority: String, connection: ConnectionInfo, firstIndexes: [Int]) -> ByteStreamHandler? {
        nil
    }

    public func h2cUpgradeHandler(request: RequestSummary, connection: ConnectionInfo, firstIndexes: [Int])
        -> ByteStreamHandler?
    { nil }

    public func claim(_ range: Range<Int64>, of side: Direction, by owner: StreamOwner) {}
    public func settle(_ side: Direction, upTo offset: Int64) {}
    public func tunnelBegins(on side: Direction, at offset: Int64) {}
    public var tunnelPlacesItsBytes: Bool { false }
}

/// What the connection carried, by protocol.
public enum ConnectionProtocol: String, Sendable {
    /// At least one HTTP/1.x message.
    case http
    /// A TLS session (not decrypted).
    case tls
    /// Neither: no message start was found.
    case other
}

/// A connection's summary for the diagnostics.
public struct HTTPConnectionSummary: Sendable {
    public var accounting: ConnectionAccounting
    public var protocolKind: ConnectionProtocol
    /// The TLS server name from the ClientHello, when it was visible.
    public var serverName: String?
    public var clientTally: StreamTally
    public var serverTally: StreamTally
    /// The endpoint that sent the requests (or was taken for the client); nil when unknown.
    public var clientEndpoint: TransportEndpoint?

    public init(
        accounting: ConnectionAccounting, protocolKind: ConnectionProtocol, serverName: String?,
        clientTally: StreamTally, serverTally: StreamTally, clientEndpoint: TransportEndpoint? = nil
    ) {
        self.accounting = accounting
        self.protocolKind = protocolKind
        self.serverName = serverName
        self.clientTally = clientTally
        self.serverTally = serverTally
        self.clientEndpoint = clientEndpoint
    }
}

/// A kind of overhead a protocol claims for the bytes it spends on itself; the cost ledger
/// maps it to its column. One byte, so a claim stays a plain value. Each protocol declares its
/// own kinds (HTTP2: `h2Control`).
public struct OverheadID: Hashable, Sendable {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
}

/// Where the bytes of one side's stream went that belong to no message.
public struct StreamTally: Sendable, Equatable {
    /// Bytes skipped while looking for a message start (mid-connection, after a gap, garbage).
    public var skippedBytes = 0
    /// Bytes lost in gaps while no message was being read, or that a gap took with the framing
    /// of the message being read (head, chunk framing): it is unknown how many were the message's.
    public var lostBytes = 0
    /// Bytes after CONNECT or 101 Switching Protocols.
    public var tunnelBytes = 0
    /// Bytes of a TLS session (not decrypted), gaps included.
    public var tlsBytes = 0

    public init() {}
}
