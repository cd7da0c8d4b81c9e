import DequeModule

/// One direction of one stream cut into runs by owner, in stream order, with a bounded history
/// so that a late copy finds the message whose bytes it repeats. Offsets before `end` are placed.
public struct ClaimMap {
    public struct Run {
        public var start: Int64
        public var end: Int64
        public var owner: CostOwner
    }

    public private(set) var runs: Deque<Run> = []
    /// Every byte before this offset has an owner.
    public private(set) var end: Int64 = 0
    public let maxRuns: Int

    public init(maxRuns: Int) { self.maxRuns = max(2, maxRuns) }

    /// Gives `start..<stop` to `owner` (the part before `end` is placed already); bytes between
    /// `end` and `start` belong to no message. Returns the range newly placed for `owner`.
    @discardableResult
    public mutating func claim(_ start: Int64, _ stop: Int64, _ owner: CostOwner) -> Range<Int64>? {
        if start > end { append(end, start, .unclaimed) }
        let from = max(start, end)
        guard stop > from else { return nil }
        append(from, stop, owner)
        return from..<stop
    }

    /// Whatever no claim took before `offset` belongs to no message.
    public mutating func settle(upTo offset: Int64) {
        if offset > end { append(end, offset, .unclaimed) }
    }

    private mutating func append(_ start: Int64, _ stop: Int64, _ owner: CostOwner) {
        if var last = runs.last, last.end == start, last.owner.isSame(as: owner) {
            last.end = stop
            runs[runs.count - 1] = last
        } else {
            runs.append(Run(start: start, end: stop, owner: owner))
            if runs.count > maxRuns { runs.removeFirst() }
        }
        end = stop
    }

    /// The index of the run holding `offset`, nil when it is before the history or not placed.
    private func index(of offset: Int64) -> Int? {
        guard let first = runs.first, offset >= first.start, offset < end else { return nil }
        var low = 0
        var high = runs.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if runs[middle].start <= offset { low = middle } else { high = middle - 1 }
        }
        return offset < runs[low].end ? low : nil
    }

    public func owner(at offset: Int64) -> CostOwner? { index(of: offset).map { runs[$0].owner } }

    /// The owner of all of `range` when the newest run holds it (the common case: a packet of
    /// the message being read), nil otherwise.
    public func newestOwner(ofAll range: Range<Int64>) -> CostOwner? {
        guard let last = runs.last, range.lowerBound >= last.start, range.upperBound <= last.end else { return nil }
        return last.owner
    }

    /// Calls `body` for each owned piece of `range`, in order; pieces no run covers (before the
    /// history, or not placed) come with a nil owner.
    public func forEachPiece(in range: Range<Int64>, _ body: (Range<Int64>, CostOwner?) -> Void) {
        var cursor = range.lowerBound
        var runIndex: Int? = index(of: cursor)
        if runIndex == nil, let first = runs.first, cursor < first.start {
            let stop = min(range.upperBound, first.start)
            body(cursor..<stop, nil)
            cursor = stop
            runIndex = cursor < range.upperBound ? index(of: cursor) : nil
        }
        while cursor < range.upperBound, let i = runIndex, i < runs.count {
            let stop = min(range.upperBound, runs[i].end)
            body(cursor..<stop, runs[i].owner)
            cursor = stop
            runIndex = i + 1
        }
        if cursor < range.upperBound { body(cursor..<range.upperBound, nil) }
    }
}

extension Optional where Wrapped == ClaimMap {
    /// `ClaimMap.forEachPiece`, or the whole range with a nil owner when there is no map.
    @inline(__always)
    func forEachPiece(in range: Range<Int64>, _ body: (Range<Int64>, CostOwner?) -> Void) {
        if let map = self {
            map.forEachPiece(in: range, body)
        } else {
            body(range, nil)
        }
    }
}
