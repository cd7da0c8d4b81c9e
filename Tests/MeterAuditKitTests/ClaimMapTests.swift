@testable import MeterAuditKit
import XCTest

/// `ClaimMap` (docs/METERING.md §2c): one direction's stream cut into runs by owner. Every
/// expected run and piece below is counted by hand from the claims made in the test.
final class ClaimMapTests: XCTestCase {
    /// Two message slots to tell owners apart (a slot needs a ledger; it is not used here).
    private let ledger = DirectionLedger(limits: Limits())
    private lazy var a = LayerSlot(ledger: ledger)
    private lazy var b = LayerSlot(ledger: ledger)

    /// An owner as a short name: A, B, tls, h2, none; "-" for no owner (outside the history).
    private func name(_ owner: CostOwner?) -> String {
        switch owner {
        case nil: return "-"
        case let .message(slot)?: return slot === a ? "A" : (slot === b ? "B" : "?")
        case .tlsControl?: return "tls"
        case .http2Control?: return "h2"
        case .unclaimed?: return "none"
        }
    }

    private func runs(_ map: ClaimMap) -> [String] { map.runs.map { "\($0.start)..<\($0.end) \(name($0.owner))" } }

    private func pieces(_ map: ClaimMap, _ range: Range<Int64>) -> [String] {
        var result: [String] = []
        map.forEachPiece(in: range) { piece, owner in result.append("\(piece) \(name(owner))") }
        return result
    }

    /// Claims of runs: adjacent claims of one owner merge, the part of a claim already placed
    /// is not placed again, bytes skipped between claims (and up to a settle) are nobody's.
    func testClaimsMergeSkipPlacedBytesAndLeaveHolesUnclaimed() {
        var map = ClaimMap(maxRuns: 8)
        XCTAssertEqual(map.claim(0, 10, .message(a)), 0..<10)
        XCTAssertEqual(map.claim(10, 15, .message(a)), 10..<15)  // merges: A 0..<15
        XCTAssertEqual(map.claim(20, 30, .message(b)), 20..<30)  // 15..<20 skipped: nobody's
        XCTAssertEqual(map.claim(25, 35, .message(b)), 30..<35)  // 25..<30 placed already
        XCTAssertNil(map.claim(5, 8, .message(a)))  // wholly placed already
        map.settle(upTo: 40)  // 35..<40 nobody's
        map.settle(upTo: 38)  // behind the end: nothing
        XCTAssertEqual(runs(map), ["0..<15 A", "15..<20 none", "20..<35 B", "35..<40 none"])
        XCTAssertEqual(map.end, 40)
        // owner(at:) at each run's edges; nil outside [first run's start, end).
        let owners = [-1, 0, 14, 15, 19, 20, 34, 35, 39, 40].map { name(map.owner(at: $0)) }
        XCTAssertEqual(owners, ["-", "A", "A", "none", "none", "B", "B", "none", "none", "-"])
    }

    /// newestOwner(ofAll:) answers only for a range wholly inside the newest run.
    func testNewestOwnerOnlyForARangeInsideTheNewestRun() {
        var map = ClaimMap(maxRuns: 8)
        map.claim(0, 10, .message(a))
        map.claim(10, 20, .tlsControl)
        XCTAssertEqual(name(map.newestOwner(ofAll: 10..<20)), "tls")
        XCTAssertEqual(name(map.newestOwner(ofAll: 12..<15)), "tls")
        XCTAssertEqual(name(map.newestOwner(ofAll: 9..<12)), "-")  // starts in A's run
        XCTAssertEqual(name(map.newestOwner(ofAll: 0..<5)), "-")  // A's run is not the newest
        XCTAssertEqual(name(map.newestOwner(ofAll: 15..<21)), "-")  // 20 is not placed
        map.claim(20, 30, .http2Control)
        XCTAssertEqual(name(map.newestOwner(ofAll: 20..<30)), "h2")
        XCTAssertEqual(name(map.newestOwner(ofAll: 10..<20)), "-")  // no longer the newest
    }

    /// forEachPiece cuts a range at every run edge, in order, owners and holes alike; what no
    /// run covers (past the end) comes with no owner.
    func testForEachPieceSplitsARangeAcrossOwnersAndHoles() {
        var map = ClaimMap(maxRuns: 8)
        map.claim(0, 10, .message(a))
        map.claim(12, 20, .message(b))  // 10..<12 nobody's
        map.claim(20, 25, .http2Control)
        // 5..<30: 5 of A, the 2-byte hole, 8 of B, 5 of h2, 5 not placed (25..<30).
        XCTAssertEqual(
            pieces(map, 5..<30), ["5..<10 A", "10..<12 none", "12..<20 B", "20..<25 h2", "25..<30 -"])
        XCTAssertEqual(pieces(map, 13..<17), ["13..<17 B"])  // inside one run: one piece
        XCTAssertEqual(pieces(map, 10..<12), ["10..<12 none"])
        XCTAssertEqual(pieces(map, 30..<40), ["30..<40 -"])
    }

    /// Past maxRuns the oldest run is dropped: its bytes have no owner any more (a late copy
    /// of them goes to the connection). A merge adds no run; maxRuns is at least 2.
    func testMaxRunsDropsTheOldestRuns() {
        XCTAssertEqual(ClaimMap(maxRuns: 1).maxRuns, 2)
        var map = ClaimMap(maxRuns: 3)
        map.claim(0, 10, .message(a))
        map.claim(10, 20, .message(b))
        map.claim(20, 25, .message(b))  // merges into B 10..<25: still 2 runs
        map.claim(25, 30, .tlsControl)  // 3 runs
        XCTAssertEqual(runs(map), ["0..<10 A", "10..<25 B", "25..<30 tls"])
        map.claim(35, 40, .http2Control)  // hole 30..<35 and h2 35..<40: 5 runs, 2 dropped
        XCTAssertEqual(runs(map), ["25..<30 tls", "30..<35 none", "35..<40 h2"])
        XCTAssertEqual(map.end, 40)
        XCTAssertEqual(name(map.owner(at: 5)), "-")
        XCTAssertEqual(name(map.owner(at: 24)), "-")
        XCTAssertEqual(name(map.owner(at: 25)), "tls")
        // 20..<40: 5 bytes before the history, then each remaining run.
        XCTAssertEqual(pieces(map, 20..<40), ["20..<25 -", "25..<30 tls", "30..<35 none", "35..<40 h2"])
    }
}
