import ContentCoding
import Estimation
import HTTP1

/// One HTTP message with everything measured about it: the unit every output counts.
public struct MessageRecord: Sendable {
    /// The input file's name.
    public var source: String
    public var message: HTTPMessage
    /// Whether the wire size is known (pcap: the message's framing end was reached).
    public var measured: Bool
    /// Body bytes after removing transfer and content coding; the de-chunked length when
    /// the content coding could not be decoded.
    public var bodyDecoded: Int
    /// How the content coding was removed.
    public var decoding: DecodingOutcome
    /// Each estimator's figure, in the order of the run's `EstimatorSet`.
    public var estimates: [Result<Estimate, EstimateUnavailable>]

    public init(source: String, message: HTTPMessage, measured: Bool, bodyDecoded: Int, decoding: DecodingOutcome,
                estimates: [Result<Estimate, EstimateUnavailable>] = []) {
        self.source = source
        self.message = message
        self.measured = measured
        self.bodyDecoded = bodyDecoded
        self.decoding = decoding
        self.estimates = estimates
    }

    /// The request this record is or answers, when known.
    public var requestSummary: RequestSummary? {
        switch message.kind {
        case .request:
            return RequestSummary(index: message.index, method: message.method ?? "", target: message.target,
                                  host: message.requestHost)
        case .response:
            return message.request
        }
    }

    /// `METHOD host /normalized/path`; `?` stands for what an unpaired response cannot tell.
    public func endpoint(using normalizer: EndpointNormalizer) -> String {
        guard let request = requestSummary else {
            return "? \(message.server) ?"
        }
        let target = RequestTarget(request.target)
        let host = (request.host ?? "").lowercased()
        return "\(request.method) \(host) \(normalizer.normalize(path: String(httpBytes: target.path)))"
    }
}
