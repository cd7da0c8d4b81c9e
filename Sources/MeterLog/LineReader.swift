#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Splits a file into lines, reading fixed chunks with `fread`. A line is handed over as bytes
/// without its LF (nor a CR before it); a line longer than `maxLineBytes` is skipped as it
/// streams by and reported by its length: memory is one chunk plus at most one line.
final class LineReader {
    enum Line {
        case text(number: Int, bytes: [UInt8])
        case tooLong(number: Int, length: Int)
    }

    let path: String
    private let file: UnsafeMutablePointer<FILE>
    private let chunk: UnsafeMutablePointer<UInt8>
    private let chunkBytes: Int
    private let maxLineBytes: Int
    private var position = 0
    private var end = 0
    private var atEOF = false
    private var lineNumber = 0
    /// The most bytes a line held at once (the memory bound's check).
    private(set) var peakLineBytes = 0

    init(path: String, limits: MeterLogLimits) throws {
        guard let file = fopen(path, "rb") else {
            throw MeterLogError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        self.path = path
        self.file = file
        chunkBytes = limits.chunkBytes
        maxLineBytes = limits.maxLineBytes
        chunk = .allocate(capacity: limits.chunkBytes)
    }

    deinit {
        fclose(file)
        chunk.deallocate()
    }

    private func refill() throws -> Bool {
        guard !atEOF else { return false }
        let count = fread(chunk, 1, chunkBytes, file)
        if count == 0 {
            atEOF = true
            if ferror(file) != 0 {
                throw MeterLogError.readFailed(path: path, reason: String(cString: strerror(errno)))
            }
            return false
        }
        position = 0
        end = count
        return true
    }

    /// The next line; nil at the end of the file. A UTF-8 BOM before the first line is dropped.
    func next() throws -> Line? {
        var bytes: [UInt8] = []
        var length = 0
        var sawAny = false
        while true {
            if position == end, !(try refill()) {
                guard sawAny else { return nil }
                return finish(bytes, length: length)
            }
            sawAny = true
            let available = end - position
            let start = chunk + position
            let newline = memchr(start, 0x0A, available).map { $0.assumingMemoryBound(to: UInt8.self) - start }
            let take = newline ?? available
            if length <= maxLineBytes {
                let room = maxLineBytes + 1 - length
                bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: min(take, room)))
                if bytes.count > maxLineBytes { bytes = [] } // dropped: the rest only counted
                peakLineBytes = max(peakLineBytes, bytes.count)
            }
            length = length &+ take
            position += take
            if newline != nil {
                position += 1
                return finish(bytes, length: length)
            }
        }
    }

    private func finish(_ bytes: [UInt8], length: Int) -> Line {
        lineNumber += 1
        var bytes = bytes
        var length = length
        if length > 0, length <= maxLineBytes, bytes.last == 0x0D {
            bytes.removeLast()
            length -= 1
        }
        if lineNumber == 1, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            bytes.removeFirst(3)
        }
        if length > maxLineBytes { return .tooLong(number: lineNumber, length: length) }
        return .text(number: lineNumber, bytes: bytes)
    }
}
