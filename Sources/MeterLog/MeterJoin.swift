/// One meter entry as the join sees it (`MeterLog.joinEntries(meter:)` makes them).
public struct JoinEntry: Sendable, Equatable {
    public var direction: MeterDirection
    public var method: String
    public var url: NormalizedURL
    public var status: Int?
    /// Nanoseconds since 1970 on the meter's clock.
    public var time: Int64
    /// Entries of one exchange share it (the meter's `id`); nil when not logged.
    public var pairing: Int?
    /// The caller's number for the entry (its position in the log's entries).
    public var index: Int
    /// The caller's number for (direction, method, `url.pathKey`), equal exactly where those
    /// are, over the entries and the records of one join; −1 when not given (the join then
    /// compares the strings: one hash of them per entry and per record).
    public var groupKey: Int64

    public init(
        direction: MeterDirection, method: String, url: NormalizedURL, status: Int?, time: Int64, pairing: Int?,
        index: Int, groupKey: Int64 = -1
    ) {
        self.direction = direction
        self.method = method
        self.url = url
        self.status = status
        self.time = time
        self.pairing = pairing
        self.index = index
        self.groupKey = groupKey
    }
}

/// One message seen on the wire (a capture's or a HAR's record), reduced to what the join compares.
public struct WireRecord: Sendable, Equatable {
    public var direction: MeterDirection
    public var method: String
    public var url: NormalizedURL
    public var status: Int?
    /// Nanoseconds since 1970 on the capture's clock.
    public var time: Int64
    /// A request record and its response record share it; nil when unpaired.
    public var exchange: Int?
    /// The caller's number for the record.
    public var index: Int
    /// As `JoinEntry.groupKey`, from the same numbering; −1 when not given.
    public var groupKey: Int64

    public init(
        direction: MeterDirection, method: String, url: NormalizedURL, status: Int?, time: Int64, exchange: Int?,
        index: Int, groupKey: Int64 = -1
    ) {
        self.direction = direction
        self.method = method
        self.url = url
        self.status = status
        self.time = time
        self.exchange = exchange
        self.index = index
        self.groupKey = groupKey
    }
}

public struct JoinOptions: Sendable, Equatable {
    /// How far an entry's time (plus the offset) may be from its record's, in nanoseconds.
    public var tolerance: Int64
    /// The offset to add to the meter's times (capture minus meter), when known; else estimated.
    public var clockOffset: Int64?
    /// Bound on the entry-record time differences the estimate sorts (its memory and time).
    public var maxCandidatePairs: Int
    /// How many of the densest offsets are tried with a full assignment.
    public var candidateOffsets: Int
    /// An entry considers at most this many records on either side of its time (by rank), in
    /// its tolerance: bounds time and memory where thousands of identical requests fall within
    /// the tolerance.
    public var maxBand: Int

    public init(
        tolerance: Int64 = 2_000_000_000, clockOffset: Int64? = nil, maxCandidatePairs: Int = 1 << 18,
        candidateOffsets: Int = 8, maxBand: Int = 32
    ) {
        self.tolerance = max(0, tolerance)
        self.clockOffset = clockOffset
        self.maxCandidatePairs = max(1, maxCandidatePairs)
        self.candidateOffsets = max(1, candidateOffsets)
        self.maxBand = max(1, maxBand)
    }
}

/// The offset the join used: capture time minus meter time.
public struct ClockOffset: Sendable, Equatable {
    public var nanoseconds: Int64
    /// False when given (`JoinOptions.clockOffset`).
    public var estimated: Bool
    /// The median absolute deviation of (record time − entry time − offset) over the pairs, ns.
    public var spread: Int64
    /// The smallest and largest (record time − entry time) over the pairs, ns.
    public var lowest: Int64
    public var highest: Int64
    /// The offsets tried with a full assignment (0 when given).
    public var candidatesTried: Int
}

public struct JoinPair: Sendable, Equatable {
    /// `JoinEntry.index` and `WireRecord.index`.
    public var entry: Int
    public var record: Int
    /// Record time − (entry time + offset), ns.
    public var distance: Int64
}

public struct JoinResult: Sendable, Equatable {
    /// By entry index.
    public var pairs: [JoinPair]
    /// `JoinEntry.index` values, ascending.
    public var unmatchedEntries: [Int]
    /// `WireRecord.index` values, ascending.
    public var unmatchedRecords: [Int]
    public var offset: ClockOffset
}

/// Joins one meter's entries to the wire's records (docs/METER-LOG.md, "The join").
///
/// - Groups: an entry can match a record of the same direction and method whose URL has the same
///   `pathKey`; an entry with a query only records with that query, one without a query any.
///   `status` must agree when both have it.
/// - Buckets: within a group, the entries with the same query and status (either may be absent)
///   cannot be told apart but by time. Buckets run most specific first (query and status, query,
///   status, neither), each over the records its key allows that earlier buckets left.
/// - Assignment at a given offset, per bucket: the entries and the records in time order are
///   matched without crossing (an earlier entry never takes a later record than a later entry),
///   each pair within the tolerance, the most pairs, then the smallest sum of |distance|
///   (nearest first); ties to the earlier record. It is a dynamic program over the band of
///   records within the tolerance of each entry, at most `maxBand` ranks on either side of its
///   time: O(n·w) for n entries and w ≤ 2·maxBand records in a band.
///   For responses, an entry whose `pairing` is shared by a request entry matched to record R
///   takes R's response record first, whatever its time.
/// - Offset, unless given: every compatible (entry, record) time difference within a bucket (at
///   most `maxCandidatePairs`, sampled evenly in the largest buckets) is sorted; a window twice
///   the tolerance wide slides over them; the centers of the `candidateOffsets` densest windows
///   over a tolerance apart, and 0, are tried with the full assignment; the one with the most
///   pairs wins (then the smallest sum of distances, then the smallest |offset|); a hill-climb
///   moves it by halving steps from half the tolerance to a 32nd while the assignment gets
///   better; the offset becomes the median difference of its pairs and the assignment runs
///   again there (kept if not worse). O(P log P + k·P + a·(N + M)·w) for P differences,
///   k candidates, a assignments (about 20), N entries, M records, w records in a band.
public enum MeterJoin {
    public static func join(entries: [JoinEntry], records: [WireRecord], options: JoinOptions = JoinOptions())
        -> JoinResult
    {
        let plan = Plan(entries: entries, records: records)
        var scratch = AlignScratch()
        var offset: ClockOffset
        var matching: Matching
        if let given = options.clockOffset {
            matching = plan.assign(
                offset: given, tolerance: options.tolerance, maxBand: options.maxBand, scratch: &scratch)
            offset = ClockOffset(
                nanoseconds: given, estimated: false, spread: 0, lowest: 0, highest: 0, candidatesTried: 0)
        } else {
            let candidates = plan.candidateOffsets(options: options)
            var best: (offset: Int64, matching: Matching)?
            for candidate in candidates {
                let trial = plan.assign(
                    offset: candidate, tolerance: options.tolerance, maxBand: options.maxBand, scratch: &scratch)
                if let current = best {
                    if trial.isBetter(than: current.matching)
                        || (trial.ties(current.matching) && candidate.magnitude < current.offset.magnitude)
                    {
                        best = (candidate, trial)
                    }
                } else {
                    best = (candidate, trial)
                }
            }
            var chosen = best!
            var tried = candidates.count
            // Hill-climb from the winner in halving steps down to a 32nd of the tolerance: a
            // window's center may sit whole periods off when one repeated URL dominates the
            // differences. The median below does the rest.
            var step = options.tolerance / 2
            while step >= max(1_000_000, options.tolerance / 32) {
                for _ in 0..<2 {
                    var moved = false
                    for candidate in [chosen.offset.subtractingSaturating(step), chosen.offset.addingSaturating(step)] {
                        let trial = plan.assign(
                            offset: candidate, tolerance: options.tolerance, maxBand: options.maxBand, scratch: &scratch
                        )
                        tried += 1
                        if trial.isBetter(than: chosen.matching) {
                            chosen = (candidate, trial)
                            moved = true
                            break
                        }
                    }
                    if !moved { break }
                }
                step /= 2
            }
            if let median = plan.median(of: chosen.matching), median != chosen.offset {
                let refined = plan.assign(
                    offset: median, tolerance: options.tolerance, maxBand: options.maxBand, scratch: &scratch)
                if !chosen.matching.isBetter(than: refined) { chosen = (median, refined) }
            }
            matching = chosen.matching
            offset = ClockOffset(
                nanoseconds: chosen.offset, estimated: true, spread: 0, lowest: 0, highest: 0,
                candidatesTried: tried)
        }
        plan.describe(matching, into: &offset)
        return plan.result(matching, offset: offset)
    }
}
