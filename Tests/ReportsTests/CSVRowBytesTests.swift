import XCTest

@testable import Reports

/// Cells written as bytes must read as `CSVWriter.text` writes the same texts.
final class CSVRowBytesTests: XCTestCase {
    func testNumbersAreDecimalTextAndNilIsEmpty() {
        var cells = CSVTextCells()
        cells.append(0 as Int?)
        cells.append(7 as Int?)
        cells.append(-42 as Int?)
        cells.append(nil as Int?)
        cells.append(Int.max as Int?)
        cells.append(Int.min as Int?)
        cells.append(true)
        XCTAssertEqual(
            cells.cells,
            ["0", "7", "-42", "", "9223372036854775807", "-9223372036854775808", "true"])
    }

    func testRowBytesQuoteAsTheWriterDoes() {
        let fields = ["plain", "a,b", "say \"hi\"", "line\r\nend", "", "ü"]
        var row = CSVRowBytes()
        for field in fields { row.append(field) }
        row.append(12 as Int?)
        row.endRow()
        // Quoted: the comma, the quotes (doubled) and the line break; ü as its two UTF-8 bytes.
        XCTAssertEqual(
            String(decoding: row.bytes, as: UTF8.self), "plain,\"a,b\",\"say \"\"hi\"\"\",\"line\r\nend\",,ü,12\r\n")
        XCTAssertEqual(String(decoding: row.bytes, as: UTF8.self), CSVWriter.text([fields + ["12"]]))
        row.removeAll()
        row.append("x")
        row.endRow()
        XCTAssertEqual(row.bytes, Array("x\r\n".utf8))
    }

    func testRowBytesWriteNumbersInPlace() {
        var row = CSVRowBytes()
        row.append(nil as Int?)
        row.append(0 as Int?)
        row.append(9 as Int?)
        row.append(10 as Int?)
        row.append(-305 as Int?)
        row.append(Int.max as Int?)
        row.append(Int.min as Int?)
        row.endRow()
        // A nil cell is empty; digits are never quoted; Int.min's magnitude does not fit Int.
        XCTAssertEqual(
            String(decoding: row.bytes, as: UTF8.self),
            ",0,9,10,-305,9223372036854775807,-9223372036854775808\r\n")
    }

    func testARowLongerThanItsFirstBufferKeepsEveryByte() {
        // 300 cells of 10 letters: 3,299 bytes with the commas, 3,301 with CRLF, past the
        // 512 bytes the row starts with; then a short row in the same (grown) buffer.
        var row = CSVRowBytes()
        for _ in 0..<300 { row.append("abcdefghij") }
        row.append(-1234567 as Int?)
        row.endRow()
        let expected = Array(repeating: "abcdefghij", count: 300).joined(separator: ",") + ",-1234567\r\n"
        XCTAssertEqual(row.bytes.count, 3_299 + 9 + 2)
        XCTAssertEqual(String(decoding: row.bytes, as: UTF8.self), expected)
        row.removeAll()
        row.append("a\"b")
        row.append(0.125, decimals: 2)
        row.endRow()
        // The quote doubled inside quotes; 0.125 rounds half to even: 0.12.
        XCTAssertEqual(String(decoding: row.bytes, as: UTF8.self), "\"a\"\"b\",0.12\r\n")
    }

    /// Every special byte (comma, quote, CR, LF) at every place of cells 0 to 24 bytes long
    /// (the word-at-a-time scan's words and tail), and a byte of each other value, against
    /// RFC 4180's rule written out here: quoted, quotes doubled, when one of the four is there.
    func testQuotingMatchesTheRuleAtEveryPlace() {
        func expected(_ cell: [UInt8]) -> [UInt8] {
            guard cell.contains(where: { $0 == 44 || $0 == 34 || $0 == 13 || $0 == 10 }) else { return cell }
            return [34] + cell.flatMap { $0 == 34 ? [34, 34] : [$0] } + [34]
        }
        for length in 0...24 {
            for place in 0..<max(length, 1) {
                for byte in UInt8.min...UInt8.max {
                    var cell = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    if length > 0 { cell[place] = byte }
                    var row = CSVRowBytes()
                    row.append(7 as Int?)
                    cell.withUnsafeBufferPointer { row.append(utf8: $0) }
                    row.append(nil as Int?)
                    XCTAssertEqual(row.bytes, Array("7,".utf8) + expected(cell) + [44], "length \(length), byte \(byte) at \(place)")
                }
            }
        }
    }
}
