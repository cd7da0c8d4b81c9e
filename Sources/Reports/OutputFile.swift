#if canImport(Glibc)
    import Glibc
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    import Darwin
    private let systemWrite = Darwin.write
#endif

/// One output file, written under a temporary name beside its final one and renamed into
/// place only when every byte is written: a full disk or a failed write leaves no file that
/// looks complete, only the error naming the file.
///
/// Bytes are buffered and written in large pieces. The first failed write ends the file's
/// writing (later bytes are dropped) and is reported by `commit()`, so a file streamed
/// during a long run (messages.csv) need not be checked at every row.
public final class OutputFile {
    /// Where the file goes once complete.
    public let path: String
    /// Beside `path`, hidden, and named as unfinished: `.NAME.partial-PID`.
    public let temporaryPath: String
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private var failure: String?
    private var closed = false

    /// Bytes buffered before a write.
    static let bufferSize = 1 << 16

    /// Creating, writing, closing or renaming failed; names the final path.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable {
        case cannotWrite(path: String, reason: String)

        public var description: String {
            switch self {
            case let .cannotWrite(path, reason): return "\(path): cannot write: \(reason)"
            }
        }
    }

    public init(path: String) throws {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        temporaryPath = directory + "." + name + ".partial-\(getpid())"
        descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw Error.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        // Never committed (an error elsewhere ended the run): nothing may look complete.
        if !closed { discard() }
    }

    /// Appends bytes; written out when the buffer fills.
    public func write(_ bytes: [UInt8]) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { flush() }
    }

    /// Appends bytes; written out when the buffer fills.
    public func write<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { flush() }
    }

    public func write(_ text: String) { write(text.utf8) }

    /// Appends bytes borrowed for the call. A large piece (report.json's writer hands 64 KiB
    /// ones) goes to the file at once when nothing is buffered, without a copy.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        if buffer.isEmpty && bytes.count >= Self.bufferSize / 2 { return writeOut(bytes) }
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { flush() }
    }

    /// Appends one byte.
    public func write(byte: UInt8) {
        guard failure == nil else { return }
        buffer.append(byte)
        if buffer.count >= Self.bufferSize { flush() }
    }

    /// The reason of the first failed write, if any.
    public var writeError: String? { failure }

    private func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil, !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { writeOut($0) }
    }

    /// Writes `bytes` to the file, all of them unless a write fails.
    private func writeOut(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while !rest.isEmpty {
            let written = systemWrite(descriptor, rest.baseAddress, rest.count)
            if written < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
                return
            }
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(written))
        }
    }

    /// Writes what is buffered, closes the file and renames it into place. On any failure
    /// the temporary file is removed and the error names `path`.
    public func commit() throws {
        precondition(!closed, "OutputFile committed twice")
        flush()
        closed = true
        let closeStatus = close(descriptor)
        if failure == nil && closeStatus != 0 { failure = String(cString: strerror(errno)) }
        if failure == nil && rename(temporaryPath, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporaryPath)
            throw Error.cannotWrite(path: path, reason: failure)
        }
    }

    /// Abandons the file: closes and removes the temporary.
    public func discard() {
        if !closed {
            closed = true
            close(descriptor)
        }
        unlink(temporaryPath)
    }

    /// Writes `text` to `path` whole, through a temporary file.
    public static func write(_ text: String, to path: String) throws {
        let file = try OutputFile(path: path)
        file.write(text)
        try file.commit()
    }
}
