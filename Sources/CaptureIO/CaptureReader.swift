import CCaptureSupport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which container the file uses.
public enum CaptureFormat: String, Sendable {
    case pcap, pcapng
}

/// Reads a capture file frame by frame: pcap (either byte order, micro- or nanosecond) through
/// libpcap, pcapng (several interfaces with different link types), each optionally gzip-compressed.
///
/// The format is recognised from the first bytes, never from the file name. Compressed files are
/// inflated while they are read, never as a whole.
public final class CaptureReader {
    /// The path as given, used in every error.
    public let path: String
    /// The container inside the file (after gzip decoding).
    public private(set) var format: CaptureFormat = .pcap
    /// Whether the file is gzip-compressed (recognised by its magic bytes, not its name).
    public private(set) var isCompressed = false
    /// Size of the file on disk in bytes (the compressed size for a gzip file), for throughput
    /// reporting.
    public let fileSize: Int

    private let backend: Backend

    /// One concrete reader per container; an enum rather than a protocol so `next()` stays a
    /// direct call on the per-frame path.
    private enum Backend {
        case pcap(PcapFileReader)
        case pcapng(PcapngReader)
    }

    /// Default for `maxPcapngBlockBytes` (64 MiB).
    public static let defaultMaxPcapngBlockBytes = PcapngReader.defaultMaximumBufferedBlock

    /// Opens the file; throws `.cannotOpen` or `.notACapture`.
    /// - Parameter maxPcapngBlockBytes: the largest pcapng block held whole (packets, headers);
    ///   a longer length is reported as damage instead of allocated.
    public init(path: String, maxPcapngBlockBytes: Int = CaptureReader.defaultMaxPcapngBlockBytes) throws {
        self.path = path
        let peeked = try CaptureReader.peekFile(path: path)
        fileSize = peeked.size
        isCompressed = peeked.magic.count >= 2 && peeked.magic[0] == 0x1F && peeked.magic[1] == 0x8B

        var magic = peeked.magic
        if isCompressed {
            magic = try CaptureReader.peekDecompressed(path: path)
        }
        guard !magic.isEmpty else {
            throw CaptureError.notACapture(
                path: path, reason: isCompressed ? "decompressed content is empty" : "empty file")
        }
        guard magic.count == 4 else {
            throw CaptureError.notACapture(path: path, reason: "only \(magic.count) bytes long")
        }
        guard let detected = CaptureReader.detectFormat(magic) else {
            let value = magic.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            throw CaptureError.notACapture(path: path, reason: "unknown magic number 0x\(String(value, radix: 16))")
        }
        format = detected

        // Reopen rather than seek: a gzip stream cannot seek, and both readers want the header.
        guard let stream = CaptureStream.open(path: path, compressed: isCompressed) else {
            throw CaptureError.cannotOpen(path: path, reason: CaptureReader.errnoDescription())
        }
        switch detected {
        case .pcap: backend = .pcap(try PcapFileReader(path: path, stream: stream))
        case .pcapng:
            backend = .pcapng(try PcapngReader(path: path, stream: stream, maximumBufferedBlock: maxPcapngBlockBytes))
        }
    }

    /// The next frame, or nil at the end of the file. The frame's bytes stay valid until the
    /// next call. Throws `.truncated` / `.corrupt` when the file breaks off; every frame returned
    /// before stays valid data.
    public func next() throws -> CapturedFrame? {
        switch backend {
        case .pcap(let reader): return try reader.next()
        case .pcapng(let reader): return try reader.next()
        }
    }

    /// The pcapng Decryption Secrets Blocks read since the last call (none for pcap). Take
    /// them after each frame: a block precedes the packets its keys decrypt.
    public func takeDecryptionSecrets() -> [DecryptionSecretsBlock] {
        switch backend {
        case .pcap: return []
        case .pcapng(let reader): return reader.takeDecryptionSecrets()
        }
    }

    /// How many bytes of the file on disk have been read so far, comparable to `fileSize`;
    /// nil for a compressed file, whose position in the compressed stream is not tracked.
    public var bytesConsumed: Int? {
        guard !isCompressed else { return nil }
        switch backend {
        case .pcap(let reader): return reader.bytesConsumed
        case .pcapng(let reader): return reader.bytesConsumed
        }
    }

    // MARK: - Format detection

    /// Size and first (up to) four raw bytes of the file, through plain POSIX calls so that a
    /// missing or unreadable file is told apart from one that is not a capture.
    private static func peekFile(path: String) throws -> (size: Int, magic: [UInt8]) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CaptureError.cannotOpen(path: path, reason: errnoDescription()) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CaptureError.cannotOpen(path: path, reason: errnoDescription()) }
        guard info.st_mode & S_IFMT != S_IFDIR else {
            throw CaptureError.cannotOpen(path: path, reason: "is a directory")
        }
        var magic: [UInt8] = [0, 0, 0, 0]
        var count = 0
        while count < 4 {
            let got = magic.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, 4 - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw CaptureError.cannotOpen(path: path, reason: errnoDescription())
            }
            if got == 0 { break }
            count += got
        }
        return (Int(info.st_size), Array(magic[0..<count]))
    }

    /// First (up to) four bytes of the inflated content of a gzip file.
    private static func peekDecompressed(path: String) throws -> [UInt8] {
        guard let file = meteraudit_open_gzip_stream(path) else {
            throw CaptureError.cannotOpen(path: path, reason: errnoDescription())
        }
        defer { fclose(file) }
        var magic: [UInt8] = [0, 0, 0, 0]
        let count = magic.withUnsafeMutableBytes { fread($0.baseAddress!, 1, 4, file) }
        if count < 4 && ferror(file) != 0 {
            // zlib inflates far ahead, so a bad checksum at the end of a small file shows up here.
            throw CaptureError.notACapture(path: path, reason: "gzip data cannot be decoded (damaged gzip stream)")
        }
        return Array(magic[0..<count])
    }

    /// pcapng starts with its Section Header Block type; pcap with a magic number in the byte
    /// order of the machine that wrote it, so both orders are accepted.
    static func detectFormat(_ magic: [UInt8]) -> CaptureFormat? {
        if magic == [0x0A, 0x0D, 0x0D, 0x0A] { return .pcapng }
        let bigEndian = magic.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        // Microsecond, nanosecond, and Alexey Kuznetzov's modified pcap (which libpcap reads too).
        let pcapMagics: [UInt32] = [0xA1B2_C3D4, 0xA1B2_3C4D, 0xA1B2_CD34]
        if pcapMagics.contains(bigEndian) || pcapMagics.contains(bigEndian.byteSwapped) { return .pcap }
        return nil
    }

    static func errnoDescription(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}

/// A stdio stream at the start of the capture's (inflated) bytes, with a buffer larger than
/// stdio's default: captures are read strictly sequentially, and 4 KiB would cost a system call
/// every few frames.
struct CaptureStream {
    let file: UnsafeMutablePointer<FILE>
    private let ioBuffer: UnsafeMutableRawPointer

    private static let ioBufferSize = 1 << 18

    static func open(path: String, compressed: Bool) -> CaptureStream? {
        let opened = compressed ? meteraudit_open_gzip_stream(path) : fopen(path, "rb")
        guard let file = opened else { return nil }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: ioBufferSize, alignment: 16)
        setvbuf(file, buffer.assumingMemoryBound(to: CChar.self), _IOFBF, ioBufferSize)
        return CaptureStream(file: file, ioBuffer: buffer)
    }

    /// Closes the stream (unless libpcap already did) and only then frees the buffer stdio
    /// was using.
    func close(fileAlreadyClosed: Bool = false) {
        if !fileAlreadyClosed { fclose(file) }
        ioBuffer.deallocate()
    }
}
