import CaptureIO
import ContentCoding
import CostAccounting
import MessageModel
import TCPReassembly

/// Every bound of a run in one value: buffers, waits and decoding (no bound hides in a stage).
public struct Limits: Sendable {
    public var reassembly = ReassemblyLimits()
    /// The HTTP readers' bounds (HTTP/1.x heads and lines, HTTP/2 header blocks and control frames).
    public var http = HTTPLimits()
    public var decoding = DecodingLimits()
    /// IPv4 fragments held while their datagram is incomplete, over all datagrams.
    public var maxPendingFragmentBytes = 8 << 20
    /// Records of one input held in order while their bodies are measured; past this, the
    /// oldest is waited for.
    public var maxWaitingRecords = 4096
    /// The largest pcapng block (packet, header) held whole; a longer one is taken as damage.
    public var maxPcapngBlockBytes = CaptureReader.defaultMaxPcapngBlockBytes
    public var bodyWork = BodyWork()
    /// Packets of one connection direction waiting for the owner of their bytes
    /// (docs/METERING.md §2c); past this, the oldest is charged to the connection's overhead.
    public var maxPacketsAwaitingOwner = 2048
    /// Runs of stream bytes by owner remembered per direction, so that a late copy finds the
    /// message it repeats; older copies are charged to the connection's overhead.
    public var maxCostHistoryRuns = 256
    /// UDP flows (4-tuples) open at once; past this, the one idle longest is closed.
    public var maxUDPFlows = 65_536
    /// A UDP flow with no datagram for this long (capture time, ns) is closed.
    public var udpIdleTimeout: Int64 = 120_000_000_000
    /// QUIC: stream bytes held out of order per connection, over all its streams and CRYPTO.
    public var maxQUICBufferedBytes = 4 << 20

    public init() {}

    /// The cost ledgers' bounds.
    public var costs: CostLimits {
        CostLimits(maxPacketsAwaitingOwner: maxPacketsAwaitingOwner, maxCostHistoryRuns: maxCostHistoryRuns)
    }

    /// Bounds of the body workers (`BodyWorker`).
    public struct BodyWork: Sendable {
        /// A body longer than this is measured as it streams, on the parsing thread, instead
        /// of being collected for a worker.
        public var maxCollectedBody = 8 << 20
        /// Collected body bytes queued or being measured; the parser waits past this.
        public var maxQueuedBytes = 16 << 20
        /// Bodies queued; the parser waits past this (many tiny bodies weigh more than their bytes).
        public var maxQueuedBodies = 4096
        /// Estimated bytes of both memos (wire body → measurement, decoded content →
        /// `gzippedData` length), half each; the least recently used entries go first.
        public var maxMemoBytes = 16 << 20
        /// Decoded bytes a worker keeps to re-compress them without decoding again; a longer
        /// body is decoded twice when its content is new.
        public var maxRetainedDecodedBody = 4 << 20
        /// Worker threads; 0 means one per active core.
        public var workerThreads = 0

        public init() {}
    }
}
