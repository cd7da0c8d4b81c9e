import Analysis
import CostAccounting
import Estimation
import HARMessages
import MessageModel
import Records

/// One input's messages on their way to becoming records: the HTTP layer and the HAR
/// reader feed it, it follows each body's measurement, and hands finished messages to the
/// builder in the order they came, so outputs do not depend on the body workers' timing.
final class RecordSink: MessageSink {
    typealias Observer = BodyMeter

    private let builder: RecordBuilder
    private let diagnostics: DiagnosticsCollector
    private let worker: BodyWorker
    // The queues change for every message, so they are not checked for overlapping access at
    // run time (`MovingQueue`'s state is `@exclusivity(unchecked)`): the sink lives on the
    // parsing thread alone, and no code runs while one is being changed (a record leaves its
    // queue before it is built and emitted). Every run test goes through them in debug builds.
    /// Records in output order, waiting until no packet can change their layers.
    private let settling = MovingQueue<Waiting>()
    /// Records in output order, their layers taken, waiting for their bodies' measurements.
    private let measuring = MovingQueue<Waiting>()
    /// Past this many in either queue, the oldest goes on: it takes its layers as they are
    /// (lower bounds), or waits for its body, instead of the queue growing.
    private let maxWaiting: Int
    private let emit: (MessageRecord) -> Void
    /// Where emitted records go to be freed, `leftoverBatch` at a time, when another thread
    /// takes them (`ReadAhead.giveBack`: the thread that made their messages, whose arrays
    /// and strings are most of a record's memory); nil frees each one here once emitted.
    var freeElsewhere: (([MessageRecord]) -> Void)?
    @exclusivity(unchecked) private var leftovers: [MessageRecord] = []
    static let leftoverBatch = 64
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)

    private struct Waiting {
        var message: FinishedMessage
        var body: PendingBody
        /// The packets under a captured message, counted until its record takes them.
        var lower: LayerSlot? = nil
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
        return BodyMeter(
            recipe, worker: worker, scratch: scratch,
            expectedLength: recipe.needsBytes ? message.declaredContentLength : nil)
    }

    func record(_ captured: CapturedMessage, body: BodyMeter?) {
        record(captured, body: body, transport: .tcp, tunnelHost: nil, lower: nil)
    }

    /// A captured message and what carried it: cleartext TCP or TLS records, maybe inside a
    /// proxy's `CONNECT` tunnel. `lower` counts the TLS record bytes it owns (docs/METERING.md
    /// §2b) and the packets under it (§2c).
    func record(
        _ captured: CapturedMessage, body: BodyMeter?, transport: Transport, tunnelHost: String?, lower: LayerSlot?
    ) {
        let message = captured.message
        // Without a body, every re-compression is of empty data, which gzippedData gives back empty.
        let pending =
            body?.finish(transferDecodedLength: message.bodyLength)
            ?? PendingBody(
                facts: BodyFacts(
                    transferDecodedLength: message.bodyLength, decodedLength: message.bodyLength,
                    decodedExactly: true, bytesMissing: message.missingBytes > 0,
                    gzippedTransferDecoded: 0, gzippedDecoded: 0))
        var wire = WireSize(captured: captured)
        // Over TLS, the record bytes the message owns come with its layers (its slot's); QUIC has no TLS records.
        if transport != .tcp { wire.tls = nil }
        let source = RecordSource.capture(
            CaptureFlow(
                connection: captured.connection, client: captured.client,
                server: captured.server, time: captured.time, transport: transport, tunnelHost: tunnelHost))
        enqueue(
            Waiting(
                message: FinishedMessage(
                    message: message, wire: wire, source: source,
                    measured: message.complete, notes: []),
                body: pending, lower: lower))
    }

    /// A HAR message: its body, when the HAR holds it, is measured like a captured one.
    /// Takes the message over: its parts move into the record (the head is read in place,
    /// never copied).
    func record(_ har: consuming HARMessage) {
        let body = har.body
        let codings = body == nil ? [] : har.bodyCodings
        let measured = har.wire.total != nil
        let message = har.takeMessage()
        let notes = har.takeNotes()
        let wire = har.wire
        let source = har.recordSource
        var pending = PendingBody(
            facts: BodyFacts(
                transferDecodedLength: 0, decodedLength: 0, decodedExactly: false,
                bytesMissing: false, contentKnown: false))
        if let body {
            pending.facts = BodyFacts(
                transferDecodedLength: body.count, decodedLength: body.count,
                decodedExactly: true, bytesMissing: false)
            let recipe = BodyRecipe(codings: codings, needs: builder.estimators.bodyNeeds(for: message))
            if recipe.needsBytes { pending.measurement = worker.submit(body, recipe) }
        }
        enqueue(
            Waiting(
                message: FinishedMessage(message: message, wire: wire, source: source, measured: measured, notes: notes),
                body: pending))
    }

    private func enqueue(_ record: consuming Waiting) {
        diagnostics.count(record.message.message)
        // A record with no packets to take, behind none (every HAR entry), skips the queue of
        // those waiting for their layers; measured already and first in line (a HAR entry
        // without body work), it is built at once. The order is the queues' all the same,
        // and the record is not moved in and out of them (a copy of its every part).
        if settling.isEmpty, record.lower == nil {
            if measuring.isEmpty, record.body.isReady {
                build(record)
            } else {
                measuring.append(record)
                emitMeasured(all: false)
            }
            return
        }
        settling.append(record)
        takeSettledLayers(all: false)
        emitMeasured(all: false)
    }

    /// Everything is in: every record takes its layers, and is emitted once its body is measured.
    func finish() {
        takeSettledLayers(all: true)
        emitMeasured(all: true)
    }

    /// Records take their layers in order, as far as nothing can change them any more. This
    /// runs only as messages arrive and at the end, never on the body workers' timing, so
    /// which packets a record takes depends on the capture alone.
    private func takeSettledLayers(all: Bool) {
        // The head is looked at in place: a copy of a waiting record (its message's arrays
        // and strings) costs more than the check.
        while !settling.isEmpty {
            let settled = settling.first.lower?.isSettled ?? true
            guard settled || all || settling.count > maxWaiting else { return }
            var record = settling.removeFirst()
            if let slot = record.lower {
                record.message.wire.lower = slot.seal(settled: settled)
                // Over TLS: its plaintext and the overhead of the records whose first plaintext
                // byte it owns (TLSCostLayer).
                if record.message.wire.tls == nil, slot.tls > 0 { record.message.wire.tls = slot.tls }
            }
            measuring.append(consume record)
        }
    }

    /// Emits records in order, as far as their bodies' measurements are in (or all, waiting).
    private func emitMeasured(all: Bool) {
        while !measuring.isEmpty,
            all || measuring.count > maxWaiting || measuring.first.body.isReady
        {
            build(measuring.removeFirst())
        }
        // The body workers start on a few bodies at once (BodyWorker): while records wait for
        // one, they are started every `startWorkersEvery` records held, so few records wait.
        if measuring.count % Self.startWorkersEvery == 0, !measuring.isEmpty { worker.startQueued() }
    }

    /// Builds a measured record and hands it on.
    private func build(_ next: consuming Waiting) {
        let (facts, outcome) = next.body.resolved()
        diagnostics.count(outcome)
        let record = builder.record(&next.message, body: facts, decoding: outcome)
        diagnostics.count(record.estimates, estimators: builder.estimators)
        emit(record)
        if let freeElsewhere {
            if leftovers.isEmpty { leftovers.reserveCapacity(Self.leftoverBatch) }
            leftovers.append(consume record)
            if leftovers.count >= Self.leftoverBatch {
                let batch = leftovers
                leftovers = []
                freeElsewhere(batch)
            }
        }
    }

    static let startWorkersEvery = 64

    func connectionClosed(_ summary: HTTPConnectionSummary) {
        diagnostics.count(summary)
    }
}

extension HARMessage: MessageCarrier {}

/// A first-in, first-out queue whose elements are moved in and out, never copied: a waiting
/// record holds a message's every array and string, which `Deque.append` copied (retaining
/// each) and then released. A ring of slots it owns, grown by doubling.
final class MovingQueue<Element> {
    // Changed for every message, by one thread: not checked at run time (see `RecordSink`).
    @exclusivity(unchecked) private var slots: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
        slots = .allocate(capacity: self.capacity)
    }

    deinit {
        while count > 0 { _ = removeFirst() }
        slots.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The oldest element, looked at in place; the queue must not be empty.
    var first: Element {
        _read {
            precondition(count > 0, "first of an empty queue")
            yield slots[head]
        }
    }

    func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (slots + (head + count) % capacity).initialize(to: element)
        count += 1
    }

    /// Takes the oldest element out; the queue must not be empty.
    func removeFirst() -> Element {
        precondition(count > 0, "removeFirst of an empty queue")
        let element = (slots + head).move()
        head = (head + 1) % capacity
        count -= 1
        return element
    }

    /// Twice the room, the elements moved over in order.
    private func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        let firstPart = min(count, capacity - head)
        larger.moveInitialize(from: slots + head, count: firstPart)
        (larger + firstPart).moveInitialize(from: slots, count: count - firstPart)
        slots.deallocate()
        slots = larger
        capacity *= 2
        head = 0
    }
}
