/// Why a capture file could not be read (in full). Each message names the file, and the
/// frame where reading stopped when there is one.
public enum CaptureError: Error, Equatable, CustomStringConvertible {
    /// The file could not be opened (missing, unreadable).
    case cannotOpen(path: String, reason: String)
    /// The file is neither pcap nor pcapng (nor a gzip of either).
    case notACapture(path: String, reason: String)
    /// The file ends in the middle of a frame; `frame` is the number of the frame that was cut.
    case truncated(path: String, frame: Int, reason: String)
    /// A structure of the file (not a packet's content) is damaged beyond recovery at `frame`.
    case corrupt(path: String, frame: Int, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "\(path): cannot open: \(reason)"
        case let .notACapture(path, reason): return "\(path): not a pcap or pcapng capture: \(reason)"
        case let .truncated(path, frame, reason): return "\(path): truncated at packet \(frame): \(reason)"
        case let .corrupt(path, frame, reason): return "\(path): corrupt at packet \(frame): \(reason)"
        }
    }
}
