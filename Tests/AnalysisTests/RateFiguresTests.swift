import Analysis
import XCTest

/// The rate figures and the findings' rules (docs/FIGURES.md, Rate and findings) on times
/// counted by hand, each rule at its threshold and one step short of it.
final class RateFiguresTests: XCTestCase {
    /// Seconds as microseconds.
    private func us(_ seconds: Double) -> Int64 { Int64((seconds * 1_000_000).rounded()) }

    private func figures(_ seconds: [Double], untimed: Int = 0) -> RateFigures {
        RateFigures(RequestTimes(microseconds: seconds.map(us), untimed: untimed))
    }

    func testFiguresCountedByHand() {
        // Arrival order does not matter: sorted, 0, 1, 1.5, 4, 10 s.
        let rate = figures([4, 0, 10, 1.5, 1], untimed: 2)
        XCTAssertEqual(rate.requests, 5)
        XCTAssertEqual(rate.untimed, 2)
        XCTAssertEqual(rate.first, 0)
        XCTAssertEqual(rate.last, us(10))
        XCTAssertEqual(rate.span, us(10))
        // 60 × 4 intervals / 10 s.
        XCTAssertEqual(try XCTUnwrap(rate.perMinute), 24, accuracy: 1e-12)
        XCTAssertEqual(rate.peakPerMinute, 5)
        // [1, 2) holds 1 and 1.5; [0, 1) holds only 0.
        XCTAssertEqual(rate.peakPerSecond, 2)
        // Intervals 1, 0.5, 2.5, 6 → sorted 0.5, 1, 2.5, 6: rank ⌈4/2⌉ = 2 → 1 s.
        XCTAssertEqual(rate.medianInterval, us(1))
        XCTAssertEqual(rate.minimumInterval, us(0.5))
        // Thirds of 10 s: [0, 3.33) holds 0, 1, 1.5; [6.67, 10] holds 10; 4 in the middle.
        XCTAssertEqual(rate.thirds?.first, 3)
        XCTAssertEqual(rate.thirds?.middle, 1)
        XCTAssertEqual(rate.thirds?.last, 1)
        XCTAssertEqual(try XCTUnwrap(rate.growth), 1.0 / 3, accuracy: 1e-12)
        XCTAssertEqual(rate.findings, [])
    }

    func testFewRequestsLeaveFiguresUndefined() {
        let none = figures([], untimed: 3)
        XCTAssertEqual(none.requests, 0)
        XCTAssertEqual(none.untimed, 3)
        XCTAssertNil(none.span)
        XCTAssertNil(none.perMinute)
        XCTAssertNil(none.medianInterval)
        XCTAssertNil(none.thirds)
        let one = figures([5])
        XCTAssertEqual(one.span, 0)
        XCTAssertNil(one.perMinute)
        XCTAssertEqual(one.peakPerMinute, 1)
        XCTAssertNil(one.medianInterval)
        XCTAssertNil(one.thirds)
        // Two at the same instant: one interval of 0, no rate over a span of 0.
        let same = figures([5, 5])
        XCTAssertEqual(same.medianInterval, 0)
        XCTAssertNil(same.perMinute)
        XCTAssertEqual(same.peakPerSecond, 2)
    }

    func testWindowsAreHalfOpen() {
        // 0 and 60 s: never in one minute; 0 and 59.999999 s: in one.
        XCTAssertEqual(figures([0, 60]).peakPerMinute, 1)
        XCTAssertEqual(figures([0, 59.999999]).peakPerMinute, 2)
        XCTAssertEqual(figures([0, 1]).peakPerSecond, 1)
        XCTAssertEqual(figures([0, 0.999999]).peakPerSecond, 2)
    }

    func testPolling() {
        // Every 2 s, 5 requests: polling, period 2 s.
        let steady = figures([0, 2, 4, 6, 8])
        XCTAssertEqual(steady.findings, [.polling(period: us(2))])
        XCTAssertEqual(steady.pollingPeriod, us(2))
        // 4 requests: one too few.
        XCTAssertEqual(figures([0, 2, 4, 6]).findings, [])
        // ±10 % of the median is steady (2.2 s), just over it is not.
        XCTAssertEqual(figures([0, 2, 4, 6, 8.2]).findings, [.polling(period: us(2))])
        XCTAssertEqual(figures([0, 2, 4, 6, 8.200001]).findings, [])
        // 9 of 10 intervals steady is 90 %: polling; 8 of 9 (88.9 %) is not.
        let tenIntervals = (0...9).map { Double($0) * 2 } + [25]
        XCTAssertEqual(figures(tenIntervals).findings, [.polling(period: us(2))])
        let nineIntervals = (0...8).map { Double($0) * 2 } + [25]
        XCTAssertEqual(figures(nineIntervals).findings, [])
        // A steady loop faster than 0.1 s is no timer (but 5 in a second is a burst).
        XCTAssertEqual(figures([0, 0.05, 0.1, 0.15, 0.2]).findings, [.burst(perSecond: 5)])
        XCTAssertEqual(
            figures([0, 0.1, 0.2, 0.3, 0.4]).findings, [.burst(perSecond: 5), .polling(period: us(0.1))])
    }

    func testBurst() {
        XCTAssertEqual(figures([0, 0.1, 0.2, 0.3, 0.9]).findings.map(\.name), ["burst"])
        XCTAssertEqual(figures([0, 0.1, 0.2, 0.3, 0.9]).findings.first, .burst(perSecond: 5))
        XCTAssertEqual(figures([0, 0.1, 0.2, 0.3, 1.0]).findings.map(\.name), [])
        // A fast poller is a burst too, and both are reported, the burst first.
        XCTAssertEqual(
            figures((0..<20).map { Double($0) * 0.2 }).findings, [.burst(perSecond: 5), .polling(period: us(0.2))])
    }

    /// A timer added at 0, 10 and 20 s of a 30 s span, each every 2 s from its start.
    private func leakedTimers(starts: [Double], period: Double = 2, end: Double = 30) -> [Double] {
        starts.flatMap { start in stride(from: start + 0.1 * start / 10, through: end, by: period).map { $0 } }
    }

    func testRunaway() {
        let times = leakedTimers(starts: [0, 10, 20])
        let rate = figures(times)
        let thirds = try! XCTUnwrap(rate.thirds)
        XCTAssertLessThan(thirds.first, thirds.middle)
        XCTAssertLessThan(thirds.middle, thirds.last)
        XCTAssertEqual(rate.findings.first?.name, "runaway")
        guard case let .runaway(growth, first, last) = rate.findings.first else { return XCTFail() }
        XCTAssertEqual(first, thirds.first)
        XCTAssertEqual(last, thirds.last)
        XCTAssertEqual(growth, Double(last) / Double(first), accuracy: 1e-12)
        XCTAssertFalse(rate.findings.contains { $0.name == "polling" }, "a runaway is not also polling")
        // The same timers over 9 s instead of 30: too short a span.
        XCTAssertFalse(figures(times.map { $0 * 0.3 }).findings.contains { $0.name == "runaway" })
        // One timer: steady, polling.
        XCTAssertEqual(figures(leakedTimers(starts: [0])).findings, [.polling(period: us(2))])
    }

    func testRunawayNeedsEveryThirdToGrow() {
        // 3, 3, 9 over 30 s: the last third holds 3 times the first, but the middle does not grow.
        let flatMiddle = [0, 1, 2, 12, 13, 14] + (0..<9).map { 21 + Double($0) }
        let rate = figures(flatMiddle)
        XCTAssertEqual(rate.thirds?.first, 3)
        XCTAssertEqual(rate.thirds?.middle, 3)
        XCTAssertEqual(rate.thirds?.last, 9)
        XCTAssertFalse(rate.findings.contains { $0.name == "runaway" })
        // 3, 4, 5: growing, but less than twice.
        let slow = [0, 1, 2, 11, 12, 13, 14] + (0..<5).map { 21 + 2 * Double($0) } + [29.5]
        let slowRate = figures(slow)
        XCTAssertEqual(slowRate.thirds.map { [$0.first, $0.middle, $0.last] }, [3, 4, 6])
        XCTAssertTrue(slowRate.findings.contains { $0.name == "runaway" }, "6 ≥ 2 × 3")
        let slower = [0, 1, 2, 11, 12, 13, 14] + (0..<4).map { 21 + 2 * Double($0) } + [29.5]
        XCTAssertEqual(figures(slower).thirds.map { [$0.first, $0.middle, $0.last] }, [3, 4, 5])
        XCTAssertFalse(figures(slower).findings.contains { $0.name == "runaway" }, "5 < 2 × 3")
    }

    func testMergeIsTheWholeInAnyOrder() {
        let all: [Int64] = [9, 1, 7, 3, 5, 2, 8].map { $0 * 1_000_000 }
        var left = RequestTimes(microseconds: Array(all[4...]), untimed: 1)
        left.merge(RequestTimes(microseconds: Array(all[..<4]), untimed: 2))
        let whole = RequestTimes(microseconds: all, untimed: 3)
        XCTAssertEqual(RateFigures(left), RateFigures(whole))
        XCTAssertEqual(left.sorted, whole.sorted)
    }
}
