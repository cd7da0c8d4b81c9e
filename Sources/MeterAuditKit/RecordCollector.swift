import Analysis
import ContentCoding
import DequeModule
import Estimation
import HARMessages
import HTTP1

/// Follows one message body: collects it for the worker, or measures it as it streams
/// when it is too big to collect.
final class BodyMeter: BodyObserver {
    private let recipe: BodyRecipe
    private unowned let worker: BodyWorker
    private let scratch: UnsafeMutableRawBufferPointer
    private var collected: [UInt8] = []
    private var streaming: StreamingMeasurer?
    private var bytesMissing = false

    init(_ recipe: BodyRecipe, worker: BodyWorker, scratch: UnsafeMutableRawBufferPointer) {
        self.recipe = recipe
        self.worker = worker
        self.scratch = scratch
    }


    func bodyBytes(_ bytes: UnsafeRawBufferPointer) {
        guard recipe.needsBytes else { return }
        if let streaming {
            streaming.feed(bytes)
        } else if collected.count + bytes.count <= worker.maxCollectedBody {
            collected.append(contentsOf: bytes)
        } else {
            let measurer = StreamingMeasurer(recipe, level: worker.level, limits: worker.limits, scratch: scratch)
            collected.withUnsafeBytes { measurer.feed($0) }
            collected = []
            measurer.feed(bytes)
            streaming = measurer
        }
    }

    func bodyGap(_ length: Int) {
        bytesMissing = true
        collected = []
        streaming?.gap(length)
    }

    /// Ends the body: what is known now, and the measurement, ready or running.
    func finish(transferDecodedLength: Int) -> PendingBody {
        let facts = BodyFacts(transferDecodedLength: transferDecodedLength, decodedLength: transferDecodedLength,
                              decodedExactly: true, bytesMissing: bytesMissing)
        if let streaming {
            worker.countStreamed()
            return PendingBody(facts: facts, measurement: BodyWorker.Job(streaming.finish()))
        }
        if !recipe.needsBytes {
            return PendingBody(facts: facts, measurement: BodyWorker.Job(
                BodyMeasurement(outcome: .identity, decodedLength: transferDecodedLength)))
        }
        if bytesMissing {
            // A coded body with a hole cannot be decoded; an identity one is its own length.
            let outcome: DecodingOutcome = recipe.codings.isEmpty ? .identity : .failed("body bytes missing from the capture")
            return PendingBody(facts: facts, measurement: BodyWorker.Job(
                BodyMeasurement(outcome: outcome, decodedLength: transferDecodedLength)))
        }
        return PendingBody(facts: facts, measurement: worker.submit(collected, recipe))
    }
}

/// A body's facts, with the measurement that may still be running.
struct PendingBody {
    var facts: BodyFacts
    var measurement: BodyWorker.Job?

    var isReady: Bool { measurement?.isDone ?? true }

    /// The facts with every length filled in (waits for the worker when needed), and how
    /// the content coding came off.
    func resolved() -> (BodyFacts, DecodingOutcome) {
        guard let measurement = measurement?.wait() else { return (facts, .identity) }
        var facts = self.facts
        let exact = measurement.outcome == .decoded || measurement.outcome == .identity
        // An undecodable body counts its de-chunked size (METERING §2).
        facts.decodedLength = measurement.outcome == .decoded ? measurement.decodedLength : facts.transferDecodedLength
        facts.decodedExactly = exact
        facts.gzippedTransferDecoded = measurement.gzippedTransferDecoded
        facts.gzippedDecoded = measurement.gzippedDecoded
        return (facts, measurement.outcome)
    }
}

/// The HTTP layer's sink for one input: turns messages into records, hands them on, and
/// keeps the input's diagnostics.
final class RecordCollector: HTTPRecordSink {
    typealias Observer = BodyMeter

    private let source: String
    private let options: AnalysisOptions
    private let worker: BodyWorker
    /// Records in output order, waiting for their bodies' measurements.
    private var waiting: Deque<Waiting> = []

    private struct Waiting {
        var message: HTTPMessage
        var body: PendingBody
        /// What a HAR says of the message (without its body, which may be large); nil for
        /// captured ones.
        var har: HARReport?
    }

    private struct HARReport {
        var wire: WireSize
        var origin: MessageOrigin
        var notes: [String]
    }
    private static let maxWaiting = 4096
    private let emit: (MessageRecord) -> Void
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private(set) var diagnostics: InputDiagnostics
    private var serverNames: Set<String> = []

    init(diagnostics: InputDiagnostics, options: AnalysisOptions, worker: BodyWorker,
         emit: @escaping (MessageRecord) -> Void) {
        self.source = diagnostics.source
        self.diagnostics = diagnostics
        self.options = options
        self.worker = worker
        self.emit = emit
    }

    deinit { scratch.deallocate() }

    func bodyObserver(for message: HTTPMessage) -> BodyMeter? {
        let recipe = BodyRecipe(codings: message.contentCodings, needs: options.estimators.bodyNeeds(for: message))
        return BodyMeter(recipe, worker: worker, scratch: scratch)
    }

    func record(_ message: HTTPMessage, body: BodyMeter?) {
        // Without a body, every re-compression is of empty data, which gzippedData gives back empty.
        let pending = body?.finish(transferDecodedLength: message.bodyLength)
            ?? PendingBody(facts: BodyFacts(transferDecodedLength: message.bodyLength, decodedLength: message.bodyLength,
                                            decodedExactly: true, bytesMissing: message.missingBytes > 0,
                                            gzippedTransferDecoded: 0, gzippedDecoded: 0))
        enqueue(Waiting(message: message, body: pending, har: nil))
    }

    /// A HAR message: its body, when the HAR holds it, is measured like a captured one.
    func record(_ har: HARMessage) {
        var pending = PendingBody(facts: BodyFacts(transferDecodedLength: 0, decodedLength: 0, decodedExactly: false,
                                                   bytesMissing: false, contentKnown: false))
        if let body = har.body {
            pending.facts = BodyFacts(transferDecodedLength: body.count, decodedLength: body.count,
                                      decodedExactly: true, bytesMissing: false)
            let recipe = BodyRecipe(codings: har.bodyCodings, needs: options.estimators.bodyNeeds(for: har.message))
            if recipe.needsBytes { pending.measurement = worker.submit(body, recipe) }
        }
        enqueue(Waiting(message: har.message, body: pending, har: HARReport(wire: har.wire, origin: har.origin, notes: har.notes)))
    }

    private func enqueue(_ record: Waiting) {
        count(record.message)
        waiting.append(record)
        emitReady(waitingForAll: waiting.count > Self.maxWaiting)
    }

    /// Emits waiting records in order, as far as their re-compressions are done (or all).
    func emitReady(waitingForAll: Bool) {
        while let next = waiting.first, waitingForAll || next.body.isReady {
            waiting.removeFirst()
            let message = next.message
            let (facts, outcome) = next.body.resolved()
            switch outcome {
            case .identity, .decoded: break
            case .unsupported: diagnostics.notes["body-coding-unsupported", default: 0] += 1
            case .failed: diagnostics.notes["body-decoding-failed", default: 0] += 1
            case .overLimit: diagnostics.notes["body-decoding-over-limit", default: 0] += 1
            }
            let estimates = options.estimators.estimate(message, body: facts)
            for (estimator, estimate) in zip(options.estimators.names, estimates) {
                if case let .failure(reason) = estimate {
                    diagnostics.unestimated[estimator, default: [:]][reason.rawValue, default: 0] += 1
                }
            }
            let measured = next.har.map { $0.wire.total != nil } ?? message.complete
            var record = MessageRecord(source: source, message: message, measured: measured,
                                       bodyDecoded: facts.contentKnown ? facts.decodedLength : nil, decoding: outcome,
                                       estimates: estimates, normalizer: options.normalizer,
                                       reportedWire: next.har?.wire, reportedOrigin: next.har?.origin)
            record.notes = next.har?.notes ?? []
            record.causes = causes(record, facts: facts)
            emit(record)
        }
    }

    /// Each estimate's causes; a record whose wire size is not split into components has one
    /// cause for its whole error.
    private func causes(_ record: MessageRecord, facts: BodyFacts) -> [[ErrorCause]] {
        let wire = record.wire
        if wire.hasComponents {
            return options.estimators.explain(record.message, body: facts, estimates: record.estimates)
        }
        return record.estimates.map { estimate in
            guard let total = wire.total, let estimate = try? estimate.get() else { return [] }
            return [ErrorCause("wire split unknown (HAR gives the total only)", estimate.total - total)]
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

    func setHAR(_ counts: InputDiagnostics.HARCounts) { diagnostics.har = counts }
}
