import CZlib

/// One zlib inflate stream: gzip (members may repeat) or deflate, zlib-wrapped or raw, told
/// apart from the first two bytes because servers send both under `deflate`.
final class InflateStage: DecodingStage {
    enum Format {
        case gzip, deflate
        var name: String { self == .gzip ? "gzip" : "deflate" }
    }

    let format: Format
    private var stream: UnsafeMutablePointer<z_stream>?
    private(set) var finished = false
    private(set) var consumedAny = false
    private var header: [UInt8] = []

    var name: String { format.name }

    init(format: Format) {
        self.format = format
    }

    deinit { release() }

    func release() {
        if let stream {
            inflateEnd(stream)
            stream.deallocate()
        }
        stream = nil
    }

    func decode(
        _ input: UnsafeRawBufferPointer, scratch: UnsafeMutableRawBufferPointer,
        emit: (UnsafeRawBufferPointer) -> Bool
    ) -> String? {
        guard !input.isEmpty else { return nil }
        if finished {
            // Bytes after the end: another gzip member, or trailing garbage that is ignored.
            guard format == .gzip, input.first == 0x1f else { return nil }
            finished = false
            inflateReset(stream)
        }
        if stream == nil {
            // deflate needs two bytes to tell zlib from raw.
            if format == .deflate && header.count + input.count < 2 {
                header.append(contentsOf: input)
                return nil
            }
            let first = header.isEmpty ? Array(input.prefix(2)) : Array((header + Array(input)).prefix(2))
            if let error = open(startingWith: first) { return error }
            if !header.isEmpty {
                let held = header
                header = []
                var stopped = false
                if let error = held.withUnsafeBytes({ run($0, scratch: scratch, stopped: &stopped, emit: emit) }) {
                    return error
                }
                if stopped { return nil }
            }
        }
        var stopped = false
        return run(input, scratch: scratch, stopped: &stopped, emit: emit)
    }

    private func open(startingWith first: [UInt8]) -> String? {
        let windowBits: Int32
        switch format {
        case .gzip: windowBits = 16 + 15
        case .deflate:
            let zlibWrapped = first.count == 2 && first[0] & 0x0f == 8 && (Int(first[0]) << 8 | Int(first[1])) % 31 == 0
            windowBits = zlibWrapped ? 15 : -15
        }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            return "zlib could not start"
        }
        self.stream = stream
        return nil
    }

    /// Sets `stopped` when `emit` asked to stop.
    private func run(
        _ input: UnsafeRawBufferPointer, scratch: UnsafeMutableRawBufferPointer,
        stopped: inout Bool, emit: (UnsafeRawBufferPointer) -> Bool
    ) -> String? {
        guard let stream, let base = input.baseAddress else { return nil }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        consumedAny = true
        // Runs until the input is used up and zlib has no more output pending (a full
        // output buffer means it may have more).
        var outputFull = false
        while stream.pointee.avail_in > 0 || outputFull {
            stream.pointee.next_out = scratch.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(scratch.count)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            let produced = scratch.count - Int(stream.pointee.avail_out)
            outputFull = stream.pointee.avail_out == 0
            if produced > 0 && !emit(UnsafeRawBufferPointer(rebasing: scratch[0..<produced])) {
                stopped = true
                return nil
            }
            switch status {
            case Z_OK, Z_BUF_ERROR:
                if status == Z_BUF_ERROR && produced == 0 { return nil }
            case Z_STREAM_END:
                finished = true
                let rest = Int(stream.pointee.avail_in)
                guard rest > 0, format == .gzip else { return nil }
                let next = UnsafeRawBufferPointer(start: stream.pointee.next_in, count: rest)
                guard next.first == 0x1f else { return nil }
                finished = false
                inflateReset(stream)
                stream.pointee.next_in = UnsafeMutablePointer(
                    mutating: next.baseAddress!.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = uInt(rest)
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                return "\(format.name) data is damaged: \(message)"
            }
        }
        return nil
    }
}
