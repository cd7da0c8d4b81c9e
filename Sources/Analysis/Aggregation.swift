import CaptureIO
import Estimation
import Flows
import Records

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One estimator's error over a set of records (docs/FIGURES.md). Mergeable: every
/// relative error is kept, so quantiles stay exact and two halves merge into the whole.
public struct EstimatorFigures: Sendable, Equatable {
    public var count = 0
    public var unestimated = 0
    public var wire = 0
    public var estimated = 0
    /// Records whose wire size is split into line, headers and body (a HAR may give only the
    /// total); the three component errors sum over these.
    public var splitCount = 0
    public var lineError = 0
    public var headersError = 0
    public var bodyError = 0
    /// `|estimate − wire| / wire` of every record counted, in arrival order.
    public var absoluteRelativeErrors: [Double] = []
    /// Error bytes by cause, and how many records had that cause.
    public var causes: [String: CauseTally] {
        Dictionary(uniqueKeysWithValues: causeTallies.all)
    }
    /// `causes`: the shipped estimators' in slots, any other by name.
    var causeTallies = CauseTallies()
    /// The error against each cost layer (docs/FIGURES.md, Cost layers).
    public var layers = LayerErrors()

    public struct CauseTally: Sendable, Equatable {
        public var bytes = 0
        public var records = 0

        mutating func add(bytes more: Int, records count: Int) {
            bytes += more
            records += count
        }
    }

    public init() {}

    /// Adds a measured record. Component errors sum over records whose wire components are
    /// all known (a HAR may give only the total).
    mutating func add(_ record: MessageRecord, _ estimate: Estimate, causes recordCauses: ArraySlice<RecordCause>) {
        add(wire: record.wire, estimate, causes: recordCauses)
    }

    /// `add` from the record's wire size alone (an app meter's estimate, joined at the end).
    /// `split` false: the estimate is a total only (the meter did not log all three parts), so
    /// it adds to no component error.
    mutating func add(
        wire wireSize: WireSize, _ estimate: Estimate, split: Bool = true, causes recordCauses: ArraySlice<RecordCause>
    ) {
        guard let total = wireSize.total else { return }
        for cause in recordCauses { causeTallies.add(cause) }
        add(wire: wireSize, total: total, estimate, split: split)
    }

    /// `add(wire:_:causes:)` of a record whose causes are resolved (`RecordCauses`): the
    /// shipped estimators' by slot, with no name to retain.
    mutating func add(
        wire wireSize: WireSize, _ estimate: Estimate, known: UnsafeBufferPointer<KnownCauseBytes>,
        others: ArraySlice<RecordCause>
    ) {
        guard let total = wireSize.total else { return }
        for cause in known { causeTallies.add(known: cause) }
        for cause in others { causeTallies.add(cause) }
        add(wire: wireSize, total: total, estimate, split: true)
    }

    /// The sums and the relative error of an estimate of a record of `total` wire bytes.
    private mutating func add(wire wireSize: WireSize, total: Int, _ estimate: Estimate, split: Bool) {
        count += 1
        wire += total
        estimated += estimate.total
        layers.add(wireSize, estimate: estimate.total)
        if split, let line = wireSize.line, let headers = wireSize.headers, let body = wireSize.body {
            splitCount += 1
            lineError += estimate.line - line
            headersError += estimate.headers - headers
            bodyError += estimate.body - body
        }
        // A relative error needs wire bytes; an empty message counts in the sums only.
        if total > 0 {
            absoluteRelativeErrors.append(Double(abs(estimate.total - total)) / Double(total))
        }
    }

    public mutating func merge(_ other: EstimatorFigures) {
        count += other.count
        unestimated += other.unestimated
        wire += other.wire
        estimated += other.estimated
        splitCount += other.splitCount
        lineError += other.lineError
        headersError += other.headersError
        bodyError += other.bodyError
        absoluteRelativeErrors += other.absoluteRelativeErrors
        layers.merge(other.layers)
        causeTallies.merge(other.causeTallies)
    }

    /// Causes, largest absolute share first, ties by name.
    public var sortedCauses: [(name: String, tally: CauseTally)] {
        var causes = causeTallies.all
        causes.sort {
            abs($0.tally.bytes) != abs($1.tally.bytes) ? abs($0.tally.bytes) > abs($1.tally.bytes) : $0.name < $1.name
        }
        return causes
    }

    /// Signed bytes: estimated − wire.
    public var error: Int { estimated - wire }
    public var errorPercent: Double? { wire == 0 ? nil : 100 * Double(error) / Double(wire) }
    public var meanAbsoluteRelativeError: Double? {
        absoluteRelativeErrors.isEmpty
            ? nil : absoluteRelativeErrors.reduce(0, +) / Double(absoluteRelativeErrors.count)
    }
    public var maxAbsoluteRelativeError: Double? { absoluteRelativeErrors.max() }

    /// Nearest-rank quantile: the value at 1-based rank ⌈q·n⌉ of the sorted values.
    public func absoluteRelativeError(quantile q: Double) -> Double? {
        guard !absoluteRelativeErrors.isEmpty else { return nil }
        // The reports ask `orderFree` figures, already sorted: checked in one pass, not re-sorted.
        let values = absoluteRelativeErrors
        let sorted = isOrderFree ? values : values.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// Figures that do not depend on the order records came in (for comparing merges).
    public var orderFree: EstimatorFigures {
        // Already sorted (the run sorts once for every report): no copy of the errors.
        if isOrderFree { return self }
        var copy = self
        copy.makeOrderFree()
        return copy
    }

    /// `orderFree` in place: the relative errors sorted where they are.
    mutating func makeOrderFree() {
        if !isOrderFree { absoluteRelativeErrors.sort() }
    }

    /// Whether the relative errors are already in `orderFree`'s order.
    var isOrderFree: Bool {
        zip(absoluteRelativeErrors, absoluteRelativeErrors.dropFirst()).allSatisfy { $0 <= $1 }
    }
}

/// Counts and per-estimator figures of one group of records.
public struct GroupFigures: Sendable, Equatable {
    public var records = 0
    public var unpaired = 0
    public var incomplete = 0
    public var unmeasured = 0
    /// Σ wire_total over measured records.
    public var wireBytes = 0
    /// Records per protocol (docs/FIGURES.md, Protocols).
    public var protocols = ProtocolCounts()
    /// The cost layers of the measured records (docs/FIGURES.md, Cost layers).
    public var layers = LayerFigures()
    /// In the order of the run's estimators.
    public var estimators: [EstimatorFigures]
    /// An endpoint's `request` group: when each request the client sent was sent, for the
    /// rate figures (docs/FIGURES.md, Rate and findings). Empty in the total groups.
    public var requestTimes = RequestTimes()

    public init(estimatorCount: Int) {
        estimators = Array(repeating: EstimatorFigures(), count: estimatorCount)
    }

    mutating func add(_ record: MessageRecord) {
        let causes = RecordCauses(record)
        RecordTally.estimates(of: record).withUnsafeBufferPointer { estimates in
            causes.withKnown { known in add(RecordTally(record), estimates: estimates, known: known, causes: causes) }
        }
    }

    /// Adds a record by what the groups read of it (`RecordTally`, found once for every group
    /// it counts in), with each estimator's estimate (nil: none) and causes (`known`: the
    /// shipped estimators' of `causes`, lent). Lent buffers, not arrays: nothing to retain
    /// and release for each group a record counts in.
    /// `keepsTime`: a request the client sent keeps its time (an endpoint's group does; the
    /// totals do not, so that each time is held once).
    mutating func add(
        _ tally: RecordTally, estimates: UnsafeBufferPointer<Estimate?>, known: RecordCauses.Known,
        causes: RecordCauses, keepsTime: Bool = false
    ) {
        records += 1
        if keepsTime && tally.isCall { requestTimes.add(nanoseconds: tally.time) }
        protocols[tally.wireProtocol] += 1
        if tally.unpaired { unpaired += 1 }
        if tally.incomplete { incomplete += 1 }
        guard let total = tally.measuredTotal else {
            unmeasured += 1
            return
        }
        wireBytes += total
        layers.add(tally.wire)
        for index in 0..<min(estimates.count, estimators.count) {
            if let value = estimates[index] {
                estimators[index].add(
                    wire: tally.wire, value, known: known.of(estimator: index),
                    others: causes.hasOthers ? causes.others(of: index) : [])
            } else {
                estimators[index].unestimated += 1
            }
        }
    }

    /// Adds a share of connection overhead to `ip_share`, here and for the estimators in `mask`.
    mutating func addShare(_ share: Int, estimators mask: UInt64) {
        layers.ipShare = saturatingSum(layers.ipShare, share)
        for index in estimators.indices where index < 64 && mask & (1 << UInt64(index)) != 0 {
            estimators[index].layers.ipShare = saturatingSum(estimators[index].layers.ipShare, share)
        }
    }

    public mutating func merge(_ other: GroupFigures) {
        records += other.records
        unpaired += other.unpaired
        incomplete += other.incomplete
        unmeasured += other.unmeasured
        wireBytes += other.wireBytes
        protocols.merge(other.protocols)
        layers.merge(other.layers)
        requestTimes.merge(other.requestTimes)
        for index in estimators.indices where index < other.estimators.count {
            estimators[index].merge(other.estimators[index])
        }
    }

    public var orderFree: GroupFigures {
        if estimators.allSatisfy(\.isOrderFree) && requestTimes.isOrderFree { return self }
        var copy = self
        copy.makeOrderFree()
        return copy
    }

    /// Sorts the relative errors in place (`orderFree` without a copy).
    mutating func makeOrderFree() {
        for index in estimators.indices { estimators[index].makeOrderFree() }
        requestTimes.makeOrderFree()
    }
}

/// A cause's name with its hash, computed once per record however many groups count it.
struct CauseName: Hashable {
    let name: String
    private let hash: Int

    init(_ name: String) {
        self.name = name
        hash = name.hashValue
    }

    static func == (a: CauseName, b: CauseName) -> Bool { a.hash == b.hash && a.name == b.name }
    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}

/// One of a record's causes as the figures count it: a shipped estimator's by its number
/// (no hashing), any other by its hashed name.
struct RecordCause {
    let known: KnownCause?
    let other: CauseName?
    let bytes: Int

    init(known: KnownCause?, other: CauseName?, bytes: Int) {
        self.known = known
        self.other = other
        self.bytes = bytes
    }

    init(_ cause: ErrorCause) {
        // A known name made as text (a test, another estimator) counts in the same slot.
        let known = cause.known ?? KnownCause.named(cause.name)
        self.known = known
        other = known == nil ? CauseName(cause.name) : nil
        bytes = cause.bytes
    }
}

/// An estimator's error bytes by cause: the shipped estimators' causes in a slot each, any
/// other by name. Equal when the tallies by name are.
struct CauseTallies: Sendable, Equatable {
    /// By `KnownCause.rawValue`; a slot of no records is no cause. Empty until one is counted.
    var known: [EstimatorFigures.CauseTally] = []
    var others: [CauseName: EstimatorFigures.CauseTally] = [:]

    mutating func add(_ cause: RecordCause) {
        if let known = cause.known {
            if self.known.isEmpty {
                self.known = Array(repeating: EstimatorFigures.CauseTally(), count: KnownCause.allCases.count)
            }
            self.known[known.rawValue].add(bytes: cause.bytes, records: 1)
        } else if let name = cause.other {
            others[name, default: EstimatorFigures.CauseTally()].add(bytes: cause.bytes, records: 1)
        }
    }

    /// A shipped estimator's cause, by slot.
    mutating func add(known cause: KnownCauseBytes) {
        if known.isEmpty { known = Array(repeating: EstimatorFigures.CauseTally(), count: KnownCause.allCases.count) }
        known[cause.slot].add(bytes: cause.bytes, records: 1)
    }

    mutating func merge(_ other: CauseTallies) {
        if !other.known.isEmpty {
            if known.isEmpty {
                known = other.known
            } else {
                for index in known.indices {
                    known[index].add(bytes: other.known[index].bytes, records: other.known[index].records)
                }
            }
        }
        for (name, tally) in other.others {
            others[name, default: EstimatorFigures.CauseTally()].add(bytes: tally.bytes, records: tally.records)
        }
    }

    /// Every cause counted, by name, in no particular order.
    var all: [(name: String, tally: EstimatorFigures.CauseTally)] {
        var all: [(name: String, tally: EstimatorFigures.CauseTally)] = []
        all.reserveCapacity(others.count + known.count)
        for (name, tally) in others { all.append((name: name.name, tally: tally)) }
        for (index, tally) in known.enumerated() where tally.records > 0 {
            all.append((name: KnownCause(rawValue: index)!.name, tally: tally))
        }
        return all
    }
}

/// What every group a record counts in reads of it, found once per record.
struct RecordTally {
    var direction: RecordClass
    var wireProtocol: HTTPProtocol
    /// The side that sent it (`Direction.of`).
    var side: Direction
    /// A request the client sent: a call, measured or not (an HTTP/2 pushed request is the
    /// server's, no call).
    var isCall: Bool { side == .up }
    var time: Int64?
    var unpaired: Bool
    var incomplete: Bool
    /// `wire.total` of a measured record; nil for an unmeasured one.
    var measuredTotal: Int?
    var wire: WireSize

    /// Borrowed: an initializer's parameters are otherwise owned, which copied the whole record.
    init(_ record: borrowing MessageRecord) {
        direction = record.direction
        wireProtocol = record.wireProtocol
        side = Direction.of(record)
        time = record.source.time
        unpaired = record.message.pair == nil
        incomplete = !record.message.complete
        measuredTotal = record.measured ? record.wire.total : nil
        wire = record.wire
    }

    /// Each estimator's estimate of the record, nil where it has none.
    static func estimates(of record: borrowing MessageRecord) -> [Estimate?] {
        record.estimates.map { if case let .success(value) = $0 { value } else { nil } }
    }

    /// `estimates(of:)` into `estimates`, its storage kept.
    static func fill(_ estimates: inout RefilledArray<Estimate?>, from record: borrowing MessageRecord) {
        estimates.removeAll()
        for estimate in record.estimates {
            if case let .success(value) = estimate { estimates.append(value) } else { estimates.append(nil) }
        }
    }
}

/// An array refilled once per record, its elements overwritten in place: storage and count
/// kept (`Array.removeAll(keepingCapacity:)` is a call into the generic `replaceSubrange`,
/// which cost more than the refill).
struct RefilledArray<Element> {
    private var storage: [Element] = []
    private(set) var count = 0

    mutating func removeAll() { count = 0 }

    mutating func append(_ element: Element) {
        if count < storage.count { storage[count] = element } else { storage.append(element) }
        count += 1
    }

    var isEmpty: Bool { count == 0 }

    /// The element at `index` (below `count`).
    subscript(index: Int) -> Element { storage[index] }

    /// The elements in `range` (within `0..<count`).
    subscript(range: Range<Int>) -> ArraySlice<Element> { storage[range] }

    /// The elements, lent for the call.
    func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<Element>) -> Result) -> Result {
        storage.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<count])) }
    }
}

extension RefilledArray: Sendable where Element: Sendable {}

/// What `Aggregation.add` keeps from one record to the next to spare work: storage for the
/// record's causes and estimates, and the last endpoint's hash (a response's endpoint is its
/// request's). No figure: aggregations are equal whatever their scratch holds.
struct AddScratch: Sendable, Equatable {
    var causes = RecordCauses()
    var estimates = RefilledArray<Estimate?>()
    private var lastEndpoint = ""
    private var lastHash = "".hashValue

    /// `endpoint.hashValue`, computed only when it is not the last endpoint's.
    mutating func hash(of endpoint: String) -> Int {
        if endpoint != lastEndpoint {
            lastEndpoint = endpoint
            lastHash = endpoint.hashValue
        }
        return lastHash
    }

    static func == (_: AddScratch, _: AddScratch) -> Bool { true }
}

/// A shipped estimator's cause of a record: its slot (`KnownCause.rawValue`) and bytes.
struct KnownCauseBytes: Sendable {
    let slot: Int
    let bytes: Int
}

/// A record's causes of error, every estimator's, named for the groups' tables: the shipped
/// estimators' by slot in one array (nothing to retain when each group counts them), any
/// other by name in another.
struct RecordCauses: Sendable {
    private var known = RefilledArray<KnownCauseBytes>()
    private var others = RefilledArray<RecordCause>()
    /// Where each estimator's causes end in `known` and in `others`.
    private var knownEnds = RefilledArray<Int>()
    private var otherEnds = RefilledArray<Int>()

    init() {}

    /// Borrowed: an initializer's parameters are otherwise owned, which copied the whole record.
    init(_ record: borrowing MessageRecord) { fill(from: record) }

    /// The causes of `record` in place of those held, the storage kept (once per record).
    /// Read through lent buffers: no cause (and its name) copied.
    mutating func fill(from record: borrowing MessageRecord) {
        known.removeAll()
        others.removeAll()
        knownEnds.removeAll()
        otherEnds.removeAll()
        record.causes.withUnsafeBufferPointer { lists in
            for list in lists.indices {
                lists[list].withUnsafeBufferPointer { causes in
                    for index in causes.indices {
                        // As `RecordCause(_:)`: a known name made as text counts in the same slot.
                        if let slot = causes[index].known ?? KnownCause.named(causes[index].name) {
                            known.append(KnownCauseBytes(slot: slot.rawValue, bytes: causes[index].bytes))
                        } else {
                            others.append(RecordCause(causes[index]))
                        }
                    }
                }
                knownEnds.append(known.count)
                otherEnds.append(others.count)
            }
        }
    }

    /// Whether some cause is not a shipped estimator's.
    var hasOthers: Bool { !others.isEmpty }

    /// The shipped estimators' causes, lent for the call.
    func withKnown<Result>(_ body: (Known) -> Result) -> Result {
        known.withUnsafeBufferPointer { causes in
            knownEnds.withUnsafeBufferPointer { ends in body(Known(causes: causes, ends: ends)) }
        }
    }

    /// The shipped estimators' causes of a record, by estimator.
    struct Known {
        let causes: UnsafeBufferPointer<KnownCauseBytes>
        /// Where each estimator's causes end in `causes`.
        let ends: UnsafeBufferPointer<Int>

        /// Those of the estimator at `index` (none when the record has no list for it).
        func of(estimator index: Int) -> UnsafeBufferPointer<KnownCauseBytes> {
            guard index < ends.count else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(rebasing: causes[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
        }
    }

    /// The other causes of the estimator at `index`, by name.
    func others(of index: Int) -> ArraySlice<RecordCause> {
        guard index < otherEnds.count else { return [] }
        return others[(index == 0 ? 0 : otherEnds[index - 1])..<otherEnds[index]]
    }
}

/// A group: one endpoint, one direction.
public struct GroupKey: Hashable, Sendable, Comparable {
    public var endpoint: String { didSet { endpointHash = endpoint.hashValue } }
    public var direction: RecordClass
    /// The endpoint's hash, computed once: a record's key is looked up in several tables (its
    /// group, its header figures, the overhead sharing), each of which rehashes its keys as it
    /// grows, and hashing the endpoint's text each time cost more than the rest of the look-up.
    private var endpointHash: Int

    public init(endpoint: String, direction: RecordClass) {
        self.endpoint = endpoint
        self.direction = direction
        endpointHash = endpoint.hashValue
    }

    /// A key whose endpoint's hash is known (`endpoint.hashValue`).
    init(endpoint: String, hash: Int, direction: RecordClass) {
        self.endpoint = endpoint
        self.direction = direction
        endpointHash = hash
    }

    public static func == (a: GroupKey, b: GroupKey) -> Bool {
        a.endpointHash == b.endpointHash && a.direction == b.direction && a.endpoint == b.endpoint
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(endpointHash)
        hasher.combine(direction)
    }

    /// Endpoint in byte order, then direction.
    public static func < (a: GroupKey, b: GroupKey) -> Bool {
        let order = a.endpoint.utf8Order(b.endpoint)
        // Different bytes are different endpoints, but for canonically equivalent Unicode
        // (which String equality, and so the groups' dictionary, takes as one).
        if order.value != 0 && (order.bothASCII || a.endpoint != b.endpoint) { return order.value < 0 }
        return a.direction < b.direction
    }
}

/// Every figure of docs/METERING.md §5 over a run: per endpoint and direction, and in total.
/// Aggregations of disjoint record sets merge into the aggregation of their union.
public struct Aggregation: Sendable, Equatable {
    public private(set) var estimatorNames: [String]
    /// Index of the estimator whose error ranks endpoints (`EstimatorSet.ranking`).
    public let rankingEstimator: Int?
    public internal(set) var groups: [GroupKey: GroupFigures] = [:]
    public internal(set) var totals: [RecordClass: GroupFigures] = [:]
    /// The totals split by protocol (docs/FIGURES.md, Protocols).
    public internal(set) var protocolTotals: [ProtocolKey: GroupFigures] = [:]
    /// HTTP/2 records only: each meter's headers against HPACK's bytes, per group and in total.
    public internal(set) var headerCompression: [GroupKey: HeaderCompressionFigures] = [:]
    public internal(set) var headerCompressionTotals: [RecordClass: HeaderCompressionFigures] = [:]
    /// HTTP/3 records only: each meter's headers against QPACK's bytes, per group and in total.
    public internal(set) var qpackCompression: [GroupKey: HeaderCompressionFigures] = [:]
    public internal(set) var qpackCompressionTotals: [RecordClass: HeaderCompressionFigures] = [:]
    /// What the network carried each way: records by layer, connection overhead by kind.
    public internal(set) var network: [Direction: NetworkFigures] = [:]
    /// What `add` keeps from one record to the next.
    private var scratch = AddScratch()

    /// How many of `estimatorNames` are models that estimate each record as it comes (the
    /// `EstimatorSet`); the rest are app meters (`--meter-log`), whose estimates are joined to
    /// the records at the end of the run (`addMeterEstimate`, `finishMeters`).
    public let modelCount: Int

    public init(estimatorNames: [String], rankingEstimator: Int?, meters: [String] = []) {
        self.estimatorNames = estimatorNames + meters
        self.rankingEstimator = rankingEstimator
        modelCount = estimatorNames.count
    }

    /// An empty aggregation for a run's estimators, and its app meters after them.
    public init(estimators: EstimatorSet, meters: [String] = []) {
        self.init(estimatorNames: estimators.names, rankingEstimator: estimators.ranking, meters: meters)
    }

    public mutating func add(_ record: MessageRecord) {
        // What the groups read of the record, found once (and its causes and estimates into
        // storage kept from the last record), then added to each group in place.
        let tally = RecordTally(record)
        scratch.causes.fill(from: record)
        RecordTally.fill(&scratch.estimates, from: record)
        let causes = scratch.causes
        let estimates = scratch.estimates
        let key = GroupKey(endpoint: record.endpoint, hash: scratch.hash(of: record.endpoint), direction: tally.direction)
        let count = estimatorNames.count
        estimates.withUnsafeBufferPointer { estimates in
            causes.withKnown { known in
                groups[key, default: GroupFigures(estimatorCount: count)].add(
                    tally, estimates: estimates, known: known, causes: causes, keepsTime: true)
                totals[tally.direction, default: GroupFigures(estimatorCount: count)].add(
                    tally, estimates: estimates, known: known, causes: causes)
                protocolTotals[
                    ProtocolKey(wireProtocol: tally.wireProtocol, direction: tally.direction),
                    default: GroupFigures(estimatorCount: count)
                ].add(tally, estimates: estimates, known: known, causes: causes)
            }
        }
        // Header lists are measured by the readers that count frames (HTTP/2, HTTP/3); HTTP/1.x and a HAR tell neither.
        if record.message.protocolFacts.frames != nil { addHeaderCompression(record, key: key, tally: tally) }
        network[tally.side, default: NetworkFigures()].add(record)
    }

    private mutating func addHeaderCompression(_ record: MessageRecord, key: GroupKey, tally: RecordTally) {
        let wireProtocol = tally.wireProtocol
        if wireProtocol == .h3 {
            qpackCompression[key, default: HeaderCompressionFigures(estimatorCount: modelCount)].add(record)
            qpackCompressionTotals[
                record.direction, default: HeaderCompressionFigures(estimatorCount: modelCount)
            ].add(record)
            return
        }
        headerCompression[key, default: HeaderCompressionFigures(estimatorCount: modelCount)].add(record)
        headerCompressionTotals[
            record.direction, default: HeaderCompressionFigures(estimatorCount: modelCount)
        ].add(record)
    }

    /// A connection's cost per side (its row in connections.csv), for the network figures.
    public mutating func add(_ row: ConnectionRow) {
        // QUIC rows too: their datagrams are split by owner like TCP's packets (docs/METERING.md §2d).
        network[.up, default: NetworkFigures()].add(row.clientCost)
        network[.down, default: NetworkFigures()].add(row.serverCost)
    }

    /// An input's UDP that no protocol read (diagnostics.json's `udp.other_up`/`other_down`).
    public mutating func addOtherUDP(_ udp: InputDiagnostics.UDPCounts) {
        for (side, counts) in [(Direction.up, udp.otherUp), (.down, udp.otherDown)] where counts.frameBytes > 0 {
            var figures = network[side, default: NetworkFigures()]
            figures.otherUDPIP = saturatingSum(figures.otherUDPIP, counts.ipBytes)
            figures.otherUDPFrame = saturatingSum(figures.otherUDPFrame, counts.frameBytes)
            network[side] = figures
        }
    }

    /// Connection overhead shared out over records (`OverheadSharing.finish`): each share adds
    /// to `ip_share` of its group, of its direction's total, and of the estimators counting it.
    public mutating func add(_ overhead: OverheadShares) {
        let count = estimatorNames.count
        for (key, share) in overhead.shares {
            groups[key.group, default: GroupFigures(estimatorCount: count)].addShare(share, estimators: key.estimators)
            totals[key.group.direction, default: GroupFigures(estimatorCount: count)].addShare(
                share, estimators: key.estimators)
        }
        for (side, bytes) in overhead.unshared {
            network[side, default: NetworkFigures()].unsharedIP = saturatingSum(
                network[side, default: NetworkFigures()].unsharedIP, bytes)
        }
    }

    public mutating func merge(_ other: Aggregation) {
        precondition(
            other.estimatorNames == estimatorNames && other.rankingEstimator == rankingEstimator
                && other.modelCount == modelCount,
            "aggregations of different estimators")
        for (key, figures) in other.groups {
            groups[key, default: GroupFigures(estimatorCount: estimatorNames.count)].merge(figures)
        }
        for (direction, figures) in other.totals {
            totals[direction, default: GroupFigures(estimatorCount: estimatorNames.count)].merge(figures)
        }
        for (key, figures) in other.protocolTotals {
            protocolTotals[key, default: GroupFigures(estimatorCount: estimatorNames.count)].merge(figures)
        }
        for (key, figures) in other.headerCompression {
            headerCompression[key, default: HeaderCompressionFigures(estimatorCount: modelCount)]
                .merge(figures)
        }
        for (direction, figures) in other.headerCompressionTotals {
            headerCompressionTotals[
                direction, default: HeaderCompressionFigures(estimatorCount: modelCount)
            ].merge(figures)
        }
        for (key, figures) in other.qpackCompression {
            qpackCompression[key, default: HeaderCompressionFigures(estimatorCount: modelCount)].merge(figures)
        }
        for (direction, figures) in other.qpackCompressionTotals {
            qpackCompressionTotals[
                direction, default: HeaderCompressionFigures(estimatorCount: modelCount)
            ].merge(figures)
        }
        for (side, figures) in other.network {
            network[side, default: NetworkFigures()].merge(figures)
        }
    }

    /// The totals by protocol, in protocol then direction order.
    public var sortedProtocolTotals: [(key: ProtocolKey, figures: GroupFigures)] {
        protocolTotals.sorted { $0.key < $1.key }.map { (key: $0.key, figures: $0.value) }
    }

    /// Groups in output order.
    public var sortedGroups: [(key: GroupKey, figures: GroupFigures)] {
        // In `GroupKey`'s order, comparing the endpoints' bytes gathered in one buffer, each
        // one's ASCII-ness found once; positions are sorted, not the keys: comparing Strings
        // and moving them while sorting cost more than the rest of endpoints.csv.
        let entries = Array(groups)
        var text: [UInt8] = []
        var spans: [(start: Int, count: Int, ascii: Bool)] = []
        spans.reserveCapacity(entries.count)
        for entry in entries {
            var endpoint = entry.key.endpoint
            endpoint.withUTF8 { bytes in
                spans.append((text.count, bytes.count, !bytes.contains { $0 >= 0x80 }))
                text.append(contentsOf: bytes)
            }
        }
        let order = text.withUnsafeBufferPointer { buffer in
            entries.indices.sorted { a, b in
                let (left, right) = (spans[a], spans[b])
                let order = bytesOrder(
                    UnsafeBufferPointer(rebasing: buffer[left.start..<left.start + left.count]),
                    UnsafeBufferPointer(rebasing: buffer[right.start..<right.start + right.count]))
                // Different bytes are different endpoints, but for canonically equivalent
                // Unicode (as in `GroupKey.<`).
                if order != 0 && ((left.ascii && right.ascii) || entries[a].key.endpoint != entries[b].key.endpoint) {
                    return order < 0
                }
                return entries[a].key.direction < entries[b].key.direction
            }
        }
        return order.map { (key: entries[$0].key, figures: entries[$0].value) }
    }

    /// Totals in direction order.
    public var sortedTotals: [(direction: RecordClass, figures: GroupFigures)] {
        totals.sorted { $0.key < $1.key }.map { (direction: $0.key, figures: $0.value) }
    }

    /// The same figures regardless of the order records were added or merged in.
    public var orderFree: Aggregation {
        var copy = self
        copy.makeOrderFree()
        return copy
    }

    /// `orderFree` in place: a run that is done adding sorts its figures without copying them.
    public mutating func makeOrderFree() {
        Self.makeOrderFree(&groups)
        Self.makeOrderFree(&totals)
        Self.makeOrderFree(&protocolTotals)
    }

    /// Each value sorted where it is. Walked by index, not through `values.indices`, which
    /// would hold a second reference to the storage and make the first change copy all of it.
    private static func makeOrderFree<Key>(_ figures: inout [Key: GroupFigures]) {
        var index = figures.values.startIndex
        while index != figures.values.endIndex {
            figures.values[index].makeOrderFree()
            figures.values.formIndex(after: &index)
        }
    }
}

/// A total group by protocol: one protocol, one direction.
public struct ProtocolKey: Hashable, Sendable, Comparable {
    public var wireProtocol: HTTPProtocol
    public var direction: RecordClass

    public init(wireProtocol: HTTPProtocol, direction: RecordClass) {
        self.wireProtocol = wireProtocol
        self.direction = direction
    }

    public static func < (a: ProtocolKey, b: ProtocolKey) -> Bool {
        a.wireProtocol != b.wireProtocol ? a.wireProtocol < b.wireProtocol : a.direction < b.direction
    }
}

extension String {
    /// The order of the two strings' UTF-8 bytes (what `utf8.lexicographicallyPrecedes`
    /// decides), through `memcmp`: sorting thousands of endpoints compares them often.
    public func utf8Order(_ other: String) -> (value: Int, bothASCII: Bool) {
        let result = utf8Compare(other)
        return (result, result != 0 && isASCII && other.isASCII)
    }

    /// Whether every byte is ASCII.
    public var isASCII: Bool {
        var text = self
        return text.withUTF8 { !$0.contains { $0 >= 0x80 } }
    }

    /// Negative, zero or positive as the UTF-8 bytes of `self` come before, equal or after
    /// those of `other`.
    public func utf8Compare(_ other: String) -> Int {
        var left = self
        var right = other
        return left.withUTF8 { l in right.withUTF8 { r in bytesOrder(l, r) } }
    }
}

/// Negative, zero or positive as the bytes `l` come before, equal or after `r`: `memcmp` of
/// what they share, then the shorter first.
func bytesOrder(_ l: UnsafeBufferPointer<UInt8>, _ r: UnsafeBufferPointer<UInt8>) -> Int {
    let common = Swift.min(l.count, r.count)
    let result = common == 0 ? 0 : Int(memcmp(l.baseAddress!, r.baseAddress!, common))
    return result != 0 ? result : l.count - r.count
}

// MARK: - App meters (`--meter-log`), joined at the end of the run

/// What the aggregation needs of a record to count an app meter's estimate of it once the
/// meter's log is joined to the records (docs/METER-LOG.md, "In a run"): kept per record that
/// may be metered, instead of the record.
public struct MeteredRecord: Sendable {
    public var group: GroupKey
    public var wireProtocol: HTTPProtocol
    public var wire: WireSize
    public var measured: Bool

    /// Borrowed: an initializer's parameters are otherwise owned, which copied the whole record.
    public init(_ record: borrowing MessageRecord) {
        group = GroupKey(endpoint: record.endpoint, direction: record.direction)
        wireProtocol = record.wireProtocol
        wire = record.wire
        measured = record.measured
    }
}

/// The causes of an app meter's error. The meter says how it counted, not why: each component's
/// difference is one cause under that component.
public enum MeterCause {
    public static let line = "line as the meter counted it"
    public static let headers = "headers as the meter counted them"
    public static let body = "body as the meter counted it"
    public static let totalOnly = "total only (the meter logged no parts)"

    /// `estimate − wire` split into causes that add up to it, component by component; `split`
    /// false when the meter logged only its total.
    public static func explain(wire: WireSize, estimate: Estimate, split: Bool) -> [ErrorCause] {
        guard let total = wire.total else { return [] }
        if let parts = wire.split {
            guard split else { return [ErrorCause(.total, totalOnly, estimate.total - total)] }
            let differences: [(WireComponent, String, Int)] = [
                (.line, line, estimate.line - parts.line), (.headers, headers, estimate.headers - parts.headers),
                (.body, body, estimate.body - parts.body),
            ]
            return differences.filter { $0.2 != 0 }.map { ErrorCause($0.0, $0.1, $0.2) }
        }
        return [ErrorCause(.total, .totalOnly, estimate.total - total)]
    }

    /// The causes' names as the figures count them, resolved once, not per record.
    private static let lineCause = RecordCause(ErrorCause(.line, line, 0))
    private static let headersCause = RecordCause(ErrorCause(.headers, headers, 0))
    private static let bodyCause = RecordCause(ErrorCause(.body, body, 0))
    private static let totalOnlyCause = RecordCause(ErrorCause(.total, totalOnly, 0))
    private static let totalOnlyKnownCause = RecordCause(ErrorCause(.total, .totalOnly, 0))

    /// `explain(...)` as the figures count it (`RecordCause(explain(...))`), without naming
    /// each record's causes again.
    static func recordCauses(wire: WireSize, estimate: Estimate, split: Bool) -> [RecordCause] {
        func cause(_ named: RecordCause, _ bytes: Int) -> RecordCause {
            RecordCause(known: named.known, other: named.other, bytes: bytes)
        }
        guard let total = wire.total else { return [] }
        if let parts = wire.split {
            guard split else { return [cause(totalOnlyCause, estimate.total - total)] }
            var causes: [RecordCause] = []
            causes.reserveCapacity(3)
            if estimate.line != parts.line { causes.append(cause(lineCause, estimate.line - parts.line)) }
            if estimate.headers != parts.headers {
                causes.append(cause(headersCause, estimate.headers - parts.headers))
            }
            if estimate.body != parts.body { causes.append(cause(bodyCause, estimate.body - parts.body)) }
            return causes
        }
        return [cause(totalOnlyKnownCause, estimate.total - total)]
    }
}

extension Aggregation {
    /// Counts an app meter's estimate of a record already added (`add(_:)`, where the meter had
    /// none yet): in its group, its direction's total and its protocol's. `meter` is the meter's
    /// place among the meters (0 is the estimator after the models). `split` false: the meter
    /// logged its total only.
    public mutating func addMeterEstimate(meter: Int, record: MeteredRecord, estimate: Estimate, split: Bool) {
        let index = modelCount + meter
        guard record.measured, record.wire.total != nil, index < estimatorNames.count else { return }
        let causes = MeterCause.recordCauses(wire: record.wire, estimate: estimate, split: split)
        let count = estimatorNames.count
        groups[record.group, default: GroupFigures(estimatorCount: count)].estimators[index].add(
            wire: record.wire, estimate, split: split, causes: causes[...])
        totals[record.group.direction, default: GroupFigures(estimatorCount: count)].estimators[index].add(
            wire: record.wire, estimate, split: split, causes: causes[...])
        protocolTotals[
            ProtocolKey(wireProtocol: record.wireProtocol, direction: record.group.direction),
            default: GroupFigures(estimatorCount: count)
        ].estimators[index].add(wire: record.wire, estimate, split: split, causes: causes[...])
    }

    /// Adds app meters after the estimators, named only once their logs are read (while the
    /// records streamed by, a meter had no estimate of any): every group gets their figures, empty.
    public mutating func addMeters(_ names: [String]) {
        guard !names.isEmpty else { return }
        estimatorNames += names
        let empty = Array(repeating: EstimatorFigures(), count: names.count)
        func extend<Key>(_ figures: inout [Key: GroupFigures]) {
            var position = figures.values.startIndex
            while position != figures.values.endIndex {
                figures.values[position].estimators += empty
                figures.values.formIndex(after: &position)
            }
        }
        extend(&groups)
        extend(&totals)
        extend(&protocolTotals)
    }

    /// Once every meter estimate is in: each group's measured records that a meter gave no
    /// estimate are its `unestimated` (reason `not-metered`).
    public mutating func finishMeters() {
        guard modelCount < estimatorNames.count else { return }
        let meters = modelCount..<estimatorNames.count
        func finish<Key>(_ figures: inout [Key: GroupFigures]) {
            var position = figures.values.startIndex
            while position != figures.values.endIndex {
                let measured = figures.values[position].records - figures.values[position].unmeasured
                for index in meters {
                    figures.values[position].estimators[index].unestimated =
                        measured - figures.values[position].estimators[index].count
                }
                figures.values.formIndex(after: &position)
            }
        }
        finish(&groups)
        finish(&totals)
        finish(&protocolTotals)
    }
}
