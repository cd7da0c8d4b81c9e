#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The readers under test take a path, so each input is written to one scratch file per
/// process (rewritten in place every run: no per-run file creation, nothing left behind by
/// a run, and the parent fuzzer's workers do not collide because the pid is in the name).
final class InputFile {
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// The process's scratch file, in `$TMPDIR` (else /tmp); created on first use and removed
    /// at exit.
    static let shared: InputFile = {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let path = "\(directory)/meteraudit-fuzz-input-\(getpid())"
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        precondition(descriptor >= 0, "cannot create the fuzz input file \(path): errno \(errno)")
        atexit { InputFile.removeShared() }
        return InputFile(path: path, descriptor: descriptor)
    }()

    private static func removeShared() {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        unlink("\(directory)/meteraudit-fuzz-input-\(getpid())")
    }

    /// Replaces the file's content with `bytes`; returns the path.
    func write(_ bytes: UnsafeRawBufferPointer) -> String {
        precondition(ftruncate(descriptor, 0) == 0, "ftruncate failed: errno \(errno)")
        var written = 0
        while written < bytes.count {
            let count = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(written))
            if count < 0 && errno == EINTR { continue }
            precondition(count > 0, "writing the fuzz input failed: errno \(errno)")
            written += count
        }
        return path
    }
}
