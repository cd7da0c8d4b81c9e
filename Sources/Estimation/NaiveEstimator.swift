import MessageModel
import Records

/// The body-only meter seed 001 criticizes: `HTTPBody.length` up, `expectedContentLength`
/// down (docs/METERING.md §4.2). No line, no headers.
public struct NaiveEstimator: Estimator {
    public let name = "naive"

    public init() {}

    public func bodyNeeds(for message: HTTPMessage) -> BodyNeeds { [] }

    /// A request's estimate reads no field; a response's reads Content-Length, which any
    /// field of unknown name may be.
    public func missingFields(_ message: HTTPMessage) -> [String] {
        message.kind == .request ? [] : message.unknownFieldNames
    }

    public func estimate(_ message: HTTPMessage, body: BodyFacts) -> Result<Estimate, EstimateUnavailable> {
        estimate(message, body: body, declared: declaredLength(message))
    }

    public func explain(_ message: HTTPMessage, wire: ComponentSizes, body: BodyFacts, estimate: Estimate)
        -> [ErrorCause]
    {
        explain(
            message, wire: wire, body: body, estimate: estimate,
            declared: message.kind == .response ? message.declaredContentLength : nil)
    }

    /// The estimate and its causes with the Content-Length parsed once.
    public func assess(_ message: HTTPMessage, wire: WireSize, body: BodyFacts) -> Assessment {
        let declared = declaredLength(message)
        return Assessment(estimate(message, body: body, declared: declared), wire: wire) { split, estimate in
            explain(message, wire: split, body: body, estimate: estimate, declared: declared)
        }
    }

    /// A response's Content-Length when its fields are known (requests read none; an
    /// estimate, which the causes need, exists only then).
    private func declaredLength(_ message: HTTPMessage) -> Int64? {
        message.kind == .response && message.fieldsKnown ? message.declaredContentLength : nil
    }

    private func estimate(_ message: HTTPMessage, body: BodyFacts, declared: Int64?)
        -> Result<Estimate, EstimateUnavailable>
    {
        switch message.kind {
        case .request:
            guard body.contentKnown else { return .failure(.bodyUnknown) }
            return .success(Estimate(line: 0, headers: 0, body: body.transferDecodedLength))
        case .response:
            // Whether there is a Content-Length to take, and which coding the body has, is unknown.
            guard message.fieldsKnown else { return .failure(.fieldsUnknown) }
            // expectedContentLength is the header's value as it is, even on HEAD, 206 and 304.
            if let declared {
                return .success(Estimate(line: 0, headers: 0, body: Int(clamping: declared)))
            }
            guard body.contentKnown else { return .failure(.bodyUnknown) }
            return .success(Estimate(line: 0, headers: 0, body: body.decodedLength))
        }
    }

    /// `declared` is the response's Content-Length (`declaredLength`).
    private func explain(
        _ message: HTTPMessage, wire: ComponentSizes, body: BodyFacts, estimate: Estimate, declared: Int64?
    ) -> [ErrorCause] {
        var causes: [ErrorCause] = []
        causes.reserveCapacity(4)
        causes.add(.line, message.kind == .request ? .requestLineNotCounted : .statusLineNotCounted, -wire.line)
        causes.add(.headers, .headerFieldsNotCounted, -wire.headers)
        let bodyError = estimate.body - wire.body
        if message.kind == .response, declared != nil {
            causes.add(
                .body, message.framing == .none ? .contentLengthWithoutBody : .contentLengthDiffers, bodyError)
        } else {
            let framing = Self.chunkFraming(message, wire: wire)
            causes.add(framing)
            causes.add(.body, .decodedBodyCounted, bodyError - framing.bytes)
        }
        return causes
    }
}
