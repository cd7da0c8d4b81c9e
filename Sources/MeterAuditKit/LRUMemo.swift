import DequeModule

/// A map bounded by the summed cost (estimated bytes) of its entries: an insertion past the
/// bound drops the least recently used entries first.
///
/// Recency is a queue of (key, stamp) records; a lookup re-stamps its entry and appends a
/// record, and records whose stamp is no longer their entry's are skipped when popped and
/// swept when they outnumber the entries, so both operations are amortized O(1).
struct LRUMemo<Key: Hashable, Value> {
    private struct Entry {
        var value: Value
        var cost: Int
        var stamp: UInt64
    }

    private var entries: [Key: Entry] = [:]
    private var recency = Deque<(key: Key, stamp: UInt64)>()
    private var clock: UInt64 = 0
    private(set) var totalCost = 0
    let maxCost: Int

    init(maxCost: Int) {
        self.maxCost = maxCost
    }

    var count: Int { entries.count }

    /// The value for `key`, now the most recently used; nil when absent.
    mutating func value(for key: Key) -> Value? {
        guard let index = entries.index(forKey: key) else { return nil }
        clock += 1
        entries.values[index].stamp = clock
        recency.append((key: key, stamp: clock))
        sweepIfStale()
        return entries.values[index].value
    }

    /// Sets `key`'s value, most recently used; returns how many entries were dropped.
    @discardableResult
    mutating func insert(_ value: Value, for key: Key, cost: Int) -> Int {
        clock += 1
        if let old = entries.updateValue(Entry(value: value, cost: cost, stamp: clock), forKey: key) {
            totalCost -= old.cost
        }
        totalCost += cost
        recency.append((key: key, stamp: clock))
        var dropped = 0
        while totalCost > maxCost, let oldest = recency.popFirst() {
            guard let entry = entries[oldest.key], entry.stamp == oldest.stamp else { continue }
            entries[oldest.key] = nil
            totalCost -= entry.cost
            dropped += 1
        }
        sweepIfStale()
        return dropped
    }

    /// Keeps the recency queue within twice the entries (plus slack).
    private mutating func sweepIfStale() {
        guard recency.count > 2 * entries.count + 64 else { return }
        recency = Deque(recency.filter { entries[$0.key]?.stamp == $0.stamp })
    }
}
