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
}

/// Turns a finished message and its body's measurement into a record: estimates, and the
/// causes of each estimate's error against the record's one wire size.
struct RecordBuilder {
    /// The input file's name, written in every record.
    let input: String
    let estimators: EstimatorSet
    let normalizer: EndpointNormalizer

    /// Takes the finished message over: its parts move into the record, not copied.
    func record(_ finished: consuming FinishedMessage, body facts: BodyFacts, decoding outcome: DecodingOutcome)
        -> MessageRecord
    {
        let estimates = estimators.estimate(finished.message, body: facts)
        let causes = estimators.explain(finished.message, wire: finished.wire, body: facts, estimates: estimates)
        return MessageRecord(
            input: input, source: finished.source, message: finished.message, wire: finished.wire,
            measured: finished.measured,
            bodyDecoded: facts.contentKnown ? facts.decodedLength : nil, decoding: outcome,
            estimates: estimates, causes: causes, notes: finished.notes, normalizer: normalizer)
    }
}
