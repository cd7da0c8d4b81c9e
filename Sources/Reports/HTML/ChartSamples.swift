import Analysis
import Estimation

/// What report.html's per-record charts need, collected while records stream by, in memory
/// bounded by constants whatever the number of records: a uniform sample of points for the
/// scatter (reservoir sampling with a fixed seed), counts in fixed bins for the error
/// histogram, and byte sums in at most `timeBins` bins for the timeline. The same records in
/// the same order always give the same samples.
public struct ChartSamples: Sendable {
    /// Points the scatter keeps at most.
    public static let defaultPointCapacity = 1500
    /// Bins the timeline keeps at most; their width doubles when the records span more.
    public static let timeBins = 120
    /// The timeline's narrowest bin: 1 ms.
    static let baseBinNanoseconds: Int64 = 1_000_000

    public private(set) var estimatorNames: [String]
    let pointCapacity: Int

    /// One record in the scatter: its wire total and each estimator's total (nil: none).
    struct Point: Sendable, Equatable {
        var direction: RecordClass
        var wire: Int
        var estimates: [Int?]
        /// The record's place among those offered (`add` calls), for estimates joined later.
        var ordinal = 0
    }

    /// The sample, in arrival order of the records kept.
    internal(set) var points: [Point] = []
    /// Measured records offered to the scatter (the sample's population).
    internal(set) var measuredRecords = 0
    var random = SampleRandom(seed: 0x4D65_7465_7241_7564) // "MeterAud"

    /// Signed relative error `(estimate − wire) / wire` in 10 % bins from −100 % to +100 %, and
    /// one bin for everything above: per estimator, per direction (request, response).
    static let histogramBins = 21
    internal(set) var histogram: [[[Int]]]

    /// Wire bytes per time bin and direction, by time since the first record of its input.
    internal(set) var timeline = Timeline()
    /// Records without a usable time (a HAR entry without `startedDateTime`).
    internal(set) var untimedRecords = 0
    var currentInput: String?
    var inputOrigin: Int64?
    /// Inputs whose records are on the timeline.
    internal(set) var timedInputs = 0

    public init(estimatorNames: [String], pointCapacity: Int = ChartSamples.defaultPointCapacity) {
        self.estimatorNames = estimatorNames
        self.pointCapacity = max(pointCapacity, 1)
        histogram = Array(
            repeating: Array(repeating: Array(repeating: 0, count: Self.histogramBins), count: 2),
            count: estimatorNames.count)
    }

    /// Records offered so far (`add` calls): the next record's ordinal.
    internal(set) var offered = 0

    /// Returns the record's point (nil when it is not measured), kept or not, for a part's
    /// file of every point (`ChartPoint`).
    @discardableResult
    public mutating func add(_ record: MessageRecord) -> ChartPoint? {
        let ordinal = offered
        offered += 1
        guard record.measured, let wire = record.wire.total else { return nil }
        let estimates: [Int?] = estimatorNames.indices.map { index in
            guard index < record.estimates.count, case let .success(estimate) = record.estimates[index] else {
                return nil
            }
            return estimate.total
        }
        let point = Point(direction: record.direction, wire: wire, estimates: estimates, ordinal: ordinal)
        addPoint(point)
        if record.direction != .interim, wire > 0 {
            let side = record.direction == .request ? 0 : 1
            for (index, estimate) in estimates.enumerated() {
                guard let estimate else { continue }
                histogram[index][side][Self.histogramBin(estimate: estimate, wire: wire)] += 1
            }
        }
        addTime(record, wire: wire)
        return ChartPoint(point: point)
    }

    /// Adds app meters after the estimators, named only once their logs are read: no point
    /// has their estimate yet (`addJoined` gives them).
    public mutating func addMeters(_ names: [String]) {
        guard !names.isEmpty else { return }
        estimatorNames += names
        for point in points.indices {
            points[point].estimates += Array(repeating: nil, count: names.count)
        }
        histogram += Array(
            repeating: Array(repeating: Array(repeating: 0, count: Self.histogramBins), count: 2), count: names.count)
    }

    /// An app meter's estimates, joined to the records once they were all offered: `estimates`
    /// gives the estimate of the record at an ordinal (nil: none); `records` lists the measured
    /// records it estimated (direction, wire total, estimate) for the histogram.
    public mutating func addJoined(
        estimator index: Int, estimates: (Int) -> Int?, records: [(direction: RecordClass, wire: Int, estimate: Int)]
    ) {
        guard estimatorNames.indices.contains(index) else { return }
        for point in points.indices where index < points[point].estimates.count {
            points[point].estimates[index] = estimates(points[point].ordinal)
        }
        for record in records where record.direction != .interim && record.wire > 0 {
            histogram[index][record.direction == .request ? 0 : 1][
                Self.histogramBin(estimate: record.estimate, wire: record.wire)] += 1
        }
    }

    /// Algorithm R: the first `pointCapacity` points, then each later one replaces a random
    /// kept point with probability capacity / seen.
    private mutating func addPoint(_ point: Point) {
        measuredRecords += 1
        if points.count < pointCapacity {
            points.append(point)
            return
        }
        let slot = Int(random.next() % UInt64(measuredRecords))
        if slot < pointCapacity { points[slot] = point }
    }

    /// The bin of `(estimate − wire) / wire`: 0 for [−100 %, −90 %), … 19 for [90 %, 100 %), 20 for
    /// 100 % and more. Integer arithmetic: no rounding decides a bin.
    static func histogramBin(estimate: Int, wire: Int) -> Int {
        guard wire > 0 else { return histogramBins - 1 }
        // estimate ≥ 0, so the error is ≥ −wire; tenths of wire, floored.
        let (scaled, overflow) = (estimate - wire).multipliedReportingOverflow(by: 10)
        if overflow { return estimate > wire ? histogramBins - 1 : 0 }
        let tenths = scaled >= 0 ? scaled / wire : -((-scaled + wire - 1) / wire)
        return min(max(tenths + 10, 0), histogramBins - 1)
    }

    /// The records that follow come from the next input: the timeline measures them from that
    /// input's own first record, even when two inputs in a row have the same file name.
    public mutating func beginInput() {
        currentInput = nil
        inputOrigin = nil
    }

    private mutating func addTime(_ record: MessageRecord, wire: Int) {
        if record.input != currentInput {
            currentInput = record.input
            inputOrigin = nil
        }
        guard let time = record.source.time else {
            untimedRecords += 1
            return
        }
        if inputOrigin == nil {
            inputOrigin = time
            timedInputs += 1
        }
        let (offset, overflow) = time.subtractingReportingOverflow(inputOrigin!)
        guard !overflow else {
            untimedRecords += 1
            return
        }
        timeline.add(offset: offset, bytes: wire, direction: record.direction)
    }
}

/// Byte sums in bins of a width that doubles (merging neighbours) whenever the offsets seen
/// span more than `ChartSamples.timeBins` bins: the bins are then those the final width would
/// have given from the start, whatever the order the offsets came in.
struct Timeline: Sendable, Equatable {
    internal(set) var binNanoseconds = ChartSamples.baseBinNanoseconds
    /// Bin index (floor of offset / width) → bytes up, bytes down.
    internal(set) var bins: [Int64: Sums] = [:]

    struct Sums: Sendable, Equatable {
        var up = 0
        var down = 0
    }

    /// The lowest and highest bin index holding bytes.
    var low: Int64?
    var high: Int64?

    mutating func add(offset: Int64, bytes: Int, direction: RecordClass) {
        var index = Self.floorDivide(offset, binNanoseconds)
        while let low, let high, max(high, index) - min(low, index) >= Int64(ChartSamples.timeBins),
            binNanoseconds <= Int64.max / 2
        {
            binNanoseconds *= 2
            var merged: [Int64: Sums] = [:]
            for (key, sums) in bins {
                let newKey = Self.floorDivide(key, 2)
                merged[newKey, default: Sums()].up &+= sums.up
                merged[newKey, default: Sums()].down &+= sums.down
            }
            bins = merged
            self.low = Self.floorDivide(low, 2)
            self.high = Self.floorDivide(high, 2)
            index = Self.floorDivide(offset, binNanoseconds)
        }
        low = min(low ?? index, index)
        high = max(high ?? index, index)
        // Interim responses travel down too.
        if direction == .request {
            bins[index, default: Sums()].up &+= bytes
        } else {
            bins[index, default: Sums()].down &+= bytes
        }
    }

    /// Every bin from the lowest to the highest, empty ones included, with its start offset.
    var series: [(start: Int64, sums: Sums)] {
        guard let low, let high else { return [] }
        return (low...high).map { (start: $0 &* binNanoseconds, sums: bins[$0] ?? Sums()) }
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient
    }
}

/// A small fixed-seed generator (SampleRandom): the scatter's sample is the same on every run.
struct SampleRandom: Sendable {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
