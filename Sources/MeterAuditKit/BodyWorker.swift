import ContentCoding
import Crypto
import Dispatch
import Foundation

/// Measures bodies off the parsing thread, once per distinct body.
///
/// A body is collected as it came off the wire (up to `maxCollectedBody` bytes) and handed
/// over; a worker hashes it (SHA-256), answers from the memo when the same bytes with the
/// same recipe were measured before, and decodes and re-compresses it otherwise. Workers run
/// on a concurrent queue, so zlib, the most expensive part of a run, gets every core while
/// the parser needs little, and a body fetched again (polling, a catalogue) costs one hash. A body over the cap is measured on the
/// parsing thread as it streams, and the parser waits when the worker is `maxQueuedBytes`
/// behind, so memory stays bounded.
final class BodyWorker {
    let level: Int32
    let limits: DecodingLimits
    let maxCollectedBody: Int
    let maxQueuedBytes: Int
    private var queuedBytes = 0
    private let queueRoom = NSCondition()
    private let workers = DispatchQueue(label: "meteraudit.body-measurement", attributes: .concurrent)
    private let lock = NSLock()
    private var memo: [MemoKey: BodyMeasurement] = [:]
    private let maxMemoEntries = 1 << 20
    private var counters = (measured: 0, reused: 0, streamed: 0)

    private struct MemoKey: Hashable {
        var digest: SHA256.Digest
        var recipe: BodyRecipe
    }

    init(level: Int32, limits: DecodingLimits, maxCollectedBody: Int = 8 << 20, maxQueuedBytes: Int = 16 << 20) {
        self.level = level
        self.limits = limits
        self.maxCollectedBody = maxCollectedBody
        self.maxQueuedBytes = maxQueuedBytes
    }

    /// Bodies measured on the worker, answered from the memo, and streamed (too big to collect).
    var statistics: (measured: Int, reused: Int, streamed: Int) {
        lock.withLock { counters }
    }

    func countStreamed() { lock.withLock { counters.streamed += 1 } }

    /// Measures `body` on the worker.
    func submit(_ body: [UInt8], _ recipe: BodyRecipe) -> Job {
        let job = Job()
        queueRoom.lock()
        while queuedBytes > 0 && queuedBytes + body.count > maxQueuedBytes { queueRoom.wait() }
        queuedBytes += body.count
        queueRoom.unlock()
        workers.async { [self] in
            defer {
                queueRoom.lock()
                queuedBytes -= body.count
                queueRoom.signal()
                queueRoom.unlock()
            }
            let key = MemoKey(digest: SHA256.hash(data: body), recipe: recipe)
            if let known = lock.withLock({ memo[key] }) {
                lock.withLock { counters.reused += 1 }
                job.complete(known)
                return
            }
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
            defer { scratch.deallocate() }
            let measurement = StreamingMeasurer.measure(body, recipe, level: level, limits: limits, scratch: scratch)
            lock.withLock {
                counters.measured += 1
                if memo.count < maxMemoEntries { memo[key] = measurement }
            }
            job.complete(measurement)
        }
        return job
    }

    /// A measurement that may still be running.
    final class Job {
        private let lock = NSLock()
        private let ready = DispatchSemaphore(value: 0)
        private var value: BodyMeasurement?

        init(_ value: BodyMeasurement? = nil) {
            self.value = value
        }

        fileprivate func complete(_ measurement: BodyMeasurement) {
            lock.withLock { value = measurement }
            ready.signal()
        }

        var isDone: Bool { lock.withLock { value != nil } }

        /// Blocks until the measurement is known.
        func wait() -> BodyMeasurement {
            if let value = lock.withLock({ value }) { return value }
            ready.wait()
            return lock.withLock { value! }
        }
    }
}
