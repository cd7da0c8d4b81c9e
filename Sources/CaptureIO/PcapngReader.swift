#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// pcapng block types this reader interprets; every other block is skipped by its length.
private enum BlockType {
    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let interfaceDescription: UInt32 = 1
    static let obsoletePacket: UInt32 = 2
    static let simplePacket: UInt32 = 3
    static let enhancedPacket: UInt32 = 6
    static let decryptionSecrets: UInt32 = 0x0000_000A
}

/// The body of a pcapng Decryption Secrets Block (after block type and total length, before
/// the trailing length), handed on unread: what it holds is the TLS stage's business.
public struct DecryptionSecretsBlock: Sendable, Equatable {
    public var body: [UInt8]
    /// The section's byte order: how the body's type and length fields read.
    public var bigEndian: Bool

    public init(body: [UInt8], bigEndian: Bool) {
        self.body = body
        self.bigEndian = bigEndian
    }
}

/// What a pcapng section says about one capture interface.
struct PcapngInterface {
    var linkType: Int32
    /// 0 means no limit.
    var snaplen: UInt32
    /// Timestamp units per second (from if_tsresol; 10^6 by default).
    var unitsPerSecond: UInt64
    /// Nanoseconds per unit when that is a whole number, so the common cases take one multiply.
    var nanosecondsPerUnit: UInt64
    /// if_tsoffset, already in nanoseconds (exact: seconds × 10^9 fits 128 bits).
    var offsetNanoseconds: Int128
    /// if_tsresol was unusable and microseconds were assumed (reported on every frame).
    var resolutionAssumed = false

    /// Converts a raw timestamp to nanoseconds since the epoch. Sub-nanosecond parts are cut
    /// off; the sum is computed in 128 bits (units × 10^9 < 2^94) and clamped to what Int64
    /// nanoseconds hold, 1970-01-01 ... 2262-04-11.
    func nanoseconds(_ units: UInt64) -> (value: Int64, flags: TimestampFlags) {
        let nanoseconds: Int128
        if nanosecondsPerUnit != 0 {
            nanoseconds = Int128(units) * Int128(nanosecondsPerUnit)
        } else {
            let (seconds, fraction) = units.quotientAndRemainder(dividingBy: unitsPerSecond)
            // fraction < unitsPerSecond, so the quotient is below 10^9: no overflow.
            let wide = fraction.multipliedFullWidth(by: 1_000_000_000)
            let fractionNanoseconds = unitsPerSecond.dividingFullWidth(wide).quotient
            nanoseconds = Int128(seconds) * 1_000_000_000 + Int128(fractionNanoseconds)
        }
        let time = CaptureTime.clamped(nanoseconds + offsetNanoseconds)
        var flags: TimestampFlags = time.clamped ? .clamped : []
        if resolutionAssumed { flags.insert(.resolutionAssumed) }
        return (time.value, flags)
    }

    /// Units per second for an if_tsresol byte (n: 10^-n s; 0x80 | n: 2^-n s), or nil when a
    /// UInt64 cannot count them (10^-20 and finer, 2^-64 and finer). 0 is whole seconds.
    static func unitsPerSecond(resolution: UInt8) -> UInt64? {
        let exponent = Int(resolution & 0x7F)
        if resolution & 0x80 != 0 {
            return exponent < 64 ? 1 << UInt64(exponent) : nil
        }
        // 10^19 is the largest power of ten a UInt64 holds.
        guard exponent <= 19 else { return nil }
        var units: UInt64 = 1
        for _ in 0..<exponent { units *= 10 }
        return units
    }
}

/// A small pcapng reader (libpcap 1.10 rejects files whose interfaces differ in link type).
///
/// Each block is read whole into one reusable buffer that grows only for a bigger block; frames
/// point into it. Every field access is checked against the block's length first, and the
/// block's length against what was actually read.
final class PcapngReader {
    let path: String
    private let stream: CaptureStream
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    /// Whether the current section was written in the other byte order than this machine's.
    private var swapped = false
    /// Interfaces of the current section, indexed by interface id.
    private var interfaces: [PcapngInterface] = []
    private var frameNumber = 0
    private var finished = false
    /// Kept so that calls after an error repeat it instead of reading on from a random place.
    private var failure: CaptureError?
    /// Bytes of the (uncompressed) stream read so far.
    private(set) var bytesConsumed = 0
    /// Decryption Secrets Blocks read and not yet taken; a block comes before the packets
    /// that need its keys, so taking them after each frame is in time.
    private(set) var decryptionSecrets: [DecryptionSecretsBlock] = []

    /// The Decryption Secrets Blocks read since the last call.
    func takeDecryptionSecrets() -> [DecryptionSecretsBlock] {
        guard !decryptionSecrets.isEmpty else { return [] }
        defer { decryptionSecrets = [] }
        return decryptionSecrets
    }

    private static let initialCapacity = 1 << 16
    /// Default for `maximumBufferedBlock`: 64 MiB, far above any real packet (a 256 KiB
    /// snaplen is the largest tools use).
    static let defaultMaximumBufferedBlock = 64 << 20
    /// Upper bound for a block that must be held whole (packets, headers); larger lengths are
    /// taken as damage rather than allocated. Unknown blocks are skipped without this limit.
    private let maximumBufferedBlock: Int

    /// Takes ownership of `stream`, which must start with a Section Header Block; throws
    /// `.notACapture` when that header is unusable. `maximumBufferedBlock` is at least 64 bytes.
    init(path: String, stream: CaptureStream, maximumBufferedBlock: Int = PcapngReader.defaultMaximumBufferedBlock)
        throws
    {
        self.path = path
        self.stream = stream
        self.maximumBufferedBlock = max(64, maximumBufferedBlock)
        capacity = PcapngReader.initialCapacity
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        do {
            guard let type = try readBlock(), type == BlockType.sectionHeader else {
                throw CaptureError.notACapture(path: path, reason: "no section header block")
            }
            try readSectionHeader()
        } catch let error as CaptureError {
            switch error {
            case .truncated(_, _, let reason), .corrupt(_, _, let reason):
                throw CaptureError.notACapture(path: path, reason: "pcapng section header: \(reason)")
            default:
                throw error
            }
        }
    }

    deinit {
        stream.close()
        buffer.deallocate()
    }

    func next() throws -> CapturedFrame? {
        if let failure { throw failure }
        if finished { return nil }
        do {
            while let type = try readBlock() {
                switch type {
                case BlockType.sectionHeader: try readSectionHeader()
                case BlockType.interfaceDescription: try readInterfaceDescription()
                case BlockType.enhancedPacket: return try enhancedPacket()
                case BlockType.simplePacket: return try simplePacket()
                case BlockType.obsoletePacket: return try obsoletePacket()
                case BlockType.decryptionSecrets: readDecryptionSecrets()
                default: continue // already skipped by readBlock
                }
            }
            finished = true
            return nil
        } catch let error as CaptureError {
            failure = error
            throw error
        }
    }

    // MARK: - Blocks

    /// Length of the block currently in the buffer (header and trailer included).
    private var blockLength = 0

    /// Reads the next block into the buffer and returns its type, or nil at a clean end of file
    /// (between blocks). Blocks this reader does not interpret are consumed but not kept.
    private func readBlock() throws -> UInt32? {
        let headerBytes = fill(at: 0, count: 8)
        if headerBytes == 0 {
            try checkReadError()
            return nil
        }
        guard headerBytes == 8 else { throw try cut("block header cut after \(headerBytes) of 8 bytes") }

        var headerLength = 8
        // The Section Header's type reads the same in both byte orders; the byte-order magic
        // after its length tells how to read everything else, the length included.
        if buffer.loadUnaligned(as: UInt32.self) == BlockType.sectionHeader {
            guard fill(at: 8, count: 4) == 4 else { throw try cut("section header cut before its byte-order magic") }
            switch buffer.loadUnaligned(fromByteOffset: 8, as: UInt32.self) {
            case 0x1A2B_3C4D: swapped = false
            case UInt32(0x1A2B_3C4D).byteSwapped: swapped = true
            case let other: throw corrupt("bad byte-order magic 0x\(String(other, radix: 16))")
            }
            headerLength = 12
        }
        let type = field32(0)
        let length32 = field32(4)
        guard length32 >= 12, length32 % 4 == 0 else {
            throw corrupt("block length \(length32) (type \(type)) is below 12 or not a multiple of 4")
        }
        let length = Int(length32)
        blockLength = length

        switch type {
        case BlockType.sectionHeader, BlockType.interfaceDescription, BlockType.enhancedPacket,
            BlockType.simplePacket, BlockType.obsoletePacket, BlockType.decryptionSecrets:
            guard length <= maximumBufferedBlock else {
                throw corrupt(
                    "block length \(length) (type \(type)) exceeds the \(maximumBufferedBlock) bytes accepted (maximum block size)"
                )
            }
            reserve(length)
            let got = fill(at: headerLength, count: length - headerLength)
            guard got == length - headerLength else {
                throw try cut("block of \(length) bytes (type \(type)) cut after \(headerLength + got) bytes")
            }
            try checkTrailer(field32(length - 4))
        default:
            // Skipped in buffer-sized pieces so that a large unknown block costs no memory.
            var remaining = length - headerLength - 4
            while remaining > 0 {
                let piece = min(remaining, capacity)
                let got = fill(at: 0, count: piece)
                guard got == piece else { throw try cut("block of \(length) bytes (type \(type)) cut short") }
                remaining -= piece
            }
            guard fill(at: 0, count: 4) == 4 else {
                throw try cut("block of \(length) bytes (type \(type)) cut before its trailer")
            }
            try checkTrailer(field32(0))
        }
        return type
    }

    private func checkTrailer(_ trailer: UInt32) throws {
        guard Int(trailer) == blockLength else {
            throw corrupt("block length \(blockLength) does not match its trailing length \(trailer)")
        }
    }

    /// A new section: byte order already set by `readBlock`; interface ids start over.
    private func readSectionHeader() throws {
        guard blockLength >= 28 else { throw corrupt("section header block of \(blockLength) bytes, below 28") }
        let major = field16(12)
        guard major == 1 else { throw corrupt("unsupported pcapng version \(major).\(field16(14))") }
        interfaces.removeAll(keepingCapacity: true)
    }

    /// Keeps the block's body (between total length and trailer) for the analyzer.
    private func readDecryptionSecrets() {
        let body = UnsafeRawBufferPointer(start: buffer + 8, count: blockLength - 12)
        decryptionSecrets.append(DecryptionSecretsBlock(body: Array(body), bigEndian: swappedIsBigEndian))
    }

    /// Whether the current section is big-endian.
    private var swappedIsBigEndian: Bool {
        let hostIsBigEndian = 1.bigEndian == 1
        return swapped != hostIsBigEndian
    }

    private func readInterfaceDescription() throws {
        guard blockLength >= 20 else { throw corrupt("interface description block of \(blockLength) bytes, below 20") }
        var resolution: UInt8 = 6 // microseconds unless if_tsresol says otherwise
        var offsetSeconds: Int64 = 0
        var offset = 16
        let end = blockLength - 4
        while offset + 4 <= end {
            let code = field16(offset)
            let valueLength = Int(field16(offset + 2))
            let value = offset + 4
            if code == 0 { break } // opt_endofopt
            guard valueLength <= end - value else {
                throw corrupt("interface option \(code) of \(valueLength) bytes overruns its block")
            }
            switch code {
            case 9 where valueLength >= 1: resolution = buffer.load(fromByteOffset: value, as: UInt8.self)
            case 14 where valueLength >= 8: offsetSeconds = Int64(bitPattern: field64(value))
            default: break
            }
            offset = value + ((valueLength + 3) & ~3) // values are padded to 32 bits
        }

        // An unusable resolution loses the times, not the packets: microseconds (the pcapng
        // default) are assumed, and every frame of the interface says so.
        let units = PcapngInterface.unitsPerSecond(resolution: resolution)
        let unitsPerSecond = units ?? 1_000_000
        let exact = 1_000_000_000 % unitsPerSecond == 0
        interfaces.append(
            PcapngInterface(
                linkType: Int32(field16(8)), snaplen: field32(12), unitsPerSecond: unitsPerSecond,
                nanosecondsPerUnit: exact ? 1_000_000_000 / unitsPerSecond : 0,
                offsetNanoseconds: Int128(offsetSeconds) * 1_000_000_000,
                resolutionAssumed: units == nil))
    }

    private func enhancedPacket() throws -> CapturedFrame {
        guard blockLength >= 32 else { throw corrupt("enhanced packet block of \(blockLength) bytes, below 32") }
        return try packet(interfaceID: Int(field32(8)))
    }

    private func obsoletePacket() throws -> CapturedFrame {
        guard blockLength >= 32 else { throw corrupt("packet block of \(blockLength) bytes, below 32") }
        return try packet(interfaceID: Int(field16(8)))
    }

    /// Enhanced and obsolete Packet Blocks share the layout from offset 12 on: timestamp
    /// (high, low), captured length, original length, data.
    private func packet(interfaceID: Int) throws -> CapturedFrame {
        guard interfaceID < interfaces.count else {
            throw corrupt(
                "packet on interface \(interfaceID), but the section describes \(interfaces.count) interface(s)")
        }
        let interface = interfaces[interfaceID]
        let capturedLength = Int(field32(20))
        guard capturedLength <= blockLength - 32 else {
            throw corrupt("captured length \(capturedLength) exceeds its block of \(blockLength) bytes")
        }
        let units = UInt64(field32(12)) << 32 | UInt64(field32(16))
        let time = interface.nanoseconds(units)
        frameNumber += 1
        return CapturedFrame(
            number: frameNumber, timestamp: time.value, linkType: interface.linkType,
            interface: interfaceID, originalLength: Int(field32(24)),
            bytes: UnsafeRawBufferPointer(start: buffer + 28, count: capturedLength),
            timestampFlags: time.flags)
    }

    /// A Simple Packet Block belongs to interface 0 and has no timestamp (reported as 0) and
    /// no captured length: it is the original length cut to snaplen and to the block.
    private func simplePacket() throws -> CapturedFrame {
        guard blockLength >= 16 else { throw corrupt("simple packet block of \(blockLength) bytes, below 16") }
        guard let interface = interfaces.first else {
            throw corrupt("simple packet block, but the section describes no interface")
        }
        let originalLength = Int(field32(8))
        var capturedLength = min(originalLength, blockLength - 16)
        if interface.snaplen != 0 { capturedLength = min(capturedLength, Int(interface.snaplen)) }
        frameNumber += 1
        return CapturedFrame(
            number: frameNumber, timestamp: 0, linkType: interface.linkType, interface: 0,
            originalLength: originalLength,
            bytes: UnsafeRawBufferPointer(start: buffer + 12, count: capturedLength))
    }

    // MARK: - Buffer and stream

    /// Reads up to `count` bytes to `buffer + offset`; the caller has made room for them.
    private func fill(at offset: Int, count: Int) -> Int {
        let got = fread(buffer + offset, 1, count, stream.file)
        bytesConsumed += got
        return got
    }

    /// Makes room for a block of `length` bytes, keeping the header already read.
    private func reserve(_ length: Int) {
        guard length > capacity else { return }
        let newCapacity = max(length, capacity * 2)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        grown.copyMemory(from: buffer, byteCount: 12)
        buffer.deallocate()
        buffer = grown
        capacity = newCapacity
    }

    private func field16(_ offset: Int) -> UInt16 {
        let value = buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
        return swapped ? value.byteSwapped : value
    }

    private func field32(_ offset: Int) -> UInt32 {
        let value = buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        return swapped ? value.byteSwapped : value
    }

    private func field64(_ offset: Int) -> UInt64 {
        let value = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        return swapped ? value.byteSwapped : value
    }

    // MARK: - Errors

    /// The frame an error is about: the one whose block was being read.
    private func corrupt(_ reason: String) -> CaptureError {
        .corrupt(path: path, frame: frameNumber + 1, reason: reason)
    }

    /// A short read is truncation, unless the stream reports an error (e.g. damaged gzip data).
    private func cut(_ reason: String) throws -> CaptureError {
        try checkReadError()
        return .truncated(path: path, frame: frameNumber + 1, reason: reason)
    }

    private func checkReadError() throws {
        if ferror(stream.file) != 0 {
            throw corrupt("read error: \(CaptureReader.errnoDescription())")
        }
    }
}
