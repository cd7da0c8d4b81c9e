import CZlib

/// The length of `-[NSData gzippedData]` (GZIP category ≥ 1.1) of bytes streamed through it.
///
/// That method returns empty data, and data starting with the gzip magic `1f 8b`, unchanged;
/// anything else it compresses with `deflateInit2(level, Z_DEFLATED, 31, 8,
/// Z_DEFAULT_STRATEGY)` and `deflate(Z_FINISH)` (docs/METERING.md §4.1). At levels 1–9 deflate's
/// output does not depend on how its input arrives when nothing is flushed, so the body is
/// fed in pieces with `Z_NO_FLUSH` and only the output is counted, through one fixed buffer:
/// neither the input nor the compressed data is held (at most the first byte, until the
/// magic check can be decided).
///
/// The body is deflated raw (window bits -15) and the gzip wrapper counted, not written: the
/// wrapper zlib writes for window bits 31 with no `gz_header` set is a 10-byte header and an
/// 8-byte trailer around the same deflate data, and its CRC-32 over the whole body (a tenth
/// of deflate's time) changes no length. `length(of:)` keeps the wrapper, as the category.
///
/// One sizer sizes one body at a time; `reset()` readies it for the next, so callers can
/// pool sizers and keep zlib's ~256 KiB of state allocated.
public final class GzipSizer {
    /// Where the body stands against the magic check.
    private enum Phase {
        /// Nothing fed yet.
        case empty
        /// One byte fed: the magic check needs the second.
        case held(UInt8)
        /// Not gzip data: bytes go through deflate.
        case compressing
        /// Starts with `1f 8b`: returned unchanged, so its length is the input length.
        case unchanged
        /// `finish()` was called; holds its answer.
        case finished(Int)
    }

    private let level: Int32
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer
    private var phase = Phase.empty
    private var length = 0

    /// zlib's gzip header (no name, comment or extra field) and trailer (CRC-32, length).
    private static let gzipWrapperLength = 10 + 8

    /// Output buffer size: only counted, never kept; large enough that deflate rarely stops
    /// for room.
    private static let outputSize = 1 << 16

    /// `level` is a zlib level: `Z_DEFAULT_COMPRESSION` (-1, which zlib treats as 6) or 1–9.
    /// Level 0 is refused: stored blocks are cut where input and output run out, so its
    /// output depends on how the input is split and cannot be streamed exactly.
    public init(level: Int32 = 6) {
        precondition(GzipSizer.isStreamable(level), "gzip level \(level) is not -1 or 1...9")
        self.level = level
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(
            stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "deflateInit2 failed: \(status)")
        output = UnsafeMutableRawBufferPointer.allocate(byteCount: GzipSizer.outputSize, alignment: 16)
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Readies the sizer for another body (deflateReset: zlib's buffers are kept).
    public func reset() {
        if case .empty = phase { return }
        deflateReset(stream)
        phase = .empty
        length = 0
    }

    /// Streams the next bytes of the body through. Must not follow `finish()` without `reset()`.
    public func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        switch phase {
        case .empty:
            if bytes.count == 1 {
                phase = .held(bytes[0])
            } else {
                start(magic: bytes[0] == 0x1f && bytes[1] == 0x8b)
                consume(bytes)
            }
        case let .held(first):
            start(magic: first == 0x1f && bytes[0] == 0x8b)
            withUnsafeBytes(of: first) { consume($0) }
            consume(bytes)
        case .compressing, .unchanged:
            consume(bytes)
        case .finished:
            preconditionFailure("GzipSizer.feed after finish() without reset()")
        }
    }

    /// Ends the body and returns the length of its `gzippedData`. Calling it again returns
    /// the same length.
    public func finish() -> Int {
        switch phase {
        case .empty:
            length = 0
        case let .held(first):
            // One byte cannot be the two-byte magic: it is compressed.
            start(magic: false)
            withUnsafeBytes(of: first) { consume($0) }
            length += run(flush: Z_FINISH) + Self.gzipWrapperLength
        case .compressing:
            length += run(flush: Z_FINISH) + Self.gzipWrapperLength
        case .unchanged:
            break
        case let .finished(total):
            return total
        }
        phase = .finished(length)
        return length
    }

    /// The length of `gzippedData` of `bytes` in one call, the way the GZIP category does
    /// it: all input at once, `deflate(Z_FINISH)` into 16 KiB of output at a time. Same
    /// levels as `init(level:)`.
    public static func length(of bytes: [UInt8], level: Int32 = 6) -> Int {
        precondition(isStreamable(level), "gzip level \(level) is not -1 or 1...9")
        if bytes.isEmpty || (bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) { return bytes.count }
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY,
                ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            return 0 // as the category: no zlib, nil data, length 0
        }
        defer { deflateEnd(&stream) }
        var chunk = [UInt8](repeating: 0, count: 16384)
        return bytes.withUnsafeBytes { input -> Int in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            var total = 0
            chunk.withUnsafeMutableBytes { out in
                var status = Z_OK
                while status == Z_OK {
                    stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.avail_out = uInt(out.count)
                    status = deflate(&stream, Z_FINISH)
                    total += out.count - Int(stream.avail_out)
                }
                precondition(status == Z_STREAM_END, "deflate failed: \(status)")
            }
            return total
        }
    }

    private static func isStreamable(_ level: Int32) -> Bool {
        level == Z_DEFAULT_COMPRESSION || (1...9).contains(level)
    }

    private func start(magic: Bool) {
        phase = magic ? .unchanged : .compressing
    }

    private func consume(_ bytes: UnsafeRawBufferPointer) {
        guard case .compressing = phase else {
            length += bytes.count
            return
        }
        // avail_in is 32 bits wide: hand over huge pieces a gigabyte at a time.
        var rest = bytes
        while !rest.isEmpty {
            let piece = UnsafeRawBufferPointer(rebasing: rest.prefix(1 << 30))
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: piece.baseAddress!.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(piece.count)
            length += run(flush: Z_NO_FLUSH)
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(piece.count))
        }
    }

    /// Runs deflate until it has taken all input (Z_NO_FLUSH) or ended the stream (Z_FINISH);
    /// returns the bytes it wrote.
    private func run(flush: Int32) -> Int {
        let out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
        var produced = 0
        while true {
            stream.pointee.next_out = out
            stream.pointee.avail_out = uInt(output.count)
            let status = deflate(stream, flush)
            let wrote = output.count - Int(stream.pointee.avail_out)
            produced += wrote
            switch status {
            case Z_STREAM_END:
                return produced
            case Z_OK, Z_BUF_ERROR:
                // A full buffer may mean more output is pending; otherwise, without
                // Z_FINISH, deflate is done when its input is.
                if flush == Z_NO_FLUSH && stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 {
                    return produced
                }
                // Z_FINISH with room always gets somewhere; guard against a loop regardless.
                precondition(
                    wrote > 0 || stream.pointee.avail_in > 0 || flush == Z_NO_FLUSH, "deflate made no progress")
            default:
                preconditionFailure("deflate failed: \(status)")
            }
        }
    }
}
