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
        var row: [UInt8] = []
        row.reserveCapacity(512)
        Self.append(row: fields, to: &row)
        file.write(row)
    }

    /// The text of `rows` as this writer writes it to a file.
    public static func text(_ rows: [[String]]) -> String {
        var bytes: [UInt8] = []
        for row in rows { append(row: row, to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func append<S: Sequence>(row fields: S, to buffer: inout [UInt8]) where S.Element == String {
        var first = true
        for field in fields {
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            append(field, to: &buffer)
        }
        buffer.append(13)
        buffer.append(10)
    }

    /// One field, quoted when it must be (endpoints.csv writes its rows through it too).
    static func append(_ field: String, to row: inout [UInt8]) {
        // Through the contiguous bytes: the generic UTF-8 view cost more than the rest of a row.
        var field = field
        field.withUTF8 { bytes in
            let needsQuotes = bytes.contains { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }
            guard needsQuotes else {
                row.append(contentsOf: bytes)
                return
            }
            row.append(34)
            for byte in bytes {
                if byte == 34 { row.append(34) }
                row.append(byte)
            }
            row.append(34)
        }
    }

    /// Writes what is buffered and puts the file in place; throws, naming the file, when
    /// any write failed (the partial file is removed).
    public func close() throws { try file.commit() }

    /// Abandons the file: nothing is left under its name or a temporary one.
    public func discard() { file.discard() }
}
