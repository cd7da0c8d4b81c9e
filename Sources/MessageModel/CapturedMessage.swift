import PacketLayers

/// A message the parser framed in a TCP stream, with what the stream tells beside the message
/// itself: the bytes each part took (counted in sequence space, so lost bytes count too),
/// where it began, and the connection it was on. Reads as the message it wraps
/// (`captured.status`), so parser code and tests name the message's facts directly.
@dynamicMemberLookup
public struct CapturedMessage: Sendable, Equatable {
    public var message: HTTPMessage
    /// The connection's number in its file (order of first packet, from 0).
    public var connection: Int
    public var client: TransportEndpoint
    public var server: TransportEndpoint
    /// Capture time of the packet holding the first byte (ns since the epoch).
    public var time: Int64
    /// Offset of the first byte in the sender's stream.
    public var streamOffset: Int64
    /// Start line with its terminator.
    public var wireLine = 0
    /// Field lines with terminators and the empty line that ends the head.
    public var wireHeaders = 0
    /// The body as transmitted, framing included.
    public var wireBody = 0

    public init(
        _ message: HTTPMessage, connection: Int, client: TransportEndpoint, server: TransportEndpoint,
        time: Int64, streamOffset: Int64
    ) {
        self.message = message
        self.connection = connection
        self.client = client
        self.server = server
        self.time = time
        self.streamOffset = streamOffset
    }

    public var wireTotal: Int { wireLine + wireHeaders + wireBody }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<HTTPMessage, Value>) -> Value {
        get { message[keyPath: keyPath] }
        set { message[keyPath: keyPath] = newValue }
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<HTTPMessage, Value>) -> Value {
        message[keyPath: keyPath]
    }
}
