#if canImport(Glibc)
import Glibc
#endif

/// Writes RFC 4180 CSV to a file through a buffer: fields holding commas, quotes or line
/// breaks are quoted, quotes doubled, rows end with CRLF.
public final class CSVWriter {
    private let file: UnsafeMutablePointer<FILE>
    private var buffer: [UInt8] = []
    private let path: String

    public enum Error: Swift.Error, CustomStringConvertible {
        case cannotCreate(path: String, reason: String)
        case writeFailed(path: String)

        public var description: String {
            switch self {
            case let .cannotCreate(path, reason): return "\(path): cannot create: \(reason)"
            case let .writeFailed(path): return "\(path): write failed"
            }
        }
    }

    public init(path: String) throws {
        guard let file = fopen(path, "wb") else {
            throw Error.cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        self.file = file
        self.path = path
        buffer.reserveCapacity(1 << 16)
    }

    deinit { fclose(file) }

    public func writeRow<S: Sequence>(_ fields: S) where S.Element == String {
        Self.append(row: fields, to: &buffer)
        if buffer.count >= 1 << 16 { flushBuffer() }
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

    private static func append(_ field: String, to buffer: inout [UInt8]) {
        let utf8 = field.utf8
        let needsQuotes = utf8.contains { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }
        guard needsQuotes else {
            buffer.append(contentsOf: utf8)
            return
        }
        buffer.append(34)
        for byte in utf8 {
            if byte == 34 { buffer.append(34) }
            buffer.append(byte)
        }
        buffer.append(34)
    }

    private func flushBuffer() {
        _ = buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered; throws when the file could not take it.
    public func close() throws {
        flushBuffer()
        if fflush(file) != 0 || ferror(file) != 0 { throw Error.writeFailed(path: path) }
    }
}
