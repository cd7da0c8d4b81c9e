import Analysis
import ContentCoding
import Estimation
import MessageModel
import Records

/// A message whose parsing is over, with what its source tells of it; its body's
/// measurement may still be running.
struct FinishedMessage: MessageCarrier {
    var message: HTTPMessage
    var wire: WireSize
    var source: RecordSource
    /// Whether the wire size is known (a capture: the framing end was reached; a HAR: the total).
    var measured: Bool
    var notes: [RecordNote]
}

/// Turns a finished message and its body's measurement into a record: estimates, and the
/// causes of each estimate's error against the record's one wire size.
struct RecordBuilder {
    /// The input file's name, written in every record.
    let input: String
    let estimators: EstimatorSet
    let normalizer: EndpointNormalizer
    /// The last request's facts (summary, target, endpoint): its response, which mostly
    /// follows it, reuses them instead of splitting the target and normalizing the path again.
    private let lastRequest = LastRequest()

    init(input: String, estimators: EstimatorSet, normalizer: EndpointNormalizer) {
        self.input = input
        self.estimators = estimators
        self.normalizer = normalizer
    }

    /// Takes the finished message's head and notes over (moved into the record, not copied).
    func record(_ finished: inout FinishedMessage, body facts: BodyFacts, decoding outcome: DecodingOutcome)
        -> MessageRecord
    {
        let message = finished.takeMessage()
        let (estimates, causes) = estimators.assess(message, wire: finished.wire, body: facts)
        let request = lastRequest.facts(of: message, source: finished.source, normalizer: normalizer)
        return MessageRecord(
            input: input, source: finished.source, message: message, wire: finished.wire,
            measured: finished.measured, bodyDecoded: facts.contentKnown ? facts.decodedLength : nil,
            decoding: outcome, estimates: estimates, causes: causes, notes: finished.takeNotes(), request: request)
    }
}

/// `RecordBuilder`'s one-entry memory of a request's facts. Lives on the recording thread alone.
private final class LastRequest {
    private var last: MessageRecord.RequestFacts?

    func facts(of message: HTTPMessage, source: RecordSource, normalizer: EndpointNormalizer)
        -> MessageRecord.RequestFacts
    {
        // A response's request summary equal to the last one's: the same target, method and
        // host, so the same split and endpoint (which read nothing else when the request is known).
        if message.kind == .response, let last, Self.isKnown(message.request, andEqualTo: last.summary) {
            return last
        }
        let facts = MessageRecord.RequestFacts(of: message, source: source, normalizer: normalizer)
        if message.kind == .request, facts.summary?.fieldsKnown == true { last = facts }
        return facts
    }

    /// Whether a response's request summary is known and equal to the last request's,
    /// compared where they are (no copies of their strings and arrays).
    private static func isKnown(_ summary: RequestSummary?, andEqualTo last: RequestSummary?) -> Bool {
        summary?.fieldsKnown == true && summary == last
    }
}

/// A value that carries a head and its notes to a record (a finished message, a HAR message).
protocol MessageCarrier {
    var message: HTTPMessage { get set }
    var notes: [RecordNote] { get set }
}

extension MessageCarrier {
    /// The message moved out, an empty one left in its place: a swap moves the head's arrays
    /// and strings, where a copy retains each and the carrier's end releases them.
    mutating func takeMessage() -> HTTPMessage {
        var taken = HTTPMessage(kind: message.kind, index: message.index)
        swap(&taken, &message)
        return taken
    }

    /// The notes moved out, none left.
    mutating func takeNotes() -> [RecordNote] {
        var taken: [RecordNote] = []
        swap(&taken, &notes)
        return taken
    }
}
