/// Bounds on the assembler's memory and on how long it waits. Going over a bound turns the
/// missing bytes into a reported gap; it never stops the run.
public struct ReassemblyLimits: Sendable {
    /// Out-of-order bytes buffered for one side of one connection.
    public var maxBufferedBytesPerSide: Int
    /// Out-of-order bytes buffered over all connections.
    public var maxBufferedBytesTotal: Int
    /// A connection with no packet for this long (capture time) is flushed and closed.
    public var idleTimeout: Int64
    /// A connection whose sides have both ended is kept this long for its last ACKs.
    public var closedLinger: Int64

    public init(
        maxBufferedBytesPerSide: Int = 4 << 20, maxBufferedBytesTotal: Int = 256 << 20,
        idleTimeoutSeconds: Int64 = 300, closedLingerSeconds: Int64 = 5
    ) {
        self.maxBufferedBytesPerSide = maxBufferedBytesPerSide
        self.maxBufferedBytesTotal = maxBufferedBytesTotal
        self.idleTimeout = idleTimeoutSeconds * 1_000_000_000
        self.closedLinger = closedLingerSeconds * 1_000_000_000
    }
}
