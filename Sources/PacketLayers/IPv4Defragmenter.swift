/// Identifies the datagram a fragment belongs to: IPv4 (RFC 791: addresses, 16-bit
/// identification, protocol) or IPv6 (RFC 8200: addresses, 32-bit identification; the
/// fragment header's next header as protocol).
struct FragmentKey: Hashable {
    var source: IPAddress
    var destination: IPAddress
    var identification: UInt32
    var protocolNumber: UInt8
}

/// What adding a fragment did.
enum DefragmentOutcome {
    /// Stored; the datagram is still incomplete.
    case held
    /// Stored, but older datagrams were dropped to stay under the byte limit.
    case heldAfterEviction
    /// The fragment (and its datagram) could not be used.
    case rejected
    /// The datagram is complete: its payload (decoder-owned, valid until the next completion),
    /// the first fragment's header length, and the summed frame lengths of its fragments.
    case complete(payload: UnsafeRawBufferPointer, headerLength: Int, frameLength: Int)
}

/// One datagram being reassembled. Its buffer grows to the highest fragment end seen, so the
/// memory it holds is exactly what the limit accounts for.
final class PendingDatagram {
    var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Byte ranges received so far: sorted, disjoint, not adjacent.
    var ranges: [Range<Int>] = []
    /// Payload length, known once the last fragment (MF clear) arrived.
    var totalLength: Int?
    /// Header length of the offset-0 fragment, once it arrived.
    var headerLength: Int?
    var frameLength = 0
    var lastSeen: Int64
    let serial: UInt64

    init(serial: UInt64, time: Int64) {
        self.serial = serial
        self.lastSeen = time
    }

    /// Bytes charged against the limit: the buffer, plus a fixed overhead so that floods of
    /// tiny fragments cannot pile up unbounded bookkeeping.
    var chargedBytes: Int { buffer.count &+ IPv4Defragmenter.perDatagramOverhead }

    var isComplete: Bool {
        guard let total = totalLength, headerLength != nil, ranges.count == 1 else { return false }
        return ranges[0] == 0..<total
    }

    /// Hands the buffer over (the datagram no longer frees it).
    func takeBuffer() -> UnsafeMutableRawBufferPointer {
        let taken = buffer
        buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        return taken
    }

    deinit {
        buffer.baseAddress?.deallocate()
    }
}

/// Reassembles IPv4 and IPv6 datagrams from fragments (RFC 791 / RFC 815 / RFC 8200), holding their bytes in
/// storage it owns, bounded in total and expired by capture time. Allocation happens here, but
/// only for fragments, which are rare.
final class IPv4Defragmenter {
    static let perDatagramOverhead = 128
    /// A datagram whose fragments stop arriving for this long (capture time) is dropped.
    static let timeout: Int64 = 30_000_000_000
    /// How often (capture time) all pending datagrams are checked for expiry.
    static let sweepInterval: Int64 = 1_000_000_000
    static let maximumDatagramLength = 65_535

    let limit: Int
    private var pending: [FragmentKey: PendingDatagram] = [:]
    /// Creation order, for dropping the oldest datagram; stale entries are skipped by serial.
    private var order: [(key: FragmentKey, serial: UInt64)] = []
    private var orderHead = 0
    private var nextSerial: UInt64 = 0
    private var lastSweep: Int64?
    /// The last completed datagram; kept alive until the next completion.
    private var output = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    private(set) var heldBytes = 0
    private(set) var evictedDatagrams = 0
    private(set) var expiredDatagrams = 0
    var pendingDatagrams: Int { pending.count }

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    deinit {
        output.baseAddress?.deallocate()
    }

    /// Adds one fragment. `payload` is the fragment's data (the bytes after its IP header, all of
    /// them: a snaplen-cut fragment must be rejected by the caller via `discard`).
    func add(
        _ key: FragmentKey, headerLength: Int, offset: Int, moreFragments: Bool,
        payload: UnsafeRawBufferPointer, frameLength: Int, time: Int64
    ) -> DefragmentOutcome {
        expire(now: time)

        var datagram: PendingDatagram
        if let existing = pending[key], time &- existing.lastSeen <= Self.timeout {
            datagram = existing
        } else {
            if pending[key] != nil {
                remove(key)
                expiredDatagrams += 1
            }
            datagram = PendingDatagram(serial: nextSerial, time: time)
            nextSerial &+= 1
            pending[key] = datagram
            order.append((key, datagram.serial))
            heldBytes += datagram.chargedBytes
        }

        let start = offset
        let end = offset + payload.count
        // RFC 791: every fragment but the last carries a multiple of 8 bytes; no datagram
        // exceeds 65535 bytes; empty fragments carry nothing and only cost bookkeeping.
        guard !payload.isEmpty, !moreFragments || payload.count % 8 == 0,
            headerLength + end <= Self.maximumDatagramLength
        else { return reject(key) }
        if let total = datagram.totalLength {
            // The end is known: nothing may go past it, and a second "last" must agree.
            guard end <= total, moreFragments || end == total else { return reject(key) }
        } else if !moreFragments {
            guard end >= (datagram.ranges.last?.upperBound ?? 0) else { return reject(key) }
        }
        if start == 0 {
            if let known = datagram.headerLength, known != headerLength { return reject(key) }
        }

        // Overlaps must repeat the same bytes (duplicates); different bytes mean we cannot
        // know which copy the receiver used.
        for range in datagram.ranges where range.overlaps(start..<end) {
            let lower = max(range.lowerBound, start)
            let upper = min(range.upperBound, end)
            for index in lower..<upper where datagram.buffer[index] != payload[index - start] {
                return reject(key)
            }
        }

        var evicted = false
        if end > datagram.buffer.count {
            let growth = end - datagram.buffer.count
            while heldBytes + growth > limit {
                guard let oldest = popOldest() else { break }
                remove(oldest)
                evictedDatagrams += 1
                evicted = true
                if oldest == key { return .rejected } // this datagram was the oldest: it goes
            }
            guard heldBytes + growth <= limit else { return reject(key) }
            grow(datagram, to: end)
        }

        UnsafeMutableRawBufferPointer(rebasing: datagram.buffer[start..<end]).copyMemory(from: payload)
        insert(start..<end, into: &datagram.ranges)
        if !moreFragments { datagram.totalLength = end }
        if start == 0 { datagram.headerLength = headerLength }
        // Every fragment frame was on the wire, duplicates included.
        datagram.frameLength += frameLength
        datagram.lastSeen = time

        guard datagram.isComplete, let total = datagram.totalLength, let header = datagram.headerLength else {
            return evicted ? .heldAfterEviction : .held
        }
        remove(key)
        output.baseAddress?.deallocate()
        output = datagram.takeBuffer()
        return .complete(
            payload: UnsafeRawBufferPointer(rebasing: output[0..<total]),
            headerLength: header, frameLength: datagram.frameLength)
    }

    /// Drops the datagram `key` (e.g. a fragment was cut by snaplen, so it can never complete).
    func discard(_ key: FragmentKey) {
        remove(key)
    }

    private func reject(_ key: FragmentKey) -> DefragmentOutcome {
        remove(key)
        return .rejected
    }

    private func remove(_ key: FragmentKey) {
        if let datagram = pending.removeValue(forKey: key) {
            heldBytes -= datagram.chargedBytes
        }
    }

    private func grow(_ datagram: PendingDatagram, to size: Int) {
        let old = datagram.buffer
        let new = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        if old.count > 0 {
            UnsafeMutableRawBufferPointer(rebasing: new[0..<old.count]).copyMemory(from: UnsafeRawBufferPointer(old))
        }
        old.baseAddress?.deallocate()
        datagram.buffer = new
        heldBytes += size - old.count
    }

    /// The key of the oldest datagram still pending, removed from the order queue.
    private func popOldest() -> FragmentKey? {
        while orderHead < order.count {
            let entry = order[orderHead]
            orderHead += 1
            if pending[entry.key]?.serial == entry.serial {
                compactOrder()
                return entry.key
            }
        }
        compactOrder()
        return nil
    }

    private func compactOrder() {
        if orderHead == order.count {
            order.removeAll(keepingCapacity: true)
            orderHead = 0
        } else if orderHead > 1024, orderHead > order.count / 2 {
            order.removeFirst(orderHead)
            orderHead = 0
        }
    }

    /// Drops datagrams idle for longer than the timeout; a full pass at most once per interval.
    private func expire(now: Int64) {
        guard !pending.isEmpty else { return }
        if let last = lastSweep, now >= last, now &- last < Self.sweepInterval { return }
        lastSweep = now
        let stale = pending.filter { now &- $0.value.lastSeen > Self.timeout }
        for key in stale.keys {
            remove(key)
            expiredDatagrams += 1
        }
        if pending.isEmpty {
            order.removeAll(keepingCapacity: true)
            orderHead = 0
        }
    }

    /// Adds `range` to sorted, disjoint `ranges`, merging what it overlaps or touches.
    private func insert(_ range: Range<Int>, into ranges: inout [Range<Int>]) {
        var lower = range.lowerBound
        var upper = range.upperBound
        var index = 0
        while index < ranges.count, ranges[index].upperBound < lower { index += 1 }
        var last = index
        while last < ranges.count, ranges[last].lowerBound <= upper {
            lower = min(lower, ranges[last].lowerBound)
            upper = max(upper, ranges[last].upperBound)
            last += 1
        }
        ranges.replaceSubrange(index..<last, with: CollectionOfOne(lower..<upper))
    }
}
