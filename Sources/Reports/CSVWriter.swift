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
        file.write(row.bytes)
        row.removeAll()
    }

    /// The text of `rows` as this writer writes it to a file.
    public static func text(_ rows: [[String]]) -> String {
        var bytes: [UInt8] = []
        for fields in rows {
            var row = CSVRowBytes()
            for field in fields { row.append(field) }
            row.endRow()
            bytes += row.bytes
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
    mutating func append(_ fraction: Double?, decimals: Int) {
        guard let fraction else { return append("") }
        FixedDecimal.withText(fraction, decimals: decimals) { append(utf8: $0) }
    }

    /// `true` or `false`.
    public mutating func append(_ flag: Bool) { append(flag ? "true" : "false") }
}

/// One CSV row's bytes, quoted as `CSVWriter` quotes.
public struct CSVRowBytes: CSVCells {
    public private(set) var bytes: [UInt8] = []
    private var cells = 0

    public init() { bytes.reserveCapacity(512) }

    public mutating func append(utf8 field: UnsafeBufferPointer<UInt8>) {
        beginCell()
        let needsQuotes = field.contains { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }
        guard needsQuotes else {
            bytes.append(contentsOf: field)
            return
        }
        bytes.append(34)
        for byte in field {
            if byte == 34 { bytes.append(34) }
            bytes.append(byte)
        }
        bytes.append(34)
    }

    /// Digits need no quotes: written straight into the row (once per number cell).
    public mutating func append(_ number: Int?) {
        beginCell()
        if let number { withDecimalText(number) { bytes.append(contentsOf: $0) } }
    }

    /// The comma before every cell but the first.
    private mutating func beginCell() {
        if cells > 0 { bytes.append(UInt8(ascii: ",")) }
        cells += 1
    }

    /// Ends the row with CRLF.
    mutating func endRow() {
        bytes.append(13)
        bytes.append(10)
    }

    /// Empties the row, keeping its capacity.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
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
