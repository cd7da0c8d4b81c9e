import Foundation

/// JSON text in the layout of JSONEncoder's `[.prettyPrinted, .sortedKeys,
/// .withoutEscapingSlashes]`, written as it is produced: two-space indentation, `"key" : value`,
/// an empty container as its brackets around a blank line. The caller writes keys in sorted
/// order. Text goes to `sink` in pieces of about 64 KiB, lent for the call (no copy is made).
///
/// A struct used through `inout`, writing into a fixed raw buffer: as a class, or through an
/// Array's appends, every byte paid exclusivity and capacity checks, most of report.json's time
/// (an 11 MB file on the benchmark capture).
struct PrettyJSONWriter {
    /// Owns the buffer (a struct has no deinit); `bytes` points into it.
    private final class Storage {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: PrettyJSONWriter.capacity)
        deinit { bytes.deallocate() }
    }

    private static let capacity = 1 << 16
    private let storage = Storage()
    private let bytes: UnsafeMutablePointer<UInt8>
    private var count = 0
    private let sink: (UnsafeRawBufferPointer) -> Void
    /// How many containers are open: the indentation of their members.
    private var depth = 0
    /// Whether the innermost open container has a member yet (a comma goes before the next).
    /// A closed container is a member of its parent, so no stack of these is needed.
    private var hasMembers = false

    init(sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.sink = sink
        bytes = storage.bytes
    }

    mutating func flush() {
        guard count > 0 else { return }
        sink(UnsafeRawBufferPointer(start: bytes, count: count))
        count = 0
    }

    /// Room for `needed` more bytes (flushing first when the buffer would overflow).
    @inline(__always)
    private mutating func reserve(_ needed: Int) {
        if count + needed > Self.capacity { flush() }
    }

    @inline(__always)
    private mutating func put(byte: UInt8) {
        reserve(1)
        bytes[count] = byte
        count += 1
    }

    private mutating func put(_ raw: UnsafeBufferPointer<UInt8>) {
        guard let start = raw.baseAddress, !raw.isEmpty else { return }
        guard raw.count <= Self.capacity else {
            // Longer than the buffer: handed on as it is, after what is buffered.
            flush()
            sink(UnsafeRawBufferPointer(raw))
            return
        }
        reserve(raw.count)
        (bytes + count).update(from: start, count: raw.count)
        count += raw.count
    }

    private mutating func put(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    private mutating func put(_ text: StaticString) {
        text.withUTF8Buffer { put($0) }
    }

    private mutating func indent(_ depth: Int) {
        let spaces = 2 * depth
        if spaces > Self.capacity {
            for _ in 0..<spaces { put(byte: 32) }
            return
        }
        reserve(spaces)
        (bytes + count).initialize(repeating: 32, count: spaces)
        count += spaces
    }

    /// Starts the next member: a comma after the previous one, a new line, the indentation.
    private mutating func nextMember() {
        if hasMembers { put(byte: UInt8(ascii: ",")) }
        hasMembers = true
        put(byte: 10)
        indent(depth)
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        put(byte: bracket)
        depth += 1
        hasMembers = false
    }

    private mutating func close(_ bracket: UInt8) {
        if !hasMembers { put(byte: 10) }
        put(byte: 10)
        depth -= 1
        indent(depth)
        put(byte: bracket)
        hasMembers = true
    }

    /// An object's next key; its value follows.
    mutating func key(named name: String) {
        nextMember()
        quoted(name)
        put(" : " as StaticString)
    }

    /// A key of the schema (ASCII, nothing to escape), written from its bytes.
    mutating func key(_ name: StaticString) {
        let needed = keyRoom(name)
        guard needed <= Self.capacity else {
            nextMember()
            put(byte: UInt8(ascii: "\""))
            put(name)
            put("\" : " as StaticString)
            return
        }
        reserve(needed)
        writeKey(name)
    }

    /// A key of the schema and its whole number (or null): the report's most frequent member,
    /// written after a single check for room.
    mutating func member(_ name: StaticString, int value: Int?) {
        let needed = keyRoom(name) + Self.intRoom
        guard needed <= Self.capacity else {
            key(name)
            return int(value)
        }
        reserve(needed)
        writeKey(name)
        writeInt(value)
    }

    /// A key of the schema and its fraction (or null).
    mutating func member(_ name: StaticString, double value: Double?) {
        key(name)
        double(value)
    }

    /// Bytes a key takes at most: comma, line end, indentation, quotes, name and ` : `.
    @inline(__always)
    private func keyRoom(_ name: StaticString) -> Int { 2 + 2 * depth + 1 + name.utf8CodeUnitCount + 4 }

    /// The comma, line, indentation, key and separator, where `reserve` made room for them.
    @inline(__always)
    private mutating func writeKey(_ name: StaticString) {
        let spaces = 2 * depth
        let length = name.utf8CodeUnitCount
        var end = bytes + count
        if hasMembers {
            end.pointee = UInt8(ascii: ",")
            end += 1
        }
        hasMembers = true
        end.pointee = 10
        end += 1
        end.initialize(repeating: 32, count: spaces)
        end += spaces
        end.pointee = UInt8(ascii: "\"")
        end += 1
        end.update(from: name.utf8Start, count: length)
        end += length
        end.pointee = UInt8(ascii: "\"")
        end[1] = 32
        end[2] = UInt8(ascii: ":")
        end[3] = 32
        end += 4
        count = end - bytes
    }

    /// An array's next element; its value follows.
    mutating func element() { nextMember() }

    mutating func newline() { put(byte: 10) }

    mutating func int(_ value: Int?) {
        reserve(Self.intRoom)
        writeInt(value)
    }

    /// Bytes a whole number takes at most (`FixedDecimal.write`'s room, more than Int.min's 19
    /// digits and sign).
    private static var intRoom: Int { FixedDecimal.maximumLength(decimals: 0) }

    /// A whole number or null, where `reserve` made room for it.
    @inline(__always)
    private mutating func writeInt(_ value: Int?) {
        guard let value else {
            (bytes + count).update(from: ("null" as StaticString).utf8Start, count: 4)
            count += 4
            return
        }
        count += FixedDecimal.write(UInt64(value.magnitude), decimals: 0, negative: value < 0, at: bytes + count)
    }

    /// As JSONEncoder writes a Double: Swift's shortest round-trip text, without a trailing `.0`.
    mutating func double(_ value: Double?) {
        guard let value else { return put("null" as StaticString) }
        if let millionths = Self.millionths(value) { return decimal(millionths) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        put(text)
    }

    /// `value` as a whole number of millionths, when its shortest round-trip text is that
    /// number with the point six places from the right (trailing zeros dropped), as for the
    /// report's fractions, rounded to 6 decimals: `value` is the double nearest to
    /// millionths / 10^6, a decimal of at most 15 significant digits, and doubles tell all
    /// such decimals apart, so no other decimal as short or shorter gives `value` back.
    /// Nil where Swift writes an exponent (under 10^-4, 2^53 and over) or the value is not
    /// such a decimal.
    static func millionths(_ value: Double) -> Int? {
        let magnitude = value.magnitude
        if magnitude == 0 { return value.sign == .plus ? 0 : nil } // -0 is written "-0"
        guard magnitude >= 1e-4, magnitude < 1e9 else { return nil }
        let scaled = (value * 1_000_000).rounded()
        guard scaled / 1_000_000 == value else { return nil }
        return Int(scaled)
    }

    /// millionths / 10^6 in decimal: the whole part, then a point and the decimals without
    /// trailing zeros, if any are left.
    private mutating func decimal(_ millionths: Int) {
        var fraction = millionths.magnitude % 1_000_000
        var places = fraction == 0 ? 0 : 6
        while places > 0 && fraction % 10 == 0 {
            fraction /= 10
            places -= 1
        }
        // |millionths| < 10^15 (`millionths`' bound): the scaled value fits in 64 bits.
        var scaled = UInt64(millionths.magnitude / 1_000_000)
        for _ in 0..<places { scaled *= 10 }
        scaled += UInt64(fraction)
        reserve(FixedDecimal.maximumLength(decimals: places))
        count += FixedDecimal.write(scaled, decimals: places, negative: millionths < 0, at: bytes + count)
    }

    mutating func string(_ value: String?) {
        guard let value else { return put("null" as StaticString) }
        quoted(value)
    }

    /// JSONEncoder's escapes: quote, backslash, and control characters (`\b \f \n \r \t`
    /// by name, others as `\u00XX`); slashes and everything else as UTF-8.
    private mutating func quoted(_ value: String) {
        var value = value
        value.withUTF8 { text in
            put(byte: UInt8(ascii: "\""))
            if !Self.needsEscape(text) {
                // Nothing to escape, the usual case: one copy.
                put(text)
            } else {
                for byte in text {
                    switch byte {
                    case UInt8(ascii: "\""): put("\\\"" as StaticString)
                    case 92: put("\\\\" as StaticString)
                    case 8: put("\\b" as StaticString)
                    case 12: put("\\f" as StaticString)
                    case 10: put("\\n" as StaticString)
                    case 13: put("\\r" as StaticString)
                    case 9: put("\\t" as StaticString)
                    case 0..<0x20:
                        let hex: StaticString = "0123456789abcdef"
                        put("\\u00" as StaticString)
                        put(byte: hex.utf8Start[Int(byte >> 4)])
                        put(byte: hex.utf8Start[Int(byte & 0xF)])
                    default: put(byte: byte)
                    }
                }
            }
            put(byte: UInt8(ascii: "\""))
        }
    }

    /// Whether `text` holds a byte JSON escapes (a control character, `"` or `\`). Looked at
    /// eight bytes at a time: endpoint names are most of report.json's strings.
    static func needsEscape(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = text.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // A byte of `word` is 0 exactly when `(word - ones) & ~word & highs` has its high bit.
        func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        var offset = 0
        while offset + 8 <= text.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(start + offset).loadUnaligned(as: UInt64.self))
            // A byte under 0x20 (the same borrow test, exact as a yes or no for limits up to
            // 0x80), then a `"` or a `\`.
            let control = (word &- 0x20 &* ones) & ~word & highs != 0
            if control || hasZeroByte(word ^ (0x22 &* ones)) || hasZeroByte(word ^ (0x5C &* ones)) { return true }
            offset += 8
        }
        while offset < text.count {
            let byte = text[offset]
            if byte < 0x20 || byte == 34 || byte == 92 { return true }
            offset += 1
        }
        return false
    }

    /// A value JSONEncoder already wrote (pretty-printed, from depth 0), indented to where it goes.
    mutating func encoded(_ text: Data) {
        var previous: UInt8 = 0
        for byte in text {
            // Blank lines (inside an empty container) stay without indentation.
            if previous == 10 && byte != 10 { indent(depth) }
            put(byte: byte)
            previous = byte
        }
    }
}
