import CaptureIO
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
    /// The largest pcapng block (packet, header) held whole; a longer one is taken as damage.
    public var maxPcapngBlockBytes = CaptureReader.defaultMaxPcapngBlockBytes

    public init() {}
}
