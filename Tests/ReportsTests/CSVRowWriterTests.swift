import Foundation
import TestSupport
import XCTest

@testable import Reports

/// messages.csv's own row writer must write every cell as `CSVRowBytes` (and so `CSVWriter`)
/// writes it.
final class CSVRowWriterTests: XCTestCase {
    /// Every special byte (comma, quote, CR, LF) at every place of cells 0 to 24 bytes long
    /// (the eight-byte words, the overlapping last word, the short tail), and a byte of each
    /// other value, against RFC 4180's rule written out here.
    func testQuotingMatchesTheRuleAtEveryPlace() {
        func expected(_ cell: [UInt8]) -> [UInt8] {
            guard cell.contains(where: { $0 == 44 || $0 == 34 || $0 == 13 || $0 == 10 }) else { return cell }
            return [34] + cell.flatMap { $0 == 34 ? [34, 34] : [$0] } + [34]
        }
        var row = CSVRowWriter(capacity: 16)
        defer { row.deallocate() }
        for length in 0...24 {
            for place in 0..<max(length, 1) {
                for byte in UInt8.min...UInt8.max {
                    var cell = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    if length > 0 { cell[place] = byte }
                    row.removeAll()
                    row.append(7 as Int?)
                    cell.withUnsafeBufferPointer { row.append(utf8: $0) }
                    row.append(nil as Int?)
                    XCTAssertEqual(
                        Array(row.bytes), Array("7,".utf8) + expected(cell) + [44],
                        "length \(length), byte \(byte) at \(place)")
                }
            }
        }
    }

    /// Each kind of cell, in a row that outgrows the writer's first buffer, against the same
    /// cells through `CSVRowBytes`.
    func testEveryKindOfCellAsRowBytesWritesIt() {
        func cells<Cells: CSVCells>(_ row: inout Cells) {
            row.append("")
            row.append(name: "request")
            row.append(true)
            row.append(false)
            row.append(name: "")
            for number in [0, 9, 10, 99, 100, -1, -305, 1_234_567, Int.max, Int.min] { row.append(number as Int?) }
            row.append(nil as Int?)
            // messages.csv's time: microseconds with six decimals, a minus below −1 µs.
            row.append(scaled: 1_700_000_000_123_456, decimals: 6, negative: false)
            row.append(scaled: 5, decimals: 6, negative: true)
            row.append(scaled: 0, decimals: 0, negative: false)
            row.append(0.125, decimals: 2)
            row.append(Double.nan, decimals: 1)
            row.append(-Double.infinity, decimals: 3)
            row.append(1e20, decimals: 2)
            row.append(nil as Double?, decimals: 2)
            row.append("GET 127.0.0.1:18180 /index.html/{id}")
            row.append("a,b \"quoted\"\r\nand more than eight")
            row.append("ü and ✓")
            row.append(String(repeating: "0123456789", count: 500))
        }
        var writer = CSVRowWriter(capacity: 16)
        defer { writer.deallocate() }
        var bytes = CSVRowBytes()
        cells(&writer)
        cells(&bytes)
        writer.endRow()
        bytes.endRow()
        XCTAssertEqual(Array(writer.bytes), bytes.bytes)
        XCTAssert(
            String(decoding: writer.bytes, as: UTF8.self).hasPrefix(
                ",request,true,false,,0,9,10,99,100,-1,-305,1234567,9223372036854775807,-9223372036854775808,,"
                    + "1700000000.123456,-0.000005,0,0.12,nan,-inf,100000000000000000000.00,,"
                    + "GET 127.0.0.1:18180 /index.html/{id},\"a,b \"\"quoted\"\"\r\nand more than eight\",ü and ✓,0123"))
        // The same buffer, emptied, writes the next row from its start.
        writer.removeAll()
        writer.append("x")
        writer.append(false)
        writer.endRow()
        XCTAssertEqual(Array(writer.bytes), Array("x,false\r\n".utf8))
    }

    /// The file written record by record (the writer's path) is the committed fixture
    /// messages.csv, which `DeterminismTests` checks against the rows as texts.
    func testMessagesFileIsTheCommittedFixture() throws {
        let directory = NSTemporaryDirectory() + "csv-row-writer-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/messages.csv"
        let file = try MessagesCSV(path: path, estimators: ReportFixture.estimators)
        for record in ReportFixture.records { file.write(record) }
        try file.close()
        let written = try String(contentsOfFile: path, encoding: .utf8)
        let committed = try String(contentsOfFile: Fixtures.path("reports/fixture.messages.csv"), encoding: .utf8)
        XCTAssertEqual(written, committed)
    }
}
