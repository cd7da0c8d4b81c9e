import DequeModule
import Foundation

/// Runs a reader on its own thread, ahead of the thread that consumes what it reads: HAR and
/// Charles entries are tokenized, decoded and made into messages on one core while the other
/// measures and writes the records (docs/BENCHMARK.md, "The JSON reader of HAR and Charles").
///
/// Items cross in batches (one lock per batch, not per item) through a queue bounded by the
/// items' cost (their bodies' bytes), so memory stays flat in the file's size: the reader waits
/// while `maxQueuedCost` is in the queue. Items come out in the order they were put in, so
/// every output and diagnostic is the same as reading on one thread. The reader's own result
/// (its counts, its error) is handed over once it has put its last item in.
///
///     let ahead = ReadAhead<Item, Counts> { put in ...; put(item, cost); ...; return counts }
///     while let item = ahead.next() { ... }
///     let counts = ahead.result   // set once next() has returned nil
final class ReadAhead<Item, Result> {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var batches: Deque<(items: [Item?], cost: Int)> = []
    private var queuedCost = 0
    private var produced: Result?
    /// A batch's array the consumer emptied, handed back for the reader's next batch: an array of
    /// items is large (tens of KB), and glibc's malloc sweeps its free lists on every large
    /// allocation.
    private var spare: [Item?]?
    /// What the consumer is done with, freed on the reader's thread (`giveBack`).
    private var givenBack: [AnyObject] = []
    /// Whether a side waits on `condition`: the reader for room, the consumer for a batch. A
    /// side is woken only when it waits, out of the lock, and only once it has several batches
    /// to work on: the reader when the queue is down to `wakeReaderAt` batches, the consumer
    /// when `wakeConsumerAt` are in (or the reader is done, or waits itself). Each side then runs
    /// for several batches per wake-up instead of trading one wake-up (futex calls, context
    /// switches) per batch with the other (docs/BENCHMARK.md, "The hand-offs").
    private var readerWaits = false
    private var consumerWaits = false
    /// The consumer's side: the batch being handed out, and where.
    /// Items are moved out of it (swapped for nil), not copied: a copy would retain and later
    /// release every array and string an item holds.
    private var current: [Item?] = []
    private var position = 0
    /// What the consumer gave back since it last took a batch: handed to the reader with the
    /// next batch it takes, under the lock it takes then, not under a lock of its own.
    private var toGiveBack: [AnyObject] = []
    /// The consumer saw the reader's end: what it gives back from then on is freed at once.
    private var readerEnded = false
    private let maxQueuedCost: Int
    private let maxQueuedBatches: Int
    private let maxBatchItems: Int
    private let wakeReaderAt: Int
    private let wakeConsumerAt: Int

    /// `produce` runs on a new thread; it calls `put` for each item in order and returns its result.
    /// The bounds by default: batches of 64 items or 512 KiB of bodies, 4 batches or 2 MiB queued
    /// (a realistic HAR's entries are about 3 KB of JSON each, so its batches end by count).
    init(
        maxBatchItems: Int = 64, maxBatchCost: Int = 512 << 10, maxQueuedBatches: Int = 4,
        maxQueuedCost: Int = 2 << 20, produce: @escaping (_ put: (consuming Item, _ cost: Int) -> Void) -> Result
    ) {
        self.maxQueuedCost = maxQueuedCost
        self.maxQueuedBatches = maxQueuedBatches
        self.maxBatchItems = maxBatchItems
        wakeReaderAt = maxQueuedBatches / 2
        wakeConsumerAt = max(1, (maxQueuedBatches + 1) / 2)
        let thread = Thread { [self] in
            var batch: [Item?] = []
            var cost = 0
            batch.reserveCapacity(maxBatchItems)
            let result = produce { item, itemCost in
                batch.append(consume item)
                let (sum, overflow) = cost.addingReportingOverflow(max(itemCost, 0))
                cost = overflow ? Int.max : sum
                if batch.count >= maxBatchItems || cost >= maxBatchCost {
                    batch = hand(batch, cost: cost)
                    cost = 0
                }
            }
            if !batch.isEmpty { hand(batch, cost: cost) }
            condition.lock()
            produced = result
            let done = givenBack
            givenBack = []
            let wake = consumerWaits
            condition.unlock()
            if wake { condition.signal() }
            withExtendedLifetime(done) {}
        }
        // As much stack as the main thread: the JSON reader recurses up to its nesting bound.
        thread.stackSize = 8 << 20
        thread.name = "meteraudit-read-ahead"
        thread.start()
    }

    /// Puts a batch in the queue, waiting while the queue holds `maxQueuedBatches` or
    /// `maxQueuedCost` (a batch alone always goes in, however big). Returns the array for the
    /// next batch: empty, the consumer's spare when there is one.
    @discardableResult
    private func hand(_ batch: [Item?], cost: Int) -> [Item?] {
        condition.lock()
        while !batches.isEmpty, batches.count >= maxQueuedBatches || queuedCost > maxQueuedCost - cost {
            // Full before `wakeConsumerAt` batches (by their cost): the consumer takes them now.
            if consumerWaits { condition.signal() }
            readerWaits = true
            condition.wait()
        }
        readerWaits = false
        batches.append((batch, cost))
        queuedCost += cost
        var next = spare ?? []
        spare = nil
        let done = givenBack
        givenBack = []
        let wake = consumerWaits && batches.count >= wakeConsumerAt
        condition.unlock()
        // Signalled out of the lock: woken inside it, the consumer would at once wait for the lock.
        if wake { condition.signal() }
        // Released here, out of the lock, on this thread.
        withExtendedLifetime(done) {}
        // Only nils are left in a spare (items are moved out of it): nothing to release.
        next.removeAll(keepingCapacity: true)
        if next.capacity < maxBatchItems { next.reserveCapacity(maxBatchItems) }
        return next
    }

    /// Hands values the consumer is done with back to the reader's thread, which frees them
    /// when it next hands a batch over (out of the lock): on this thread, freeing what the
    /// reader's side made was the consumer's largest single cost (docs/BENCHMARK.md, "The
    /// recording thread"). They cross when the consumer next takes a batch; once the reader
    /// is done, they are freed on the consumer's thread. Called on the consumer's thread only.
    func giveBack<Value>(_ values: __owned [Value]) {
        if readerEnded { return }
        toGiveBack.append(GivenBack(values))
    }

    /// The next item in order; nil once the reader is done and every item was taken.
    func next() -> Item? {
        if position < current.count { return take() }
        var leftOver: [AnyObject] = []
        condition.lock()
        while batches.isEmpty, produced == nil {
            consumerWaits = true
            condition.wait()
        }
        consumerWaits = false
        if !toGiveBack.isEmpty {
            if produced == nil {
                givenBack += toGiveBack
                toGiveBack.removeAll(keepingCapacity: true)
            } else {
                swap(&leftOver, &toGiveBack)
            }
        }
        guard let batch = batches.popFirst() else {
            condition.unlock()
            readerEnded = true
            current = []
            position = 0
            withExtendedLifetime(leftOver) {}
            return nil
        }
        queuedCost -= batch.cost
        if spare == nil, current.capacity >= maxBatchItems {
            spare = current
            current = []
        }
        let wake = readerWaits && batches.count <= wakeReaderAt
        condition.unlock()
        if wake { condition.signal() }
        // Given back once the reader was done: freed here, out of the lock.
        withExtendedLifetime(leftOver) {}
        current = batch.items
        position = 0
        return take()
    }

    private func take() -> Item? {
        var item: Item?
        swap(&item, &current[position])
        position += 1
        return item
    }

    /// What the reader returned; valid once `next()` has returned nil.
    var result: Result {
        condition.lock()
        defer { condition.unlock() }
        return produced!
    }
}

/// Values handed back to `ReadAhead`'s reader thread to be freed there.
private final class GivenBack<Value> {
    let values: [Value]
    init(_ values: __owned [Value]) { self.values = values }
}

/// The first stage of a HAR or a Charles session: the reader's results in order, each with the
/// bytes read so far; its result is the error that ended the reading, nil at the end of the file.
func readingAhead<Entry>(
    _ next: @escaping () throws -> Entry?, bytesRead: @escaping () -> Int, cost: @escaping (Entry) -> Int
) -> ReadAhead<(Entry, read: Int), Error?> {
    ReadAhead { put in
        do {
            while let entry = try next() {
                // The entry moves into the batch (a copy would retain, and later release, all it holds).
                let entryCost = cost(entry)
                put((consume entry, bytesRead()), entryCost)
            }
        } catch {
            return error
        }
        return nil
    }
}
