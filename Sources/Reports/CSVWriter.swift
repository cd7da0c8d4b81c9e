/// Writes RFC 4180 CSV: fields holding commas, quotes or line breaks are quoted, quotes
/// doubled, rows end with CRLF. The file is an `OutputFile`: it appears under its name only
/// once `close()` has written all of it.
public final class CSVWriter {
    private let file: OutputFile

    public typealias Error = OutputFile.Error

    public init(path: String) throws {
        file = try OutputFile(path: path)
    }

    public var path: String { file.path }

    public func writeRow<S: Sequence>(_ fields: S) where S.Element == String {
        // The row is built locally and handed over whole: one call into the file per row.
        var row = CSVRowBytes()
        for field in fields { row.append(field) }
        writeRow(&row)
    }

    /// Writes a row built cell by cell, and empties it for the next (its capacity kept).
    public func writeRow(_ row: inout CSVRowBytes) {
        row.endRow()
        row.withBytes { file.write($0) }
        row.removeAll()
    }

    /// The text of `rows` as this writer writes it to a file.
    public static func text(_ rows: [[String]]) -> String {
        var bytes: [UInt8] = []
        for fields in rows {
            var row = CSVRowBytes()
            for field in fields { row.append(field) }
            row.endRow()
            row.withBytes { bytes += $0 }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes what is buffered and puts the file in place; throws, naming the file, when
    /// any write failed (the partial file is removed).
    public func close() throws { try file.commit() }

    /// Abandons the file: nothing is left under its name or a temporary one.
    public func discard() { file.discard() }
}

/// Where a row's cells go, one after another: `CSVRowBytes` when writing a file (no String
/// per cell), `CSVTextCells` when the cells are wanted as texts.
public protocol CSVCells {
    /// A cell of UTF-8 text.
    mutating func append(utf8 text: UnsafeBufferPointer<UInt8>)
    /// A decimal integer; an empty cell for nil.
    mutating func append(_ number: Int?)
    /// A fraction with `decimals` fixed decimals (`FixedDecimal`); an empty cell for nil.
    mutating func append(_ fraction: Double?, decimals: Int)
}

extension CSVCells {
    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(utf8: $0) }
    }

    /// A decimal integer; an empty cell for nil.
    public mutating func append(_ number: Int?) {
        guard let number else { return append(utf8: UnsafeBufferPointer(start: nil, count: 0)) }
        withDecimalText(number) { append(utf8: $0) }
    }

    /// A fraction with `decimals` fixed decimals (`FixedDecimal`); an empty cell for nil.
    public mutating func append(_ fraction: Double?, decimals: Int) {
        guard let fraction else { return append("") }
        FixedDecimal.withText(fraction, decimals: decimals) { append(utf8: $0) }
    }

    /// `true` or `false`.
    public mutating func append(_ flag: Bool) { append(flag ? "true" : "false") }
}

/// One CSV row's bytes, quoted as `CSVWriter` quotes.
///
/// The row is `buffer[..<count]`; the buffer is kept longer than any row so far (zeros past
/// the row), so that a cell is written in place: an Array append per cell cost more than the
/// digits of a number (messages.csv and endpoints.csv are mostly numbers).
public struct CSVRowBytes: CSVCells {
    private var buffer = [UInt8](repeating: 0, count: 512)
    private var count = 0
    private var cells = 0

    public init() {}

    /// The row's bytes so far.
    public var bytes: [UInt8] { Array(buffer[..<count]) }

    /// The row's bytes so far, lent for the call.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    public mutating func append(utf8 field: UnsafeBufferPointer<UInt8>) {
        beginCell()
        let needsQuotes = field.contains { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }
        guard needsQuotes else { return write(field) }
        // Every byte doubled at most, between two quotes.
        writeInPlace(maximumLength: 2 * field.count + 2) { start in
            var end = start
            end.pointee = 34
            end += 1
            for byte in field {
                if byte == 34 {
                    end.pointee = 34
                    end += 1
                }
                end.pointee = byte
                end += 1
            }
            end.pointee = 34
            return end - start + 1
        }
    }

    /// Digits need no quotes: written straight into the row (once per number cell).
    public mutating func append(_ number: Int?) {
        beginCell()
        guard let number else { return }
        writeInPlace(maximumLength: FixedDecimal.maximumLength(decimals: 0)) {
            FixedDecimal.write(UInt64(number.magnitude), decimals: 0, negative: number < 0, at: $0)
        }
    }

    /// A fraction's digits need no quotes either (nor does `String(format:)`'s text of the
    /// values `FixedDecimal` leaves to it: inf, nan, digits).
    public mutating func append(_ fraction: Double?, decimals: Int) {
        beginCell()
        guard let fraction else { return }
        FixedDecimal.withText(fraction, decimals: decimals) { write($0) }
    }

    /// The comma before every cell but the first.
    @inline(__always)
    private mutating func beginCell() {
        if cells > 0 { writeInPlace(maximumLength: 1) { $0.pointee = UInt8(ascii: ","); return 1 } }
        cells += 1
    }

    private mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        writeInPlace(maximumLength: bytes.count) {
            $0.update(from: source, count: bytes.count)
            return bytes.count
        }
    }

    /// Lets `body` write up to `maximumLength` bytes at the row's end; it returns how many it wrote.
    @inline(__always)
    private mutating func writeInPlace(
        maximumLength: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int
    ) {
        if buffer.count - count < maximumLength {
            buffer.append(contentsOf: repeatElement(0, count: max(maximumLength, buffer.count)))
        }
        let start = count
        count += buffer.withUnsafeMutableBufferPointer { body($0.baseAddress! + start) }
    }

    /// Ends the row with CRLF.
    mutating func endRow() {
        writeInPlace(maximumLength: 2) {
            $0[0] = 13
            $0[1] = 10
            return 2
        }
    }

    /// Empties the row, keeping its buffer.
    mutating func removeAll() {
        count = 0
        cells = 0
    }
}

/// A row's cells as texts.
public struct CSVTextCells: CSVCells {
    public private(set) var cells: [String] = []

    public init(capacity: Int = 0) { cells.reserveCapacity(capacity) }

    public mutating func append(utf8 text: UnsafeBufferPointer<UInt8>) {
        cells.append(String(decoding: text, as: UTF8.self))
    }
}
