import MessageModel
import Records

/// A meter's size estimate, in the parts the wire size is compared in.
public typealias Estimate = ComponentSizes

/// Why an estimator could give no figure for a record.
public enum EstimateUnavailable: String, Error, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// The estimate needs body bytes the capture lacks (a gap, snaplen).
    case bodyBytesMissing = "body-bytes-missing"
    /// The estimate needs the decoded body, and the content coding could not be decoded.
    case bodyNotDecoded = "body-not-decoded"
    /// The body's content is not known at all (a HAR without body text).
    case bodyUnknown = "body-unknown"
    /// The estimate needs header fields that are unknown: an HTTP/2 head decoded against HPACK
    /// state the capture never saw (`hpack-state-unknown`), so its method, URL, status and
    /// fields are nobody's guess.
    case fieldsUnknown = "fields-unknown"
    /// An app's own meter (`--meter-log`) logged no entry that joins this record.
    case notMetered = "not-metered"
}

/// What was measured of a message's body while it streamed past, for the estimators.
public struct BodyFacts: Sendable, Equatable {
    /// The body without transfer coding: what an app passed as its request body.
    public var transferDecodedLength: Int
    /// The body without transfer and content coding (`body_decoded`).
    public var decodedLength: Int
    /// False when the content coding could not be removed, so `decodedLength` is not the decoded size.
    public var decodedExactly: Bool
    /// True when some body bytes are not in the capture.
    public var bytesMissing: Bool
    /// `gzippedData` length of the transfer-decoded body, when an estimator asked for it.
    public var gzippedTransferDecoded: Int?
    /// `gzippedData` length of the decoded body, when an estimator asked for it.
    public var gzippedDecoded: Int?
    /// False when nothing is known of the body's content (a HAR without body text); the
    /// lengths above are then 0 and mean nothing.
    public var contentKnown: Bool

    public init(
        transferDecodedLength: Int, decodedLength: Int, decodedExactly: Bool, bytesMissing: Bool,
        gzippedTransferDecoded: Int? = nil, gzippedDecoded: Int? = nil, contentKnown: Bool = true
    ) {
        self.contentKnown = contentKnown
        self.transferDecodedLength = transferDecodedLength
        self.decodedLength = decodedLength
        self.decodedExactly = decodedExactly
        self.bytesMissing = bytesMissing
        self.gzippedTransferDecoded = gzippedTransferDecoded
        self.gzippedDecoded = gzippedDecoded
    }
}

/// Body work an estimator needs done while the body streams past (decided from the head).
public struct BodyNeeds: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `gzippedData` of the body without transfer coding.
    public static let gzipTransferDecoded = BodyNeeds(rawValue: 1)
    /// `gzippedData` of the decoded body.
    public static let gzipDecoded = BodyNeeds(rawValue: 2)
}

/// The part of a message a cause of error lies in.
public enum WireComponent: Sendable, Equatable, CaseIterable {
    case line, headers, body
    /// The whole message, when the wire size is known only as a total.
    case total
}

/// A named share of an estimate's error (estimate − wire), for reports that say why. The
/// causes of one component add up to that component's error.
public struct ErrorCause: Sendable, Equatable {
    public var component: WireComponent
    public var name: String
    /// Signed bytes this cause adds to the error.
    public var bytes: Int
    /// The name's number when it is one of the shipped estimators' (not part of equality:
    /// a cause is its name).
    public var known: KnownCause?

    public init(_ component: WireComponent, _ name: String, _ bytes: Int) {
        self.component = component
        self.name = name
        self.bytes = bytes
    }

    public init(_ component: WireComponent, _ known: KnownCause, _ bytes: Int) {
        self.component = component
        self.name = known.name
        self.bytes = bytes
        self.known = known
    }

    public static func == (a: ErrorCause, b: ErrorCause) -> Bool {
        a.component == b.component && a.name == b.name && a.bytes == b.bytes
    }
}

/// The causes the shipped estimators name, numbered: the figures count one in a slot of an
/// array instead of hashing its name (once per record and group).
public enum KnownCause: Int, Sendable, CaseIterable {
    case requestLineWritten, stackAddedFields, requestHeaderFormatting
    case http2StatusCounted, statusLineCRLF, responseHeaderFormatting
    case chunkFraming, gzipRecompression, decodedBodyCounted
    case requestLineNotCounted, statusLineNotCounted, headerFieldsNotCounted
    case contentLengthWithoutBody, contentLengthDiffers
    case totalOnly

    public var name: String {
        switch self {
        case .requestLineWritten: return "request line written as \"host method path HTTP/1.1 query\\n\""
        case .stackAddedFields: return "stack-added request fields"
        case .requestHeaderFormatting: return "header formatting (merged fields, spacing, line ends)"
        case .http2StatusCounted: return "HTTP/2 has no status line; \"HTTP/2 status\" counted"
        case .statusLineCRLF: return "status-line CRLF"
        case .responseHeaderFormatting: return "header formatting (spacing, line ends)"
        case .chunkFraming: return "chunk framing"
        case .gzipRecompression: return "gzip re-compression differs from the body sent (level, settings)"
        case .decodedBodyCounted: return "decoded body counted instead of the coded one"
        case .requestLineNotCounted: return "request line not counted"
        case .statusLineNotCounted: return "status line not counted"
        case .headerFieldsNotCounted: return "header fields not counted"
        case .contentLengthWithoutBody: return "Content-Length of a response without body"
        case .contentLengthDiffers: return "Content-Length differs from the body sent"
        case .totalOnly: return "wire split unknown (HAR gives the total only)"
        }
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    /// The known cause of this name, if any (a cause made from its name alone).
    public static func named(_ name: String) -> KnownCause? { byName[name] }
}

/// One model of how an app-layer meter sizes a message. Adding an estimator is one new
/// conforming type and one line in `EstimatorSet.standard`.
public protocol Estimator: Sendable {
    /// The name used in outputs (`est_<name>` columns).
    var name: String { get }
    /// What the body must be measured for, decided from the head alone.
    func bodyNeeds(for message: HTTPMessage) -> BodyNeeds
    func estimate(_ message: HTTPMessage, body: BodyFacts) -> Result<Estimate, EstimateUnavailable>
    /// Splits `estimate − wire` into causes whose bytes add up to it, component by component.
    func explain(_ message: HTTPMessage, wire: ComponentSizes, body: BodyFacts, estimate: Estimate) -> [ErrorCause]
    /// The names of the head's parts this estimator reads that are unknown (`:path`,
    /// `fields`...): `estimate` fails with `fieldsUnknown` exactly when there are some.
    func missingFields(_ message: HTTPMessage) -> [String]
    /// `estimate`, and the causes of its error against a record's wire size as
    /// `EstimatorSet.explain` gives them: what a record keeps, in one call (an estimator that
    /// reads the head for both reads it once).
    func assess(_ message: HTTPMessage, wire: WireSize, body: BodyFacts) -> Assessment
}

/// An estimate, and why it is off from the record's wire size.
public struct Assessment: Sendable {
    public var estimate: Result<Estimate, EstimateUnavailable>
    /// Empty where there is no estimate or no known wire size.
    public var causes: [ErrorCause]

    public init(estimate: Result<Estimate, EstimateUnavailable>, causes: [ErrorCause]) {
        self.estimate = estimate
        self.causes = causes
    }

    /// `estimated` with its causes: none without an estimate, the total's alone when the wire
    /// size has no split, else what `explain` finds against the split.
    @inline(__always)
    public init(
        _ estimated: Result<Estimate, EstimateUnavailable>, wire: WireSize,
        explain: (_ split: ComponentSizes, _ estimate: Estimate) -> [ErrorCause]
    ) {
        guard let estimate = try? estimated.get() else {
            self.init(estimate: estimated, causes: [])
            return
        }
        guard let split = wire.split else {
            self.init(estimate: estimated, causes: EstimatorSet.totalOnlyCauses(estimate, wire: wire))
            return
        }
        self.init(estimate: estimated, causes: explain(split, estimate))
    }
}

extension Estimator {
    public func assess(_ message: HTTPMessage, wire: WireSize, body: BodyFacts) -> Assessment {
        Assessment(estimate(message, body: body), wire: wire) { split, estimate in
            explain(message, wire: split, body: body, estimate: estimate)
        }
    }
}

extension Estimator {
    /// An estimator that reads the head reads all of it: every unknown part is missing.
    public func missingFields(_ message: HTTPMessage) -> [String] { message.unknownFieldNames }
}

extension Estimator {
    /// The body's wire share that is transfer coding rather than content.
    static func chunkFraming(_ message: HTTPMessage, wire: ComponentSizes) -> ErrorCause {
        ErrorCause(.body, .chunkFraming, message.bodyLength - wire.body)
    }
}

extension Array where Element == ErrorCause {
    /// Adds `bytes` under `name` unless it is zero.
    mutating func add(_ component: WireComponent, _ name: String, _ bytes: Int) {
        if bytes != 0 { append(ErrorCause(component, name, bytes)) }
    }

    mutating func add(_ component: WireComponent, _ known: KnownCause, _ bytes: Int) {
        if bytes != 0 { append(ErrorCause(component, known, bytes)) }
    }

    mutating func add(_ cause: ErrorCause) {
        if cause.bytes != 0 { append(cause) }
    }
}

/// The estimators a run applies, in output order, and the one whose error ranks endpoints.
public struct EstimatorSet: Sendable {
    public let estimators: [any Estimator]
    /// Index of the estimator whose error ranks endpoints in the reports; nil without estimators.
    public let ranking: Int?

    /// `ranking` defaults to the last estimator.
    public init(_ estimators: [any Estimator], ranking: Int? = nil) {
        precondition(ranking.map { estimators.indices.contains($0) } ?? true, "ranking estimator out of range")
        self.estimators = estimators
        self.ranking = ranking ?? (estimators.isEmpty ? nil : estimators.count - 1)
    }

    /// Every estimator we ship, for one client profile; the documented meter (the one apps
    /// ship) ranks endpoints.
    public static func standard(profile: ClientProfile = .urlSession) -> EstimatorSet {
        EstimatorSet([NaiveEstimator(), DocumentedEstimator(profile: profile)], ranking: 1)
    }

    public var names: [String] { estimators.map(\.name) }

    public func bodyNeeds(for message: HTTPMessage) -> BodyNeeds {
        estimators.reduce(into: BodyNeeds()) { $0.formUnion($1.bodyNeeds(for: message)) }
    }

    public func estimate(_ message: HTTPMessage, body: BodyFacts) -> [Result<Estimate, EstimateUnavailable>] {
        estimators.map { $0.estimate(message, body: body) }
    }

    /// Each estimate's causes of `estimate − wire` (empty where there is no estimate or no
    /// known wire size). A wire size known only as a total has one cause for the whole error.
    public func explain(
        _ message: HTTPMessage, wire: WireSize, body: BodyFacts,
        estimates: [Result<Estimate, EstimateUnavailable>]
    ) -> [[ErrorCause]] {
        zip(estimators, estimates).map { estimator, estimate in
            guard let estimate = try? estimate.get() else { return [] }
            if let split = wire.split { return estimator.explain(message, wire: split, body: body, estimate: estimate) }
            return Self.totalOnlyCauses(estimate, wire: wire)
        }
    }

    /// `estimate` and `explain` in one call per estimator (once per record).
    public func assess(_ message: HTTPMessage, wire: WireSize, body: BodyFacts)
        -> (estimates: [Result<Estimate, EstimateUnavailable>], causes: [[ErrorCause]])
    {
        var estimates: [Result<Estimate, EstimateUnavailable>] = []
        var causes: [[ErrorCause]] = []
        estimates.reserveCapacity(estimators.count)
        causes.reserveCapacity(estimators.count)
        // By index: the estimator is used where it is, not copied out of the array.
        for index in estimators.indices {
            let assessment = estimators[index].assess(message, wire: wire, body: body)
            estimates.append(assessment.estimate)
            causes.append(assessment.causes)
        }
        return (estimates, causes)
    }

    /// The causes of an estimate against a wire size with no split: one for the whole
    /// error, none without a total.
    static func totalOnlyCauses(_ estimate: Estimate, wire: WireSize) -> [ErrorCause] {
        guard let total = wire.total else { return [] }
        return [ErrorCause(.total, .totalOnly, estimate.total - total)]
    }

    /// The one cause of a record whose wire size is a total only.
    public static let totalOnlyCause = KnownCause.totalOnly.name
}
