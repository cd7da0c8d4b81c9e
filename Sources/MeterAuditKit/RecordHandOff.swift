import Analysis
import DequeModule
import Foundation

/// Runs what a run does with a capture's records and connection rows (writing messages.csv and
/// connections.csv, adding to the figures and charts) on a thread of its own, in the order the
/// parsing thread made them, so every output is the same as on one thread.
///
/// Why: a QUIC record's layers are final only when its connection closes (QUICCostLayer), so on
/// an HTTP/3 capture whose connections last to its end every record is built at the end, after
/// the body workers are done: that tail ran on one core. Here the parsing thread builds records
/// while this thread writes them (docs/BENCHMARK.md, "The run's serial end"). Items cross in
/// batches (one lock per batch), through a queue of at most `maxQueuedBatches`: the parsing
/// thread waits past it, so memory stays bounded.
final class RecordHandOff {
    enum Item {
        case record(MessageRecord)
        case row(ConnectionRow)
    }

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var batches: Deque<[Item?]> = []
    private var closed = false
    private var drained = false
    /// The parsing thread's batch being filled.
    private var batch: [Item?] = []
    static let batchItems = 32
    static let maxQueuedBatches = 8

    /// `emit` and `connection` run on the new thread, one item at a time.
    init(emit: @escaping (MessageRecord) -> Void, connection: ((ConnectionRow) -> Void)?) {
        batch.reserveCapacity(Self.batchItems)
        let thread = Thread { [self] in
            while var items = nextBatch() {
                // Each item is moved out (swapped for nil), not copied: a copy would retain, and
                // later release, every array and string a record holds.
                for index in items.indices {
                    var item: Item?
                    swap(&item, &items[index])
                    switch item {
                    case let .record(record)?: emit(record)
                    case let .row(row)?: connection?(row)
                    case nil: break
                    }
                }
            }
        }
        thread.name = "meteraudit-records"
        thread.start()
    }

    func record(_ record: __owned MessageRecord) { add(.record(consume record)) }

    func row(_ row: ConnectionRow) { add(.row(row)) }

    private func add(_ item: __owned Item) {
        batch.append(consume item)
        if batch.count >= Self.batchItems { hand() }
    }

    /// Puts the batch in the queue, waiting while the queue is full.
    private func hand() {
        guard !batch.isEmpty else { return }
        condition.lock()
        while batches.count >= Self.maxQueuedBatches { condition.wait() }
        batches.append(batch)
        condition.broadcast()
        condition.unlock()
        batch = []
        batch.reserveCapacity(Self.batchItems)
    }

    /// The next batch, nil once `finish` closed the queue and it is empty.
    private func nextBatch() -> [Item?]? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty {
            if closed {
                drained = true
                condition.broadcast()
                return nil
            }
            condition.wait()
        }
        let next = batches.removeFirst()
        condition.broadcast()
        return next
    }

    /// Hands the last items over and waits until every item was handled: what `emit` and
    /// `connection` changed is then visible to the caller (the lock orders it).
    func finish() {
        hand()
        condition.lock()
        closed = true
        condition.broadcast()
        while !drained { condition.wait() }
        condition.unlock()
    }
}
