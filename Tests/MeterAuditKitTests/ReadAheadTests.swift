import Foundation
import XCTest

@testable import MeterAuditKit

/// `ReadAhead` hands items on in order, with the reader's result after the last, and the reader
/// never gets further ahead than its queue allows.
final class ReadAheadTests: XCTestCase {
    /// 10,007 items in batches of 4 (the last one short) come out 0, 1, 2, … and then nil, and
    /// the result is what the reader returned.
    func testItemsComeOutInOrderThenTheResult() {
        let count = 10_007
        let ahead = ReadAhead<Int, String>(maxBatchItems: 4, maxQueuedBatches: 2) { put in
            for item in 0..<count { put(item, 1) }
            return "read \(count)"
        }
        var expected = 0
        while let item = ahead.next() {
            XCTAssertEqual(item, expected)
            expected += 1
        }
        XCTAssertEqual(expected, count)
        XCTAssertNil(ahead.next())
        XCTAssertEqual(ahead.result, "read \(count)")
    }

    /// With batches of 4 and 2 queued, the reader is at most 15 items ahead of what was taken:
    /// the rest of the batch being taken (3 when its first item was just taken), the queue (8),
    /// and the batch being filled, with the item being put (4). Waited for, it gets exactly there.
    func testTheReaderStaysWithinTheQueuesBound() {
        let produced = Counter()
        let ahead = ReadAhead<Int, Void>(maxBatchItems: 4, maxQueuedBatches: 2) { put in
            for item in 0..<2_000 {
                produced.increment()
                put(item, 1)
            }
        }
        var taken = 0
        var furthest = 0
        while ahead.next() != nil {
            taken += 1
            if taken == 101 {
                // Item 100 opens a batch: give the reader up to 5 s to run as far ahead as it can.
                let deadline = Date().addingTimeInterval(5)
                while produced.value - taken < 15, Date() < deadline { usleep(1_000) }
                usleep(20_000)
                XCTAssertEqual(produced.value - taken, 15)
            }
            furthest = max(furthest, produced.value - taken)
        }
        XCTAssertEqual(taken, 2_000)
        XCTAssertLessThanOrEqual(furthest, 15)
    }

    /// The queue is bounded by cost too: with 100-byte items and at most 250 bytes queued, no
    /// more than 2 one-item batches wait; an item dearer than the whole bound still goes through.
    func testCostBoundsTheQueueAndAnOversizedItemPasses() {
        let produced = Counter()
        let ahead = ReadAhead<Int, Void>(maxBatchItems: 64, maxBatchCost: 100, maxQueuedCost: 250) { put in
            for item in 0..<200 {
                produced.increment()
                put(item, item == 100 ? 10_000 : 100)
            }
        }
        var taken = 0
        var furthest = 0
        while let item = ahead.next() {
            XCTAssertEqual(item, taken)
            taken += 1
            furthest = max(furthest, produced.value - taken)
            if taken % 20 == 0 { usleep(2_000) }
        }
        XCTAssertEqual(taken, 200)
        // Each batch holds one item (its cost reaches 100): the queue (2) and the item being put.
        XCTAssertLessThanOrEqual(furthest, 3)
    }
}

extension ReadAheadTests {
    /// The consumer is woken once 2 of its 4 batches are in; when the cost bound lets only one
    /// in (100-byte batches, 150 bytes queued), the reader wakes it before waiting for room,
    /// so neither waits for the other for ever: every item comes through, in order.
    func testACostBoundBelowTheConsumersWakeUpDoesNotStall() {
        let ahead = ReadAhead<Int, Void>(
            maxBatchItems: 64, maxBatchCost: 100, maxQueuedBatches: 4, maxQueuedCost: 150
        ) { put in
            for item in 0..<500 { put(item, 100) }
        }
        let taken = Counter()
        let inOrder = Counter()
        let done = expectation(description: "every item taken")
        let consumer = Thread {
            while let item = ahead.next() {
                if item == taken.value { inOrder.increment() }
                taken.increment()
            }
            done.fulfill()
        }
        consumer.start()
        wait(for: [done], timeout: 30)
        XCTAssertEqual(taken.value, 500)
        XCTAssertEqual(inOrder.value, 500)
    }

    /// What the consumer gives back while the reader runs is freed on the reader's thread (when
    /// it next hands a batch on); once the reader is done, at once, on the consumer's. Every
    /// value given back is freed exactly once.
    func testGivenBackValuesAreFreedOnTheReadersThread() {
        let frees = FreeLog()
        let consumer = Thread.current
        let ahead = ReadAhead<Int, Void>(maxBatchItems: 4, maxQueuedBatches: 2) { put in
            for item in 0..<400 { put(item, 1) }
        }
        var given = 0
        while let item = ahead.next() {
            // 4 values at every 8th item: 50 times while the reader may still be running.
            if item % 8 == 0 {
                ahead.giveBack((0..<4).map { _ in Tracked(frees) })
                given += 4
            }
        }
        // Every one freed: the reader frees what is left when it ends (give it up to 5 s to get
        // there after handing its result over), and some were freed on its thread.
        let deadline = Date().addingTimeInterval(5)
        while frees.count < given, Date() < deadline { usleep(1_000) }
        XCTAssertEqual(frees.count, given)
        XCTAssertTrue(frees.threads.contains { $0 !== consumer })
        // The reader is done: these are freed here, before giveBack returns.
        ahead.giveBack([Tracked(frees), Tracked(frees)])
        XCTAssertEqual(frees.count, given + 2)
        XCTAssertTrue(frees.threads.suffix(2).allSatisfy { $0 === consumer })
        withExtendedLifetime(ahead) {}
    }
}

/// Records on which thread each `Tracked` value was freed.
private final class FreeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var freedOn: [Thread] = []
    func add(_ thread: Thread) { lock.withLock { freedOn.append(thread) } }
    var count: Int { lock.withLock { freedOn.count } }
    var threads: [Thread] { lock.withLock { freedOn } }
}

private final class Tracked {
    let log: FreeLog
    init(_ log: FreeLog) { self.log = log }
    deinit { log.add(Thread.current) }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
