/// Bounds-checked, big-endian reads from a borrowed buffer.
///
/// Every read returns nil instead of trapping when the buffer is too short, so no input can
/// crash the decoder; the checks compile to one compare each and the reads to unaligned loads.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer

    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    @inline(__always)
    var count: Int { bytes.count }

    /// True when `length` bytes starting at `offset` are inside the buffer.
    @inline(__always)
    func has(_ length: Int, at offset: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= bytes.count &- length
    }

    @inline(__always)
    func u8(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < bytes.count else { return nil }
        return bytes[offset]
    }

    @inline(__always)
    func u16(at offset: Int) -> UInt16? {
        guard has(2, at: offset) else { return nil }
        return UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func u32(at offset: Int) -> UInt32? {
        guard has(4, at: offset) else { return nil }
        return UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func u64(at offset: Int) -> UInt64? {
        guard has(8, at: offset) else { return nil }
        return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The bytes in `range`, or nil when the range is not inside the buffer.
    @inline(__always)
    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[range])
    }
}

/// A header parse that either succeeded or tells why the frame is skipped.
/// (Not `Result`: that would require `SkipReason: Error`, a public API change.)
enum Parsed<Value> {
    case ok(Value)
    case skip(SkipReason)
}
