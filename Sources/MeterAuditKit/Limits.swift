import ContentCoding
import HTTP1
import TCPReassembly

/// Every bound of a run in one value: buffers, waits and decoding (DESIGN rule 7).
public struct Limits: Sendable {
    public var reassembly = ReassemblyLimits()
    public var http = HTTPLimits()
    public var decoding = DecodingLimits()
    /// IPv4 fragments held while their datagram is incomplete, over all datagrams.
    public var maxPendingFragmentBytes = 8 << 20
    /// Records of one input held in order while their bodies are measured; past this, the
    /// oldest is waited for.
    public var maxWaitingRecords = 4096

    public init() {}
}
