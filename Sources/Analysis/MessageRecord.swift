import ContentCoding
import Estimation
import HTTP1
import Records

/// One HTTP message with everything measured about it: the unit every output counts.
public struct MessageRecord: Sendable {
    /// The input file's name.
    public var input: String
    /// Where in the input it came from: a capture's connection or a HAR's entry.
    public var source: RecordSource
    public var message: HTTPMessage
    /// What the message cost on the wire: the one size the figures, the estimators' causes
    /// and the outputs read.
    public var wire: WireSize
    /// Whether the wire size is known (pcap: the message's framing end was reached; HAR:
    /// `wire.total` is known). Unmeasured records stay out of every error figure.
    public var measured: Bool
    /// Body bytes after removing transfer and content coding; the de-chunked length when
    /// the content coding could not be decoded; nil when the body is unknown (HAR).
    public var bodyDecoded: Int?
    /// How the content coding was removed.
    public var decoding: DecodingOutcome
    /// Each estimator's figure, in the order of the run's `EstimatorSet`.
    public var estimates: [Result<Estimate, EstimateUnavailable>]
    /// Why each estimate is off, in the same order (empty where there is no estimate).
    public var causes: [[ErrorCause]] = []
    /// `METHOD host /normalized/path`, see `normalizedEndpoint(using:)`.
    public var endpoint: String
    /// Remarks for the `anomalies` column beside the message's own (HAR: `from-cache`, ...).
    public var notes: [RecordNote] = []

    public init(
        input: String, source: RecordSource, message: HTTPMessage, wire: WireSize, measured: Bool,
        bodyDecoded: Int?, decoding: DecodingOutcome, estimates: [Result<Estimate, EstimateUnavailable>] = [],
        normalizer: EndpointNormalizer = EndpointNormalizer()
    ) {
        self.input = input
        self.source = source
        self.message = message
        self.wire = wire
        self.measured = measured
        self.bodyDecoded = bodyDecoded
        self.decoding = decoding
        self.estimates = estimates
        self.endpoint = ""
        self.endpoint = normalizedEndpoint(using: normalizer)
    }

    /// Requests, final responses, and interim responses apart (no app meter sees those).
    public var direction: Direction {
        message.kind == .request ? .request : (message.isInterim ? .interim : .response)
    }

    /// The request this record is or answers, when known.
    public var requestSummary: RequestSummary? {
        switch message.kind {
        case .request:
            return RequestSummary(
                index: message.index, method: message.method ?? "", target: message.target,
                host: message.requestHost, fieldsKnown: message.fieldsKnown)
        case .response:
            return message.request
        }
    }

    /// `METHOD host /normalized/path`; `?` stands for what an unpaired response, or a record
    /// whose request's fields are unknown (HTTP/2 `hpack-state-unknown`), cannot tell.
    public func normalizedEndpoint(using normalizer: EndpointNormalizer) -> String {
        guard let request = requestSummary, request.fieldsKnown else {
            return "? \(source.server) ?"
        }
        let target = RequestTarget(request.target)
        let host = (request.host ?? "").lowercased()
        return "\(request.method) \(host) \(normalizer.normalize(path: String(httpBytes: target.path)))"
    }
}

/// Which way a record went, as the reports group it.
public enum Direction: String, Sendable, CaseIterable, Comparable {
    case request, response, interim

    public static func < (a: Direction, b: Direction) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
