/// One direction of one QUIC stream (or CRYPTO stream) put in order: bytes at or before the next
/// offset are delivered at once (their repeated part counted, RFC 9000 §2.2 lets a sender
/// repackage), bytes past it are copied and held until the hole fills or is given up as a gap.
struct OrderedStream {
    /// The offset of the next byte to deliver.
    private(set) var delivered: UInt64 = 0
    /// Held runs, sorted by offset (they may overlap; delivery trims them).
    private var held: [(offset: UInt64, bytes: [UInt8])] = []
    private(set) var heldBytes = 0
    /// Bytes received again (retransmitted or repackaged) that were already delivered or held.
    private(set) var repeatedBytes = 0
    /// The final size, once a FIN or RESET_STREAM told it.
    var finalSize: UInt64?
    var ended = false

    init() {}

    /// A stream whose bytes before `offset` were sent before the capture began (a connection
    /// found mid-way): delivery starts there.
    init(startingAt offset: UInt64) { delivered = offset }

    /// Adds `data` at `offset`; `deliver` gets each in-order run with its offset, `gap` each hole
    /// given up. Returns the change in held bytes.
    mutating func add(
        _ data: UnsafeRawBufferPointer, at offset: UInt64,
        deliver: (UnsafeRawBufferPointer, UInt64) -> Void
    ) -> Int {
        let before = heldBytes
        let end = offset &+ UInt64(data.count)
        if end <= delivered {
            repeatedBytes &+= data.count
            return 0
        }
        if offset <= delivered {
            let skip = Int(delivered &- offset)
            repeatedBytes &+= skip
            deliver(UnsafeRawBufferPointer(rebasing: data[skip...]), delivered)
            delivered = end
            drain(deliver: deliver)
        } else {
            if held.contains(where: { $0.offset == offset && $0.bytes.count >= data.count }) {
                repeatedBytes &+= data.count
                return 0
            }
            let index = held.firstIndex { $0.offset > offset } ?? held.count
            held.insert((offset, [UInt8](data)), at: index)
            heldBytes &+= data.count
        }
        return heldBytes &- before
    }

    /// Gives up the first hole: reports it and delivers what follows it. Returns the change in
    /// held bytes; 0 when nothing is held.
    mutating func skipHole(
        gap: (Int, UInt64) -> Void, deliver: (UnsafeRawBufferPointer, UInt64) -> Void
    ) -> Int {
        guard let first = held.first, first.offset > delivered else { return 0 }
        let before = heldBytes
        gap(Int(clamping: first.offset &- delivered), delivered)
        delivered = first.offset
        drain(deliver: deliver)
        return heldBytes &- before
    }

    var hasHeld: Bool { !held.isEmpty }

    private mutating func drain(deliver: (UnsafeRawBufferPointer, UInt64) -> Void) {
        while let first = held.first, first.offset <= delivered {
            held.removeFirst()
            heldBytes &-= first.bytes.count
            let end = first.offset &+ UInt64(first.bytes.count)
            let skip = Int(min(UInt64(first.bytes.count), delivered &- first.offset))
            repeatedBytes &+= skip
            if end > delivered {
                first.bytes.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[skip...]), delivered) }
                delivered = end
            }
        }
    }
}
