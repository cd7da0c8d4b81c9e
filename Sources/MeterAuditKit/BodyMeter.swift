import ContentCoding
import Estimation
import MessageModel

/// Follows one message body: collects it for the worker, or measures it as it streams
/// when it is too big to collect.
final class BodyMeter: BodyObserver {
    private let recipe: BodyRecipe
    private unowned let worker: BodyWorker
    private let scratch: UnsafeMutableRawBufferPointer
    /// Appended to for every segment of a body: not checked for overlapping access at run
    /// time (`@exclusivity(unchecked)`), as a meter lives on the parsing thread alone and no
    /// code runs while its bytes are appended. `BodyWorkerTests` and the run tests go
    /// through it in debug builds.
    @exclusivity(unchecked) private var collected: [UInt8] = []
    private var streaming: StreamingMeasurer?
    private var bytesMissing = false

    /// The body's declared length (Content-Length), when it is one: room for it is made at the
    /// first bytes, so that collecting a body copies each byte once instead of regrowing.
    private let expectedLength: Int64?
    static let maxReserved: Int64 = 256 << 10

    /// Bytes of memory the collection holds now (tests: what a declared length was trusted with).
    var collectedCapacity: Int { collected.capacity }

    init(
        _ recipe: BodyRecipe, worker: BodyWorker, scratch: UnsafeMutableRawBufferPointer, expectedLength: Int64? = nil
    ) {
        self.recipe = recipe
        self.worker = worker
        self.scratch = scratch
        self.expectedLength = expectedLength
    }

    func bodyBytes(_ bytes: UnsafeRawBufferPointer) {
        guard recipe.needsBytes else { return }
        if let streaming {
            streaming.feed(bytes)
        } else if collected.count + bytes.count <= worker.maxCollectedBody {
            // Only a length the collection could hold is trusted with memory, and only up to
            // `maxReserved`: a capture may declare long bodies on many streams and send none.
            if collected.isEmpty, let expected = expectedLength, expected > bytes.count,
                expected <= worker.maxCollectedBody
            {
                collected.reserveCapacity(Int(min(expected, Self.maxReserved)))
            }
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
        // An undecodable body counts its de-chunked size (docs/METERING.md §2).
        facts.decodedLength = measurement.outcome == .decoded ? measurement.decodedLength : facts.transferDecodedLength
        facts.decodedExactly = exact
        facts.gzippedTransferDecoded = measurement.gzippedTransferDecoded
        facts.gzippedDecoded = measurement.gzippedDecoded
        return (facts, measurement.outcome)
    }
}
