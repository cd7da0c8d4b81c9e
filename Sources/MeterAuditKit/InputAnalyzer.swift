import Analysis
import CaptureIO
import Foundation
import HARMessages
import MessageModel
import PacketLayers
import Records
import TCPReassembly
import TLS

/// Runs one input file through the pipeline. A capture goes frames → segments → streams →
/// messages → records; a HAR file goes entries → messages → records, each stage on its own
/// thread (`ReadAhead`). Records are handed to `emit` as they complete, so memory follows the
/// open connections (HAR, Charles: the bounded batches read ahead), not the file's size.
public struct InputAnalyzer {
    public let options: AnalysisOptions
    /// Shared by every input of a run, so a body seen in one file is not measured again in the next.
    private let worker: BodyWorker

    public init(options: AnalysisOptions = AnalysisOptions()) {
        options.protocols.registerOverheadKinds()
        self.options = options
        self.worker = BodyWorker(
            level: options.gzipLevel, limits: options.limits.decoding,
            bounds: options.limits.bodyWork)
    }

    /// Bodies measured on the worker, answered from its memo, and streamed (too big to collect) so far.
    public var bodyMeasurements: BodyWorkStatistics { worker.statistics }

    /// Reads `path` to its end (or to the fault that stops it) and returns its diagnostics.
    /// Records found before a fault are emitted too. HAR or capture is told by content.
    public func analyze(
        path: String, progress: ((_ read: Int, _ size: Int) -> Void)? = nil,
        connection: ((ConnectionRow) -> Void)? = nil,
        emit: @escaping (MessageRecord) -> Void
    ) -> InputDiagnostics {
        let source = String(path.split(separator: "/").last ?? Substring(path))
        let diagnostics = DiagnosticsCollector(InputDiagnostics(source: source, path: path))
        let builder = RecordBuilder(input: source, estimators: options.estimators, normalizer: options.normalizer)
        func sink(emit: @escaping (MessageRecord) -> Void) -> RecordSink {
            RecordSink(
                builder: builder, diagnostics: diagnostics, worker: worker,
                maxWaiting: options.limits.maxWaitingRecords, emit: emit)
        }
        if CharlesSession.looksLikeSession(path: path) {
            let sink = sink(emit: emit)
            analyzeCharles(path: path, sink: sink, diagnostics: diagnostics, progress: progress, connection: connection)
            sink.finish()
        } else if Self.looksLikeJSON(path: path) {
            let sink = sink(emit: emit)
            analyzeHAR(path: path, sink: sink, diagnostics: diagnostics, progress: progress)
            sink.finish()
        } else {
            // A capture's records and rows are written on a thread of their own (RecordHandOff).
            // HAR and Charles inputs are spread over threads already: their reading runs ahead
            // of the thread that records (ReadAhead).
            let handOff = RecordHandOff(emit: emit, connection: connection)
            let sink = sink(emit: { handOff.record($0) })
            analyzeCapture(
                path: path, input: source, sink: sink, diagnostics: diagnostics, progress: progress,
                connection: connection == nil ? nil : { handOff.row($0) })
            sink.finish()
            handOff.finish()
        }
        return diagnostics.diagnostics
    }

    /// A Charles session is told by its first value (docs/CHARLES.md); a HAR starts with `{` (or, malformed, `[`) after an optional byte-order mark and white
    /// space; every capture format starts with binary magic.
    static func looksLikeJSON(path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        let head = (try? file.read(upToCount: 512)) ?? Data()
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    private func analyzeHAR(
        path: String, sink: RecordSink, diagnostics collector: DiagnosticsCollector,
        progress: ((Int, Int) -> Void)?
    ) {
        let reader: HARReader
        do {
            reader = try HARReader(path: path)
        } catch {
            collector.fail("\(path): \(error)", readable: false)
            return
        }
        let builder = HARMessageBuilder(rule: ExporterRule(creatorName: reader.creatorName))
        collector.setFormat("har")
        let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        // Three stages, each on its own thread, in file order (ReadAhead): entries are read and
        // decoded; made into messages; recorded here. On two cores the work of the three
        // shares both, which two threads of unequal work could not.
        // As the reader saw it before the entries (the reader's thread changes it from here on).
        let versionBeforeEntries = reader.harVersion
        let entries = readingAhead(reader.next, bytesRead: { reader.bytesRead }, cost: { ReadItem.cost($0) })
        let ahead = ReadAhead<ReadItem, (counts: InputDiagnostics.HARCounts, error: Error?)> { put in
            var counts = InputDiagnostics.HARCounts(version: versionBeforeEntries)
            while let (result, read) = entries.next() {
                switch result {
                case let .entry(entry):
                    counts.entries += 1
                    if entry.fromCache { counts.fromCache += 1 }
                    counts.webSocketMessages += entry.webSocketMessageCount
                    if entry.responseStatus == 0 {
                        counts.statusZero += 1
                    } else if entry.responseStatus == nil {
                        counts.noResponse += 1
                    }
                    let (request, response) = builder.messages(for: entry)
                    counts.wireSources[request.wire.source, default: 0] += 1
                    if let response { counts.wireSources[response.wire.source, default: 0] += 1 }
                    // The messages move into the batch (a copy would retain, and later release, all they hold).
                    let itemCost = ReadItem.cost(request, response)
                    put(.messages(consume request, consume response), itemCost)
                case let .broken(index, reason):
                    counts.brokenEntries.append(.init(index: index, reason: reason))
                }
                if progress != nil, (counts.entries + counts.brokenEntries.count) & 0x3f == 0 {
                    put(.progress(read), 0)
                }
            }
            // The reader is done: complete now, also when `creator` came after the entries.
            (counts.creator, counts.creatorVersion) = (reader.creatorName, reader.creatorVersion)
            return (counts, entries.result)
        }
        sink.freeElsewhere = { ahead.giveBack($0) }
        while let item = ahead.next() { record(item, sink: sink, progress: progress, fileSize: fileSize) }
        sink.freeElsewhere = nil
        let (counts, failure) = ahead.result
        if let failure { collector.fail("\(path): \(failure)", readable: true) }
        collector.setHAR(counts)
    }

    /// What the HAR and Charles readers hand the recording thread, in file order.
    enum ReadItem {
        case messages(HARMessage, HARMessage?)
        /// A Charles tunnel: a connection row, not messages.
        case tunnel(ConnectionRow)
        /// Bytes of the file read so far.
        case progress(Int)

        /// What an item holds beyond its fixed size: its bodies' bytes.
        static func cost(_ request: HARMessage, _ response: HARMessage?) -> Int {
            1024 + (request.body?.count ?? 0) + (response?.body?.count ?? 0)
        }

        static func cost(_ result: HAREntryResult) -> Int {
            guard case let .entry(entry) = result else { return 1024 }
            return 1024 + (entry.request.postData?.text?.count ?? 0) + (entry.response?.content.text?.count ?? 0)
        }

        static func cost(_ result: CharlesResult) -> Int {
            guard case let .transaction(transaction) = result else { return 1024 }
            return 1024 + (transaction.request.body?.count ?? 0) + (transaction.response?.body?.count ?? 0)
        }
    }

    /// Takes the item over (`__owned`): its messages move into their records, not copied.
    func record(_ item: __owned ReadItem, sink: RecordSink, progress: ((Int, Int) -> Void)?, fileSize: Int) {
        switch consume item {
        case let .messages(request, response):
            sink.record(request)
            if let response { sink.record(response) }
        case .tunnel: break
        case let .progress(read): progress?(read, fileSize)
        }
    }

    private func analyzeCapture(
        path: String, input: String, sink: RecordSink, diagnostics collector: DiagnosticsCollector,
        progress: ((Int, Int) -> Void)?, connection: ((ConnectionRow) -> Void)?
    ) {
        let limits = options.limits
        let reader: CaptureReader
        do {
            reader = try CaptureReader(path: path, maxPcapngBlockBytes: limits.maxPcapngBlockBytes)
        } catch {
            collector.fail(String(describing: error), readable: false)
            return
        }
        collector.setFormat(reader.format.rawValue + (reader.isCompressed ? ".gz" : ""))

        let decoder = PacketDecoder(maxPendingFragmentBytes: limits.maxPendingFragmentBytes)
        let keys = KeyStore(options.keyLog)
        collector.addKeyLogIssues(options.keyLogIssues)
        let closed = { (row: ConnectionRow, summary: HTTPConnectionSummary) in
            collector.count(row, summary)
            connection?(row)
        }
        let assembler = TCPAssembler(
            limits: limits.reassembly,
            factory: ConnectionRouterFactory(
                sink: sink, keys: keys, input: input, limits: limits, protocols: options.protocols,
                closed: closed))
        let udp = UDPFlowTable(
            readers: options.protocols.udpReaders(
                UDPReaderContext(
                    input: input, keys: keys, limits: limits, sink: sink, closed: closed, diagnostics: collector,
                    protocols: options.protocols)),
            maxFlows: limits.maxUDPFlows, idleTimeout: limits.udpIdleTimeout,
            nextNumber: { assembler.takeConnectionNumber() })
        var packets = InputDiagnostics.PacketCounts()
        var unsupported: [InputDiagnostics.UnsupportedLinkType] = []
        do {
            while let frame = try reader.next() {
                packets.read += 1
                if let progress, packets.read & 0x3fff == 0, let read = reader.bytesConsumed {
                    progress(read, reader.fileSize)
                }
                packets.frameBytes += frame.originalLength
                for block in reader.takeDecryptionSecrets() {
                    // Keys come before the packets that need them (pcapng spec).
                    let secrets = KeyLog(decryptionSecretsBlockBody: block.body, bigEndian: block.bigEndian, file: path)
                    collector.addKeyLogIssues(secrets.issues.map(\.description))
                    keys.merge(secrets)
                }
                if !frame.timestampFlags.isEmpty {
                    if frame.timestampFlags.contains(.clamped) { packets.clampedTimestamps += 1 }
                    if frame.timestampFlags.contains(.resolutionAssumed) { packets.assumedTimestampResolution += 1 }
                }
                switch decoder.decode(frame) {
                case let .segment(segment):
                    packets.tcp += 1
                    assembler.process(segment)
                case let .datagram(datagram):
                    udp.process(datagram)
                case .fragmentHeld:
                    packets.fragmentsHeld += 1
                case let .skipped(reason):
                    packets.skipped[reason, default: 0] += 1
                    if reason == .unsupportedLinkType,
                        !unsupported.contains(where: { $0.interface == frame.interface })
                    {
                        unsupported.append(.init(interface: frame.interface, linkType: frame.linkType))
                    }
                }
            }
        } catch {
            collector.fail(String(describing: error), readable: true)
        }
        assembler.finish()
        udp.finish()
        if udp.sawDatagrams { collector.setUDP(udp.counts) }
        packets.strayControl = assembler.strayControlPackets
        packets.ignoredResets = assembler.ignoredResets
        packets.fragmentDatagramsEvicted = decoder.evictedFragmentDatagrams
        packets.fragmentDatagramsExpired = decoder.expiredFragmentDatagrams
        collector.finishPackets(packets, unsupported: unsupported)
    }
}
