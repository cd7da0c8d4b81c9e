import Analysis
import Foundation
@testable import Reports
import XCTest

/// messages.csv with late columns (an app meter's, docs/METER-LOG.md): rows go to a scratch
/// file read back in chunks of `RowScratch.chunkSize`, and must come out as the plain writer
/// writes them, each with its late cells.
final class MessagesCSVLateColumnsTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    /// Enough rows for many chunks, and one row (a 200,000-byte target) longer than a chunk
    /// several times over, between others: against the file written without late columns
    /// (the plain path, no scratch file), each row given `,<its index>` by hand.
    func testRowsComeBackWholeAcrossChunksAndLongerThanAChunk() throws {
        let longTarget = "/" + String(repeating: "a", count: 200_000)
        let huge = ReportFixture.record(
            ReportFixture.request(conn: 9, index: 0, target: longTarget, pair: 0, wire: (80, 120, 0)),
            naive: (0, 0, 0), naiveCauses: [], documented: nil)
        var records: [MessageRecord] = []
        for round in 0..<200 {
            records += ReportFixture.records
            if round == 50 || round == 199 { records.append(huge) }
        }
        XCTAssertGreaterThan(200_000, RowScratch.chunkSize)  // the long row is longer than a chunk

        let directory = NSTemporaryDirectory() + "late-columns-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let plainPath = directory + "/plain.csv"
        let latePath = directory + "/late.csv"
        let plain = try MessagesCSV(path: plainPath, estimators: ReportFixture.estimators)
        let late = try MessagesCSV(path: latePath, estimators: ReportFixture.estimators, lateColumns: ["late"])
        for record in records {
            plain.write(record)
            late.write(record)
        }
        try plain.close()
        var asked: [Int] = []
        try late.complete { index, row in
            asked.append(index)
            row.append(index)
        }

        XCTAssertEqual(asked, Array(records.indices))
        let plainText = try String(contentsOfFile: plainPath, encoding: .utf8)
        var expected = plainText.components(separatedBy: "\r\n")
        XCTAssertEqual(expected.last, "")
        expected.removeLast()
        XCTAssertEqual(expected.count, records.count + 1)
        expected[0] += ",late"
        for index in records.indices { expected[index + 1] += ",\(index)" }
        let lateText = try String(contentsOfFile: latePath, encoding: .utf8)
        XCTAssertGreaterThan(lateText.utf8.count, 10 * RowScratch.chunkSize)  // many chunks
        XCTAssertEqual(lateText, expected.joined(separator: "\r\n") + "\r\n")
        // The scratch file is gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        XCTAssertEqual(left, ["late.csv", "plain.csv"])
    }
}
