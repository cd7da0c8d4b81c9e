import DequeModule
import Flows

/// The one rule for a record layer between a reader and its carrier (TLS, for HTTP/1.x and
/// HTTP/2 alike; docs/METERING.md §2b-§2c). The reader claims plaintext (its offsets, its
/// directions: `up` is the TLS client); a record waits until its plaintext is placed, then its
/// carrier bytes are claimed: its overhead (header, padding, tag) with its first plaintext
/// byte, each next owner's plaintext after. A message's slot counts the record bytes it owns,
/// its record's `wire_tls`.
///
/// Without a carrier (a tunnel whose outer ledger could not be linked) the same rule runs: the
/// slots count their record bytes, and no packet ever reaches them.
public final class TLSCostLayer: MessageClaims {
    /// A record on its way to the carrier's ledger.
    public struct Record {
        public enum Kind {
            /// Application data read: its plaintext goes to the reader.
            case application
            /// Handshake, alert, change_cipher_spec: the protocol's own (the control kind).
            case control
            /// Application data not read (no key): nobody's.
            case opaque
        }

        public var carrierStart: Int64
        public var wireLength: Int
        public var plaintextOffset: Int64
        public var plaintextLength: Int
        public var kind: Kind

        public init(carrierStart: Int64, wireLength: Int, plaintextOffset: Int64, plaintextLength: Int, kind: Kind) {
            self.carrierStart = carrierStart
            self.wireLength = wireLength
            self.plaintextOffset = plaintextOffset
            self.plaintextLength = plaintextLength
            self.kind = kind
        }
    }

    private let costs: ConnectionCostLedger
    /// The carrier side that is the TLS client (direction `up`).
    private let clientSide: Direction
    /// The kind the layer's own records are (TLS: `tls_control`).
    private let control: OverheadKind
    private let carried: Bool
    /// Per TLS direction: the plaintext by owner, the slots of its messages, and the records
    /// waiting for their plaintext's owners.
    private var plaintextClaims: [ClaimMap]
    private var plaintextSlots: [[Int64: LayerSlot]] = [[:], [:]]
    private var records: [Deque<Record>] = [[], []]

    /// `carried` false: no packet carries the connection (its ledger gets no packets).
    public init(
        costs: ConnectionCostLedger, clientSide: Direction, control: OverheadKind, limits: CostLimits,
        carried: Bool = true
    ) {
        self.costs = costs
        self.clientSide = clientSide
        self.control = control
        self.carried = carried
        let history = ClaimMap(maxRuns: limits.maxCostHistoryRuns)
        plaintextClaims = [history, history]
    }

    private func carrierSide(_ direction: Int) -> Direction { direction == 0 ? clientSide : clientSide.peer }

    /// A record of `direction`, in stream order; its carrier bytes are claimed by `drain`.
    public func add(_ record: Record, from direction: Direction) {
        costs[carrierSide(direction.rawValue)].addTLSTotal(record.wireLength)
        records[direction.rawValue].append(record)
    }

    // TLS carries one byte stream per direction: its reader claims stream 0 alone (HTTP/2's
    // frames included), so `stream` is not a key here.
    public func claim(_ range: Range<Int64>, of side: Direction, stream: UInt64, by owner: StreamOwner) {
        assert(stream == 0, "a TLS session is one byte stream per direction")
        let d = side.rawValue
        let costOwner = costOwner(owner, d)
        if case let .message(slot) = costOwner { slot.upperClaimed(to: range.upperBound) }
        plaintextClaims[d].claim(range.lowerBound, range.upperBound, costOwner)
        drain(side)
    }

    public func settle(_ side: Direction, stream: UInt64, upTo offset: Int64) {
        assert(stream == 0, "a TLS session is one byte stream per direction")
        plaintextClaims[side.rawValue].settle(upTo: offset)
        drain(side)
    }

    public func takeSlot(of side: Direction, stream: UInt64, startingAt offset: Int64) -> LayerSlot? {
        guard stream == 0 else { return nil }
        return plaintextSlots[side.rawValue].removeValue(forKey: offset)
    }

    private func costOwner(_ owner: StreamOwner, _ d: Int) -> CostOwner {
        switch owner {
        case let .message(start):
            if let slot = plaintextSlots[d][start] { return .message(slot) }
            let slot =
                carried ? LayerSlot(ledger: costs[carrierSide(d)].counting) : LayerSlot(withoutCarrier: ())
            plaintextSlots[d][start] = slot
            return .message(slot)
        case let .overhead(kind): return .overhead(kind)
        case .unclaimed: return .unclaimed
        }
    }

    /// Claims the carrier bytes of the records whose plaintext is placed, in stream order.
    public func drain(_ direction: Direction) {
        let d = direction.rawValue
        let ledger = costs[carrierSide(d)]
        while let record = records[d].first {
            let whole = record.carrierStart..<(record.carrierStart &+ Int64(record.wireLength))
            switch record.kind {
            case .control:
                ledger.claim(whole, by: .overhead(control))
                ledger.addTLS(record.wireLength, to: .overhead(control))
            case .opaque:
                ledger.claim(whole, by: .unclaimed)
                ledger.addTLS(record.wireLength, to: .unclaimed)
            case .application:
                let start = record.plaintextOffset
                let end = start &+ Int64(record.plaintextLength)
                let placed = plaintextClaims[d].end
                guard placed >= end, record.plaintextLength > 0 || placed > start else { return }
                var cursor = record.carrierStart
                var overhead = max(0, record.wireLength - record.plaintextLength)
                if record.plaintextLength == 0 {
                    let owner = plaintextClaims[d].owner(at: start) ?? .unclaimed
                    ledger.claim(whole, by: owner)
                    ledger.addTLS(record.wireLength, to: owner)
                }
                plaintextClaims[d].forEachPiece(in: start..<end) { piece, found in
                    let owner = found ?? .unclaimed
                    if case let .message(slot) = owner { slot.upperPlaced(below: piece.upperBound) }
                    let length = Int(clamping: piece.upperBound - piece.lowerBound) + overhead
                    overhead = 0
                    ledger.claim(cursor..<(cursor &+ Int64(length)), by: owner)
                    ledger.addTLS(length, to: owner)
                    cursor = cursor &+ Int64(length)
                }
            }
            records[d].removeFirst()
        }
    }

    /// The end: plaintext nobody placed belongs to no message, every record is claimed, and
    /// slots no record took give their bytes to the connection's overhead.
    public func close() {
        for direction in [Direction.up, .down] {
            plaintextClaims[direction.rawValue].settle(upTo: .max)
            drain(direction)
        }
        costs.close()
        for d in 0..<2 {
            for slot in plaintextSlots[d].values { costs[carrierSide(d)].counting.release(slot) }
            plaintextSlots[d] = [:]
        }
    }
}
