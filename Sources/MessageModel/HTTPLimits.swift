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
    /// Largest decoded header list the decompressor accepts in one block.
    public var maxHeaderListSize: Int

    public init(
        maxHeadBytes: Int = 64 << 10, maxLineBytes: Int = 16 << 10, maxHeaderBlockBytes: Int = 1 << 20,
        maxControlPayloadBytes: Int = 1 << 12, maxHeaderListSize: Int = 1 << 20
    ) {
        self.maxHeadBytes = maxHeadBytes
        self.maxLineBytes = maxLineBytes
        self.maxHeaderBlockBytes = maxHeaderBlockBytes
        self.maxControlPayloadBytes = maxControlPayloadBytes
        self.maxHeaderListSize = maxHeaderListSize
    }
}
