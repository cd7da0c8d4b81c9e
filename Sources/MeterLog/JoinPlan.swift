/// A pair assignment at one offset: for each entry (by position in the plan's entries) the
/// position of its record, or -1.
struct Matching {
    var recordOfEntry: [Int]
    var count = 0
    var cost: Int64 = 0

    func isBetter(than other: Matching) -> Bool {
        count != other.count ? count > other.count : cost < other.cost
    }

    func ties(_ other: Matching) -> Bool { count == other.count && cost == other.cost }
}

/// The buffers of `Plan.align`, kept from one bucket (and one assignment) to the next: a
/// log of thousands of URLs makes thousands of small buckets per assignment.
struct AlignScratch {
    /// The bucket's entries and records not yet taken (positions), and their times (the
    /// entries' with the offset added).
    var free: [Int] = []
    var open: [Int] = []
    var entryTimes: [Int64] = []
    var recordTimes: [Int64] = []
    var bandLow: [Int] = []
    var bandHigh: [Int] = []
    var choiceStart: [Int] = []
    var counts: [Int] = []
    var costs: [Int64] = []
    var choices: [UInt8] = []
    /// The alignment's pairs: (place in `entryTimes`, place in `recordTimes`), ascending.
    var pairs: [(Int, Int)] = []
}

/// The entries and records grouped and sorted once; `assign` runs at any offset.
///
/// Laid out flat, so that an assignment (about 20 per join) walks plain arrays of numbers:
/// every bucket's entries (positions, in time order) one after the other in `bucketEntries`,
/// its records in `bucketRecords`, a bucket naming its two ranges, a group its buckets' range.
struct Plan {
    /// A group's buckets, most specific first: entries with a query and a status, with a query,
    /// with a status, with neither. Each bucket's records are those its key allows (a record
    /// without a status is allowed any); entries of one bucket cannot be told apart but by
    /// time, so only they are kept in order.
    struct Bucket {
        /// Ranges of `bucketEntries` and `bucketRecords`: entry and record positions, each in
        /// time order (then by index).
        var entries: Range<Int>
        var records: Range<Int>
    }

    struct Group {
        /// A range of `buckets`.
        var buckets: Range<Int>
        var isResponse: Bool
    }

    private struct BucketKey: Hashable {
        let query: String?
        let status: Int?

        var rank: Int { (query == nil ? 2 : 0) + (status == nil ? 1 : 0) }
    }

    let entries: [JoinEntry]
    let records: [WireRecord]
    /// Request groups first (a response follows its request by pairing), each kind in the
    /// order of its first entry.
    private(set) var groups: [Group] = []
    private(set) var buckets: [Bucket] = []
    private(set) var bucketEntries: [Int] = []
    private(set) var bucketRecords: [Int] = []
    /// Per entry and per record (position): its time (read without touching the entry).
    private let entryTime: [Int64]
    private let recordTime: [Int64]
    /// Per record (position): the position of its exchange's response record, or −1.
    private var responseOfRecord: [Int32] = []
    /// Per response entry (position): the position of the request entry that shares its
    /// pairing, or −1.
    private var requestOfEntry: [Int32] = []
    /// Per entry and per record (position): its group's place in `groups`, or −1 (a record no
    /// entry can match). An entry and a record in one group agree in direction, method and path.
    private var groupOfEntry: [Int32] = []
    private var groupOfRecord: [Int32] = []

    private struct GroupKey: Hashable {
        let direction: MeterDirection
        let method: String
        let pathKey: String
    }

    init(entries: [JoinEntry], records: [WireRecord]) {
        self.entries = entries
        self.records = records
        entryTime = entries.map(\.time)
        recordTime = records.map(\.time)
        let entryIndex = entries.map(\.index)
        let recordIndex = records.map(\.index)
        // Each entry's and record's group number: the callers' (`groupKey`) when every entry
        // and record has one, else the strings numbered here. A record whose number no entry
        // has is in no group (−1).
        let keysGiven = entries.allSatisfy { $0.groupKey >= 0 } && records.allSatisfy { $0.groupKey >= 0 }
        var entryKey: [Int64]
        var recordKey: [Int64]
        if keysGiven {
            entryKey = entries.map(\.groupKey)
            recordKey = records.map(\.groupKey)
        } else {
            var numberOfKey: [GroupKey: Int64] = [:]
            entryKey = entries.map { entry in
                let key = GroupKey(direction: entry.direction, method: entry.method, pathKey: entry.url.pathKey)
                if let found = numberOfKey[key] { return found }
                numberOfKey[key] = Int64(numberOfKey.count)
                return Int64(numberOfKey.count - 1)
            }
            recordKey = records.map { record in
                numberOfKey[GroupKey(direction: record.direction, method: record.method, pathKey: record.url.pathKey)]
                    ?? -1
            }
        }
        // Entries and records sorted by (group number, time, index): each group's a run in
        // time order. Sorted as positions over plain arrays (no entry or record read, no
        // string retained).
        var sortedEntries = Array(entries.indices)
        var sortedRecords = records.indices.filter { recordKey[$0] >= 0 }
        entryKey.withUnsafeBufferPointer { key in
            entryTime.withUnsafeBufferPointer { time in
                entryIndex.withUnsafeBufferPointer { index in
                    sortedEntries.sort { (key[$0], time[$0], index[$0]) < (key[$1], time[$1], index[$1]) }
                }
            }
        }
        recordKey.withUnsafeBufferPointer { key in
            recordTime.withUnsafeBufferPointer { time in
                recordIndex.withUnsafeBufferPointer { index in
                    sortedRecords.sort { (key[$0], time[$0], index[$0]) < (key[$1], time[$1], index[$1]) }
                }
            }
        }
        // The groups: runs of one number among the entries, the records' runs of that number
        // beside them (both sorted by number: one merge).
        var runs: [(entries: Range<Int>, records: Range<Int>, first: Int, isResponse: Bool)] = []
        var start = 0
        var recordAt = 0
        while start < sortedEntries.count {
            let key = entryKey[sortedEntries[start]]
            var end = start
            var first = Int.max
            while end < sortedEntries.count, entryKey[sortedEntries[end]] == key {
                first = min(first, sortedEntries[end])
                end += 1
            }
            while recordAt < sortedRecords.count, recordKey[sortedRecords[recordAt]] < key { recordAt += 1 }
            let recordStart = recordAt
            while recordAt < sortedRecords.count, recordKey[sortedRecords[recordAt]] == key { recordAt += 1 }
            runs.append((start..<end, recordStart..<recordAt, first, entries[first].direction == .response))
            start = end
        }
        // Request groups first, then in the order of their first entry in the log (each run's
        // first entry is its own: a pass over the entries' positions puts them in order).
        var runOfFirst = [Int32](repeating: -1, count: entries.count)
        for (run, info) in runs.enumerated() { runOfFirst[info.first] = Int32(run) }
        var order: [Int] = []
        order.reserveCapacity(runs.count)
        for response in [false, true] {
            for run in runOfFirst where run >= 0 && runs[Int(run)].isResponse == response { order.append(Int(run)) }
        }
        var groupOfEntry = [Int32](repeating: -1, count: entries.count)
        var groupOfRecord = [Int32](repeating: -1, count: records.count)
        groups.reserveCapacity(runs.count)
        buckets.reserveCapacity(runs.count)
        bucketEntries.reserveCapacity(entries.count)
        bucketRecords.reserveCapacity(sortedRecords.count)
        for (place, run) in order.map({ runs[$0] }).enumerated() {
            let entryOrder = sortedEntries[run.entries]
            let recordOrder = sortedRecords[run.records]
            for position in entryOrder { groupOfEntry[position] = Int32(place) }
            for position in recordOrder { groupOfRecord[position] = Int32(place) }
            let firstBucket = buckets.count
            defer { groups.append(Group(buckets: firstBucket..<buckets.count, isResponse: run.isResponse)) }
            let firstEntry = entries[entryOrder.first!]
            let firstQuery = firstEntry.url.query
            let firstStatus = firstEntry.status
            if entryOrder.allSatisfy({ entries[$0].status == firstStatus && entries[$0].url.query == firstQuery }) {
                // One bucket (the usual group): its records picked straight from the group's,
                // as the tables below would pick them.
                let entryStart = bucketEntries.count
                bucketEntries.append(contentsOf: entryOrder)
                let recordStart = bucketRecords.count
                switch (firstQuery, firstStatus) {
                case let (query?, status?):
                    for position in recordOrder
                    where records[position].url.query == query
                        && (records[position].status == nil || records[position].status == status)
                    {
                        bucketRecords.append(position)
                    }
                case let (query?, nil):
                    for position in recordOrder where records[position].url.query == query {
                        bucketRecords.append(position)
                    }
                case let (nil, status?):
                    for position in recordOrder
                    where records[position].status == nil || records[position].status == status {
                        bucketRecords.append(position)
                    }
                case (nil, nil): bucketRecords.append(contentsOf: recordOrder)
                }
                buckets.append(
                    Bucket(entries: entryStart..<bucketEntries.count, records: recordStart..<bucketRecords.count))
                continue
            }
            if entryOrder.count <= 16, recordOrder.count <= 64 {
                // A small group: its keys found and its records picked by scanning, as the
                // tables below would pick them (in the group's time order).
                var keys: [(key: BucketKey, order: Int)] = []
                for position in entryOrder {
                    let key = BucketKey(query: entries[position].url.query, status: entries[position].status)
                    if !keys.contains(where: { $0.key == key }) { keys.append((key, keys.count)) }
                }
                keys.sort { ($0.key.rank, $0.order) < ($1.key.rank, $1.order) }
                for (key, _) in keys {
                    let entryStart = bucketEntries.count
                    for position in entryOrder
                    where entries[position].status == key.status && entries[position].url.query == key.query {
                        bucketEntries.append(position)
                    }
                    let recordStart = bucketRecords.count
                    for position in recordOrder {
                        if let query = key.query, records[position].url.query != query { continue }
                        if let status = key.status, let other = records[position].status, other != status { continue }
                        bucketRecords.append(position)
                    }
                    buckets.append(
                        Bucket(entries: entryStart..<bucketEntries.count, records: recordStart..<bucketRecords.count))
                }
                continue
            }
            var bucketKeys: [BucketKey] = []
            var entriesOfKey: [BucketKey: [Int]] = [:]
            for position in entryOrder {
                let entry = entries[position]
                let key = BucketKey(query: entry.url.query, status: entry.status)
                if entriesOfKey[key] == nil { bucketKeys.append(key) }
                entriesOfKey[key, default: []].append(position)
            }
            var recordsOfQuery: [String: [Int]] = [:]
            var recordsOfStatus: [Int: [Int]] = [:]
            var recordsWithoutStatus: [Int] = []
            for position in recordOrder {
                let record = records[position]
                if let query = record.url.query { recordsOfQuery[query, default: []].append(position) }
                if let status = record.status {
                    recordsOfStatus[status, default: []].append(position)
                } else {
                    recordsWithoutStatus.append(position)
                }
            }
            for key in bucketKeys.enumerated().sorted(by: {
                ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset)
            }).map(\.element) {
                let entryStart = bucketEntries.count
                bucketEntries.append(contentsOf: entriesOfKey[key]!)
                let recordStart = bucketRecords.count
                switch (key.query, key.status) {
                case let (query?, status?):
                    for position in recordsOfQuery[query] ?? []
                    where records[position].status == nil || records[position].status == status {
                        bucketRecords.append(position)
                    }
                case let (query?, nil): bucketRecords.append(contentsOf: recordsOfQuery[query] ?? [])
                case let (nil, status?):
                    bucketRecords.append(
                        contentsOf: ((recordsOfStatus[status] ?? []) + recordsWithoutStatus).sorted {
                            (recordTime[$0], recordIndex[$0]) < (recordTime[$1], recordIndex[$1])
                        })
                case (nil, nil): bucketRecords.append(contentsOf: recordOrder)
                }
                buckets.append(
                    Bucket(entries: entryStart..<bucketEntries.count, records: recordStart..<bucketRecords.count))
            }
        }
        self.groupOfEntry = groupOfEntry
        self.groupOfRecord = groupOfRecord
        // Pairings and exchanges: the first request entry of each pairing and the first
        // response record of each exchange (by position).
        var requestOfPairing: [Int: Int] = [:]
        var responseOfExchange: [Int: Int] = [:]
        requestOfPairing.reserveCapacity(entries.count / 2)
        responseOfExchange.reserveCapacity(records.count / 2)
        for position in entries.indices {
            if entries[position].direction == .request, let pairing = entries[position].pairing,
                requestOfPairing[pairing] == nil
            {
                requestOfPairing[pairing] = position
            }
        }
        for position in records.indices {
            if records[position].direction == .response, let exchange = records[position].exchange,
                responseOfExchange[exchange] == nil
            {
                responseOfExchange[exchange] = position
            }
        }
        requestOfEntry = entries.map { entry in
            guard entry.direction == .response, let pairing = entry.pairing, let request = requestOfPairing[pairing]
            else { return -1 }
            return Int32(request)
        }
        responseOfRecord = records.map { record in
            guard let exchange = record.exchange, let response = responseOfExchange[exchange] else { return -1 }
            return Int32(response)
        }
    }

    // MARK: Compatibility

    /// Whether entry `e` may match record `r` (positions): their statuses agree and, when the
    /// entry has a query, so do the queries. Direction, method and path are the group's.
    @inline(__always) func compatible(_ e: Int, _ r: Int) -> Bool {
        let entry = entries[e]
        let record = records[r]
        if let a = entry.status, let b = record.status, a != b { return false }
        if let query = entry.url.query, query != record.url.query { return false }
        return true
    }

    // MARK: Assignment

    /// The assignment at `offset` (docs/METER-LOG.md, "Assignment at a given offset").
    /// `scratch` holds the buffers every bucket reuses, so that an assignment allocates only
    /// its result, however many small buckets the log's URLs make.
    func assign(offset: Int64, tolerance: Int64, maxBand: Int, scratch: inout AlignScratch) -> Matching {
        // Plain buffers and loops (no closure captures a counter: each access to one would be
        // checked for exclusivity at run time).
        var state = AssignState(entries: entries.count, records: records.count)
        defer { state.release() }
        for group in groups {
            if group.isResponse {
                // A response whose request entry matched takes that exchange's response record
                // (of the same method and path: the entry's group).
                for b in group.buckets {
                    for place in buckets[b].entries {
                        let e = bucketEntries[place]
                        let request = Int(requestOfEntry[e])
                        guard request >= 0 else { continue }
                        let requestRecord = state.recordOfEntry[request]
                        guard requestRecord >= 0 else { continue }
                        let r = Int(responseOfRecord[requestRecord])
                        guard r >= 0, !state.taken[r], groupOfRecord[r] == groupOfEntry[e], compatible(e, r) else {
                            continue
                        }
                        state.take(e, r, distance: recordTime[r].subtractingSaturating(entryTime[e].addingSaturating(offset)))
                    }
                }
            }
            for b in group.buckets {
                let bucket = buckets[b]
                if bucket.entries.count == 1 {
                    // One entry (most buckets of a log of many URLs): the alignment's answer
                    // without its buffers.
                    let e = bucketEntries[bucket.entries.lowerBound]
                    guard state.recordOfEntry[e] < 0 else { continue }
                    let time = entryTime[e].addingSaturating(offset)
                    let r = nearestRecord(
                        to: time, in: bucket.records, taken: state.taken, tolerance: tolerance, maxBand: maxBand)
                    if r >= 0 { state.take(e, r, distance: recordTime[r].subtractingSaturating(time)) }
                    continue
                }
                scratch.free.removeAll(keepingCapacity: true)
                scratch.open.removeAll(keepingCapacity: true)
                scratch.entryTimes.removeAll(keepingCapacity: true)
                scratch.recordTimes.removeAll(keepingCapacity: true)
                for place in bucket.entries {
                    let e = bucketEntries[place]
                    guard state.recordOfEntry[e] < 0 else { continue }
                    scratch.free.append(e)
                    scratch.entryTimes.append(entryTime[e].addingSaturating(offset))
                }
                guard !scratch.free.isEmpty else { continue }
                for place in bucket.records {
                    let r = bucketRecords[place]
                    guard !state.taken[r] else { continue }
                    scratch.open.append(r)
                    scratch.recordTimes.append(recordTime[r])
                }
                guard !scratch.open.isEmpty else { continue }
                // A bucket's records are all compatible with its entries (see `Group`).
                Self.align(tolerance: tolerance, maxBand: maxBand, allowed: nil, scratch: &scratch)
                for (i, j) in scratch.pairs {
                    let e = scratch.free[i]
                    let r = scratch.open[j]
                    state.take(e, r, distance: recordTime[r].subtractingSaturating(entryTime[e].addingSaturating(offset)))
                }
            }
        }
        return Matching(
            recordOfEntry: Array(UnsafeBufferPointer(start: state.recordOfEntry, count: entries.count)),
            count: state.count, cost: state.cost)
    }

    /// An assignment under way: each entry's record (−1: none yet), whether each record is
    /// taken, and the pairs' count and cost.
    private struct AssignState {
        let recordOfEntry: UnsafeMutablePointer<Int>
        let taken: UnsafeMutablePointer<Bool>
        var count = 0
        var cost: Int64 = 0

        init(entries: Int, records: Int) {
            recordOfEntry = .allocate(capacity: max(1, entries))
            recordOfEntry.initialize(repeating: -1, count: entries)
            taken = .allocate(capacity: max(1, records))
            taken.initialize(repeating: false, count: records)
        }

        @inline(__always) mutating func take(_ e: Int, _ r: Int, distance: Int64) {
            recordOfEntry[e] = r
            taken[r] = true
            count += 1
            cost = cost.addingSaturating(distance.magnitudeSaturating)
        }

        func release() {
            recordOfEntry.deallocate()
            taken.deallocate()
        }
    }

    /// What `align` gives one entry at `time` among `records` (positions in time order) not
    /// `taken`: of the untaken records in its band (within the tolerance and `maxBand` ranks of
    /// its time), the nearest, the earliest of equals; −1 when the band is empty.
    func nearestRecord(to time: Int64, in candidates: [Int], taken: [Bool], tolerance: Int64, maxBand: Int) -> Int {
        taken.withUnsafeBufferPointer { taken in
            Self.nearestRecord(
                to: time, in: candidates, candidates.indices, times: recordTime,
                taken: UnsafeMutablePointer(mutating: taken.baseAddress ?? UnsafePointer(bitPattern: 8)!),
                tolerance: tolerance, maxBand: maxBand)
        }
    }

    /// `nearestRecord` over a bucket's records (`places` in `bucketRecords`).
    @inline(__always)
    func nearestRecord(
        to time: Int64, in places: Range<Int>, taken: UnsafeMutablePointer<Bool>, tolerance: Int64, maxBand: Int
    ) -> Int {
        Self.nearestRecord(
            to: time, in: bucketRecords, places, times: recordTime, taken: taken, tolerance: tolerance,
            maxBand: maxBand)
    }

    /// `nearestRecord` over `list[places]` (record positions), every record's time and whether
    /// each is taken.
    @inline(__always)
    static func nearestRecord(
        to time: Int64, in list: [Int], _ places: Range<Int>, times: [Int64], taken: UnsafeMutablePointer<Bool>,
        tolerance: Int64, maxBand: Int
    ) -> Int {
        let earliest = time.subtractingSaturating(tolerance)
        let latest = time.addingSaturating(tolerance)
        // The rank of the entry's time among the untaken records: how many are at or before it.
        var atOrBefore = 0
        for place in places {
            let r = list[place]
            guard !taken[r] else { continue }
            guard times[r] <= time else { break }
            atOrBefore += 1
        }
        let lowRank = atOrBefore - min(maxBand, atOrBefore)
        let highRank = atOrBefore.addingReportingOverflow(maxBand).overflow ? Int.max : atOrBefore + maxBand
        var rank = 0
        var best = -1
        var bestDistance: Int64 = 0
        for place in places {
            let r = list[place]
            guard !taken[r] else { continue }
            defer { rank += 1 }
            guard rank >= lowRank else { continue }
            guard rank < highRank else { break }
            let recordTime = times[r]
            guard recordTime >= earliest else { continue }
            guard recordTime <= latest else { break }
            let distance = recordTime.subtractingSaturating(time).magnitudeSaturating
            if best < 0 || distance < bestDistance {
                best = r
                bestDistance = distance
            }
        }
        return best
    }

    /// `assign` with buffers of its own.
    func assign(offset: Int64, tolerance: Int64, maxBand: Int) -> Matching {
        var scratch = AlignScratch()
        return assign(offset: offset, tolerance: tolerance, maxBand: maxBand, scratch: &scratch)
    }

    /// The order-keeping alignment of entries to records (both times ascending) within the
    /// tolerance: the most pairs, then the smallest sum of |distance|; ties to earlier records.
    /// A dynamic program over F(i, j), the best score with the first i entries and j records,
    /// kept as one row updated in place over each entry's band of records (those within the
    /// tolerance): O(Σ band) time, the choices taken kept for the way back.
    /// `maxBand` bounds each entry's band to the records of the `maxBand` ranks on either side of
    /// its time, so a dense run of identical requests (thousands within the tolerance) costs
    /// O(n·maxBand), not O(n·w).
    static func align(
        entryTimes: [Int64], recordTimes: [Int64], tolerance: Int64, maxBand: Int = Int.max,
        allowed: ((Int, Int) -> Bool)? = nil
    ) -> [(Int, Int)] {
        var scratch = AlignScratch()
        scratch.entryTimes = entryTimes
        scratch.recordTimes = recordTimes
        align(tolerance: tolerance, maxBand: maxBand, allowed: allowed, scratch: &scratch)
        return scratch.pairs
    }

    /// `align` of `scratch.entryTimes` to `scratch.recordTimes`, into `scratch.pairs`, in the
    /// scratch's buffers (kept from one bucket to the next).
    static func align(tolerance: Int64, maxBand: Int, allowed: ((Int, Int) -> Bool)?, scratch: inout AlignScratch) {
        scratch.pairs.removeAll(keepingCapacity: true)
        let n = scratch.entryTimes.count
        let m = scratch.recordTimes.count
        guard n > 0, m > 0 else { return }
        scratch.bandLow.removeAll(keepingCapacity: true)
        scratch.bandHigh.removeAll(keepingCapacity: true)
        scratch.choiceStart.removeAll(keepingCapacity: true)
        scratch.choiceStart.append(0)
        // Each entry's band [low, high) of records: within the tolerance and `maxBand` ranks.
        // Both bounds never decrease with the entry, which the row's frontier relies on.
        var timeLow = 0
        var timeHigh = 0
        var atOrBefore = 0 // records at or before the entry's time
        scratch.recordTimes.withUnsafeBufferPointer { recordTimes in
            for i in 0..<n {
                let time = scratch.entryTimes[i]
                let earliest = time.subtractingSaturating(tolerance)
                let latest = time.addingSaturating(tolerance)
                while timeLow < m, recordTimes[timeLow] < earliest { timeLow += 1 }
                timeHigh = max(timeHigh, timeLow)
                while timeHigh < m, recordTimes[timeHigh] <= latest { timeHigh += 1 }
                while atOrBefore < m, recordTimes[atOrBefore] <= time { atOrBefore += 1 }
                let low = max(timeLow, atOrBefore - min(maxBand, atOrBefore))
                let high = min(timeHigh, atOrBefore + min(maxBand, m - atOrBefore))
                scratch.bandLow.append(low)
                scratch.bandHigh.append(high)
                scratch.choiceStart.append(scratch.choiceStart[i] + max(0, high - low))
            }
        }
        // One row of F: counts and costs; choices per (entry, band position): 0 entry unused,
        // 1 record unused, 2 the pair.
        scratch.counts.removeAll(keepingCapacity: true)
        scratch.counts.append(contentsOf: repeatElement(0, count: m + 1))
        scratch.costs.removeAll(keepingCapacity: true)
        scratch.costs.append(contentsOf: repeatElement(0, count: m + 1))
        scratch.choices.removeAll(keepingCapacity: true)
        scratch.choices.append(contentsOf: repeatElement(0, count: scratch.choiceStart[n]))
        var frontier = 0 // F[j] for j > frontier equals F[frontier]
        let bandLow = scratch.bandLow
        let bandHigh = scratch.bandHigh
        let choiceStart = scratch.choiceStart
        let entryTimes = scratch.entryTimes
        let recordTimes = scratch.recordTimes
        scratch.counts.withUnsafeMutableBufferPointer { count in
            scratch.costs.withUnsafeMutableBufferPointer { cost in
                scratch.choices.withUnsafeMutableBufferPointer { choice in
                    recordTimes.withUnsafeBufferPointer { records in
                        for i in 0..<n {
                            let low = bandLow[i]
                            let high = bandHigh[i]
                            guard low < high else { continue }
                            if high > frontier {
                                for j in (frontier + 1)...high {
                                    count[j] = count[frontier]
                                    cost[j] = cost[frontier]
                                }
                                frontier = high
                            }
                            let time = entryTimes[i]
                            var previousCount = count[low]
                            var previousCost = cost[low]
                            var slot = choiceStart[i]
                            for j in (low + 1)...high {
                                let oldCount = count[j]
                                let oldCost = cost[j]
                                var bestCount = oldCount
                                var bestCost = oldCost
                                var taken: UInt8 = 0
                                // Worse: fewer pairs, or as many at a larger cost.
                                if bestCount < count[j - 1] || (bestCount == count[j - 1] && bestCost > cost[j - 1]) {
                                    bestCount = count[j - 1]
                                    bestCost = cost[j - 1]
                                    taken = 1
                                }
                                if allowed?(i, j - 1) ?? true {
                                    let pairCount = previousCount + 1
                                    let pairCost = previousCost.addingSaturating(
                                        records[j - 1].subtractingSaturating(time).magnitudeSaturating)
                                    if bestCount < pairCount || (bestCount == pairCount && bestCost > pairCost) {
                                        bestCount = pairCount
                                        bestCost = pairCost
                                        taken = 2
                                    }
                                }
                                count[j] = bestCount
                                cost[j] = bestCost
                                choice[slot] = taken
                                slot += 1
                                previousCount = oldCount
                                previousCost = oldCost
                            }
                        }
                    }
                }
            }
        }
        var i = n
        var j = frontier
        while i > 0, j > 0 {
            let entry = i - 1
            let low = bandLow[entry]
            let high = bandHigh[entry]
            if low >= high || j <= low {
                i -= 1
            } else if j > high {
                j = high
            } else {
                switch scratch.choices[choiceStart[entry] + j - low - 1] {
                case 0: i -= 1
                case 1: j -= 1
                default:
                    scratch.pairs.append((entry, j - 1))
                    i -= 1
                    j -= 1
                }
            }
        }
        scratch.pairs.reverse()
    }

    // MARK: Offset

    /// The offsets worth a full assignment: the centers of the densest non-overlapping windows
    /// (2 × tolerance wide) over the sorted entry-record differences, and 0.
    func candidateOffsets(options: JoinOptions) -> [Int64] {
        var differences: [Int64] = []
        // Each entry once, against the records its bucket allows (buckets in group order).
        let sizes = buckets.map { $0.entries.count * $0.records.count }
        let order = buckets.indices.sorted { (sizes[$0], $0) < (sizes[$1], $1) }
        let budget = options.maxCandidatePairs
        for (rank, index) in order.enumerated() where sizes[index] > 0 {
            let bucket = buckets[index]
            let share = max(1, (budget - differences.count) / (order.count - rank))
            let ratio = (sizes[index] + share - 1) / share
            let entryStride = min(Int(Double(ratio).squareRoot().rounded(.up)), bucket.entries.count)
            let recordStride = max(1, min(bucket.records.count, (ratio + entryStride - 1) / entryStride))
            for e in stride(from: bucket.entries.lowerBound, to: bucket.entries.upperBound, by: entryStride) {
                let entry = bucketEntries[e]
                for r in stride(from: bucket.records.lowerBound, to: bucket.records.upperBound, by: recordStride) {
                    let record = bucketRecords[r]
                    guard compatible(entry, record) else { continue }
                    differences.append(recordTime[record].subtractingSaturating(entryTime[entry]))
                }
            }
        }
        guard !differences.isEmpty else { return [0] }
        differences.sort()
        let width = options.tolerance.multipliedSaturating(by: 2)
        // Window i starts at differences[i]; its center never decreases with i.
        var counts = [Int](repeating: 0, count: differences.count)
        var centers = [Int64](repeating: 0, count: differences.count)
        var end = 0
        for start in differences.indices {
            end = max(end, start)
            let last = differences[start].addingSaturating(width)
            while end < differences.count, differences[end] <= last { end += 1 }
            counts[start] = end - start
            centers[start] = differences[start].addingSaturating(
                differences[end - 1].subtractingSaturating(differences[start]) / 2)
        }
        // The densest window, then the densest whose center is over a tolerance from those
        // taken (a range of windows, centers being sorted), and so on: O(k·P).
        var suppressed = [Bool](repeating: false, count: differences.count)
        var picked: [Int64] = []
        while picked.count < options.candidateOffsets {
            var best = -1
            for index in counts.indices where !suppressed[index] {
                if best < 0 || counts[index] > counts[best]
                    || (counts[index] == counts[best]
                        && centers[index].magnitudeSaturating < centers[best].magnitudeSaturating)
                {
                    best = index
                }
            }
            guard best >= 0 else { break }
            let center = centers[best]
            picked.append(center)
            let low = center.subtractingSaturating(options.tolerance)
            let high = center.addingSaturating(options.tolerance)
            var index = Self.firstIndex(in: centers, notBelow: low)
            while index < centers.count, centers[index] <= high {
                suppressed[index] = true
                index += 1
            }
        }
        if picked.allSatisfy({ $0.magnitudeSaturating > options.tolerance }) { picked.append(0) }
        return picked
    }

    /// The first index of a sorted array whose value is at least `value` (its count if none).
    static func firstIndex(in sorted: [Int64], notBelow value: Int64) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The median of (record time − entry time) over the pairs; nil without pairs.
    func median(of matching: Matching) -> Int64? {
        let differences = self.differences(matching).sorted()
        guard !differences.isEmpty else { return nil }
        return differences[(differences.count - 1) / 2]
    }

    private func differences(_ matching: Matching) -> [Int64] {
        matching.recordOfEntry.enumerated().compactMap { e, r in
            r < 0 ? nil : recordTime[r].subtractingSaturating(entryTime[e])
        }
    }

    func describe(_ matching: Matching, into offset: inout ClockOffset) {
        let differences = self.differences(matching)
        guard let lowest = differences.min(), let highest = differences.max() else { return }
        offset.lowest = lowest
        offset.highest = highest
        let deviations = differences.map { $0.subtractingSaturating(offset.nanoseconds).magnitudeSaturating }.sorted()
        offset.spread = deviations[(deviations.count - 1) / 2]
    }

    func result(_ matching: Matching, offset: ClockOffset) -> JoinResult {
        var pairs: [JoinPair] = []
        var unmatchedEntries: [Int] = []
        var recordMatched = [Bool](repeating: false, count: records.count)
        for (e, r) in matching.recordOfEntry.enumerated() {
            if r < 0 {
                unmatchedEntries.append(entries[e].index)
            } else {
                recordMatched[r] = true
                let distance = records[r].time.subtractingSaturating(
                    entries[e].time.addingSaturating(offset.nanoseconds))
                pairs.append(JoinPair(entry: entries[e].index, record: records[r].index, distance: distance))
            }
        }
        let unmatchedRecords = records.indices.filter { !recordMatched[$0] }.map { records[$0].index }
        pairs.sort { $0.entry < $1.entry }
        return JoinResult(
            pairs: pairs, unmatchedEntries: unmatchedEntries.sorted(), unmatchedRecords: unmatchedRecords.sorted(),
            offset: offset)
    }
}

extension Int64 {
    @inline(__always) func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    @inline(__always) func subtractingSaturating(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    @inline(__always) func multipliedSaturating(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : product
    }

    /// |self|, with |Int64.min| as Int64.max.
    @inline(__always) var magnitudeSaturating: Int64 { self == .min ? .max : Swift.abs(self) }
}
