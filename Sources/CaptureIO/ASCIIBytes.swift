// Byte classes every text parser of the pipeline shares (HTTP heads, JSON, endpoint paths,
// percent-escapes), defined once here, the lowest module that reads text.

/// `0`...`9`.
@inlinable public func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

/// The value of a hexadecimal digit (either case); nil for any other byte.
@inlinable public func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 48...57: return byte - 48
    case 65...70: return byte - 55
    case 97...102: return byte - 87
    default: return nil
    }
}
