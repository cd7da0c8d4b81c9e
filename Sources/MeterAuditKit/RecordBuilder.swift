import Analysis
import ContentCoding
import Estimation
import MessageModel
import Records

/// A message whose parsing is over, with what its source tells of it; its body's
/// measurement may still be running.
struct FinishedMessage {
    var message: HTTPMessage
    var wire: WireSize
    var source: RecordSource
    /// Whether the wire size is known (a capture: the framing end was reached; a HAR: the total).
    var measured: Bool
    var notes: [RecordNote]

    /// Its parts, moved out: passing its fields on one by one copied them.
    consuming func takeParts() -> (HTTPMessage, WireSize, RecordSource, Bool, [RecordNote]) {
        (message, wire, source, measured, notes)
    }
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

    /// Takes the finished message over: its parts move into the record, not copied.
    func record(_ finished: consuming FinishedMessage, body facts: BodyFacts, decoding outcome: DecodingOutcome)
        -> MessageRecord
    {
        let (message, wire, source, measured, notes) = finished.takeParts()
        let estimates = estimators.estimate(message, body: facts)
        let causes = estimators.explain(message, wire: wire, body: facts, estimates: estimates)
        let request = lastRequest.facts(of: message, source: source, normalizer: normalizer)
        return MessageRecord(
            input: input, source: source, message: message, wire: wire, measured: measured,
            bodyDecoded: facts.contentKnown ? facts.decodedLength : nil, decoding: outcome,
            estimates: estimates, causes: causes, notes: notes, request: request)
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
        if message.kind == .response, let last, let summary = message.request, summary.fieldsKnown,
            last.summary == summary
        {
            return last
        }
        let facts = MessageRecord.RequestFacts(of: message, source: source, normalizer: normalizer)
        if message.kind == .request, facts.summary?.fieldsKnown == true { last = facts }
        return facts
    }
}
