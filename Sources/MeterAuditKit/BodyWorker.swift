import ContentCoding
import DequeModule
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Measures bodies off the parsing thread, once per distinct body.
///
/// A body is collected as it came off the wire (up to `Limits.BodyWork.maxCollectedBody`
/// bytes) and queued; one of a fixed set of worker threads (one per core) fingerprints it
/// (`ContentHasher`), answers from the wire memo when the same bytes with the same recipe were
/// measured before, and decodes and re-compresses it otherwise. Workers keep their deflate
/// state and scratch buffers from body to body. Re-compression depends only on the decoded
/// bytes, so its length is memoized by their fingerprint too: one resource served at gzip levels 1,
/// 6 and 9 is decoded three times and deflated once. Both memos are bounded in bytes and
/// drop the least recently used entry first. A body over the collection bound is measured
/// on the parsing thread as it streams, and the parser waits when the queue is full, so
/// memory stays bounded.
final class BodyWorker {
    let level: Int32
    let limits: DecodingLimits
    let bounds: Limits.BodyWork
    var maxCollectedBody: Int { bounds.maxCollectedBody }
    private let queue: WorkQueue

    init(level: Int32, limits: DecodingLimits, bounds: Limits.BodyWork = Limits.BodyWork()) {
        self.level = level
        self.limits = limits
        self.bounds = bounds
        queue = WorkQueue(level: level, limits: limits, bounds: bounds)
    }

    deinit { queue.stop() }

    typealias Statistics = BodyWorkStatistics

    var statistics: Statistics {
        var statistics = queue.withLock { $0.statistics }
        statistics.threads = queue.threadCount
        return statistics
    }

    func countStreamed() { queue.withLock { $0.statistics.streamed += 1 } }

    /// Measures `body` on a worker; waits first while the queue is full.
    func submit(_ body: [UInt8], _ recipe: BodyRecipe) -> Job {
        let job = Job()
        job.queue = queue
        queue.enqueue(WorkQueue.Item(body: body, recipe: recipe, job: job))
        return job
    }

    /// Starts an idle worker on what is queued (the queue wakes them only once several bodies,
    /// or a large one, are in): for a caller holding records until their bodies are measured.
    func startQueued() { queue.startQueued() }

    /// A measurement that may still be running; any number of threads may wait for it.
    final class Job {
        private let condition = NSCondition()
        private var value: BodyMeasurement?
        /// Jobs for the same body and recipe, completed with this one.
        private var followers: [Job] = []
        /// Where the job waits to be measured: a worker is started on it before it is waited for.
        fileprivate weak var queue: WorkQueue?

        init(_ value: BodyMeasurement? = nil) {
            self.value = value
        }

        fileprivate func complete(_ measurement: BodyMeasurement) {
            condition.lock()
            value = measurement
            let waiting = followers
            followers = []
            condition.broadcast()
            condition.unlock()
            for follower in waiting { follower.complete(measurement) }
        }

        /// Completes `job` with this job's measurement, now or when it comes.
        fileprivate func forward(to job: Job) {
            condition.lock()
            if let value {
                condition.unlock()
                job.complete(value)
            } else {
                followers.append(job)
                condition.unlock()
            }
        }

        var isDone: Bool {
            condition.lock()
            defer { condition.unlock() }
            return value != nil
        }

        /// Blocks until the measurement is known.
        func wait() -> BodyMeasurement {
            if !isDone { queue?.startQueued() }
            condition.lock()
            defer { condition.unlock() }
            while value == nil { condition.wait() }
            return value!
        }
    }
}

/// What a run's body workers did.
public struct BodyWorkStatistics: Sendable, Equatable {
    /// Distinct bodies measured, bodies answered from the wire memo, bodies streamed.
    public var measured = 0
    public var reused = 0
    public var streamed = 0
    /// Decoded bodies deflated, and re-compressions answered from the decoded memo.
    public var deflated = 0
    public var deflateReused = 0
    /// Thread CPU seconds spent decoding distinct bodies and deflating distinct content:
    /// the work the documented estimator cannot avoid.
    public var decodeSeconds = 0.0
    public var deflateSeconds = 0.0
    /// Memo entries dropped to stay within `maxMemoBytes`.
    public var evicted = 0
    /// Worker threads.
    public var threads = 0

    public init() {}
}

/// The queue, the memos and the worker threads behind a `BodyWorker`. Threads hold it, not
/// the `BodyWorker`, so they end when their `BodyWorker` goes away.
private final class WorkQueue: @unchecked Sendable {
    struct Item {
        var body: [UInt8]
        var recipe: BodyRecipe
        var job: BodyWorker.Job
    }

    struct WireKey: Hashable {
        var digest: ContentHasher.Fingerprint
        var recipe: BodyRecipe
    }

    /// Everything behind `condition`.
    struct Shared {
        var items = Deque<Item>()
        var queuedBytes = 0
        var stopping = false
        /// Measurements by wire body and recipe; a body still being measured maps to its job,
        /// so an identical body arriving meanwhile follows it instead of measuring again.
        var wireMemo: LRUMemo<WireKey, BodyWorker.Job>
        /// `gzippedData` length by the fingerprint of the bytes compressed; a length still being
        /// computed is there too, so the same content is deflated once even when two workers
        /// meet it at the same time.
        var gzipMemo: LRUMemo<ContentHasher.Fingerprint, PendingLength>
        var statistics = BodyWorker.Statistics()
    }

    private let condition = NSCondition()
    private var shared: Shared
    /// Workers waiting for an item, and submitters waiting for room (guarded by `condition`).
    /// A body wakes one idle worker, and only when one waits; room is told only to a waiting
    /// submitter. A broadcast per body and per measurement woke both workers for each body, to
    /// fight for the lock: most of a HAR run's futex calls (docs/BENCHMARK.md, "The hand-offs").
    private var idleWorkers = 0
    private var waitingSubmitters = 0
    private let bounds: Limits.BodyWork
    let threadCount: Int

    /// Estimated bytes of one memo entry beyond its recipe's codings: digest, hash table
    /// slot, recency links, and a job object or a length.
    static let wireEntryCost = 256
    static let gzipEntryCost = 192

    init(level: Int32, limits: DecodingLimits, bounds: Limits.BodyWork) {
        self.bounds = bounds
        // Each memo gets half the byte budget.
        shared = Shared(
            wireMemo: LRUMemo(maxCost: bounds.maxMemoBytes / 2),
            gzipMemo: LRUMemo(maxCost: bounds.maxMemoBytes / 2))
        threadCount =
            bounds.workerThreads > 0 ? bounds.workerThreads : max(1, ProcessInfo.processInfo.activeProcessorCount)
        for index in 0..<threadCount {
            let worker = MeasuringWorker(
                level: level, limits: limits, maxRetainedDecoded: bounds.maxRetainedDecodedBody, queue: self)
            let thread = Thread { worker.run() }
            thread.name = "meteraudit.body-worker.\(index)"
            thread.start()
        }
    }

    func withLock<T>(_ body: (inout Shared) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&shared)
    }

    /// Queues an item; waits while the queue holds `maxQueuedBytes` or `maxQueuedBodies`.
    func enqueue(_ item: Item) {
        condition.lock()
        while !shared.items.isEmpty
            && (shared.queuedBytes + item.body.count > bounds.maxQueuedBytes
                || shared.items.count >= bounds.maxQueuedBodies)
        {
            // Room comes only from the workers: all of them run.
            if idleWorkers > 0 { condition.broadcast() }
            waitingSubmitters += 1
            condition.wait()
            waitingSubmitters -= 1
        }
        shared.queuedBytes += item.body.count
        shared.items.append(item)
        unstartedBytes += item.body.count
        // Bodies that repeat (a HAR's, mostly) take a worker far less time than waking it: it
        // is woken for several at once, or for one worth its wake-up. Whoever waits for a
        // measurement starts the workers first (`startQueued`).
        let worthWaking = shared.items.count >= Self.wakeItems || unstartedBytes >= Self.wakeBytes
        let wake = worthWaking ? wakeOne() : 0
        condition.unlock()
        tell(wake)
    }

    /// Bodies queued, or their bytes, for which an idle worker is woken.
    static let wakeItems = 8
    static let wakeBytes = 64 << 10
    /// Bytes of the queued bodies no worker has taken yet.
    private var unstartedBytes = 0

    /// Starts an idle worker when bodies are queued.
    func startQueued() {
        condition.lock()
        let wake = shared.items.isEmpty ? 0 : wakeOne()
        condition.unlock()
        tell(wake)
    }

    /// How to wake one idle worker (under the lock): 0 none idle, 1 a signal, 2 a broadcast (a
    /// signal wakes one waiter of either kind: only surely a worker when no submitter waits).
    private func wakeOne() -> Int { idleWorkers == 0 ? 0 : waitingSubmitters == 0 ? 1 : 2 }

    /// Wakes as `wakeOne` said, out of the lock: woken inside it, a waiter would at once wait
    /// for the lock.
    private func tell(_ wake: Int) {
        if wake == 1 { condition.signal() } else if wake == 2 { condition.broadcast() }
    }

    /// The next item, or nil once stopping and empty. `measured`, the worker's last item, leaves
    /// the queue's account first (its bytes), under the same lock.
    func next(after measured: Item?) -> Item? {
        condition.lock()
        var roomTold = false
        if let measured {
            shared.queuedBytes -= measured.body.count
            roomTold = waitingSubmitters > 0
        }
        while shared.items.isEmpty, !shared.stopping {
            idleWorkers += 1
            condition.wait()
            idleWorkers -= 1
        }
        let item = shared.items.popFirst()
        if let item {
            unstartedBytes -= item.body.count
            if waitingSubmitters > 0 { roomTold = true }
        }
        condition.unlock()
        if roomTold { condition.broadcast() }
        return item
    }

    func stop() {
        condition.lock()
        shared.stopping = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A `gzippedData` length, known now or once the worker deflating it is done.
private final class PendingLength {
    private let condition = NSCondition()
    private var length: Int?

    func set(_ value: Int) {
        condition.lock()
        length = value
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Int {
        condition.lock()
        defer { condition.unlock() }
        while length == nil { condition.wait() }
        return length!
    }
}

/// One worker thread's state, kept from body to body: scratch buffer, deflate state
/// (`GzipSizer.reset()` between bodies), and a buffer for decoded bytes.
private final class MeasuringWorker {
    private let level: Int32
    private let limits: DecodingLimits
    private let maxRetainedDecoded: Int
    private let queue: WorkQueue
    private let scratch: UnsafeMutableRawBufferPointer
    private let sizer: GzipSizer
    private var decoded: [UInt8] = []
    /// The decoded bytes' fingerprint, as they come out of the decoder.
    private var decodedHasher = ContentHasher()

    init(level: Int32, limits: DecodingLimits, maxRetainedDecoded: Int, queue: WorkQueue) {
        self.level = level
        self.limits = limits
        self.maxRetainedDecoded = maxRetainedDecoded
        self.queue = queue
        scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        sizer = GzipSizer(level: level)
    }

    deinit { scratch.deallocate() }

    func run() {
        var item = queue.next(after: nil)
        while let measuring = item {
            measure(measuring)
            item = queue.next(after: measuring)
        }
    }

    private func measure(_ item: WorkQueue.Item) {
        let digest = ContentHasher.fingerprint(item.body)
        let key = WorkQueue.WireKey(digest: digest, recipe: item.recipe)
        let known: BodyWorker.Job? = queue.withLock { shared in
            if let known = shared.wireMemo.value(for: key) {
                shared.statistics.reused += 1
                return known
            }
            shared.statistics.measured += 1
            let cost = WorkQueue.wireEntryCost + item.recipe.codings.reduce(0) { $0 + 16 + $1.utf8.count }
            shared.statistics.evicted += shared.wireMemo.insert(item.job, for: key, cost: cost)
            return nil
        }
        if let known {
            known.forward(to: item.job)
            return
        }
        item.job.complete(measureDistinct(item.body, item.recipe, digest: digest))
    }

    /// Decodes a body not seen before, and sizes what the recipe asks re-compressed.
    private func measureDistinct(_ body: [UInt8], _ recipe: BodyRecipe, digest: ContentHasher.Fingerprint) -> BodyMeasurement {
        let wantsDecodedGzip = recipe.needs.contains(.gzipDecoded)
        let identity = recipe.codings.allSatisfy { $0.isEmpty || $0.lowercased() == "identity" }
        var measurement: BodyMeasurement
        var decodedDigest = digest
        var retainedAll = true
        if identity {
            // Identity: the body is its own decoded form (what ContentDecoder would tell).
            measurement = BodyMeasurement(outcome: .identity, decodedLength: body.count)
        } else {
            decodedHasher.reset()
            var hashSeconds = 0.0
            decoded.removeAll(keepingCapacity: true)
            let start = threadCPUSeconds()
            let decoder = ContentDecoder(codings: recipe.codings, limits: limits, scratch: scratch)
            if wantsDecodedGzip {
                decoder.sink = { [self] bytes in
                    let hashStart = threadCPUSeconds()
                    decodedHasher.update(bytes)
                    if retainedAll && decoded.count + bytes.count <= maxRetainedDecoded {
                        decoded.append(contentsOf: bytes)
                    } else if retainedAll {
                        retainedAll = false
                        decoded.removeAll(keepingCapacity: false)
                    }
                    hashSeconds += threadCPUSeconds() - hashStart
                }
            }
            body.withUnsafeBytes { decoder.feed($0) }
            let outcome = decoder.finish()
            let decodeSeconds = threadCPUSeconds() - start - hashSeconds
            queue.withLock { $0.statistics.decodeSeconds += decodeSeconds }
            measurement = BodyMeasurement(outcome: outcome, decodedLength: decoder.decodedLength)
            decodedDigest = decodedHasher.finalize()
        }
        if recipe.needs.contains(.gzipTransferDecoded) {
            measurement.gzippedTransferDecoded = gzippedLength(digest: digest, count: body.count, first: body.prefix(2))
            {
                body.withUnsafeBytes { sizer.feed($0) }
            }
        }
        let exact = measurement.outcome == .decoded || measurement.outcome == .identity
        if wantsDecodedGzip && exact {
            if identity {
                measurement.gzippedDecoded =
                    measurement.gzippedTransferDecoded
                    ?? gzippedLength(digest: digest, count: body.count, first: body.prefix(2)) {
                        body.withUnsafeBytes { sizer.feed($0) }
                    }
            } else if retainedAll {
                measurement.gzippedDecoded = gzippedLength(
                    digest: decodedDigest, count: decoded.count, first: decoded.prefix(2)
                ) {
                    decoded.withUnsafeBytes { sizer.feed($0) }
                }
            } else {
                // Too big to keep: decoded again, straight into deflate (decoding is the cheap half).
                measurement.gzippedDecoded = gzippedLength(
                    digest: decodedDigest, count: measurement.decodedLength, first: nil
                ) {
                    let decoder = ContentDecoder(codings: recipe.codings, limits: limits, scratch: scratch)
                    decoder.sink = { [sizer] in sizer.feed($0) }
                    body.withUnsafeBytes { decoder.feed($0) }
                    _ = decoder.finish()
                }
            }
        }
        if decoded.capacity > maxRetainedDecoded / 4 { decoded = [] } // a rare large body does not keep its buffer
        return measurement
    }

    /// The `gzippedData` length of bytes with fingerprint `digest`: from the memo, or by feeding
    /// them (`feed`) through this worker's sizer. Empty data and data starting with the gzip
    /// magic come back unchanged, so their length needs neither.
    private func gzippedLength(
        digest: ContentHasher.Fingerprint, count: Int, first: ArraySlice<UInt8>?,
        feed: () -> Void
    ) -> Int {
        if count == 0 { return 0 }
        if let first, first.count == 2, first.first == 0x1f, first.last == 0x8b { return count }
        let pending = PendingLength()
        let known: PendingLength? = queue.withLock { shared in
            if let known = shared.gzipMemo.value(for: digest) {
                shared.statistics.deflateReused += 1
                return known
            }
            shared.statistics.deflated += 1
            shared.statistics.evicted += shared.gzipMemo.insert(pending, for: digest, cost: WorkQueue.gzipEntryCost)
            return nil
        }
        if let known { return known.wait() }
        let start = threadCPUSeconds()
        sizer.reset()
        feed()
        let length = sizer.finish()
        let seconds = threadCPUSeconds() - start
        pending.set(length)
        queue.withLock { $0.statistics.deflateSeconds += seconds }
        return length
    }
}

/// CPU time of the calling thread, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
