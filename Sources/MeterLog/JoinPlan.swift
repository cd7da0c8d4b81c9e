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
struct Plan {
    struct Bucket {
        /// Entry and record positions, each in time order (then by index).
        var entries: [Int]
        var records: [Int]
    }

    /// A group's buckets, most specific first: entries with a query and a status, with a query,
    /// with a status, with neither. Each bucket's records are those its key allows (a record
    /// without a status is allowed any); entries of one bucket cannot be told apart but by
    /// time, so only they are kept in order.
    struct Group {
        var buckets: [Bucket] = []
    }

    private struct BucketKey: Hashable {
        let query: String?
        let status: Int?

        var rank: Int { (query == nil ? 2 : 0) + (status == nil ? 1 : 0) }
    }

    let entries: [JoinEntry]
    let records: [WireRecord]
    /// Request groups first: a response follows its request by pairing.
    private(set) var groups: [Group] = []
    private(set) var groupIsResponse: [Bool] = []
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
        // Groups by an integer key: the callers' (`groupKey`) when every entry and record has
        // one, else the strings numbered here.
        var groupOf: [Int64: Int32] = [:]
        var keys: [MeterDirection] = []
        let keysGiven = entries.allSatisfy { $0.groupKey >= 0 } && records.allSatisfy { $0.groupKey >= 0 }
        var numberOfKey: [GroupKey: Int64] = [:]
        func number(_ direction: MeterDirection, _ method: String, _ url: NormalizedURL, given: Int64, add: Bool)
            -> Int64?
        {
            if keysGiven { return given }
            let key = GroupKey(direction: direction, method: method, pathKey: url.pathKey)
            if let found = numberOfKey[key] { return found }
            guard add else { return nil }
            numberOfKey[key] = Int64(numberOfKey.count)
            return Int64(numberOfKey.count - 1)
        }
        /// pairing → the position of the request entry that carries it.
        var requestOfPairing: [Int: Int] = [:]
        /// exchange → the position of its response record.
        var responseOfExchange: [Int: Int] = [:]
        var keyOfEntry = [Int32](repeating: -1, count: entries.count)
        var keyOfRecord = [Int32](repeating: -1, count: records.count)
        // The sort keys apart, so that sorting reads no entry or record (and retains no string).
        var entryTimes = [(Int64, Int)]()
        entryTimes.reserveCapacity(entries.count)
        var recordTimes = [(Int64, Int)]()
        recordTimes.reserveCapacity(records.count)
        for position in entries.indices {
            let number = number(
                entries[position].direction, entries[position].method, entries[position].url,
                given: entries[position].groupKey, add: true)!
            let key: Int32
            if let found = groupOf[number] {
                key = found
            } else {
                key = Int32(keys.count)
                groupOf[number] = key
                keys.append(entries[position].direction)
            }
            keyOfEntry[position] = key
            entryTimes.append((entries[position].time, entries[position].index))
            if entries[position].direction == .request, let pairing = entries[position].pairing,
                requestOfPairing[pairing] == nil
            {
                requestOfPairing[pairing] = position
            }
        }
        for position in records.indices {
            // A record no entry can match stays out of every group.
            if let number = number(
                records[position].direction, records[position].method, records[position].url,
                given: records[position].groupKey, add: false),
                let index = groupOf[number]
            {
                keyOfRecord[position] = index
            }
            recordTimes.append((records[position].time, records[position].index))
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
        let order = keys.indices.sorted {
            (keys[$0] == .request ? 0 : 1, $0) < (keys[$1] == .request ? 0 : 1, $1)
        }
        // Groups are numbered in `groups`' order.
        var placeOfKey = [Int32](repeating: -1, count: keys.count)
        for (place, index) in order.enumerated() { placeOfKey[index] = Int32(place) }
        groupOfEntry = keyOfEntry.map { placeOfKey[Int($0)] }
        groupOfRecord = keyOfRecord.map { $0 < 0 ? -1 : placeOfKey[Int($0)] }
        // Every group's entries (and records) in one array, group after group, each group's in
        // time order (then by index; a stable sort of positions in order): a counting sort by
        // group, then a sort of each group's range.
        func grouped(_ groupOf: [Int32], times: [(Int64, Int)]) -> (positions: [Int], starts: [Int]) {
            var starts = [Int](repeating: 0, count: keys.count + 1)
            for group in groupOf where group >= 0 { starts[Int(group) + 1] += 1 }
            for group in keys.indices { starts[group + 1] += starts[group] }
            var next = starts
            var positions = [Int](repeating: 0, count: starts[keys.count])
            for (position, group) in groupOf.enumerated() where group >= 0 {
                positions[next[Int(group)]] = position
                next[Int(group)] += 1
            }
            times.withUnsafeBufferPointer { times in
                positions.withUnsafeMutableBufferPointer { positions in
                    for group in keys.indices where starts[group + 1] - starts[group] > 1 {
                        positions[starts[group]..<starts[group + 1]].sort { times[$0] < times[$1] }
                    }
                }
            }
            return (positions, starts)
        }
        let groupedEntries = grouped(groupOfEntry, times: entryTimes)
        let groupedRecords = grouped(groupOfRecord, times: recordTimes)
        groups.reserveCapacity(keys.count)
        groupIsResponse.reserveCapacity(keys.count)
        for place in order.indices {
            let entryOrder = Array(
                groupedEntries.positions[groupedEntries.starts[place]..<groupedEntries.starts[place + 1]])
            let recordOrder = Array(
                groupedRecords.positions[groupedRecords.starts[place]..<groupedRecords.starts[place + 1]])
            let index = order[place]
            let firstKey = BucketKey(query: entries[entryOrder[0]].url.query, status: entries[entryOrder[0]].status)
            if entryOrder.allSatisfy({ BucketKey(query: entries[$0].url.query, status: entries[$0].status) == firstKey }
            ) {
                // One bucket (the usual group): its records picked straight from the group's,
                // as the tables below would pick them.
                let candidates: [Int]
                switch (firstKey.query, firstKey.status) {
                case let (query?, status?):
                    candidates = recordOrder.filter {
                        records[$0].url.query == query && (records[$0].status == nil || records[$0].status == status)
                    }
                case let (query?, nil): candidates = recordOrder.filter { records[$0].url.query == query }
                case let (nil, status?):
                    candidates = recordOrder.filter { records[$0].status == nil || records[$0].status == status }
                case (nil, nil): candidates = recordOrder
                }
                groups.append(Group(buckets: [Bucket(entries: entryOrder, records: candidates)]))
                groupIsResponse.append(keys[index] == .response)
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
            var group = Group()
            for key in bucketKeys.enumerated().sorted(by: {
                ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset)
            }).map(\.element) {
                let candidates: [Int]
                switch (key.query, key.status) {
                case let (query?, status?):
                    candidates = (recordsOfQuery[query] ?? []).filter {
                        records[$0].status == nil || records[$0].status == status
                    }
                case let (query?, nil): candidates = recordsOfQuery[query] ?? []
                case let (nil, status?):
                    candidates = ((recordsOfStatus[status] ?? []) + recordsWithoutStatus).sorted {
                        (records[$0].time, records[$0].index) < (records[$1].time, records[$1].index)
                    }
                case (nil, nil): candidates = recordOrder
                }
                group.buckets.append(Bucket(entries: entriesOfKey[key]!, records: candidates))
            }
            groups.append(group)
            groupIsResponse.append(keys[index] == .response)
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
        var matching = Matching(recordOfEntry: [Int](repeating: -1, count: entries.count))
        var taken = [Bool](repeating: false, count: records.count)
        func take(_ e: Int, _ r: Int) {
            matching.recordOfEntry[e] = r
            taken[r] = true
            matching.count += 1
            let distance = records[r].time.subtractingSaturating(entries[e].time.addingSaturating(offset))
            matching.cost = matching.cost.addingSaturating(distance.magnitudeSaturating)
        }
        for (index, group) in groups.enumerated() {
            if groupIsResponse[index] {
                // A response whose request entry matched takes that exchange's response record
                // (of the same method and path: the entry's group).
                for bucket in group.buckets {
                    for e in bucket.entries {
                        let request = Int(requestOfEntry[e])
                        guard request >= 0 else { continue }
                        let requestRecord = matching.recordOfEntry[request]
                        guard requestRecord >= 0 else { continue }
                        let r = Int(responseOfRecord[requestRecord])
                        guard r >= 0, !taken[r], groupOfRecord[r] == groupOfEntry[e], compatible(e, r) else {
                            continue
                        }
                        take(e, r)
                    }
                }
            }
            for bucket in group.buckets {
                if bucket.entries.count == 1 {
                    // One entry (most buckets of a log of many URLs): the alignment's answer
                    // without its buffers.
                    let e = bucket.entries[0]
                    guard matching.recordOfEntry[e] < 0 else { continue }
                    let r = nearestRecord(
                        to: entries[e].time.addingSaturating(offset), in: bucket.records, taken: taken,
                        tolerance: tolerance, maxBand: maxBand)
                    if r >= 0 { take(e, r) }
                    continue
                }
                scratch.free.removeAll(keepingCapacity: true)
                scratch.open.removeAll(keepingCapacity: true)
                scratch.entryTimes.removeAll(keepingCapacity: true)
                scratch.recordTimes.removeAll(keepingCapacity: true)
                for e in bucket.entries where matching.recordOfEntry[e] < 0 {
                    scratch.free.append(e)
                    scratch.entryTimes.append(entries[e].time.addingSaturating(offset))
                }
                guard !scratch.free.isEmpty else { continue }
                for r in bucket.records where !taken[r] {
                    scratch.open.append(r)
                    scratch.recordTimes.append(records[r].time)
                }
                guard !scratch.open.isEmpty else { continue }
                // A bucket's records are all compatible with its entries (see `Group`).
                Self.align(tolerance: tolerance, maxBand: maxBand, allowed: nil, scratch: &scratch)
                for (i, j) in scratch.pairs { take(scratch.free[i], scratch.open[j]) }
            }
        }
        return matching
    }

    /// What `align` gives one entry at `time` among `records` (positions in time order) not
    /// `taken`: of the untaken records in its band (within the tolerance and `maxBand` ranks of
    /// its time), the nearest, the earliest of equals; −1 when the band is empty.
    func nearestRecord(to time: Int64, in candidates: [Int], taken: [Bool], tolerance: Int64, maxBand: Int) -> Int {
        let earliest = time.subtractingSaturating(tolerance)
        let latest = time.addingSaturating(tolerance)
        // The rank of the entry's time among the untaken records: how many are at or before it.
        var atOrBefore = 0
        for r in candidates where !taken[r] {
            guard records[r].time <= time else { break }
            atOrBefore += 1
        }
        let lowRank = atOrBefore - min(maxBand, atOrBefore)
        let highRank = atOrBefore.addingReportingOverflow(maxBand).overflow ? Int.max : atOrBefore + maxBand
        var rank = 0
        var best = -1
        var bestDistance: Int64 = 0
        for r in candidates where !taken[r] {
            defer { rank += 1 }
            guard rank >= lowRank else { continue }
            guard rank < highRank else { break }
            let recordTime = records[r].time
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
        var buckets: [Bucket] = []
        for group in groups {
            // Each entry once, against the records its bucket allows.
            buckets.append(contentsOf: group.buckets)
        }
        let sizes = buckets.map { $0.entries.count * $0.records.count }
        let order = buckets.indices.sorted { (sizes[$0], $0) < (sizes[$1], $1) }
        let budget = options.maxCandidatePairs
        for (rank, index) in order.enumerated() where sizes[index] > 0 {
            let bucket = buckets[index]
            let share = max(1, (budget - differences.count) / (order.count - rank))
            let ratio = (sizes[index] + share - 1) / share
            let entryStride = min(Int(Double(ratio).squareRoot().rounded(.up)), bucket.entries.count)
            let recordStride = max(1, min(bucket.records.count, (ratio + entryStride - 1) / entryStride))
            for e in stride(from: 0, to: bucket.entries.count, by: entryStride) {
                let entry = bucket.entries[e]
                for r in stride(from: 0, to: bucket.records.count, by: recordStride) {
                    let record = bucket.records[r]
                    guard compatible(entry, record) else { continue }
                    differences.append(records[record].time.subtractingSaturating(entries[entry].time))
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
            r < 0 ? nil : records[r].time.subtractingSaturating(entries[e].time)
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
