// INTERFACE STUB — implementation pending (CaptureIO helper).

/// Which container the file uses.
public enum CaptureFormat: String, Sendable {
    case pcap, pcapng
}

/// Reads a capture file frame by frame: pcap (either byte order, micro- or nanosecond) through
/// libpcap, pcapng (several interfaces with different link types), each optionally gzip-compressed.
public final class CaptureReader {
    public let path: String
    public private(set) var format: CaptureFormat = .pcap
    public private(set) var isCompressed = false

    /// Opens the file; throws `.cannotOpen` or `.notACapture`.
    public init(path: String) throws {
        self.path = path
        fatalError("not implemented")
    }

    /// The next frame, or nil at the end of the file. The frame's bytes stay valid until the
    /// next call. Throws `.truncated` / `.corrupt` when the file breaks off; every frame returned
    /// before stays valid data.
    public func next() throws -> CapturedFrame? {
        fatalError("not implemented")
    }
}
