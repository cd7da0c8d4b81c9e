import CPcap
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Classic pcap through libpcap, which already knows every byte order, timestamp precision and
/// link type quirk of the format. Frames point straight into libpcap's buffer.
final class PcapFileReader {
    let path: String
    private let handle: OpaquePointer
    private let stream: CaptureStream
    private let linkType: Int32
    private var frameNumber = 0
    private var finished = false
    /// Kept so that a caller that goes on calling `next()` after an error gets the same error,
    /// rather than whatever libpcap would make of the bytes after the damage.
    private var failure: CaptureError?

    /// Takes ownership of `stream`; throws `.notACapture` with libpcap's reason.
    init(path: String, stream: CaptureStream) throws {
        self.path = path
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        // Nanosecond precision: libpcap scales microsecond files up, so timestamps are always ns.
        let opened = pcap_fopen_offline_with_tstamp_precision(
            stream.file, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
        guard let handle = opened else {
            // On failure libpcap leaves the stream to its caller.
            stream.close()
            throw CaptureError.notACapture(path: path, reason: String(cString: errorBuffer))
        }
        self.handle = handle
        self.stream = stream
        linkType = pcap_datalink(handle)
    }

    deinit {
        pcap_close(handle) // closes the stream too
        stream.close(fileAlreadyClosed: true)
    }

    /// Bytes of the (uncompressed) file read so far.
    var bytesConsumed: Int {
        max(0, ftell(stream.file))
    }

    func next() throws -> CapturedFrame? {
        if let failure { throw failure }
        if finished { return nil }
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        let status = pcap_next_ex(handle, &header, &data)
        if status == 1, let header, let data {
            frameNumber += 1
            let record = header.pointee
            // ts_sec is unsigned 32-bit in the file (times up to 2106), but libpcap reads it
            // as signed and sign-extends it: take the low 32 bits back as unsigned. tv_usec
            // holds nanoseconds because the file was opened with nanosecond precision.
            let seconds = Int128(UInt32(truncatingIfNeeded: record.ts.tv_sec))
            let time = CaptureTime.clamped(seconds * 1_000_000_000 + Int128(record.ts.tv_usec))
            return CapturedFrame(
                number: frameNumber, timestamp: time.value, linkType: linkType, interface: 0,
                originalLength: Int(record.len),
                bytes: UnsafeRawBufferPointer(start: data, count: Int(record.caplen)),
                timestampFlags: time.clamped ? .clamped : [])
        }
        if status == PCAP_ERROR_BREAK {
            finished = true
            return nil
        }
        let message = status == 1 ? "libpcap returned no packet" : String(cString: pcap_geterr(handle))
        // libpcap has no separate code for a cut file; its message says "truncated dump file".
        let error: CaptureError =
            message.contains("truncated")
            ? .truncated(path: path, frame: frameNumber + 1, reason: message)
            : .corrupt(path: path, frame: frameNumber + 1, reason: message)
        failure = error
        throw error
    }
}
