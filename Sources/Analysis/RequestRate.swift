import CaptureIO

/// The times of one endpoint's requests: what its rate figures are made of (docs/FIGURES.md,
/// Rate and findings). 8 bytes per request with a time, a count for those without; two sets
/// merge by concatenation, so the figures of a merge are those of one run over all the records.
public struct RequestTimes: Sendable, Equatable {
    /// Each timed request's time in whole microseconds since the epoch, as messages.csv's `time`
    /// writes it (nanoseconds truncated toward zero); in arrival order until `makeOrderFree`.
    public private(set) var microseconds: [Int64] = []
    /// Requests whose time is unknown (a HAR entry without `startedDateTime`): counted, in no
    /// rate figure.
    public private(set) var untimed = 0

    public init() {}

    public init(microseconds: [Int64], untimed: Int = 0) {
        self.microseconds = microseconds
        self.untimed = untimed
    }

    /// Requests with a time.
    public var count: Int { microseconds.count }

    /// A request sent at `nanoseconds` since the epoch, or at an unknown time.
    mutating func add(nanoseconds: Int64?) {
        guard let nanoseconds else {
            untimed += 1
            return
        }
        microseconds.append(nanoseconds / 1000)
    }

    public mutating func merge(_ other: RequestTimes) {
        microseconds += other.microseconds
        untimed += other.untimed
    }

    /// Whether the times are sorted (the order every figure reads them in).
    var isOrderFree: Bool {
        zip(microseconds, microseconds.dropFirst()).allSatisfy { $0 <= $1 }
    }

    /// Sorts the times in place.
    mutating func makeOrderFree() {
        if !isOrderFree { microseconds.sort() }
    }

    /// The times in ascending order (no copy when already sorted).
    public var sorted: [Int64] { isOrderFree ? microseconds : microseconds.sorted() }
}

/// What an endpoint's requests tell about when it is called (docs/FIGURES.md, Rate and findings).
public enum Finding: Sendable, Equatable {
    /// Its rate grows across its span: `lastThird` requests in the last third of the span
    /// against `firstThird` in the first (`growth` = their ratio).
    case runaway(growth: Double, firstThird: Int, lastThird: Int)
    /// `perSecond` requests inside one second.
    case burst(perSecond: Int)
    /// It repeats at a steady interval: `period` microseconds (the median interval).
    case polling(period: Int64)

    /// `runaway`, `burst`, `polling`: the name in endpoints.csv and report.json.
    public var name: String {
        switch self {
        case .runaway: return "runaway"
        case .burst: return "burst"
        case .polling: return "polling"
        }
    }

    /// Worst first: a runaway's cost keeps growing, a burst is a spike, polling a steady cost.
    public var severity: Int {
        switch self {
        case .runaway: return 3
        case .burst: return 2
        case .polling: return 1
        }
    }
}

/// The rules' thresholds (docs/FIGURES.md, Rate and findings), in one place.
public enum FindingRules {
    /// `polling`: at least this many timed requests (so that 4 intervals agree) …
    public static let pollingMinimumRequests = 5
    /// … a median interval of at least 0.1 s (faster is a loop, not a timer) …
    public static let pollingMinimumPeriod: Int64 = 100_000
    /// … and at least 90 % of the intervals within ±10 % of the median.
    public static let pollingSteadyPercent = 90
    public static let pollingTolerancePercent = 10
    /// `runaway`: at least this many timed requests over at least 10 s …
    public static let runawayMinimumRequests = 12
    public static let runawayMinimumSpan: Int64 = 10_000_000
    /// … at least 3 requests in the first third of the span, more in the middle third and
    /// more again in the last, which holds at least twice the first third's.
    public static let runawayMinimumFirstThird = 3
    public static let runawayMinimumGrowth = 2
    /// `burst`: at least this many requests inside one second.
    public static let burstMinimumPerSecond = 5
}

/// The rate figures of one endpoint, from its requests' times (docs/FIGURES.md, Rate and
/// findings). Times and durations are whole microseconds.
public struct RateFigures: Sendable, Equatable {
    /// Requests with a time, and those without (left out of every other figure).
    public var requests = 0
    public var untimed = 0
    /// The first and last request's time; nil without a timed request.
    public var first: Int64?
    public var last: Int64?
    /// `last − first` (the active span); nil without a timed request.
    public var span: Int64?
    /// Mean requests per minute over the span: 60 × (requests − 1) / span, the rate the
    /// intervals give (60 / their mean); nil with fewer than 2 requests or a span of 0.
    public var perMinute: Double?
    /// The most requests in a window [t, t + 60 s) starting at a request, and in [t, t + 1 s).
    public var peakPerMinute = 0
    public var peakPerSecond = 0
    /// Of the intervals between consecutive requests: the nearest-rank median (rank ⌈m/2⌉ of
    /// the m sorted intervals) and the minimum; nil with fewer than 2 requests.
    public var medianInterval: Int64?
    public var minimumInterval: Int64?
    /// Requests in the first third [first, first + span/3), the middle third, and the last
    /// third [last − span/3, last]; nil when the span is 0 or unknown.
    public var thirds: (first: Int, middle: Int, last: Int)?
    /// Worst first (`Finding.severity`).
    public var findings: [Finding] = []

    /// Requests in the last third over those in the first; nil without thirds.
    public var growth: Double? { thirds.map { Double($0.last) / Double($0.first) } }

    /// The polling period, when the endpoint polls.
    public var pollingPeriod: Int64? {
        for finding in findings { if case let .polling(period) = finding { return period } }
        return nil
    }

    /// The worst finding, if any.
    public var worst: Finding? { findings.first }

    public init() {}

    /// The figures of `times` (sorted here when they are not). `judged`: whether the findings'
    /// rules apply (not to `? server ?`, which pools requests of unknown endpoints).
    public init(_ times: RequestTimes, judged: Bool = true) {
        self.init(sorted: times.sorted, untimed: times.untimed, judged: judged)
    }

    /// The figures of an endpoint's requests' `times`: judged unless the endpoint is unknown.
    public init(_ times: RequestTimes, endpoint: String) {
        self.init(times, judged: Self.judges(endpoint))
    }

    /// Whether the findings' rules apply to `endpoint`: not to `? <server> ?`, the requests (and
    /// responses) whose endpoint is unknown, several endpoints' calls pooled.
    public static func judges(_ endpoint: String) -> Bool {
        !(endpoint.hasPrefix("? ") && endpoint.hasSuffix(" ?"))
    }

    /// The figures of ascending `times`.
    public init(sorted t: [Int64], untimed: Int, judged: Bool = true) {
        self.untimed = untimed
        requests = t.count
        guard let first = t.first, let last = t.last else { return }
        self.first = first
        self.last = last
        let span = last - first
        self.span = span
        if t.count > 1 && span > 0 { perMinute = 60_000_000 * Double(t.count - 1) / Double(span) }
        peakPerMinute = Self.peak(t, window: 60_000_000)
        peakPerSecond = Self.peak(t, window: 1_000_000)
        var intervals: [Int64] = []
        if t.count > 1 {
            intervals.reserveCapacity(t.count - 1)
            for index in 1..<t.count { intervals.append(t[index] - t[index - 1]) }
            intervals.sort()
            medianInterval = intervals[(intervals.count + 1) / 2 - 1]
            minimumInterval = intervals[0]
        }
        if span > 0 {
            // Exactly, in integers: t in the first third ⇔ 3·(t − first) < span; in the last ⇔
            // 3·(last − t) ≤ span (a time in both, impossible for span > 0, would count first).
            var counts = (first: 0, middle: 0, last: 0)
            for time in t {
                if 3 * (time - first) < span {
                    counts.first += 1
                } else if 3 * (last - time) <= span {
                    counts.last += 1
                } else {
                    counts.middle += 1
                }
            }
            thirds = counts
        }
        if judged { findings = Self.findings(self, intervals: intervals) }
    }

    /// The most times in a window [tᵢ, tᵢ + window) of the ascending `t`.
    static func peak(_ t: [Int64], window: Int64) -> Int {
        var best = 0
        var end = 0
        for start in t.indices {
            if end < start { end = start }
            while end < t.count && t[end] - t[start] < window { end += 1 }
            best = max(best, end - start)
        }
        return best
    }

    /// The findings of `figures` (whose `intervals` are sorted), worst first.
    static func findings(_ figures: RateFigures, intervals: [Int64]) -> [Finding] {
        typealias Rules = FindingRules
        var findings: [Finding] = []
        var runaway = false
        if figures.requests >= Rules.runawayMinimumRequests, let span = figures.span,
            span >= Rules.runawayMinimumSpan, let thirds = figures.thirds,
            thirds.first >= Rules.runawayMinimumFirstThird, thirds.first < thirds.middle,
            thirds.middle < thirds.last, thirds.last >= Rules.runawayMinimumGrowth * thirds.first
        {
            runaway = true
            findings.append(
                .runaway(
                    growth: Double(thirds.last) / Double(thirds.first), firstThird: thirds.first,
                    lastThird: thirds.last))
        }
        if figures.peakPerSecond >= Rules.burstMinimumPerSecond {
            findings.append(.burst(perSecond: figures.peakPerSecond))
        }
        // A runaway's intervals are not steady, whatever their median: not also polling.
        if !runaway, figures.requests >= Rules.pollingMinimumRequests, let median = figures.medianInterval,
            median >= Rules.pollingMinimumPeriod
        {
            // |interval − median| ≤ 10 % of the median, in integers.
            let steady = intervals.reduce(0) { count, interval in
                100 * abs(interval - median) <= Int64(Rules.pollingTolerancePercent) * median ? count + 1 : count
            }
            if 100 * steady >= Rules.pollingSteadyPercent * intervals.count {
                findings.append(.polling(period: median))
            }
        }
        return findings
    }

    public static func == (a: RateFigures, b: RateFigures) -> Bool {
        a.requests == b.requests && a.untimed == b.untimed && a.first == b.first && a.last == b.last
            && a.span == b.span && a.perMinute == b.perMinute && a.peakPerMinute == b.peakPerMinute
            && a.peakPerSecond == b.peakPerSecond && a.medianInterval == b.medianInterval
            && a.minimumInterval == b.minimumInterval && a.thirds?.first == b.thirds?.first
            && a.thirds?.middle == b.thirds?.middle && a.thirds?.last == b.thirds?.last
            && a.findings == b.findings
    }
}

/// An endpoint's cost summed over its directions (docs/FIGURES.md, Cost): what the reports'
/// "What costs the user" ranks by.
public struct EndpointCost: Sendable {
    public var endpoint: String
    /// Σ `wire_bytes` over the directions.
    public var wireBytes = 0
    /// Σ `ip_share` over the directions with IP layers; nil when none has them (a HAR).
    public var ipBytes: Int?
    /// Records of the `request` direction.
    public var requests = 0

    public init(endpoint: String) { self.endpoint = endpoint }

    mutating func add(_ direction: RecordClass, _ figures: GroupFigures) {
        wireBytes = saturatingSum(wireBytes, figures.wireBytes)
        if figures.layers.lowerRecords > 0 { ipBytes = saturatingSum(ipBytes ?? 0, figures.layers.ipShare) }
        if direction == .request { requests += figures.records }
    }

    /// Costliest first: more IP bytes (none counts 0), then more HTTP bytes, then the endpoint
    /// in byte order. Strict and total.
    public static func costlier(_ a: EndpointCost, _ b: EndpointCost) -> Bool {
        let (ipA, ipB) = (a.ipBytes ?? 0, b.ipBytes ?? 0)
        if ipA != ipB { return ipA > ipB }
        if a.wireBytes != b.wireBytes { return a.wireBytes > b.wireBytes }
        return a.endpoint.utf8Compare(b.endpoint) < 0
    }
}

extension Aggregation {
    /// Σ `wire_bytes` of the total groups: every measured record's HTTP bytes.
    public var wholeWireBytes: Int {
        totals.values.reduce(0) { saturatingSum($0, $1.wireBytes) }
    }

    /// The IP bytes of every captured connection, both ways (connections.csv's `up_ip` +
    /// `down_ip`), QUIC's included; 0 without connections (HAR only).
    public var wholeIPBytes: Int {
        network.values.reduce(0) { saturatingSum($0, saturatingSum($1.cost.total.ip, $1.quicIP)) }
    }

    /// Every endpoint's cost, in no particular order.
    public var endpointCosts: [EndpointCost] {
        var byEndpoint: [String: EndpointCost] = [:]
        for (key, figures) in groups {
            byEndpoint[key.endpoint, default: EndpointCost(endpoint: key.endpoint)].add(key.direction, figures)
        }
        return Array(byEndpoint.values)
    }

    /// The rate figures of `endpoint` (over its `request` group; empty without one).
    public func rate(of endpoint: String) -> RateFigures {
        groups[GroupKey(endpoint: endpoint, direction: .request)].map {
            RateFigures($0.requestTimes, endpoint: endpoint)
        }
            ?? RateFigures()
    }
}
