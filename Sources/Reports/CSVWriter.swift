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

    /// Bytes already in CSV form (part of a row), as they are.
    public func write(raw bytes: UnsafeRawBufferPointer) { file.write(bytes) }

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
    /// A cell of text.
    mutating func append(_ text: String)
    /// A name of the program's own (a case's raw value): ASCII, never a comma, quote or line
    /// break, so a writer may copy it without looking for what needs quotes.
    mutating func append(name: String)
    /// `scaled` / 10^`decimals` as `FixedDecimal.withDigits` writes it.
    mutating func append(scaled: UInt64, decimals: Int, negative: Bool)
    /// `true` or `false`.
    mutating func append(_ flag: Bool)
}

extension CSVCells {
    public mutating func append(name: String) { append(name) }

    public mutating func append(scaled: UInt64, decimals: Int, negative: Bool) {
        FixedDecimal.withDigits(scaled, decimals: decimals, negative: negative) { append(utf8: $0) }
    }

    public mutating func append(_ text: String) {
        // A native or small String lends its UTF-8 as it is (no copy of the String to mutate,
        // with its retain and release, as `withUTF8` needs; once per text cell).
        if text.utf8.withContiguousStorageIfAvailable({ append(utf8: $0) }) != nil { return }
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
    public mutating func append(_ flag: Bool) { append(name: flag ? "true" : "false") }
}

/// One CSV row's bytes, quoted as `CSVWriter` quotes, each cell written in place (`ByteText`).
public struct CSVRowBytes: CSVCells {
    private var text = ByteText()
    private var cells = 0

    public init() {}

    /// The row's bytes so far.
    public var bytes: [UInt8] { text.bytes }

    /// The row's bytes so far, lent for the call.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result { text.withBytes(body) }

    public mutating func append(utf8 field: UnsafeBufferPointer<UInt8>) {
        // The comma and the cell in one write: one look at the buffer's room and uniqueness.
        let comma = cells > 0
        cells += 1
        guard Self.needsQuotes(field) else {
            guard let source = field.baseAddress, !field.isEmpty else {
                if comma { text.append(UInt8(ascii: ",")) }
                return
            }
            return text.write(maximumLength: field.count + 1) { start in
                var end = start
                if comma {
                    end.pointee = UInt8(ascii: ",")
                    end += 1
                }
                end.update(from: source, count: field.count)
                return end - start + field.count
            }
        }
        // Every byte doubled at most, between two quotes, after the comma.
        text.write(maximumLength: 2 * field.count + 3) { start in
            var end = start
            if comma {
                end.pointee = UInt8(ascii: ",")
                end += 1
            }
            return quote(field, at: end) - start
        }
    }

    /// Whether a field holds a comma, a quote, CR or LF: eight bytes at a time (a word has one
    /// of them when the word XOR that byte repeated has a zero byte), then the last few one by one.
    @inline(__always)
    static func needsQuotes(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
        guard var position = field.baseAddress.map(UnsafeRawPointer.init) else { return false }
        var left = field.count
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        while left >= 8 {
            let word = position.loadUnaligned(as: UInt64.self)
            if hasZeroByte(word ^ (ones &* 44)) || hasZeroByte(word ^ (ones &* 34)) || hasZeroByte(word ^ (ones &* 10))
                || hasZeroByte(word ^ (ones &* 13))
            {
                return true
            }
            position += 8
            left -= 8
        }
        while left > 0 {
            let byte = position.load(as: UInt8.self)
            if byte == 44 || byte == 34 || byte == 10 || byte == 13 { return true }
            position += 1
            left -= 1
        }
        return false
    }

    /// Digits need no quotes: written straight into the row (once per number cell).
    public mutating func append(_ number: Int?) {
        let comma = cells > 0
        cells += 1
        guard let number else {
            if comma { text.append(UInt8(ascii: ",")) }
            return
        }
        text.write(maximumLength: FixedDecimal.maximumLength(decimals: 0) + 1) { start in
            var digits = start
            if comma {
                digits.pointee = UInt8(ascii: ",")
                digits += 1
            }
            return digits - start
                + FixedDecimal.write(UInt64(number.magnitude), decimals: 0, negative: number < 0, at: digits)
        }
    }

    /// A fraction's digits need no quotes either (nor does `String(format:)`'s text of the
    /// values `FixedDecimal` leaves to it: inf, nan, digits).
    public mutating func append(_ fraction: Double?, decimals: Int) {
        beginCell()
        guard let fraction else { return }
        let start = text.count
        text.write(maximumLength: FixedDecimal.maximumLength(decimals: decimals)) {
            FixedDecimal.write(fraction, decimals: decimals, at: $0) ?? 0
        }
        // Nothing written: a value FixedDecimal leaves to String(format:).
        if text.count == start { FixedDecimal.withText(fraction, decimals: decimals) { text.append($0) } }
    }

    /// The comma before every cell but the first.
    @inline(__always)
    private mutating func beginCell() {
        if cells > 0 { text.append(UInt8(ascii: ",")) }
        cells += 1
    }

    /// Ends the row with CRLF.
    mutating func endRow() {
        text.append(13)
        text.append(10)
    }

    /// Empties the row, keeping its buffer.
    mutating func removeAll() {
        text.removeAll()
        cells = 0
    }
}

/// messages.csv's rows, written as `CSVRowBytes` writes them into a buffer of the writer's own
/// (an unsafe pointer, freed by `deallocate()`), with no Array's uniqueness check or closure
/// per cell, and text cells checked for what needs quotes while they are copied, eight bytes
/// at a time: its cells cost more than the rest of the row's work (20 per record, 48 columns).
/// Not a value: one owner (MessagesCSV) keeps it and frees it.
struct CSVRowWriter: CSVCells {
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes of the row so far.
    private(set) var count = 0
    private var cells = 0

    init(capacity: Int = 4096) {
        self.capacity = capacity
        start = .allocate(capacity: capacity)
        start.initialize(repeating: 0, count: capacity)
    }

    func deallocate() { start.deallocate() }

    /// The row's bytes so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

    /// Ends the row with CRLF.
    mutating func endRow() {
        let end = room(2)
        end[0] = 13
        end[1] = 10
        count += 2
    }

    /// Empties the row, keeping its buffer.
    mutating func removeAll() {
        count = 0
        cells = 0
    }

    /// Where the next `length` bytes go, the buffer grown first when they do not fit.
    @inline(__always)
    private mutating func room(_ length: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - count < length { grow(length) }
        return start + count
    }

    @inline(never)
    private mutating func grow(_ length: Int) {
        let grown = max(2 * capacity, count + length)
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        larger.initialize(repeating: 0, count: grown)
        larger.update(from: start, count: count)
        start.deallocate()
        start = larger
        capacity = grown
    }

    /// The comma before every cell but the first; returns where the cell's text goes.
    @inline(__always)
    private mutating func beginCell(at position: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        defer { cells += 1 }
        guard cells > 0 else { return position }
        position.pointee = UInt8(ascii: ",")
        return position + 1
    }

    mutating func append(utf8 field: UnsafeBufferPointer<UInt8>) {
        // Room for the quoted form (every byte doubled, two quotes) after the comma.
        let begin = room(2 * field.count + 3)
        let text = beginCell(at: begin)
        guard let source = field.baseAddress, !field.isEmpty else { return count += text - begin }
        if let end = Self.copyUnquoted(source, field.count, to: text) { return count += end - begin }
        count += quote(field, at: text) - begin
    }

    /// Copies `length` bytes to `destination` eight at a time, unless one of them is a comma, a
    /// quote, CR or LF (`CSVRowBytes.needsQuotes`): returns the end of the copy, or nil.
    @inline(__always)
    private static func copyUnquoted(
        _ source: UnsafePointer<UInt8>, _ length: Int, to destination: UnsafeMutablePointer<UInt8>
    ) -> UnsafeMutablePointer<UInt8>? {
        var from = UnsafeRawPointer(source)
        var to = UnsafeMutableRawPointer(destination)
        var left = length
        let ones: UInt64 = 0x0101_0101_0101_0101
        @inline(__always) func zeroBytes(_ word: UInt64) -> UInt64 { (word &- ones) & ~word }
        @inline(__always) func isPlain(_ word: UInt64) -> Bool {
            let found =
                zeroBytes(word ^ (ones &* 44)) | zeroBytes(word ^ (ones &* 34)) | zeroBytes(word ^ (ones &* 10))
                | zeroBytes(word ^ (ones &* 13))
            return found & 0x8080_8080_8080_8080 == 0
        }
        while left >= 8 {
            let word = from.loadUnaligned(as: UInt64.self)
            if !isPlain(word) { return nil }
            to.storeBytes(of: word, as: UInt64.self)
            from += 8
            to += 8
            left -= 8
        }
        // The last few bytes of a text of eight or more: the word that ends with them, again.
        if left > 0 && length >= 8 {
            let word = (from + left - 8).loadUnaligned(as: UInt64.self)
            if !isPlain(word) { return nil }
            (to + left - 8).storeBytes(of: word, as: UInt64.self)
            return (to + left).assumingMemoryBound(to: UInt8.self)
        }
        while left > 0 {
            let byte = from.load(as: UInt8.self)
            if byte == 44 || byte == 34 || byte == 10 || byte == 13 { return nil }
            to.storeBytes(of: byte, as: UInt8.self)
            from += 1
            to += 1
            left -= 1
        }
        return to.assumingMemoryBound(to: UInt8.self)
    }

    @inline(__always)
    mutating func append(_ text: String) {
        if text.isEmpty {
            let begin = room(1)
            let end = beginCell(at: begin)
            return count += end - begin
        }
        // A native or small String lends its UTF-8 as it is (as `CSVCells.append(_:)`).
        if text.utf8.withContiguousStorageIfAvailable({ append(utf8: $0) }) != nil { return }
        var text = text
        text.withUTF8 { append(utf8: $0) }
    }

    @inline(__always)
    mutating func append(name: String) {
        if !text(of: name) { append(name as String) }
    }

    @inline(__always)
    mutating func append(_ flag: Bool) {
        let begin = room(9)
        let text = UnsafeMutableRawPointer(beginCell(at: begin))
        // "true" or "false" as one little-endian word (the bytes after "false" are room, not text).
        if flag {
            text.storeBytes(of: UInt32(0x6575_7274).littleEndian, as: UInt32.self)
            count += text + 4 - UnsafeMutableRawPointer(begin)
        } else {
            text.storeBytes(of: UInt64(0x65_736C_6166).littleEndian, as: UInt64.self)
            count += text + 5 - UnsafeMutableRawPointer(begin)
        }
    }

    /// `name`'s bytes copied as they are (`append(name:)`); false when its UTF-8 is not lent.
    @inline(__always)
    private mutating func text(of name: String) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { (bytes: UnsafeBufferPointer<UInt8>) -> Void in
            assert(!CSVRowBytes.needsQuotes(bytes), "a name that needs quotes: \(name)")
            let begin = room(bytes.count + 1)
            let text = beginCell(at: begin)
            if let source = bytes.baseAddress { text.update(from: source, count: bytes.count) }
            count += text + bytes.count - begin
        } != nil
    }

    @inline(__always)
    mutating func append(_ number: Int?) {
        let begin = room(FixedDecimal.maximumLength(decimals: 0) + 1)
        let digits = beginCell(at: begin)
        guard let number else { return count += digits - begin }
        count +=
            digits - begin + FixedDecimal.write(UInt64(number.magnitude), decimals: 0, negative: number < 0, at: digits)
    }

    @inline(__always)
    mutating func append(scaled: UInt64, decimals: Int, negative: Bool) {
        let begin = room(FixedDecimal.maximumLength(decimals: decimals) + 1)
        let digits = beginCell(at: begin)
        count += digits - begin + FixedDecimal.write(scaled, decimals: decimals, negative: negative, at: digits)
    }

    mutating func append(_ fraction: Double?, decimals: Int) {
        let begin = room(FixedDecimal.maximumLength(decimals: decimals) + 1)
        let digits = beginCell(at: begin)
        guard let fraction else { return count += digits - begin }
        if let length = FixedDecimal.write(fraction, decimals: decimals, at: digits) {
            return count += digits - begin + length
        }
        // A value FixedDecimal leaves to String(format:): digits, inf or nan, no quotes needed.
        count += digits - begin
        FixedDecimal.withText(fraction, decimals: decimals) { text in
            guard let source = text.baseAddress else { return }
            room(text.count).update(from: source, count: text.count)
            count += text.count
        }
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

/// Writes `field` between double quotes at `start`, each quote in it doubled (RFC 4180), and
/// returns the end: room for `2 * field.count + 2` bytes is the caller's.
@inline(__always)
private func quote(_ field: UnsafeBufferPointer<UInt8>, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
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
    return end + 1
}
