import HTTP1

/// The body-only meter seed 001 criticizes: `HTTPBody.length` up, `expectedContentLength`
/// down (METERING §4.2). No line, no headers.
public struct NaiveEstimator: Estimator {
    public let name = "naive"

    public init() {}

    public func bodyNeeds(for message: HTTPMessage) -> BodyNeeds { [] }

    public func estimate(_ message: HTTPMessage, body: BodyFacts) -> Result<Estimate, EstimateUnavailable> {
        switch message.kind {
        case .request:
            return .success(Estimate(line: 0, headers: 0, body: body.transferDecodedLength))
        case .response:
            // expectedContentLength is the header's value as it is, even on HEAD, 206 and 304.
            if let declared = message.declaredContentLength {
                return .success(Estimate(line: 0, headers: 0, body: Int(clamping: declared)))
            }
            return .success(Estimate(line: 0, headers: 0, body: body.decodedLength))
        }
    }
}
