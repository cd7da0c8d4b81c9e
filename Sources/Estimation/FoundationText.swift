import CaptureIO

/// Byte counts as Foundation strings would give them (docs/METERING.md §4.1): text that is valid
/// UTF-8 counts its bytes; otherwise NSString reads the bytes as ISO-8859-1, and every byte
/// of 0x80 or above becomes a two-byte UTF-8 character.
enum FoundationText {
    static func utf8Length<C: Collection>(_ bytes: C) -> Int where C.Element == UInt8 {
        // ASCII, nearly every name and value, is UTF-8: no String is made to validate it.
        if !bytes.contains(where: { $0 >= 0x80 }) { return bytes.count }
        if String(validating: bytes, as: UTF8.self) != nil { return bytes.count }
        return bytes.reduce(0) { $0 + ($1 >= 0x80 ? 2 : 1) }
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
