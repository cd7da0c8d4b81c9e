import CaptureIO
import Records

/// Where a coverage count belongs: a host, an endpoint of it, a direction (request or response).
public struct CoverageKey: Hashable, Sendable, Comparable {
    /// The request's host as it named it (port included when not the default), lower case.
    public var host: String
    /// `METHOD host /normalized/path`, as the figures group records.
    public var endpoint: String
    public var direction: RecordClass

    public init(host: String, endpoint: String, direction: RecordClass) {
        self.host = host
        self.endpoint = endpoint
        self.direction = direction
    }

    public static func < (a: CoverageKey, b: CoverageKey) -> Bool {
        if a.host != b.host { return a.host.utf8Compare(b.host) < 0 }
        if a.endpoint != b.endpoint { return a.endpoint.utf8Compare(b.endpoint) < 0 }
        return a.direction < b.direction
    }
}

/// Records and their bytes: HTTP (`wire_total`, over records whose size is known) and IP
/// (`wire_ip`, over captured records).
public struct CoverageCounts: Sendable, Equatable {
    public var records = 0
    public var httpBytes = 0
    public var ipBytes = 0

    public init(records: Int = 0, httpBytes: Int = 0, ipBytes: Int = 0) {
        self.records = records
        self.httpBytes = httpBytes
        self.ipBytes = ipBytes
    }

    public mutating func add(_ wire: WireSize, measured: Bool) {
        records += 1
        if measured, let total = wire.total { httpBytes = saturatingSum(httpBytes, total) }
        if let lower = wire.lower { ipBytes = saturatingSum(ipBytes, lower.ip) }
    }

    public mutating func add(_ other: CoverageCounts) {
        records += other.records
        httpBytes = saturatingSum(httpBytes, other.httpBytes)
        ipBytes = saturatingSum(ipBytes, other.ipBytes)
    }

    /// `self − other`, field by field.
    public func subtracting(_ other: CoverageCounts) -> CoverageCounts {
        CoverageCounts(
            records: records - other.records, httpBytes: httpBytes - other.httpBytes, ipBytes: ipBytes - other.ipBytes)
    }
}

/// Entries of a meter's log and the bytes the meter gave them.
public struct EntryCounts: Sendable, Equatable {
    public var entries = 0
    public var bytes = 0

    public init(entries: Int = 0, bytes: Int = 0) {
        self.entries = entries
        self.bytes = bytes
    }

    public mutating func add(bytes more: Int) {
        entries += 1
        bytes = saturatingSum(bytes, more)
    }
}

/// The clock offset a meter's join used (capture time − meter time), in nanoseconds.
public struct MeterClockOffset: Sendable, Equatable {
    public var nanoseconds: Int64
    /// False when given (`--meter-clock-offset`).
    public var estimated: Bool
    /// Median absolute deviation of the pairs' differences around the offset.
    public var spread: Int64
    /// The smallest and largest difference (record time − entry time) over the pairs.
    public var lowest: Int64
    public var highest: Int64
    /// The match tolerance, either side.
    public var tolerance: Int64

    public init(nanoseconds: Int64, estimated: Bool, spread: Int64, lowest: Int64, highest: Int64, tolerance: Int64) {
        self.nanoseconds = nanoseconds
        self.estimated = estimated
        self.spread = spread
        self.lowest = lowest
        self.highest = highest
        self.tolerance = tolerance
    }
}

/// One app meter's coverage (docs/FIGURES.md, Coverage): which of its entries joined a record
/// and which records it never logged.
public struct MeterCoverage: Sendable, Equatable {
    public var name: String
    /// The log files it was read from.
    public var files: [String]
    /// Entries joined to a record, by where the record belongs.
    public var matchedEntries = EntryCounts()
    /// Entries no record joined ("metered, not on the wire"), by the entry's host, endpoint and
    /// direction; bytes are the meter's.
    public var unmatchedEntries: [CoverageKey: EntryCounts] = [:]
    /// Records an entry joined, by key.
    public var matchedRecords: [CoverageKey: CoverageCounts] = [:]
    public var offset: MeterClockOffset
    /// Lines of its logs reported (`meter-log-*` diagnostics), by key.
    public var diagnostics: [String: Int] = [:]

    public init(name: String, files: [String], offset: MeterClockOffset) {
        self.name = name
        self.files = files
        self.offset = offset
    }

    public var entries: Int { matchedEntries.entries + unmatchedEntries.values.reduce(0) { $0 + $1.entries } }
}

/// The coverage of every meter of a run, against every request and response record (interim
/// responses, which no app meter sees, are left out).
public struct CoverageFigures: Sendable, Equatable {
    /// Every request and response record, by key.
    public var wire: [CoverageKey: CoverageCounts] = [:]
    public var meters: [MeterCoverage] = []

    public init() {}

    /// Counts a record on the wire (any meter may have logged it).
    public mutating func add(_ record: MessageRecord) { add(record, key: Self.key(of: record)) }

    /// `add(record)` with the record's key made already (`key(of: record)`).
    public mutating func add(_ record: MessageRecord, key: CoverageKey?) {
        guard let key else { return }
        wire[key, default: CoverageCounts()].add(record.wire, measured: record.measured)
    }

    /// The record's key; nil for an interim response.
    public static func key(of record: MessageRecord) -> CoverageKey? {
        guard record.direction != .interim else { return nil }
        let host = (record.requestSummary?.host ?? record.source.server).lowercased()
        return CoverageKey(host: host, endpoint: record.endpoint, direction: record.direction)
    }

    /// A meter's records that no entry joined ("on the wire, not metered"), by key.
    public func unmatchedRecords(_ meter: MeterCoverage) -> [CoverageKey: CoverageCounts] {
        var result: [CoverageKey: CoverageCounts] = [:]
        for (key, counts) in wire {
            let rest = counts.subtracting(meter.matchedRecords[key] ?? CoverageCounts())
            if rest.records > 0 { result[key] = rest }
        }
        return result
    }

    /// Every record of a direction, and those the meter's entries joined.
    public func direction(_ direction: RecordClass, meter: MeterCoverage) -> (
        wire: CoverageCounts, matched: CoverageCounts
    ) {
        var all = CoverageCounts()
        var matched = CoverageCounts()
        for (key, counts) in wire where key.direction == direction { all.add(counts) }
        for (key, counts) in meter.matchedRecords where key.direction == direction { matched.add(counts) }
        return (all, matched)
    }

    /// One meter's figures per host (or, `byEndpoint`, per endpoint), and direction: records
    /// matched and not, entries not matched, sorted by key.
    public func rows(_ meter: MeterCoverage, byEndpoint: Bool) -> [CoverageRow] {
        let endpoints = endpointRows(meter)
        return byEndpoint ? endpoints : Self.hostRows(endpoints)
    }

    /// The rows per endpoint, sorted by key: one per key of the wire (a record's key; the
    /// meter's joined records are among them), then the entries no record joined merged in by
    /// key (their own rows where the wire has none).
    public func endpointRows(_ meter: MeterCoverage) -> [CoverageRow] {
        var rows: [CoverageRow] = []
        rows.reserveCapacity(wire.count)
        for (key, counts) in wire {
            var row = CoverageRow(key: key)
            row.wire = counts
            if let matched = meter.matchedRecords[key] { row.matched = matched }
            rows.append(row)
        }
        // Joined records whose key the wire lacks (none in a run: every record's key is counted).
        for (key, counts) in meter.matchedRecords where wire[key] == nil {
            var row = CoverageRow(key: key)
            row.matched = counts
            rows.append(row)
        }
        rows = Self.sorted(rows)
        var entries: [CoverageRow] = []
        for (key, counts) in meter.unmatchedEntries {
            var row = CoverageRow(key: key)
            row.unmatchedEntries = counts
            entries.append(row)
        }
        guard !entries.isEmpty else { return rows }
        entries = Self.sorted(entries)
        // Both sorted: one merge.
        var merged: [CoverageRow] = []
        merged.reserveCapacity(rows.count + entries.count)
        var next = 0
        for entry in entries {
            while next < rows.count, rows[next].key < entry.key {
                merged.append(rows[next])
                next += 1
            }
            if next < rows.count, rows[next].key == entry.key {
                var row = rows[next]
                row.unmatchedEntries.entries += entry.unmatchedEntries.entries
                row.unmatchedEntries.bytes = saturatingSum(row.unmatchedEntries.bytes, entry.unmatchedEntries.bytes)
                merged.append(row)
                next += 1
            } else {
                merged.append(entry)
            }
        }
        merged.append(contentsOf: rows[next...])
        return merged
    }

    /// Per host and direction, from the rows per endpoint sorted by key (each host's a run,
    /// its endpoints' figures summed per direction), sorted by key (host, then direction).
    public static func hostRows(_ endpoints: [CoverageRow]) -> [CoverageRow] {
        var rows: [CoverageRow] = []
        var start = 0
        while start < endpoints.count {
            let host = endpoints[start].key.host
            var end = start
            var byDirection: [CoverageRow?] = [nil, nil, nil]
            while end < endpoints.count, endpoints[end].key.host == host {
                let row = endpoints[end]
                let slot = row.key.direction.order
                var sum = byDirection[slot] ?? CoverageRow(key: CoverageKey(host: host, endpoint: "", direction: row.key.direction))
                sum.wire.add(row.wire)
                sum.matched.add(row.matched)
                sum.unmatchedEntries.entries += row.unmatchedEntries.entries
                sum.unmatchedEntries.bytes = saturatingSum(sum.unmatchedEntries.bytes, row.unmatchedEntries.bytes)
                byDirection[slot] = sum
                end += 1
            }
            rows.append(contentsOf: byDirection.compactMap { $0 })
            start = end
        }
        return rows
    }

    /// `rows` sorted by key (`CoverageKey.<`), each key's host and endpoint compared as bytes
    /// copied out once into one buffer (no String per comparison).
    static func sorted(_ rows: [CoverageRow]) -> [CoverageRow] {
        var bytes: [UInt8] = []
        var hostEnd = [Int](repeating: 0, count: rows.count)
        var endpointEnd = [Int](repeating: 0, count: rows.count)
        var starts = [Int](repeating: 0, count: rows.count)
        for (index, row) in rows.enumerated() {
            starts[index] = bytes.count
            bytes.append(contentsOf: row.key.host.utf8)
            hostEnd[index] = bytes.count
            bytes.append(contentsOf: row.key.endpoint.utf8)
            endpointEnd[index] = bytes.count
        }
        let directions = rows.map { $0.key.direction.order }
        var order = Array(rows.indices)
        bytes.withUnsafeBufferPointer { bytes in
            func part(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }
            order.sort { a, b in
                let byHost = bytesOrder(part(starts[a]..<hostEnd[a]), part(starts[b]..<hostEnd[b]))
                if byHost != 0 { return byHost < 0 }
                let byEndpoint = bytesOrder(part(hostEnd[a]..<endpointEnd[a]), part(hostEnd[b]..<endpointEnd[b]))
                if byEndpoint != 0 { return byEndpoint < 0 }
                return directions[a] < directions[b]
            }
        }
        return order.map { rows[$0] }
    }
}

/// A line of the coverage tables: one host or endpoint, one direction.
public struct CoverageRow: Sendable, Equatable {
    public var key: CoverageKey
    /// Every record there.
    public var wire = CoverageCounts()
    /// Those the meter's entries joined.
    public var matched = CoverageCounts()
    /// The meter's entries there that joined no record.
    public var unmatchedEntries = EntryCounts()

    public init(key: CoverageKey) { self.key = key }

    /// Records no entry joined.
    public var unmatched: CoverageCounts { wire.subtracting(matched) }
}
