/// Bounds on what the HTTP readers keep (`Limits.http`): the HTTP/1.x parser reads the head and
/// line bounds, the HTTP/2 reader the header-block, control-frame and header-list bounds. Here,
/// beside the messages they bound, so that the run's `Limits` names no protocol module.
public struct HTTPLimits: Sendable {
    /// A head (start line and fields) longer than this is cut off and the stream resynchronized.
    public var maxHeadBytes: Int
    /// Longest single line (chunk-size or trailer line, or a line scanned for a start line).
    public var maxLineBytes: Int
    /// A compressed header block (HEADERS or PUSH_PROMISE and its CONTINUATIONs) longer than
    /// this is not decoded; its fields, and every later block of that direction, are unknown.
    public var maxHeaderBlockBytes: Int
    /// Bytes kept of a control frame's payload (SETTINGS, GOAWAY...); the rest is counted only.
    public var maxControlPayloadBytes: Int
    /// Largest decoded header list the decompressor accepts in one block: a block decoding to
    /// more is an HPACK error (its fields unknown), as SETTINGS_MAX_HEADER_LIST_SIZE makes it for a peer.
    public var maxHeaderListSize: Int
    /// Decoded header bytes (Σ len(name) + len(value) + 32) a message keeps of one block: past
    /// it the block's values are dropped, its sizes still counted (`header-values-dropped`).
    public var maxKeptHeaderBytesPerBlock: Int
    /// Decoded header bytes a connection's open and held messages keep in all: a block that
    /// would pass it has its values dropped the same way.
    public var maxKeptHeaderBytesPerConnection: Int
    /// The largest dynamic table assumed for compression state the capture never saw:
    /// placeholders fill a table of the largest size announced (4,096 when none), up to this.
    public var maxPrimedTableSize: Int

    public init(
        maxHeadBytes: Int = 64 << 10, maxLineBytes: Int = 16 << 10, maxHeaderBlockBytes: Int = 1 << 20,
        maxControlPayloadBytes: Int = 1 << 12, maxHeaderListSize: Int = 1 << 20,
        maxKeptHeaderBytesPerBlock: Int = 64 << 10, maxKeptHeaderBytesPerConnection: Int = 256 << 10,
        maxPrimedTableSize: Int = 64 << 10
    ) {
        self.maxHeadBytes = maxHeadBytes
        self.maxLineBytes = maxLineBytes
        self.maxHeaderBlockBytes = maxHeaderBlockBytes
        self.maxControlPayloadBytes = maxControlPayloadBytes
        self.maxHeaderListSize = maxHeaderListSize
        self.maxKeptHeaderBytesPerBlock = maxKeptHeaderBytesPerBlock
        self.maxKeptHeaderBytesPerConnection = maxKeptHeaderBytesPerConnection
        self.maxPrimedTableSize = maxPrimedTableSize
    }
}
