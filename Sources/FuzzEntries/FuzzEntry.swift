/// One fuzz target per parser. Each case is the code one libFuzzer executable (`Fuzz/<name>/`)
/// runs per input, and the code the crasher-replay tests run on saved inputs, so a crash found
/// by fuzzing replays in the ordinary test suite without the sanitizer.
///
/// Adding a target (a TLS or HTTP/2 reader, say): a case here, its entry function, a folder
/// `Fuzz/<name>/` with the three-line `LLVMFuzzerTestOneInput`, its name in Package.swift's
/// `fuzzTargets`, and a seed corpus in scripts/make-fuzz-corpus.
public enum FuzzEntry: String, CaseIterable, Sendable {
    case captureReader = "FuzzCaptureReader"
    case packetDecoder = "FuzzPacketDecoder"
    case tcpAssembler = "FuzzTCPAssembler"
    case http1 = "FuzzHTTP1"
    case harReader = "FuzzHARReader"
    case contentDecoder = "FuzzContentDecoder"
    case tls = "FuzzTLS"
    case http2 = "FuzzHTTP2"
    case charlesReader = "FuzzCharlesReader"
    case meterLog = "FuzzMeterLog"
    case http3 = "FuzzHTTP3"
    case quic = "FuzzQUIC"
    case partFigures = "FuzzPartFigures"

    /// The target named like its executable and its corpus folder.
    public init?(targetName: String) {
        self.init(rawValue: targetName)
    }

    /// Runs one input. Any input must return normally: a trap, an overflow or a memory error
    /// here is the bug the fuzzer is looking for.
    public func run(_ input: UnsafeRawBufferPointer) {
        switch self {
        case .captureReader: CaptureReaderEntry.run(input)
        case .packetDecoder: PacketDecoderEntry.run(input)
        case .tcpAssembler: TCPAssemblerEntry.run(input)
        case .http1: HTTP1Entry.run(input)
        case .harReader: HARReaderEntry.run(input)
        case .contentDecoder: ContentDecoderEntry.run(input)
        case .tls: TLSEntry.run(input)
        case .http2: HTTP2Entry.run(input)
        case .charlesReader: CharlesReaderEntry.run(input)
        case .meterLog: MeterLogEntry.run(input)
        case .http3: HTTP3Entry.run(input)
        case .quic: QUICEntry.run(input)
        case .partFigures: PartFiguresEntry.run(input)
        }
    }

    /// Convenience for tests.
    public func run(_ input: [UInt8]) {
        input.withUnsafeBytes { run($0) }
    }
}

/// Reads the fuzzer's input front to back: header fields first, then the rest as data.
/// Past the end every read gives zero, so any input is a valid header.
struct InputCursor {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func u8() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> UInt16 { UInt16(u8()) << 8 | UInt16(u8()) }

    /// Up to `count` bytes, borrowed from the input.
    mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        let length = min(max(count, 0), remaining)
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
    }

    /// Everything not read yet.
    mutating func rest() -> UnsafeRawBufferPointer { take(remaining) }
}
