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
        var first = true
        for field in fields {
            if !first { file.write(byte: UInt8(ascii: ",")) }
            first = false
            append(field)
        }
        file.write(byte: 13)
        file.write(byte: 10)
    }

    private func append(_ field: String) {
        let utf8 = field.utf8
        let needsQuotes = utf8.contains { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }
        guard needsQuotes else {
            file.write(utf8)
            return
        }
        file.write(byte: 34)
        for byte in utf8 {
            if byte == 34 { file.write(byte: 34) }
            file.write(byte: byte)
        }
        file.write(byte: 34)
    }

    /// Writes what is buffered and puts the file in place; throws, naming the file, when
    /// any write failed (the partial file is removed).
    public func close() throws { try file.commit() }

    /// Abandons the file: nothing is left under its name or a temporary one.
    public func discard() { file.discard() }
}
