import ContentCoding
import Crypto
import Dispatch
import Foundation

/// Emulates `gzippedData` for the estimators off the parsing thread, once per distinct body.
///
/// A body is collected (up to `maxCollectedBody` bytes), then a worker thread hashes it
/// (SHA-256), answers from the memo when the same bytes were compressed before, and
/// compresses it otherwise: the parser keeps one core, deflate gets the other. A body over
/// the cap streams through deflate on the parsing thread instead, and the parser waits when
/// the worker is `maxQueuedBytes` behind, so memory stays bounded.
final class Recompressor {
    let level: Int32
    let maxCollectedBody: Int
    /// Bytes handed to the worker and not compressed yet: the parser waits past this.
    let maxQueuedBytes: Int
    private var queuedBytes = 0
    private let queueRoom = NSCondition()
    private let worker = DispatchQueue(label: "meteraudit.recompression")
    private let lock = NSLock()
    private var memo: [SHA256.Digest: Int] = [:]
    private let maxMemoEntries = 1 << 20
    private var counters = (compressed: 0, reused: 0, streamed: 0)

    init(level: Int32, maxCollectedBody: Int = 8 << 20, maxQueuedBytes: Int = 16 << 20) {
        self.level = level
        self.maxCollectedBody = maxCollectedBody
        self.maxQueuedBytes = maxQueuedBytes
    }

    /// How often deflate ran, how often the memo answered, how often a big body streamed.
    var statistics: (compressed: Int, reused: Int, streamed: Int) {
        lock.withLock { counters }
    }

    func makeSink() -> Sink { Sink(owner: self) }

    fileprivate func submit(_ body: [UInt8]) -> Job {
        let job = Job()
        queueRoom.lock()
        while queuedBytes > 0 && queuedBytes + body.count > maxQueuedBytes { queueRoom.wait() }
        queuedBytes += body.count
        queueRoom.unlock()
        worker.async { [self] in
            defer {
                queueRoom.lock()
                queuedBytes -= body.count
                queueRoom.signal()
                queueRoom.unlock()
            }
            let digest = SHA256.hash(data: body)
            if let known = lock.withLock({ memo[digest] }) {
                lock.withLock { counters.reused += 1 }
                job.complete(known)
                return
            }
            let length = GzipSizer.length(of: body, level: level)
            lock.withLock {
                counters.compressed += 1
                if memo.count < maxMemoEntries { memo[digest] = length }
            }
            job.complete(length)
        }
        return job
    }

    fileprivate func countStreamed() { lock.withLock { counters.streamed += 1 } }

    /// Collects one body's bytes.
    final class Sink {
        private unowned let owner: Recompressor
        private var collected: [UInt8] = []
        private var streaming: GzipSizer?

        fileprivate init(owner: Recompressor) { self.owner = owner }

        func feed(_ bytes: UnsafeRawBufferPointer) {
            if let streaming {
                streaming.feed(bytes)
            } else if collected.count + bytes.count <= owner.maxCollectedBody {
                collected.append(contentsOf: bytes)
            } else {
                let sizer = GzipSizer(level: owner.level)
                collected.withUnsafeBytes { sizer.feed($0) }
                collected = []
                sizer.feed(bytes)
                streaming = sizer
            }
        }

        /// The body is complete: its `gzippedData` length, now or from the worker.
        func finish() -> Job {
            if let streaming {
                owner.countStreamed()
                let job = Job()
                job.complete(streaming.finish())
                return job
            }
            return owner.submit(collected)
        }
    }

    /// A length that may still be computing.
    final class Job {
        private let lock = NSLock()
        private let ready = DispatchSemaphore(value: 0)
        private var value: Int?

        fileprivate func complete(_ length: Int) {
            lock.withLock { value = length }
            ready.signal()
        }

        var isDone: Bool { lock.withLock { value != nil } }

        /// Blocks until the length is known.
        func wait() -> Int {
            if let value = lock.withLock({ value }) { return value }
            ready.wait()
            return lock.withLock { value! }
        }
    }
}
