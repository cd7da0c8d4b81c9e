import CaptureIO

/// Byte counts as Foundation strings would give them (docs/METERING.md §4.1): text that is valid
/// UTF-8 counts its bytes; otherwise NSString reads the bytes as ISO-8859-1, and every byte
/// of 0x80 or above becomes a two-byte UTF-8 character.
enum FoundationText {
    static func utf8Length<C: Collection>(_ bytes: C) -> Int where C.Element == UInt8 {
        // ASCII, nearly every name and value, is UTF-8: no String is made to validate it.
        if bytes.withContiguousStorageIfAvailable({ orOfBytes($0) < 0x80 }) ?? !bytes.contains(where: { $0 >= 0x80 }) {
            return bytes.count
        }
        if String(validating: bytes, as: UTF8.self) != nil { return bytes.count }
        return bytes.reduce(0) { $0 + ($1 >= 0x80 ? 2 : 1) }
    }

    /// Every byte OR-ed together, eight at a time: below 0x80 exactly when all are ASCII
    /// (every name and value of every record is checked).
    @inline(__always) static func orOfBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt8 {
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        var words: UInt64 = 0
        var index = 0
        while index + 8 <= count {
            words |= UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            index += 8
        }
        var rest: UInt8 = 0
        while index < count {
            rest |= base[index]
            index += 1
        }
        // Every byte lane's high bit folded into the low byte; the other bits do not matter.
        let folded = words | words >> 32
        let lanes = folded | folded >> 16
        return rest | UInt8(truncatingIfNeeded: lanes | lanes >> 8)
    }

    /// `%XX` decoded, as NSURL's `path` does; nil when an escape is malformed or the result
    /// is not UTF-8 (NSURL then gives nil, printed `(null)`).
    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) else {
                    return nil
                }
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self) == nil ? nil : out
    }
}
