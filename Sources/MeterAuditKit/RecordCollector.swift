import Analysis
import ContentCoding
import DequeModule
import Estimation
import HTTP1

/// Measures a message body as it streams past: decodes it, and collects for re-compression
/// what the estimators need.
final class BodyMeter: BodyObserver {
    let decoder: ContentDecoder
    private let transferDecodedGzip: Recompressor.Sink?
    private let decodedGzip: Recompressor.Sink?
    private var bytesMissing = false

    init(decoder: ContentDecoder, needs: BodyNeeds, recompressor: Recompressor) {
        self.decoder = decoder
        transferDecodedGzip = needs.contains(.gzipTransferDecoded) ? recompressor.makeSink() : nil
        decodedGzip = needs.contains(.gzipDecoded) ? recompressor.makeSink() : nil
        if let decodedGzip { decoder.sink = { decodedGzip.feed($0) } }
    }

    func bodyBytes(_ bytes: UnsafeRawBufferPointer) {
        transferDecodedGzip?.feed(bytes)
        decoder.feed(bytes)
    }

    func bodyGap(_ length: Int) {
        bytesMissing = true
        decoder.gap(length)
    }

    /// Ends the body: how decoding went, what is known of the body, and the re-compressions
    /// still running.
    func finish(transferDecodedLength: Int) -> PendingBody {
        let outcome = decoder.finish()
        let exact = outcome == .decoded || outcome == .identity
        let facts = BodyFacts(
            transferDecodedLength: transferDecodedLength,
            decodedLength: outcome == .decoded ? decoder.decodedLength : transferDecodedLength,
            decodedExactly: exact, bytesMissing: bytesMissing)
        // Missing bytes or an undecodable body leave nothing exact to re-compress.
        let usable = !bytesMissing
        return PendingBody(outcome: outcome, facts: facts,
                           transferDecodedGzip: usable ? transferDecodedGzip?.finish() : nil,
                           decodedGzip: usable && exact ? decodedGzip?.finish() : nil)
    }
}

/// A body's facts with the re-compressed lengths that may still be computing.
struct PendingBody {
    var outcome: DecodingOutcome
    var facts: BodyFacts
    var transferDecodedGzip: Recompressor.Job?
    var decodedGzip: Recompressor.Job?

    var isReady: Bool { (transferDecodedGzip?.isDone ?? true) && (decodedGzip?.isDone ?? true) }

    /// The facts with every length filled in (waits for the worker when needed).
    func resolved() -> BodyFacts {
        var facts = self.facts
        if let transferDecodedGzip { facts.gzippedTransferDecoded = transferDecodedGzip.wait() }
        if let decodedGzip { facts.gzippedDecoded = decodedGzip.wait() }
        return facts
    }
}

/// The HTTP layer's sink for one input: turns messages into records, hands them on, and
/// keeps the input's diagnostics.
final class RecordCollector: HTTPRecordSink {
    typealias Observer = BodyMeter

    private let source: String
    private let options: AnalysisOptions
    private let recompressor: Recompressor
    /// Records in output order, waiting for their re-compressions.
    private var waiting: Deque<(HTTPMessage, PendingBody)> = []
    private static let maxWaiting = 4096
    private let emit: (MessageRecord) -> Void
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private(set) var diagnostics: InputDiagnostics
    private var serverNames: Set<String> = []

    init(diagnostics: InputDiagnostics, options: AnalysisOptions, recompressor: Recompressor,
         emit: @escaping (MessageRecord) -> Void) {
        self.source = diagnostics.source
        self.diagnostics = diagnostics
        self.options = options
        self.recompressor = recompressor
        self.emit = emit
    }

    deinit { scratch.deallocate() }

    func bodyObserver(for message: HTTPMessage) -> BodyMeter? {
        let codings = message.values(of: "content-encoding").flatMap { value in
            value.split(separator: UInt8(ascii: ",")).map { String(httpBytes: Array(trimmedSpaces($0))) }
        }.filter { !$0.isEmpty }
        return BodyMeter(decoder: ContentDecoder(codings: codings, limits: options.limits.decoding, scratch: scratch),
                         needs: options.estimators.bodyNeeds(for: message), recompressor: recompressor)
    }

    func record(_ message: HTTPMessage, body: BodyMeter?) {
        // Without a body, every re-compression is of empty data, which gzippedData gives back empty.
        let pending = body?.finish(transferDecodedLength: message.bodyLength)
            ?? PendingBody(outcome: .identity,
                           facts: BodyFacts(transferDecodedLength: message.bodyLength, decodedLength: message.bodyLength,
                                            decodedExactly: true, bytesMissing: message.missingBytes > 0,
                                            gzippedTransferDecoded: 0, gzippedDecoded: 0))
        switch pending.outcome {
        case .identity, .decoded: break
        case .unsupported: diagnostics.notes["body-coding-unsupported", default: 0] += 1
        case .failed: diagnostics.notes["body-decoding-failed", default: 0] += 1
        case .overLimit: diagnostics.notes["body-decoding-over-limit", default: 0] += 1
        }
        count(message)
        waiting.append((message, pending))
        emitReady(waitingForAll: waiting.count > Self.maxWaiting)
    }

    /// Emits waiting records in order, as far as their re-compressions are done (or all).
    func emitReady(waitingForAll: Bool) {
        while let (message, pending) = waiting.first, waitingForAll || pending.isReady {
            waiting.removeFirst()
            let facts = pending.resolved()
            let estimates = options.estimators.estimate(message, body: facts)
            for (estimator, estimate) in zip(options.estimators.names, estimates) {
                if case let .failure(reason) = estimate {
                    diagnostics.unestimated[estimator, default: [:]][reason.rawValue, default: 0] += 1
                }
            }
            var record = MessageRecord(source: source, message: message, measured: message.complete,
                                       bodyDecoded: facts.decodedLength, decoding: pending.outcome,
                                       estimates: estimates, normalizer: options.normalizer)
            record.causes = options.estimators.explain(message, body: facts, estimates: estimates)
            emit(record)
        }
    }

    private func count(_ message: HTTPMessage) {
        if message.kind == .request { diagnostics.records.requests += 1 } else { diagnostics.records.responses += 1 }
        if message.isInterim { diagnostics.records.interim += 1 }
        if message.complete { diagnostics.records.complete += 1 } else { diagnostics.records.incomplete += 1 }
        if message.pair != nil { diagnostics.records.paired += 1 } else if !message.isInterim { diagnostics.records.unpaired += 1 }
    }

    func connectionClosed(_ summary: HTTPConnectionSummary) {
        let accounting = summary.accounting
        diagnostics.connections.total += 1
        switch summary.protocolKind {
        case .http: diagnostics.connections.http += 1
        case .tls:
            diagnostics.connections.tls += 1
            diagnostics.tls.connections += 1
            diagnostics.tls.bytes += accounting.initiator.payloadBytes + accounting.responder.payloadBytes
            if let name = summary.serverName, serverNames.insert(name).inserted {
                diagnostics.tls.serverNames = serverNames.sorted()
            }
        case .other: diagnostics.connections.other += 1
        }
        for end in [accounting.initiatorEnd, accounting.responderEnd] where end == .endOfCapture || end == .idle {
            diagnostics.connections.unterminated += 1
            break
        }
        for side in [accounting.initiator, accounting.responder] {
            diagnostics.gaps.count += side.gaps
            diagnostics.gaps.bytes += side.gapBytes
            diagnostics.gaps.truncatedBytes += side.truncatedBytes
            diagnostics.connections.retransmittedBytes += side.retransmittedBytes
        }
        for tally in [summary.clientTally, summary.serverTally] {
            diagnostics.connections.tunnelBytes += tally.tunnelBytes
            diagnostics.connections.skippedBytes += tally.skippedBytes
        }
    }

    func finishPackets(_ packets: InputDiagnostics.PacketCounts, unsupported: [InputDiagnostics.UnsupportedLinkType]) {
        diagnostics.packets = packets
        diagnostics.unsupportedLinkTypes = unsupported
    }

    func fail(_ message: String, readable: Bool) {
        diagnostics.error = message
        diagnostics.readable = readable
    }

    func setFormat(_ format: String) { diagnostics.format = format }
}

private func trimmedSpaces(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
    while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
    return slice
}
