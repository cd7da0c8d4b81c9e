import Analysis
import ContentCoding
import DequeModule
import Estimation
import HARMessages
import HTTP1
import Records

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
        let facts = BodyFacts(
            transferDecodedLength: transferDecodedLength, decodedLength: transferDecodedLength,
            decodedExactly: true, bytesMissing: bytesMissing)
        if let streaming {
            worker.countStreamed()
            return PendingBody(facts: facts, measurement: BodyWorker.Job(streaming.finish()))
        }
        if !recipe.needsBytes {
            return PendingBody(
                facts: facts,
                measurement: BodyWorker.Job(
                    BodyMeasurement(outcome: .identity, decodedLength: transferDecodedLength)))
        }
        if bytesMissing {
            // A coded body with a hole cannot be decoded; an identity one is its own length.
            let outcome: DecodingOutcome =
                recipe.codings.isEmpty ? .identity : .failed("body bytes missing from the capture")
            return PendingBody(
                facts: facts,
                measurement: BodyWorker.Job(
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

/// One input's messages on their way to becoming records: the HTTP layer and the HAR
/// reader feed it, it follows each body's measurement, and hands finished messages to the
/// builder in the order they came, so outputs do not depend on the body workers' timing.
final class RecordSink: HTTPRecordSink {
    typealias Observer = BodyMeter

    private let builder: RecordBuilder
    private let diagnostics: DiagnosticsCollector
    private let worker: BodyWorker
    /// Records in output order, waiting for their bodies' measurements.
    private var waiting: Deque<Waiting> = []
    /// Past this many, the oldest waits for its body instead of the queue growing.
    private let maxWaiting: Int
    private let emit: (MessageRecord) -> Void
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)

    private struct Waiting {
        var message: FinishedMessage
        var body: PendingBody
    }

    init(
        builder: RecordBuilder, diagnostics: DiagnosticsCollector, worker: BodyWorker, maxWaiting: Int,
        emit: @escaping (MessageRecord) -> Void
    ) {
        self.builder = builder
        self.diagnostics = diagnostics
        self.worker = worker
        self.maxWaiting = maxWaiting
        self.emit = emit
    }

    deinit { scratch.deallocate() }

    func bodyObserver(for message: HTTPMessage) -> BodyMeter? {
        let recipe = BodyRecipe(codings: message.contentCodings, needs: builder.estimators.bodyNeeds(for: message))
        return BodyMeter(recipe, worker: worker, scratch: scratch)
    }

    func record(_ captured: CapturedMessage, body: BodyMeter?) {
        let message = captured.message
        // Without a body, every re-compression is of empty data, which gzippedData gives back empty.
        let pending =
            body?.finish(transferDecodedLength: message.bodyLength)
            ?? PendingBody(
                facts: BodyFacts(
                    transferDecodedLength: message.bodyLength, decodedLength: message.bodyLength,
                    decodedExactly: true, bytesMissing: message.missingBytes > 0,
                    gzippedTransferDecoded: 0, gzippedDecoded: 0))
        let source = RecordSource.capture(
            CaptureFlow(
                connection: captured.connection, client: captured.client,
                server: captured.server, time: captured.time))
        enqueue(
            Waiting(
                message: FinishedMessage(
                    message: message, wire: WireSize(captured: captured), source: source,
                    measured: message.complete, notes: []),
                body: pending))
    }

    /// A HAR message: its body, when the HAR holds it, is measured like a captured one.
    func record(_ har: HARMessage) {
        var pending = PendingBody(
            facts: BodyFacts(
                transferDecodedLength: 0, decodedLength: 0, decodedExactly: false,
                bytesMissing: false, contentKnown: false))
        if let body = har.body {
            pending.facts = BodyFacts(
                transferDecodedLength: body.count, decodedLength: body.count,
                decodedExactly: true, bytesMissing: false)
            let recipe = BodyRecipe(codings: har.bodyCodings, needs: builder.estimators.bodyNeeds(for: har.message))
            if recipe.needsBytes { pending.measurement = worker.submit(body, recipe) }
        }
        enqueue(
            Waiting(
                message: FinishedMessage(
                    message: har.message, wire: har.wire, source: .har(har.source),
                    measured: har.wire.total != nil, notes: har.notes),
                body: pending))
    }

    private func enqueue(_ record: Waiting) {
        diagnostics.count(record.message.message)
        waiting.append(record)
        emitReady(waitingForAll: waiting.count > maxWaiting)
    }

    /// Emits waiting records in order, as far as their re-compressions are done (or all).
    func emitReady(waitingForAll: Bool) {
        while let next = waiting.first, waitingForAll || next.body.isReady {
            waiting.removeFirst()
            let (facts, outcome) = next.body.resolved()
            diagnostics.count(outcome)
            let record = builder.record(next.message, body: facts, decoding: outcome)
            diagnostics.count(record.estimates, estimators: builder.estimators)
            emit(record)
        }
    }

    func connectionClosed(_ summary: HTTPConnectionSummary) {
        diagnostics.count(summary)
    }
}
