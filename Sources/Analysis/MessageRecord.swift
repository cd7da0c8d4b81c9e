import ContentCoding
import Estimation
import MessageModel
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
    /// The request this record is or answers, when known (as the message was at `init`).
    public let requestSummary: RequestSummary?
    /// The target of the request this record is or answers, split once for the endpoint and
    /// the outputs' path and query; nil when the request is unknown.
    public var requestTarget: RequestTarget?
    /// Remarks for the `anomalies` column beside the message's own (HAR: `from-cache`, ...).
    public var notes: [RecordNote] = []

    // The public inits are in an extension, so that the memberwise one exists: building the
    // record through it moves every part in, where an init of its own assigned them to a
    // `self` that was then copied out whole (every array and string retained, then released).
}

extension MessageRecord {
    public init(
        input: String, source: RecordSource, message: HTTPMessage, wire: WireSize, measured: Bool,
        bodyDecoded: Int?, decoding: DecodingOutcome, estimates: [Result<Estimate, EstimateUnavailable>] = [],
        causes: [[ErrorCause]] = [], notes: [RecordNote] = [], normalizer: EndpointNormalizer = EndpointNormalizer()
    ) {
        self.init(
            input: input, source: source, message: message, wire: wire, measured: measured,
            bodyDecoded: bodyDecoded, decoding: decoding, estimates: estimates, causes: causes, notes: notes,
            request: RequestFacts(of: message, source: source, normalizer: normalizer))
    }

    /// What a record keeps of the request it is or answers: derived from the message once,
    /// and reusable by the response to an equal request (`RequestSummary` equality: the
    /// endpoint and the target's split read nothing else of a known request).
    public struct RequestFacts: Sendable {
        public let summary: RequestSummary?
        public let target: RequestTarget?
        public let endpoint: String
    }

    /// A record whose request facts are known already (`RequestFacts(of:source:normalizer:)`
    /// of this message and source).
    public init(
        input: String, source: RecordSource, message: HTTPMessage, wire: WireSize, measured: Bool,
        bodyDecoded: Int?, decoding: DecodingOutcome, estimates: [Result<Estimate, EstimateUnavailable>],
        causes: [[ErrorCause]], notes: [RecordNote], request: consuming RequestFacts
    ) {
        self.init(
            input: input, source: source, message: message, wire: wire, measured: measured,
            bodyDecoded: bodyDecoded, decoding: decoding, estimates: estimates, causes: causes,
            endpoint: request.endpoint, requestSummary: request.summary, requestTarget: request.target, notes: notes)
    }

    /// Requests, final responses, and interim responses apart (no app meter sees those).
    public var direction: RecordClass {
        message.kind == .request ? .request : (message.isInterim ? .interim : .response)
    }

    fileprivate static func summary(of request: HTTPMessage) -> RequestSummary {
        RequestSummary(
            index: request.index, method: request.method ?? "", target: request.target,
            host: request.requestHost, fieldsKnown: request.requestLineKnown)
    }

    /// `METHOD host /normalized/path`; `?` stands for what an unpaired response, or a record
    /// whose request's method, authority or path is unknown (HTTP/2 `hpack-state-unknown`),
    /// cannot tell. Other fields unknown do not hide the endpoint.
    public func normalizedEndpoint(using normalizer: EndpointNormalizer) -> String {
        let request = requestSummary
        return Self.endpoint(
            of: request, target: request.map { RequestTarget($0.target) }, server: source, using: normalizer)
    }

    fileprivate static func endpoint(
        of request: RequestSummary?, target: RequestTarget?, server source: RecordSource,
        using normalizer: EndpointNormalizer
    ) -> String {
        guard let request, let target, request.fieldsKnown else {
            return "? \(source.server) ?"
        }
        // Once per record: ASCII host and path (nearly all) are joined as bytes, without the
        // intermediate Strings of lowercasing, decoding and interpolation.
        if let endpoint = normalizer.asciiEndpoint(method: request.method, host: request.host ?? "", path: target.path)
        {
            return endpoint
        }
        let host = (request.host ?? "").lowercased()
        return "\(request.method) \(host) \(normalizer.normalize(path: String(httpBytes: target.path)))"
    }
}

extension MessageRecord.RequestFacts {
    // In an extension, so that the memberwise init builds it (no copy of a `self` of its own).
    public init(of message: borrowing HTTPMessage, source: borrowing RecordSource, normalizer: EndpointNormalizer) {
        let request = message.kind == .request ? MessageRecord.summary(of: message) : message.request
        let target = request.map { RequestTarget($0.target) }
        self.init(
            summary: request, target: target,
            endpoint: MessageRecord.endpoint(of: request, target: target, server: source, using: normalizer))
    }
}

/// Which way a record went, as the reports group it.
public enum RecordClass: String, Sendable, CaseIterable, Comparable {
    case request, response, interim

    /// The direction's place in `allCases`, by a switch: `allCases` builds an array per call.
    var order: Int {
        switch self {
        case .request: return 0
        case .response: return 1
        case .interim: return 2
        }
    }

    public static func < (a: RecordClass, b: RecordClass) -> Bool { a.order < b.order }

    /// The case, not its name's text, is hashed: directions key the aggregation's tables,
    /// looked up for every record.
    public func hash(into hasher: inout Hasher) { hasher.combine(order) }
}
