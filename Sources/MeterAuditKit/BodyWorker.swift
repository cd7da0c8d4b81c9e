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
    /// Measurements by body and recipe; a body still being measured maps to its job, so an
    /// identical body arriving meanwhile waits for it instead of measuring again.
    private var memo: [MemoKey: Job] = [:]
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
            let known: Job? = lock.withLock {
                if let known = memo[key] {
                    counters.reused += 1
                    return known
                }
                counters.measured += 1
                if memo.count < maxMemoEntries { memo[key] = job }
                return nil
            }
            if let known {
                job.complete(known.wait())
                return
            }
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
            defer { scratch.deallocate() }
            job.complete(StreamingMeasurer.measure(body, recipe, level: level, limits: limits, scratch: scratch))
        }
        return job
    }

    /// A measurement that may still be running; any number of threads may wait for it.
    final class Job {
        private let condition = NSCondition()
        private var value: BodyMeasurement?

        init(_ value: BodyMeasurement? = nil) {
            self.value = value
        }

        fileprivate func complete(_ measurement: BodyMeasurement) {
            condition.lock()
            value = measurement
            condition.broadcast()
            condition.unlock()
        }

        var isDone: Bool {
            condition.lock()
            defer { condition.unlock() }
            return value != nil
        }

        /// Blocks until the measurement is known.
        func wait() -> BodyMeasurement {
            condition.lock()
            defer { condition.unlock() }
            while value == nil { condition.wait() }
            return value!
        }
    }
}
