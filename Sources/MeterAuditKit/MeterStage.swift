import Analysis
import Dispatch
import Estimation
import Flows
import Foundation
import MessageModel
import MeterLog
import Records
import Reports

/// A `--meter-log` argument: a meter log file, and the name its own meter takes.
public struct MeterLogSource: Sendable, Equatable {
    public var path: String
    /// `NAME=FILE`'s name; nil: the entries' `meter` field, else the file's stem.
    public var name: String?

    public init(path: String, name: String? = nil) {
        self.path = path
        self.name = name
    }

    /// `FILE` or `NAME=FILE`: a `=` before any `/` names the meter (a file whose name holds a
    /// `=` is written with a directory, `./a=b.jsonl`).
    public init(parsing argument: String) {
        if let equals = argument.firstIndex(of: "="),
            !argument[..<equals].contains("/"), equals != argument.startIndex
        {
            self.init(path: String(argument[argument.index(after: equals)...]), name: String(argument[..<equals]))
        } else {
            self.init(path: argument)
        }
    }

    /// The file's name without its directory and its last extension.
    public var stem: String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return file }
        return String(file[..<dot])
    }
}

/// Why the meter logs cannot be used at all (the run does not start).
public enum MeterLogSetupError: Error, CustomStringConvertible, Equatable {
    case cannotRead(String)
    case badName(String)

    public var description: String {
        switch self {
        case let .cannotRead(reason): return reason
        case let .badName(reason): return reason
        }
    }
}

/// One app meter of a run: its name, where its entries are, what it logs.
struct LoadedMeter {
    var name: String
    var files: [String]
    /// Its entries as the join takes them; `JoinEntry.index` is the place in `references`.
    var entries: [JoinEntry] = []
    /// Each entry's log (in `MeterStage.logs`) and place in it.
    var references: [(log: Int32, entry: Int32)] = []
    /// Whether any entry logged each part (the `est_NAME_line`, `_headers`, `_body` columns).
    var logsLine = false
    var logsHeaders = false
    var logsBody = false
}

/// The meter logs of a run, read on another core while the inputs are analyzed.
///
/// Opening each file and reading its first line is done up front, on the caller's thread: a
/// file that cannot be opened or read stops the run before any input is read. The rest of each
/// file, the meters it names and the URLs its entries name are read and made on another
/// thread; `load` waits for them. What is wrong in a line stays a diagnostic of its log.
final class MeterLogLoading: @unchecked Sendable {
    struct Loaded {
        var logs: [MeterLog]
        var meters: [LoadedMeter]
        /// Every URL without its query that an entry names (only records there can join), and
        /// every method an entry names, numbered as the entries' `groupKey` numbers them.
        var pathIDs: [String: Int32]
        var methodIDs: [String: Int32]
    }

    private let done = DispatchGroup()
    private let lock = NSLock()
    private var finished = false
    private var result: Result<Loaded, MeterLogSetupError>?

    init(sources: [MeterLogSource], modelNames: [String]) throws {
        var opened: [OpenedMeterLog] = []
        for source in sources {
            // A name given on the command line is checked now; the names the entries give (and
            // the file's stem, taken only when they give none) once the file is read.
            if let given = source.name { try Self.check(name: given, source: source, modelNames: modelNames) }
            do {
                opened.append(try MeterLogReader.open(path: source.path))
            } catch {
                throw MeterLogSetupError.cannotRead("--meter-log \(error)")
            }
        }
        let files = opened
        done.enter()
        DispatchQueue.global().async { [self] in
            let result = Result { try Self.load(sources: sources, opened: files, modelNames: modelNames) }
                .mapError { $0 as? MeterLogSetupError ?? .cannotRead("--meter-log \($0)") }
            lock.lock()
            self.result = result
            finished = true
            lock.unlock()
            done.leave()
        }
    }

    /// Whether the logs are read (without waiting).
    var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    /// Waits for the logs; throws when one could not be read further or a name is not usable.
    func wait() throws -> Loaded {
        done.wait()
        return try result!.get()
    }

    /// Throws when `name` cannot name a meter: empty, holding a comma, a quote or a line break
    /// (messages.csv's columns), or an estimator's.
    private static func check(name: String, source: MeterLogSource, modelNames: [String]) throws {
        guard !name.isEmpty, !name.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else {
            throw MeterLogSetupError.badName("--meter-log \(source.path): meter name '\(name)' is not usable")
        }
        guard !modelNames.contains(name) else {
            throw MeterLogSetupError.badName(
                "--meter-log \(source.path): meter name '\(name)' is an estimator's; name it with NAME=FILE")
        }
    }

    /// Reads every log (diagnostics kept in the logs) and names the meters. Throws when a file
    /// cannot be read or a name is taken.
    private static func load(sources: [MeterLogSource], opened: [OpenedMeterLog], modelNames: [String]) throws
        -> Loaded
    {
        var logs: [MeterLog] = []
        var meters: [LoadedMeter] = []
        var pathIDs: [String: Int32] = [:]
        var methodIDs: [String: Int32] = [:]
        for (source, file) in zip(sources, opened) {
            let log: MeterLog
            do {
                log = try MeterLogReader.read(file)
            } catch {
                throw MeterLogSetupError.cannotRead("--meter-log \(error)")
            }
            let logIndex = logs.count
            logs.append(log)
            // Each distinct URL's path and method numbered once, not per entry.
            pathIDs.reserveCapacity(pathIDs.count + log.urlCount)
            var pathOfURL = [Int32](repeating: -1, count: log.urlCount)
            var methodOfIndex = [Int32](repeating: -1, count: log.methodCount)
            let fields = log.meterNames
            for field in fields {
                let name: String
                if let given = source.name, field.isEmpty || fields.count == 1 {
                    name = given
                } else {
                    name = field.isEmpty ? source.stem : field
                }
                try check(name: name, source: source, modelNames: modelNames)
                var meterIndex = meters.firstIndex { $0.name == name }
                if meterIndex == nil {
                    meters.append(LoadedMeter(name: name, files: []))
                    meterIndex = meters.count - 1
                }
                let m = meterIndex!
                if !meters[m].files.contains(source.path) { meters[m].files.append(source.path) }
                if fields.count == 1 {
                    // Made at their size, not doubled on the way (a doubling holds both buffers).
                    meters[m].entries.reserveCapacity(meters[m].entries.count + log.entries.count)
                    meters[m].references.reserveCapacity(meters[m].references.count + log.entries.count)
                }
                for var entry in log.joinEntries(meter: field) {
                    let stored = log.entries[entry.index]
                    let urlIndex = log.urlIndex(of: stored)
                    if pathOfURL[urlIndex] < 0 {
                        let pathKey = log.url(at: urlIndex).pathKey
                        pathOfURL[urlIndex] = pathIDs[pathKey] ?? Int32(pathIDs.count)
                        pathIDs[pathKey] = pathOfURL[urlIndex]
                    }
                    let methodIndex = log.methodIndex(of: stored)
                    if methodOfIndex[methodIndex] < 0 {
                        let method = log.method(at: methodIndex)
                        methodOfIndex[methodIndex] = methodIDs[method] ?? Int32(methodIDs.count)
                        methodIDs[method] = methodOfIndex[methodIndex]
                    }
                    entry.groupKey = MeterStage.groupKey(
                        entry.direction, method: methodOfIndex[methodIndex], path: pathOfURL[urlIndex])
                    meters[m].references.append((Int32(logIndex), Int32(entry.index)))
                    entry.index = meters[m].entries.count
                    // Ids pair within one log: another log's ids are other exchanges.
                    entry.pairing = entry.pairing.map { $0 << 8 | (logIndex & 0xFF) }
                    meters[m].entries.append(entry)
                    if stored.lineBytes != nil { meters[m].logsLine = true }
                    if stored.headersBytes != nil { meters[m].logsHeaders = true }
                    if stored.bodyBytes != nil { meters[m].logsBody = true }
                }
            }
        }
        return Loaded(logs: logs, meters: meters, pathIDs: pathIDs, methodIDs: methodIDs)
    }
}

/// The meter logs of a run, joined to its records (docs/METER-LOG.md, "In a run").
///
/// The logs are read on another core while the inputs are analyzed (`MeterLogLoading`). While
/// records stream by, each one whose URL (without its query) some entry names is kept as a
/// `Candidate`: its `WireRecord` for the join, and what the figures need of it (`MeteredRecord`,
/// its coverage key, its share of connection overhead still to be given out); until the logs
/// are read, every record with a known request is kept, and those no entry names are let go
/// once they are. Every record is counted for coverage. At the end, `load` waits for the logs
/// and names the meters; each meter is joined to the candidates, and its estimates are added to
/// the figures, the overhead shares, the charts' samples, the diagnostics and, by a second
/// pass, messages.csv.
final class MeterStage {
    private(set) var logs: [MeterLog] = []
    private(set) var meters: [LoadedMeter] = []
    let options: JoinOptions
    private let loading: MeterLogLoading
    /// The entries' paths and methods (`MeterLogLoading.Loaded`); nil until the logs are read.
    private var entryPathIDs: [String: Int32]?
    private var entryMethodIDs: [String: Int32] = [:]
    private let normalizer: EndpointNormalizer

    struct Candidate {
        /// The record's place in the run (its row of messages.csv).
        var ordinal: Int
        var input: Int32
        var wire: WireRecord
        /// Its URL's path and its method, numbered in `recordPaths` and `recordMethods`.
        var path: Int32
        var method: Int32
        var figures: MeteredRecord
        var coverageKey: CoverageKey?
        /// Its share of connection overhead, given out at the end with the meters that count it.
        var share: PendingShare?
        var modelMask: UInt64
    }

    private(set) var candidates: [Candidate] = []
    /// The shares of records kept before the logs were read that no entry names: given out at
    /// the end with their models alone, as their records' would have been.
    private var heldShares: [(input: Int32, share: PendingShare, modelMask: UInt64)] = []
    /// Each candidate's `ordinal`, kept when `finish` lets the candidates go.
    private var candidateOrdinals: [Int] = []
    /// Per meter, per candidate: the matched entry (`LoadedMeter.references` index), or −1.
    private(set) var matches: [[Int32]] = []
    private(set) var coverage = CoverageFigures()
    /// Records per input, for the `not-metered` counts.
    private var recordsPerInput: [Int] = []
    private var ordinal = 0
    /// The records' paths (URLs without their query) and methods, numbered as first seen, so
    /// that a record's are compared by number (and a path's text is kept once, however many
    /// records name it): per path, the entries' number of it (−1 when no entry names it),
    /// filled once the logs are read.
    private var recordPaths: [String: Int32] = [:]
    private var recordPathKeys: [String] = []
    private var entryPathOfRecordPath: [Int32] = []
    private var recordMethods: [String: Int32] = [:]
    private var recordMethodNames: [String] = []
    private var lastMethod: (text: String, number: Int32)?
    /// Exchanges of the current input: (connection, tunnel, request index) → exchange number.
    private var exchanges: [ExchangeKey: Int] = [:]
    private var nextExchange = 0
    private var currentInput = -1

    private struct ExchangeKey: Hashable {
        var connection: Int
        var tunnelHost: String?
        var request: Int
    }

    /// Opens every log and starts reading them on another thread. Throws when a file cannot be
    /// opened or read at all; a name not usable is known only once read (`load`).
    init(sources: [MeterLogSource], modelNames: [String], options: JoinOptions, normalizer: EndpointNormalizer) throws {
        loading = try MeterLogLoading(sources: sources, modelNames: modelNames)
        self.options = options
        self.normalizer = normalizer
    }

    /// Waits for the logs and names the meters (before `finish`, `names`, `messageColumns`).
    /// Throws when a file could not be read to its end or a meter's name is not usable.
    func load() throws {
        let loaded = try loading.wait()
        logs = loaded.logs
        meters = loaded.meters
        if entryPathIDs == nil { adopt(loaded) }
    }

    /// Takes the entries' URLs once the logs are read (none when they could not be: the run
    /// stops at `load`): candidates kept until then that no entry names are let go, their
    /// shares held.
    private func adopt(_ loaded: MeterLogLoading.Loaded?) {
        let keys = loaded?.pathIDs ?? [:]
        entryPathIDs = keys
        entryMethodIDs = loaded?.methodIDs ?? [:]
        entryPathOfRecordPath = recordPathKeys.map { keys[$0] ?? -1 }
        var kept = 0
        for index in candidates.indices {
            let candidate = candidates[index]
            guard entryPathOfRecordPath[Int(candidate.path)] >= 0 else {
                if let share = candidate.share { heldShares.append((candidate.input, share, candidate.modelMask)) }
                continue
            }
            candidates[kept] = candidate
            candidates[kept].wire.index = kept
            kept += 1
        }
        candidates.removeLast(candidates.count - kept)
        // About one record per entry joins: the candidates' array made at that size here holds
        // what the log's entries need, where growing it by doubling would, for a moment, hold
        // the old buffer and one twice its size (a candidate is about 400 B).
        candidates.reserveCapacity(loaded?.meters.map(\.entries.count).max() ?? 0)
    }

    var names: [String] { meters.map(\.name) }

    /// Every diagnostic of every log, in file order.
    var diagnostics: [MeterLogDiagnostic] { logs.flatMap(\.diagnostics) }

    // MARK: While records stream

    /// Counts a record for coverage and keeps it when it may join. Returns true when the
    /// record's share of connection overhead is kept here (the caller must not hand it to its
    /// `OverheadSharing`): it is given out once the meters that count the record are known.
    func observe(_ record: MessageRecord, input: Int) -> Bool {
        if input != currentInput {
            currentInput = input
            exchanges.removeAll(keepingCapacity: true)
            while recordsPerInput.count <= input { recordsPerInput.append(0) }
        }
        defer { ordinal += 1 }
        recordsPerInput[input] += 1
        let coverageKey = CoverageFigures.key(of: record)
        coverage.add(record, key: coverageKey)
        if entryPathIDs == nil, loading.isFinished { adopt(try? loading.wait()) }
        guard record.direction != .interim, let (wireRecord, path, method) = wireRecord(of: record),
            entryPathIDs == nil || entryPathOfRecordPath[Int(path)] >= 0
        else { return false }
        var mask: UInt64 = 0
        for (index, estimate) in record.estimates.enumerated() where index < 64 {
            if case .success = estimate { mask |= 1 << UInt64(index) }
        }
        let share = PendingShare(record)
        var wire = wireRecord
        wire.index = candidates.count
        candidates.append(
            Candidate(
                ordinal: ordinal, input: Int32(input), wire: wire, path: path, method: method,
                figures: MeteredRecord(record),
                coverageKey: coverageKey, share: share, modelMask: mask))
        return share != nil
    }

    /// The last URL made, and what it was made of (a response names its request's URL again).
    private var lastURL: (scheme: UInt8, host: String?, target: [UInt8], url: (NormalizedURL, path: Int32)?)?

    /// The record's URL as the join compares it, shared with every record naming it, and its
    /// path's number.
    private func url(scheme: UInt8, host: String?, target: [UInt8], make: () -> NormalizedURL?) -> (
        NormalizedURL, path: Int32
    )? {
        if let last = lastURL, last.scheme == scheme, last.host == host, last.target == target { return last.url }
        var url: (NormalizedURL, path: Int32)?
        if let made = make() {
            if let known = recordPaths.index(forKey: made.pathKey) {
                let path = recordPaths.values[known]
                url = (NormalizedURL(pathKey: recordPaths.keys[known], query: made.query), path)
            } else {
                let path = Int32(recordPathKeys.count)
                recordPaths[made.pathKey] = path
                recordPathKeys.append(made.pathKey)
                if let entryPathIDs { entryPathOfRecordPath.append(entryPathIDs[made.pathKey] ?? -1) }
                url = (made, path)
            }
        }
        lastURL = (scheme, host, target, url)
        return url
    }

    /// The record as the join compares it, with its path's and method's numbers; nil when its
    /// request is unknown.
    func wireRecord(of record: MessageRecord) -> (WireRecord, path: Int32, method: Int32)? {
        guard let request = record.requestSummary, request.fieldsKnown, !request.method.isEmpty else { return nil }
        let target = request.target
        let url: (NormalizedURL, path: Int32)?
        let time: Int64
        var exchange: Int?
        switch record.source {
        case let .har(entry):
            url = self.url(scheme: 0, host: nil, target: target) { NormalizedURL(String(httpBytes: target)) }
            time = entry.time ?? 0
            exchange = exchangeNumber(ExchangeKey(connection: -1, tunnelHost: nil, request: entry.entry))
        case let .charles(transaction):
            // A Charles transaction is one exchange, its URL written whole, as a HAR entry's.
            url = self.url(scheme: 0, host: nil, target: target) { NormalizedURL(String(httpBytes: target)) }
            time = transaction.time ?? 0
            exchange = exchangeNumber(ExchangeKey(connection: -2, tunnelHost: nil, request: transaction.transaction))
        case let .capture(flow):
            if target.first == UInt8(ascii: "/") || target == [UInt8(ascii: "*")] {
                let host = request.host ?? flow.server.description
                let tls = flow.transport == .tls
                url = self.url(scheme: tls ? 2 : 1, host: host, target: target) {
                    // The bytes are the target's text when they are ASCII (nearly always).
                    target.allSatisfy { $0 < 0x80 }
                        ? NormalizedURL(scheme: tls ? "https" : "http", host: host, targetBytes: target)
                        : NormalizedURL(scheme: tls ? "https" : "http", host: host, target: String(httpBytes: target))
                }
            } else {
                // Absolute form (a proxy's request).
                url = self.url(scheme: 0, host: nil, target: target) { NormalizedURL(String(httpBytes: target)) }
            }
            time = flow.time
            if record.message.kind == .request || record.message.request != nil {
                exchange = exchangeNumber(
                    ExchangeKey(connection: flow.connection, tunnelHost: flow.tunnelHost, request: request.index))
            }
        }
        guard let (shared, path) = url else { return nil }
        let method: (text: String, number: Int32)
        if let last = lastMethod, last.text == request.method {
            method = last
        } else if let known = recordMethods.index(forKey: request.method) {
            method = (recordMethods.keys[known], recordMethods.values[known])
        } else {
            method = (request.method, Int32(recordMethodNames.count))
            recordMethods[request.method] = method.number
            recordMethodNames.append(request.method)
        }
        lastMethod = method
        return (
            WireRecord(
                direction: record.message.kind == .request ? .request : .response, method: method.text, url: shared,
                status: record.message.kind == .request ? nil : record.message.status, time: time,
                exchange: exchange, index: 0),
            path, method.number
        )
    }

    /// The join's group key of (direction, method, path) numbered as the entries number them.
    static func groupKey(_ direction: MeterDirection, method: Int32, path: Int32) -> Int64 {
        Int64(path) << 32 | Int64(method) << 1 | Int64(direction.rawValue)
    }

    private func exchangeNumber(_ key: ExchangeKey) -> Int {
        if let known = exchanges[key] { return known }
        nextExchange += 1
        exchanges[key] = nextExchange
        return nextExchange
    }

    // MARK: At the end

    /// Joins every meter and adds what it gives to the figures: the aggregation's meter
    /// estimates, the overhead shares kept back (`sharings`, one per input, then finished into
    /// the aggregation), the charts' samples, the `not-metered` counts of the diagnostics.
    func finish(
        aggregation: inout Aggregation, sharings: inout [OverheadSharing], charts: inout ChartSamples,
        diagnostics: inout [InputDiagnostics]
    ) {
        // Each record's group key from its path's and method's numbers; a method no entry
        // names takes a number no entry has.
        let entryMethodOfRecordMethod = recordMethodNames.map { entryMethodIDs[$0] ?? Int32.max }
        let records = candidates.map { candidate in
            var wire = candidate.wire
            wire.groupKey = Self.groupKey(
                wire.direction, method: entryMethodOfRecordMethod[Int(candidate.method)],
                path: entryPathOfRecordPath[Int(candidate.path)])
            return wire
        }
        let modelCount = aggregation.modelCount
        var chartEstimates: [(estimates: [Int?], records: [(direction: RecordClass, wire: Int, estimate: Int)])] = []
        for (m, meter) in meters.enumerated() {
            let result = MeterJoin.join(entries: meter.entries, records: records, options: options)
            var matched = [Int32](repeating: -1, count: candidates.count)
            // At most one key per record's key: grown once, not by doubling on the way.
            var matchedRecords = [CoverageKey: CoverageCounts](minimumCapacity: min(coverage.wire.count, result.pairs.count))
            var figures = MeterCoverage(
                name: meter.name, files: meter.files,
                offset: MeterClockOffset(
                    nanoseconds: result.offset.nanoseconds, estimated: result.offset.estimated,
                    spread: result.offset.spread, lowest: result.offset.lowest, highest: result.offset.highest,
                    tolerance: options.tolerance))
            for file in meter.files {
                for log in logs where log.path == file {
                    for (key, count) in log.diagnosticCounts { figures.diagnostics[key, default: 0] += count }
                }
            }
            // Per candidate, the meter's estimate (read back by ordinal for the charts' points).
            var estimates = [Int?](repeating: nil, count: candidates.count)
            var chartRecords: [(direction: RecordClass, wire: Int, estimate: Int)] = []
            chartRecords.reserveCapacity(result.pairs.count)
            // Matched records per input: taken off its records below, the rest not metered.
            var matchedPerInput = [Int](repeating: 0, count: diagnostics.count)
            for pair in result.pairs {
                matched[pair.record] = Int32(pair.entry)
                let entry = self.entry(meter: m, pair.entry)
                let (estimate, split) = Self.estimate(of: entry)
                figures.matchedEntries.add(bytes: Int(clamping: entry.bytes))
                estimates[pair.record] = estimate.total
                candidates.withUnsafeBufferPointer { candidates in
                    let candidate = candidates[pair.record]
                    aggregation.addMeterEstimate(meter: m, record: candidate.figures, estimate: estimate, split: split)
                    if let key = candidate.coverageKey {
                        matchedRecords[key, default: CoverageCounts()].add(
                            candidate.figures.wire, measured: candidate.figures.measured)
                    }
                    if candidate.figures.measured, let wire = candidate.figures.wire.total {
                        chartRecords.append((candidate.figures.group.direction, wire, estimate.total))
                    }
                    let input = Int(candidate.input)
                    if input < matchedPerInput.count { matchedPerInput[input] += 1 }
                }
            }
            figures.matchedRecords = matchedRecords
            for index in result.unmatchedEntries {
                let entry = self.entry(meter: m, index)
                let joinEntry = meter.entries[index]
                figures.unmatchedEntries[entryKey(joinEntry), default: EntryCounts()].add(
                    bytes: Int(clamping: entry.bytes))
            }
            for input in diagnostics.indices where input < recordsPerInput.count {
                diagnostics[input].unestimated[meter.name, default: [:]][.notMetered, default: 0] +=
                    recordsPerInput[input] - matchedPerInput[input]
                if diagnostics[input].unestimated[meter.name]?[.notMetered] == 0 {
                    diagnostics[input].unestimated[meter.name]![.notMetered] = nil
                }
                if diagnostics[input].unestimated[meter.name]?.isEmpty == true {
                    diagnostics[input].unestimated[meter.name] = nil
                }
            }
            matches.append(matched)
            coverage.meters.append(figures)
            chartEstimates.append((estimates, chartRecords))
        }
        let ordinals = candidates.map(\.ordinal)
        aggregation.finishMeters()
        for candidate in candidates.indices {
            guard let share = candidates[candidate].share, Int(candidates[candidate].input) < sharings.count else {
                continue
            }
            var mask = candidates[candidate].modelMask
            for m in meters.indices where matches[m][candidate] >= 0 && modelCount + m < 64 {
                mask |= 1 << UInt64(modelCount + m)
            }
            sharings[Int(candidates[candidate].input)].add(share, estimators: mask)
        }
        for held in heldShares where Int(held.input) < sharings.count {
            sharings[Int(held.input)].add(held.share, estimators: held.modelMask)
        }
        heldShares = []
        for index in sharings.indices { aggregation.add(sharings[index].finish()) }
        for (m, joined) in chartEstimates.enumerated() {
            // Candidates are in ordinal order: a point's candidate found by halving.
            charts.addJoined(
                estimator: modelCount + m,
                estimates: { ordinal in
                    var low = 0
                    var high = ordinals.count
                    while low < high {
                        let middle = (low + high) / 2
                        if ordinals[middle] < ordinal { low = middle + 1 } else { high = middle }
                    }
                    return low < ordinals.count && ordinals[low] == ordinal ? joined.estimates[low] : nil
                }, records: joined.records)
        }
        // What only the join needed goes before the reports are written (they run on every
        // core, and their peak is the run's): messages.csv needs only the candidates' places.
        candidateOrdinals = ordinals
        candidates = []
        for m in meters.indices { meters[m].entries = [] }
        recordPaths = [:]
        recordPathKeys = []
        exchanges = [:]
        lastURL = nil
    }

    /// The entry a meter's join index names.
    func entry(meter: Int, _ index: Int) -> MeterEntry {
        let reference = meters[meter].references[index]
        return logs[Int(reference.log)].entries[Int(reference.entry)]
    }

    /// What an entry estimates: its three parts when all are logged and add up to its total,
    /// else its total alone (`split` false).
    static func estimate(of entry: MeterEntry) -> (Estimate, split: Bool) {
        if let line = entry.lineBytes, let headers = entry.headersBytes, let body = entry.bodyBytes,
            line + headers + body == entry.bytes
        {
            return (Estimate(line: Int(line), headers: Int(headers), body: Int(body)), true)
        }
        return (Estimate(line: 0, headers: 0, body: Int(clamping: entry.bytes)), false)
    }

    /// Where an entry belongs in the coverage tables: its URL's host and endpoint.
    func entryKey(_ entry: JoinEntry) -> CoverageKey {
        let key = entry.url.pathKey
        var rest = Substring(key)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let host = String(rest[..<slash])
        let path = rest[slash...].isEmpty ? "/" : String(rest[slash...])
        return CoverageKey(
            host: host, endpoint: "\(entry.method) \(host) \(normalizer.normalize(path: path))",
            direction: entry.direction == .request ? .request : .response)
    }

    // MARK: messages.csv

    /// The meter columns of messages.csv, after every other: per meter `est_NAME`, the parts
    /// it logs, `meter_NAME_line`.
    var messageColumns: [String] {
        meters.flatMap { meter in
            ["est_\(meter.name)"] + (meter.logsLine ? ["est_\(meter.name)_line"] : [])
                + (meter.logsHeaders ? ["est_\(meter.name)_headers"] : [])
                + (meter.logsBody ? ["est_\(meter.name)_body"] : []) + ["meter_\(meter.name)_line"]
        }
    }

    /// Writes the meter cells of the record at `ordinal` (records asked in order).
    func appendCells(ordinal: Int, cursor: inout Int, to row: inout CSVRowBytes) {
        let ordinals = candidateOrdinals
        while cursor < ordinals.count, ordinals[cursor] < ordinal { cursor += 1 }
        let candidate = cursor < ordinals.count && ordinals[cursor] == ordinal ? cursor : nil
        for (m, meter) in meters.enumerated() {
            let index = candidate.flatMap { matches.indices.contains(m) ? Int(matches[m][$0]) : nil } ?? -1
            let entry = index >= 0 ? self.entry(meter: m, index) : nil
            row.append(entry.map { Int(clamping: $0.bytes) })
            if meter.logsLine { row.append(entry?.lineBytes.map { Int(clamping: $0) }) }
            if meter.logsHeaders { row.append(entry?.headersBytes.map { Int(clamping: $0) }) }
            if meter.logsBody { row.append(entry?.bodyBytes.map { Int(clamping: $0) }) }
            row.append(entry.map { Int($0.logLine) })
        }
    }
}
