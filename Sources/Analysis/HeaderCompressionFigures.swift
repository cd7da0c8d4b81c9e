import Estimation

/// What each meter counts for an HTTP/2 message's headers against what HPACK made of them on
/// the wire (docs/FIGURES.md, HTTP/2 headers), over the HTTP/2 records of captures (a HAR
/// tells neither frame sizes nor header lists). A record counts when it is measured,
/// its header list is known (not `hpack-state-unknown`) and every estimator gave an estimate,
/// so that every sum runs over the same records. Mergeable.
public struct HeaderCompressionFigures: Sendable, Equatable {
    /// Records counted.
    public var records = 0
    /// Captured HTTP/2 records left out: unmeasured, header list unknown, or an estimate missing.
    public var leftOut = 0
    /// Σ `wire_headers`: HEADERS, CONTINUATION and PUSH_PROMISE frames, 9-byte headers included.
    public var wireHeaders = 0
    /// Σ `header_list`: the decoded fields' HPACK entry sizes (len(name) + len(value) + 32).
    public var headerList = 0
    /// Per estimator, in the run's order: Σ of its headers component (`est_X_headers`).
    public var estimatedHeaders: [Int]

    public init(estimatorCount: Int) {
        estimatedHeaders = Array(repeating: 0, count: estimatorCount)
    }

    mutating func add(_ record: MessageRecord) {
        guard record.measured, let wire = record.wire.headers, let list = record.message.protocolFacts.headerListSize,
            record.estimates.count >= estimatedHeaders.count
        else {
            leftOut += 1
            return
        }
        // Checked first, then added in place: no array of the headers per record.
        let estimates = record.estimates.prefix(estimatedHeaders.count)
        guard estimates.allSatisfy({ if case .success = $0 { return true } else { return false } }) else {
            leftOut += 1
            return
        }
        records += 1
        wireHeaders += wire
        headerList += list
        for (index, estimate) in estimates.enumerated() {
            if case let .success(value) = estimate { estimatedHeaders[index] += value.headers }
        }
    }

    public mutating func merge(_ other: HeaderCompressionFigures) {
        records += other.records
        leftOut += other.leftOut
        wireHeaders += other.wireHeaders
        headerList += other.headerList
        for index in estimatedHeaders.indices where index < other.estimatedHeaders.count {
            estimatedHeaders[index] += other.estimatedHeaders[index]
        }
    }

    /// `wire_headers / header_list`: what HPACK and framing left of the header list; nil without one.
    public var wireToHeaderList: Double? { ratio(wireHeaders, headerList) }

    /// Estimator `index`'s headers over `wire_headers`: how many times the HPACK bytes it counts.
    public func estimateToWire(_ index: Int) -> Double? { ratio(estimatedHeaders[index], wireHeaders) }

    /// Estimator `index`'s headers over `header_list`.
    public func estimateToHeaderList(_ index: Int) -> Double? { ratio(estimatedHeaders[index], headerList) }

    private func ratio(_ numerator: Int, _ denominator: Int) -> Double? {
        records == 0 || denominator == 0 ? nil : Double(numerator) / Double(denominator)
    }
}

/// The header compression a protocol's figures are taken against: HPACK for HTTP/2's records,
/// QPACK for HTTP/3's (kept apart: their tables, framing and costs differ).
public enum HeaderCoder: Sendable, CaseIterable {
    case hpack, qpack

    /// How the reports name the coder.
    public var name: String { self == .hpack ? "HPACK" : "QPACK" }

    /// The protocol whose records it covers, as the reports label it.
    public var protocolLabel: String { self == .hpack ? "HTTP/2" : "HTTP/3" }
}

extension Aggregation {
    /// The figures of `coder`'s records per endpoint and direction.
    public func headerCompression(_ coder: HeaderCoder) -> [GroupKey: HeaderCompressionFigures] {
        coder == .hpack ? headerCompression : qpackCompression
    }

    /// The figures of `coder`'s records in total, by direction.
    public func headerCompressionTotals(_ coder: HeaderCoder) -> [RecordClass: HeaderCompressionFigures] {
        coder == .hpack ? headerCompressionTotals : qpackCompressionTotals
    }
}
