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
    /// QUIC joined after its handshake (docs/METERING.md §2d, "QUIC detection"): the trial of
    /// the key log's 1-RTT secrets on a flow whose first datagram looks like a short header.
    public var midConnectionQUIC = MidConnectionQUIC()

    public init() {}

    /// Bounds of the trial that finds a QUIC connection begun before the capture. A trial is one
    /// header-protection mask or one AEAD open; everything else is bounded by these.
    public struct MidConnectionQUIC: Sendable {
        /// Key log entries tried per flow: the newest entries with both 1-RTT secrets that no
        /// QUIC handshake or earlier trial of the input claimed.
        public var maxKeyLogEntries = 64
        /// Datagrams of a flow tried before it is left to other UDP (they are held, copied,
        /// until the trial ends, so that a connection found gets them all).
        public var maxDatagramsTried = 4
        /// Trials per flow, over its datagrams.
        public var maxTrialsPerFlow = 16_384
        /// Trials per input, over its flows: past this, no new flow is tried.
        public var maxTrialsPerInput = 262_144
        /// Full packet numbers tried: the truncated number in each of its first windows
        /// (a 1-byte number and 8 windows: 0-2047; a 2-byte one: 0-524,287).
        public var packetNumberWindows = 8
        /// Key generations tried (0 is the logged secret; then `quic ku` updates), each packet
        /// trying those of its key phase bit.
        public var keyGenerations = 4
        /// Once one direction is found: trials and datagrams to find the other one.
        public var maxPeerTrials = 4096
        public var maxPeerDatagramsTried = 8

        public init() {}
    }

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
