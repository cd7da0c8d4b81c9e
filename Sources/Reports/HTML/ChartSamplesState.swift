import Analysis

/// report.html's samples of a run, written beside its figures for `meteraudit merge`
/// (docs/SCALE.md). The bins and counts merge by addition; the scatter's reservoir does not
/// (which records a run keeps depends on how many came before them), so a run writes every
/// measured record's point (`encode(point:)`, streamed to a file of its own) and a merge
/// replays the reservoir's draws over the parts' counts (`ReservoirReplay`), keeping the
/// points one run over all the inputs would have kept.
extension ChartSamples {
    /// Everything but the points.
    public func encodeSummary(to encoder: inout StateEncoder) {
        encoder.int(pointCapacity)
        encoder.int(estimatorNames.count)
        for name in estimatorNames { encoder.string(name) }
        encoder.int(offered)
        encoder.int(measuredRecords)
        encoder.int(untimedRecords)
        encoder.int(timedInputs)
        for estimator in histogram {
            for side in estimator { encoder.ints(side) }
        }
        encoder.int64(timeline.binNanoseconds)
        encoder.optionalInt64(timeline.low)
        encoder.optionalInt64(timeline.high)
        let keys = timeline.bins.keys.sorted()
        encoder.int(keys.count)
        for key in keys {
            encoder.int64(key)
            encoder.int(timeline.bins[key]!.up)
            encoder.int(timeline.bins[key]!.down)
        }
    }

    /// Samples read back without points (`points` empty; `measuredRecords` as written).
    public init(summary decoder: inout StateDecoder) throws {
        let capacity = try decoder.int()
        guard capacity == Self.defaultPointCapacity else {
            throw StateDecoder.Malformed(reason: "a scatter of \(capacity) points, not \(Self.defaultPointCapacity)")
        }
        var names: [String] = []
        for _ in 0..<(try decoder.count(minimumBytes: 8)) { names.append(try decoder.string()) }
        self.init(estimatorNames: names, pointCapacity: capacity)
        offered = try decoder.int()
        measuredRecords = try decoder.int()
        untimedRecords = try decoder.int()
        timedInputs = try decoder.int()
        guard offered >= measuredRecords, measuredRecords >= 0, untimedRecords >= 0, timedInputs >= 0 else {
            throw StateDecoder.Malformed(reason: "the samples' counts")
        }
        for estimator in histogram.indices {
            for side in histogram[estimator].indices {
                let bins = try decoder.ints()
                guard bins.count == Self.histogramBins else {
                    throw StateDecoder.Malformed(reason: "a histogram of \(bins.count) bins")
                }
                histogram[estimator][side] = bins
            }
        }
        // A width the doubling reaches, and bins within the span of offsets an Int64 holds, so
        // that merging timelines neither overflows nor loops long.
        let width = try decoder.int64()
        let multiple = width / Self.baseBinNanoseconds
        guard width > 0, width % Self.baseBinNanoseconds == 0, multiple & (multiple - 1) == 0 else {
            throw StateDecoder.Malformed(reason: "a timeline bin of \(width) ns")
        }
        timeline.binNanoseconds = width
        let limit = Int64.max / Self.baseBinNanoseconds
        timeline.low = try decoder.optionalInt64()
        timeline.high = try decoder.optionalInt64()
        if let low = timeline.low, let high = timeline.high {
            guard low <= high, low.magnitude <= limit, high.magnitude <= limit,
                high - low < Int64(Self.timeBins)
            else { throw StateDecoder.Malformed(reason: "a timeline from bin \(low) to \(high)") }
        } else if timeline.low != nil || timeline.high != nil {
            throw StateDecoder.Malformed(reason: "a timeline with one end")
        }
        for _ in 0..<(try decoder.count(minimumBytes: 24)) {
            let key = try decoder.int64()
            guard let low = timeline.low, let high = timeline.high, (low...high).contains(key) else {
                throw StateDecoder.Malformed(reason: "a timeline bin \(key) outside its span")
            }
            timeline.bins[key] = Timeline.Sums(up: try decoder.int(), down: try decoder.int())
        }
    }

    /// Adds a later part's bins and counts (its points go through `ReservoirReplay`).
    public mutating func mergeSummary(_ other: ChartSamples) {
        precondition(other.estimatorNames == estimatorNames, "samples of different estimators")
        offered += other.offered
        measuredRecords += other.measuredRecords
        untimedRecords += other.untimedRecords
        timedInputs += other.timedInputs
        for estimator in histogram.indices {
            for side in histogram[estimator].indices {
                for bin in histogram[estimator][side].indices {
                    histogram[estimator][side][bin] += other.histogram[estimator][side][bin]
                }
            }
        }
        timeline.merge(other.timeline)
    }

    /// How many points the scatter keeps at most.
    public var scatterCapacity: Int { pointCapacity }
    /// Measured records offered to the scatter.
    public var measuredCount: Int { measuredRecords }
    /// Records offered (`add` calls), measured or not.
    public var offeredCount: Int { offered }

    /// The scatter's sample as `ReservoirReplay` chose it, and the generator where the whole
    /// run would have left it.
    mutating func setSample(_ points: [Point], random: SampleRandom) {
        self.points = points
        self.random = random
    }
}

/// One measured record's point in the scatter, as a part file holds it.
public struct ChartPoint: Sendable, Equatable {
    var point: ChartSamples.Point

    init(point: ChartSamples.Point) { self.point = point }

    /// 8 bytes each: direction, wire total, ordinal, then each estimator's total (`Int64.min`
    /// for none). A part's points all have the same size: `byteCount(estimators:)`.
    public func encode(to encoder: inout StateEncoder) {
        // The words in one copy (a part file holds one point per measured record).
        let count = 3 + point.estimates.count
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count) { words in
            words[0] = point.direction == .request ? 0 : point.direction == .response ? 1 : 2
            words[1] = UInt64(bitPattern: Int64(point.wire))
            words[2] = UInt64(bitPattern: Int64(point.ordinal))
            for (index, estimate) in point.estimates.enumerated() {
                words[3 + index] = UInt64(bitPattern: estimate.map(Int64.init) ?? Int64.min)
            }
            encoder.uint64s(UnsafeBufferPointer(rebasing: words[..<count]))
        }
    }

    public static func byteCount(estimators: Int) -> Int { 8 * (3 + estimators) }

    public init(state decoder: inout StateDecoder, estimators: Int) throws {
        let direction: RecordClass
        switch try decoder.int() {
        case 0: direction = .request
        case 1: direction = .response
        case 2: direction = .interim
        case let other: throw StateDecoder.Malformed(reason: "a point of direction \(other)")
        }
        let wire = try decoder.int()
        let ordinal = try decoder.int()
        var estimates: [Int?] = []
        for _ in 0..<estimators {
            let value = try decoder.int64()
            estimates.append(value == Int64.min ? nil : Int(value))
        }
        point = ChartSamples.Point(direction: direction, wire: wire, estimates: estimates, ordinal: ordinal)
    }

    /// The same point, `offset` records later in a longer run.
    public func shifted(by offset: Int) -> ChartPoint {
        var copy = self
        copy.point.ordinal += offset
        return copy
    }
}

/// Which measured records one run over every part would keep in the scatter: Algorithm R's
/// draws (`ChartSamples.addPoint`) replayed over the total count, with no point in hand; then
/// the parts' points, streamed in order, fill the slots they won.
public struct ReservoirReplay {
    /// Record number (from 0, over every part) → slot, for the records kept at the end.
    private var keptSlots: [Int: Int] = [:]
    private var sample: [ChartSamples.Point?]
    private let random: SampleRandom
    private var seen = 0

    public init(measuredRecords: Int, capacity: Int) {
        var slots = Array(0..<min(measuredRecords, capacity))
        var random = ChartSamples(estimatorNames: []).random
        if measuredRecords > capacity {
            for number in capacity..<measuredRecords {
                let slot = Int(random.next() % UInt64(number + 1))
                if slot < capacity { slots[slot] = number }
            }
        }
        for (slot, number) in slots.enumerated() { keptSlots[number] = slot }
        sample = Array(repeating: nil, count: slots.count)
        self.random = random
    }

    /// The next measured record's point, in the order of the whole run.
    public mutating func offer(_ point: ChartPoint) {
        if let slot = keptSlots[seen] { sample[slot] = point.point }
        seen += 1
    }

    /// Puts the sample into `samples` (whose counts are the merged ones); false when the parts
    /// held fewer points than they counted.
    public func finish(into samples: inout ChartSamples) -> Bool {
        guard seen == samples.measuredRecords, sample.allSatisfy({ $0 != nil }) else { return false }
        samples.setSample(sample.map { $0! }, random: random)
        return true
    }
}

extension Timeline {
    /// Both timelines' bins at the coarser width, widened further while they span too many:
    /// the bins one timeline of every offset would hold (its width is the narrowest that fits
    /// them all, whatever their order).
    mutating func merge(_ other: Timeline) {
        guard other.low != nil, other.high != nil else { return }
        var other = other
        if other.binNanoseconds < binNanoseconds {
            other.widen(to: binNanoseconds)
        } else if other.binNanoseconds > binNanoseconds {
            widen(to: other.binNanoseconds)
        }
        for (key, sums) in other.bins {
            bins[key, default: Sums()].up &+= sums.up
            bins[key, default: Sums()].down &+= sums.down
        }
        low = min(low ?? other.low!, other.low!)
        high = max(high ?? other.high!, other.high!)
        while let low, let high, high - low >= Int64(ChartSamples.timeBins), binNanoseconds <= Int64.max / 2 {
            widen(to: binNanoseconds * 2)
        }
    }

    /// The same bytes in bins of `width` (a power-of-two multiple of the current width).
    private mutating func widen(to width: Int64) {
        while binNanoseconds < width {
            binNanoseconds *= 2
            var merged: [Int64: Sums] = [:]
            for (key, sums) in bins {
                let newKey = Self.floorDivide(key, 2)
                merged[newKey, default: Sums()].up &+= sums.up
                merged[newKey, default: Sums()].down &+= sums.down
            }
            bins = merged
            low = low.map { Self.floorDivide($0, 2) }
            high = high.map { Self.floorDivide($0, 2) }
        }
    }
}
