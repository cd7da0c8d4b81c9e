import Analysis
import CaptureIO
import HTTP1
import PacketLayers
import TCPReassembly

/// Runs one capture file through the pipeline: frames → segments → streams → messages →
/// records. Records are handed to `emit` as they complete, so memory follows the open
/// connections, not the file's size.
public struct CaptureAnalyzer {
    public let options: AnalysisOptions
    /// Shared by every input of a run, so a body seen in one file is not measured again in the next.
    private let worker: BodyWorker

    public init(options: AnalysisOptions = AnalysisOptions()) {
        self.options = options
        self.worker = BodyWorker(level: options.gzipLevel, limits: options.limits.decoding)
    }

    /// Bodies measured on the worker, answered from its memo, and streamed (too big to collect) so far.
    public var bodyMeasurements: (measured: Int, reused: Int, streamed: Int) { worker.statistics }

    /// Reads `path` to its end (or to the fault that stops it) and returns its diagnostics.
    /// Records found before a fault are emitted too.
    public func analyze(path: String, progress: ((_ read: Int, _ size: Int) -> Void)? = nil,
                        emit: @escaping (MessageRecord) -> Void) -> InputDiagnostics {
        let source = String(path.split(separator: "/").last ?? Substring(path))
        let collector = RecordCollector(diagnostics: InputDiagnostics(source: source, path: path),
                                        options: options, worker: worker, emit: emit)
        let limits = options.limits
        let reader: CaptureReader
        do {
            reader = try CaptureReader(path: path)
        } catch {
            collector.fail(String(describing: error), readable: false)
            return collector.diagnostics
        }
        collector.setFormat(reader.format.rawValue + (reader.isCompressed ? ".gz" : ""))

        let decoder = PacketDecoder(maxPendingFragmentBytes: limits.maxPendingFragmentBytes)
        let assembler = TCPAssembler(limits: limits.reassembly,
                                     factory: HTTPConnectionFactory(sink: collector, limits: limits.http))
        var packets = InputDiagnostics.PacketCounts()
        var skipped: [SkipReason: Int] = [:]
        var unsupported: [InputDiagnostics.UnsupportedLinkType] = []
        do {
            while let frame = try reader.next() {
                packets.read += 1
                if let progress, packets.read & 0x3fff == 0, let read = reader.bytesConsumed {
                    progress(read, reader.fileSize)
                }
                packets.frameBytes += frame.originalLength
                switch decoder.decode(frame) {
                case let .segment(segment):
                    packets.tcp += 1
                    assembler.process(segment)
                case .fragmentHeld:
                    packets.fragmentsHeld += 1
                case let .skipped(reason):
                    skipped[reason, default: 0] += 1
                    if reason == .unsupportedLinkType,
                       !unsupported.contains(where: { $0.interface == frame.interface }) {
                        unsupported.append(.init(interface: frame.interface, linkType: frame.linkType))
                    }
                }
            }
        } catch {
            collector.fail(String(describing: error), readable: true)
        }
        assembler.finish()
        collector.emitReady(waitingForAll: true)
        packets.strayControl = assembler.strayControlPackets
        packets.skipped = Dictionary(uniqueKeysWithValues: skipped.map { ($0.key.rawValue, $0.value) })
        collector.finishPackets(packets, unsupported: unsupported)
        return collector.diagnostics
    }
}
