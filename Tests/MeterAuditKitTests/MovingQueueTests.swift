import XCTest

@testable import MeterAuditKit

/// `MovingQueue` gives its elements back first in, first out, across growth and wrap-around,
/// and frees what it still holds when it goes.
final class MovingQueueTests: XCTestCase {
    /// An element that counts how many of its kind are alive.
    private final class Tracked {
        static var alive = 0
        let value: Int
        init(_ value: Int) {
            self.value = value
            Tracked.alive += 1
        }
        deinit { Tracked.alive -= 1 }
    }

    /// A fixed pattern of appends and removals (2,000 steps, the queue growing past several
    /// doublings and wrapping around its ring), checked against an array used as a FIFO.
    func testOrderMatchesAnArrayFIFO() {
        let queue = MovingQueue<[Int]>(capacity: 2)
        var model: [[Int]] = []
        var next = 0
        for step in 0..<2_000 {
            // Appends outnumber removals until step 1,200, then removals win: every size from 0
            // up to a few hundred is crossed, at different ring offsets.
            let appends = step < 1_200 ? (step % 3 == 0 ? 2 : 1) : (step % 4 == 0 ? 1 : 0)
            let removals = step < 1_200 ? (step % 5 == 0 ? 0 : 1) : 1
            for _ in 0..<appends {
                queue.append([next, next * 2])
                model.append([next, next * 2])
                next += 1
            }
            for _ in 0..<removals where !model.isEmpty {
                XCTAssertEqual(queue.first, model[0])
                XCTAssertEqual(queue.removeFirst(), model.removeFirst())
            }
            XCTAssertEqual(queue.count, model.count)
            XCTAssertEqual(queue.isEmpty, model.isEmpty)
        }
        while !model.isEmpty { XCTAssertEqual(queue.removeFirst(), model.removeFirst()) }
        XCTAssertTrue(queue.isEmpty)
    }

    /// Elements are moved, not copied: each one is alive once while queued, and the queue frees
    /// those it still holds.
    func testElementsAreFreedOnceTakenOrWhenTheQueueGoes() {
        Tracked.alive = 0
        do {
            let queue = MovingQueue<Tracked>(capacity: 1)
            for value in 0..<37 { queue.append(Tracked(value)) }
            XCTAssertEqual(Tracked.alive, 37)
            for value in 0..<20 { XCTAssertEqual(queue.removeFirst().value, value) }
            XCTAssertEqual(Tracked.alive, 17)
            for value in 37..<50 { queue.append(Tracked(value)) }
            XCTAssertEqual(queue.first.value, 20)
            XCTAssertEqual(Tracked.alive, 30)
        }
        XCTAssertEqual(Tracked.alive, 0)
    }
}
