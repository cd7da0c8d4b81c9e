import Flows

/// Where a protocol reader's claims go (docs/METERING.md §2c), and where a finished message
/// finds the slot its packets were counted in. Sides, streams and offsets are the reader's own:
/// owners are byte ranges per (direction, stream). A TCP byte stream is stream 0 (HTTP/1.x, and
/// HTTP/2, whose frames all travel in it); a QUIC reader will name each of its streams.
public protocol MessageClaims: AnyObject {
    func claim(_ range: Range<Int64>, of side: Direction, stream: UInt64, by owner: StreamOwner)
    func settle(_ side: Direction, stream: UInt64, upTo offset: Int64)
    func takeSlot(of side: Direction, stream: UInt64, startingAt offset: Int64) -> LayerSlot?
}

/// Claims of a reader that reads the carrier's streams itself (cleartext HTTP/1.x, h2c): its
/// sides are the connection's sides, its streams and offsets the carrier's, and its messages'
/// slots wait here for their records.
/// Its slot tables are not checked for overlapping access at run time (see `LayerSlot`).
public final class CleartextClaims: MessageClaims {
    private let ledger: ConnectionCostLedger
    /// Per side, the slots by (stream, first byte).
    @exclusivity(unchecked) private var slots: [[SlotKey: LayerSlot]] = [[:], [:]]

    private struct SlotKey: Hashable {
        var stream: UInt64
        var start: Int64
    }

    public init(ledger: ConnectionCostLedger) { self.ledger = ledger }

    public func claim(_ range: Range<Int64>, of side: Direction, stream: UInt64, by owner: StreamOwner) {
        // Stream 0 (every TCP claim) reaches its inline ledger without a look-up.
        let direction = stream == 0 ? ledger[side] : ledger[side, stream: stream]
        direction.claim(range, by: costOwner(owner, side, stream, direction))
    }

    public func settle(_ side: Direction, stream: UInt64, upTo offset: Int64) {
        ledger.settle(side, stream: stream, upTo: offset)
    }

    public func takeSlot(of side: Direction, stream: UInt64, startingAt offset: Int64) -> LayerSlot? {
        slots[side.rawValue].removeValue(forKey: SlotKey(stream: stream, start: offset))
    }

    /// Per side, the message claimed last: the same one claims again with each packet.
    @exclusivity(unchecked) private var lastClaimed: [(key: SlotKey, slot: LayerSlot)?] = [nil, nil]

    private func costOwner(
        _ owner: StreamOwner, _ side: Direction, _ stream: UInt64, _ direction: DirectionLedger
    ) -> CostOwner {
        switch owner {
        case let .message(start):
            let key = SlotKey(stream: stream, start: start)
            if let last = lastClaimed[side.rawValue], last.key == key, !last.slot.sealed {
                return .message(last.slot)
            }
            // Stored only when new: a hit is one look-up, not a look-up and a write.
            let slot: LayerSlot
            if let known = slots[side.rawValue][key] {
                slot = known
            } else {
                slot = LayerSlot(ledger: direction.counting)
                slots[side.rawValue][key] = slot
            }
            lastClaimed[side.rawValue] = (key, slot)
            return .message(slot)
        case let .overhead(kind): return .overhead(kind)
        case .unclaimed: return .unclaimed
        }
    }

    /// Slots no record took: their bytes belong to no message.
    public func close() {
        for side in [Direction.up, .down] {
            for (key, slot) in slots[side.rawValue] { ledger[side, stream: key.stream].release(slot) }
            slots[side.rawValue] = [:]
        }
    }
}

/// The claims of a reader inside a connection's stream (the HTTP/2 an h2c Upgrade started):
/// its offsets count from the tunnel's first byte and its initiator is the client, so each
/// claim is shifted and turned to the outer connection's sides and offsets.
public final class TunnelClaims: MessageClaims {
    private let outer: MessageClaims
    /// The outer side that is the tunnel's initiator.
    private let initiatorSide: Direction
    /// Per tunnel side: the outer offset of its first byte, once known.
    private var base: [Int64?] = [nil, nil]

    public init(outer: MessageClaims, initiatorSide: Direction) {
        self.outer = outer
        self.initiatorSide = initiatorSide
    }

    private func outerSide(_ side: Direction) -> Direction { side == .up ? initiatorSide : initiatorSide.peer }

    /// The outer connection's `side` begins the tunnel at `offset`.
    public func begins(onOuter side: Direction, at offset: Int64) {
        base[side == initiatorSide ? 0 : 1] = offset
    }

    // The tunnel is one byte stream inside the outer one: its streams are the outer's.
    public func claim(_ range: Range<Int64>, of side: Direction, stream: UInt64, by owner: StreamOwner) {
        guard let shift = base[side.rawValue] else { return }
        var shifted = owner
        if case let .message(start) = owner { shifted = .message(startingAt: start &+ shift) }
        outer.claim(
            (range.lowerBound &+ shift)..<(range.upperBound &+ shift), of: outerSide(side), stream: stream, by: shifted)
    }

    public func settle(_ side: Direction, stream: UInt64, upTo offset: Int64) {
        guard let shift = base[side.rawValue] else { return }
        outer.settle(outerSide(side), stream: stream, upTo: offset == .max ? .max : offset &+ shift)
    }

    public func takeSlot(of side: Direction, stream: UInt64, startingAt offset: Int64) -> LayerSlot? {
        guard let shift = base[side.rawValue] else { return nil }
        return outer.takeSlot(of: outerSide(side), stream: stream, startingAt: offset &+ shift)
    }
}

/// What ties a proxy `CONNECT` tunnel's ledger to its outer connection's: the tunnel's claims
/// (offsets from its first byte, its initiator the client) are shifted onto the outer
/// connection's stream, whose packets carried them (docs/METERING.md §2c).
public final class TunnelCostLink {
    public let outer: ConnectionCostLedger
    /// The outer side that is the tunnel's initiator.
    public let initiatorSide: Direction
    /// Per outer side: the offset of the tunnel's first byte, once known.
    private var bases: [Int64?] = [nil, nil]

    public init(outer: ConnectionCostLedger, initiatorSide: Direction) {
        self.outer = outer
        self.initiatorSide = initiatorSide
    }

    public func begins(onOuter side: Direction, at offset: Int64) { bases[side.rawValue] = offset }

    public func base(of outerSide: Direction) -> Int64? { bases[outerSide.rawValue] }
}
