import Analysis
import Dispatch
import Foundation
import MeterLog
import Records
import Reports
#if canImport(Glibc)
    import Glibc
#endif

/// A whole run: every input through the pipeline, outputs written to one directory.
public struct AuditRun {
    public var inputs: [String]
    public var outputDirectory: String
    public var options: AnalysisOptions
    /// Output formats to write (`messages` and the names in `Reporters`); nil writes all.
    /// `diagnostics.json` is always written.
    public var formats: [String]?

    public init(
        inputs: [String], outputDirectory: String, options: AnalysisOptions = AnalysisOptions(),
        formats: [String]? = nil
    ) {
        self.inputs = inputs
        self.outputDirectory = outputDirectory
        self.options = options
        self.formats = formats
    }

    /// Every format name `--format` accepts.
    public static var formatNames: [String] { [MessagesCSV.formatName, ConnectionsCSV.formatName] + Reporters.names }

    /// What a run produced.
    public struct Result: Sendable {
        public var report: RunReport
        /// Every file written, diagnostics.json last.
        public var files: [String]
        /// Outputs that could not be written, each naming its file; none of them is left
        /// behind, complete-looking or not.
        public var outputErrors: [String] = []
        /// What the body workers did (bodies measured and reused, CPU time of the decoding
        /// and re-compression they could not avoid).
        public var bodyWork = BodyWorkStatistics()
        /// Wall-clock seconds of the run's phases: reading every input (records and the
        /// streamed files), then writing the end-of-run files, and each of those files'
        /// own writing time (they are written at once, on every core), in `files` order.
        public var readSeconds = 0.0
        public var reportSeconds = 0.0
        public var reportFileSeconds: [(file: String, seconds: Double)] = []
        /// What was wrong in the meter logs (`file:line: problem`), the rest of each log used.
        public var meterLogDiagnostics: [String] = []
        /// True when some input could not be read at all.
        public var someInputsUnreadable: Bool { report.inputs.contains { !$0.readable } }
    }

    public enum Error: Swift.Error, CustomStringConvertible {
        case cannotCreateOutput(String, String)
        /// A meter log could not be read, or its meter's name is not usable.
        case meterLog(String)

        public var description: String {
            switch self {
            case let .cannotCreateOutput(path, reason): return "\(path): cannot create output: \(reason)"
            case let .meterLog(reason): return reason
            }
        }
    }

    /// Observes a run while it reads.
    public struct Progress {
        /// An input starts: its index (from 0) and path.
        public var input: (Int, String) -> Void = { _, _ in }
        /// Bytes read of the current input, and its size.
        public var bytes: ((Int, Int) -> Void)?

        public init() {}
    }

    /// Runs every input in order, then writes the reports, and last the part files that let
    /// `merge` add this folder to others (docs/SCALE.md; only when every other file was
    /// written). Throws only when the output directory cannot be made or the streamed files
    /// (messages.csv, connections.csv, part.points) cannot be created there, or a meter log
    /// cannot be opened (before reading anything), or a meter log cannot be read to its end or
    /// names a meter that is not usable (known once it is read, at the end: nothing is left);
    /// a write failing later is in `Result.outputErrors`, and the other outputs are still written.
    public func run(progress: Progress = Progress()) throws -> Result {
        options.protocols.registerOverheadKinds()
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw Error.cannotCreateOutput(outputDirectory, error.localizedDescription)
        }
        // An earlier run's manifest goes first: until this run writes its own, the folder is no part.
        unlink(outputDirectory + "/" + PartFiles.manifest)
        let started = monotonicSeconds()
        var files: [String] = []
        var outputErrors: [String] = []
        // The app meters' logs, opened before the inputs and read on another core while they are
        // analyzed (docs/METER-LOG.md, "In a run").
        let meters: MeterStage?
        do {
            meters =
                options.meterLogs.isEmpty
                ? nil
                : try MeterStage(
                    sources: options.meterLogs, modelNames: options.estimators.names,
                    options: JoinOptions(
                        tolerance: Int64((options.meterTolerance * 1e9).rounded()),
                        clockOffset: options.meterClockOffset.map { Int64(($0 * 1e9).rounded()) }),
                    normalizer: options.normalizer)
        } catch {
            throw Error.meterLog(String(describing: error))
        }
        let writesMessages = formats?.contains(MessagesCSV.formatName) ?? true
        let messagesPath = outputDirectory + "/" + MessagesCSV.fileName
        // Created first, so an unwritable directory is reported before any input is read.
        let messages =
            !writesMessages
            ? nil
            : meters == nil
                ? try MessagesCSV(path: messagesPath, estimators: options.estimators.names)
                : try MessagesCSV(
                    path: messagesPath, estimators: options.estimators.names, lateColumnsNamedAtTheEnd: ())
        let writesConnections = formats?.contains(ConnectionsCSV.formatName) ?? true
        let connectionsPath = outputDirectory + "/" + ConnectionsCSV.fileName
        let connections = writesConnections ? try ConnectionsCSV(path: connectionsPath) : nil
        let analyzer = InputAnalyzer(options: options)
        // The meters are named once their logs are read, at the end (`addMeters`).
        var aggregation = Aggregation(estimators: options.estimators)
        // report.html's per-record charts, in bounded memory; only when the page is written.
        let writesHTML = formats?.contains(HTMLReport.name) ?? true
        // The page's template, parsed on another core while this one starts reading (the
        // body workers have little to do yet), instead of at the end.
        if writesHTML { DispatchQueue.global().async { HTMLReport.prepare() } }
        var charts = ChartSamples(estimatorNames: aggregation.estimatorNames)
        // Every measured record's point, for a later merge's scatter (docs/SCALE.md); a run with
        // meter logs cannot be merged and writes none.
        let points =
            writesHTML && meters == nil ? try PartPointsWriter(path: outputDirectory + "/" + PartFiles.points) : nil
        var diagnostics: [InputDiagnostics] = []
        // With meters, each input's overhead sharing waits for the join (the meters that count
        // a record are known only then).
        var sharings: [OverheadSharing] = []
        for (index, input) in inputs.enumerated() {
            progress.input(index, input)
            charts.beginInput()
            let before = FileIdentity(path: input)
            // Each connection's overhead, shared out over its records once the input is read.
            var sharing = OverheadSharing()
            var inputDiagnostics = analyzer.analyze(
                path: input, progress: progress.bytes,
                connection: { row in
                    connections?.write(row)
                    aggregation.add(row)
                    sharing.add(row)
                }
            ) { record in
                messages?.write(record)
                aggregation.add(record)
                if meters?.observe(record, input: index) != true { sharing.add(record) }
                if writesHTML, let point = charts.add(record) { points?.write(point) }
            }
            if meters == nil { aggregation.add(sharing.finish()) } else { sharings.append(sharing) }
            if let udp = inputDiagnostics.udp { aggregation.addOtherUDP(udp) }
            if let before, let change = before.change(to: FileIdentity(path: input)) {
                inputDiagnostics.error = [inputDiagnostics.error, "\(input): \(change) while it was read"]
                    .compactMap { $0 }.joined(separator: "; ")
            }
            diagnostics.append(inputDiagnostics)
        }
        if let meters {
            do {
                try meters.load()
            } catch {
                messages?.discard()
                connections?.discard()
                throw Error.meterLog(String(describing: error))
            }
            aggregation.addMeters(meters.names)
            charts.addMeters(meters.names)
            meters.finish(aggregation: &aggregation, sharings: &sharings, charts: &charts, diagnostics: &diagnostics)
        }
        let read = monotonicSeconds()
        releaseFreeMemory()
        // What follows has two parts that need nothing of each other: putting the streamed
        // files in place with diagnostics.json (which needs only the diagnostics) and drawing
        // report.html's charts of the records' samples, and sorting and ranking the figures for
        // the other reports. The first goes to another core while this one does the second, so
        // neither core waits on the other's serial work.
        let diagnosticsPath = outputDirectory + "/diagnostics.json"
        var diagnosticsFile = DiagnosticsFile(inputs: diagnostics)
        diagnosticsFile.meterLogs = meters.map { MeterLogReport.reports($0) }
        // The streamed files appear under their names only now that they are complete; with
        // meters, messages.csv gets their cells on the way (one pass over its rows).
        let closeMessages: ((MessagesCSV) -> () throws -> Void) = { file in
            guard let meters else { return file.close }
            return {
                var cursor = 0
                try file.complete(lateColumns: meters.messageColumns) { ordinal, row in
                    meters.appendCells(ordinal: ordinal, cursor: &cursor, to: &row)
                }
            }
        }
        let streamed: [(path: String, close: () throws -> Void)] =
            [messages.map { (messagesPath, closeMessages($0)) }, connections.map { (connectionsPath, $0.close) }]
            .compactMap { $0 }
        let early: [(path: String, write: () throws -> Void)] =
            streamed.map { ($0.path, $0.close) } + [
                (diagnosticsPath, { try diagnosticsFile.write(to: diagnosticsPath) })
            ]
        let earlyWrites = WriteFailures(count: early.count)
        let earlyDone = DispatchGroup()
        let samples = charts
        let estimatorOrder = RunReport.estimatorOrder(
            count: aggregation.estimatorNames.count, ranking: aggregation.rankingEstimator)
        let sampleCharts = SampleChartsBox()
        DispatchQueue.global().async(group: earlyDone) {
            for index in early.indices { earlyWrites.run(index, early[index].write) }
            if writesHTML { sampleCharts.charts = SampleCharts(samples, estimatorOrder: estimatorOrder) }
        }
        // The meters' coverage tables (sorted by host and endpoint) on another core too.
        let coverageTables = CoverageTablesBox()
        if let coverage = meters?.coverage {
            DispatchQueue.global().async(group: earlyDone) { coverageTables.tables = CoverageTables(coverage) }
        }
        // The figures sorted once here (in place: the aggregation is complete), not once per
        // report: every report asks order-free ones. Ranked once too, for every report that
        // lists the endpoints.
        aggregation.makeOrderFree()
        var prepared = RunReport(
            inputs: diagnostics, aggregation: aggregation, settings: options.settings, charts: charts,
            rankBy: options.rankBy)
        prepared.setCoverageFigures(meters?.coverage)
        prepared.rankEndpoints()
        earlyDone.wait()
        prepared.sampleCharts = sampleCharts.charts
        if let tables = coverageTables.tables { prepared.setCoverageTables(tables) }
        let report = prepared
        // The end-of-run reports are independent: written at once, on every core. Listed (and
        // their errors told) in registry order.
        var writers: [(path: String, write: () throws -> Void)] = []
        for reporter in Reporters.all where formats?.contains(reporter.name) ?? true {
            let path = outputDirectory + "/" + reporter.fileName
            writers.append((path, { try reporter.write(report, to: path) }))
        }
        let failures = WriteFailures(count: writers.count)
        // Longest first, so the two cores end together: report.json takes the longest on the
        // benchmark captures (about as long as the others together), then report.html and
        // endpoints.csv, then the rest from the end of the registry. On two cores the page runs
        // beside report.json, then endpoints.csv and report.md on whichever core is free first.
        let longest = [JSONReport.fileName, HTMLReport.fileName, EndpointsReporter.fileName]
        let order =
            longest.compactMap { name in writers.indices.first { writers[$0].path.hasSuffix("/" + name) } }
            + writers.indices.reversed().filter { index in !longest.contains { writers[index].path.hasSuffix("/" + $0) }
            }
        DispatchQueue.concurrentPerform(iterations: writers.count) { started in
            let index = order[started]
            failures.run(index, writers[index].write)
        }
        // Told in the order the files are listed: the streamed files, the reports in registry
        // order, diagnostics.json last. The streamed files were written while reading: only
        // the others are timed.
        let diagnosticsIndex = early.count - 1
        var outcomes: [(path: String, failure: String?, seconds: Double?)] =
            streamed.indices.map { (early[$0].path, earlyWrites.failure(at: $0), nil) }
        outcomes += writers.indices.map { (writers[$0].path, failures.failure(at: $0), failures.seconds(at: $0)) }
        outcomes.append(
            (diagnosticsPath, earlyWrites.failure(at: diagnosticsIndex), earlyWrites.seconds(at: diagnosticsIndex)))
        var fileSeconds: [(file: String, seconds: Double)] = []
        for outcome in outcomes {
            if let failure = outcome.failure {
                outputErrors.append(failure)
            } else {
                files.append(outcome.path)
                if let seconds = outcome.seconds { fileSeconds.append((outcome.path, seconds)) }
            }
        }
        // The part's files last, once every other file is in place: only a complete folder is a part.
        if outputErrors.isEmpty {
            do {
                files += try writePart(report: report, charts: charts, points: points, meters: meters != nil, written: files)
            } catch {
                outputErrors.append(String(describing: error))
            }
        }
        var result = Result(
            report: report, files: files, outputErrors: outputErrors, bodyWork: analyzer.bodyMeasurements)
        result.meterLogDiagnostics = meters?.diagnostics.map(\.description) ?? []
        result.readSeconds = read - started
        result.reportSeconds = monotonicSeconds() - read
        result.reportFileSeconds = fileSeconds
        return result
    }
}

/// The coverage tables made on another core, read once that work is done (as `SampleChartsBox`).
private final class CoverageTablesBox: @unchecked Sendable {
    var tables: CoverageTables?
}

/// The sample charts drawn on another core, read once that work is done (`DispatchGroup.wait`
/// orders the write before the read).
private final class SampleChartsBox: @unchecked Sendable {
    var charts: SampleCharts?
}

/// The error and the time of each of several writes running at once, by index.
private final class WriteFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String?]
    private var durations: [Double]

    init(count: Int) {
        failures = Array(repeating: nil, count: count)
        durations = Array(repeating: 0, count: count)
    }

    /// Runs `write`, keeping its error and its time under `index`.
    func run(_ index: Int, _ write: () throws -> Void) {
        let begun = monotonicSeconds()
        do {
            try write()
        } catch {
            set(index, String(describing: error))
        }
        setSeconds(index, monotonicSeconds() - begun)
    }

    func set(_ index: Int, _ failure: String) { lock.withLock { failures[index] = failure } }

    func failure(at index: Int) -> String? { lock.withLock { failures[index] } }

    func setSeconds(_ index: Int, _ seconds: Double) { lock.withLock { durations[index] = seconds } }

    func seconds(at index: Int) -> Double { lock.withLock { durations[index] } }
}

/// Seconds on the monotonic clock, for the phase timings `--work-timings` prints.
private func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Which file a path names and how long it is, to tell when an input changed under the run.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64

    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
    }

    /// How the file changed since `self` was taken, or nil when it did not.
    func change(to now: FileIdentity?) -> String? {
        guard let now else { return "deleted" }
        if now.device != device || now.inode != inode { return "replaced" }
        if now.size < size { return "truncated from \(size) to \(now.size) bytes" }
        if now.size > size { return "grew from \(size) to \(now.size) bytes" }
        return nil
    }
}

/// `diagnostics.json`: every input's diagnostics and their totals.
struct DiagnosticsFile: Encodable {
    var inputs: [InputDiagnostics]
    /// The run's cost layers by direction, layer and overhead kind (docs/METERING.md §2c).
    var layers: InputDiagnostics.LayerCounts?
    /// The meter logs read (`--meter-log`) and what was wrong in them; absent without.
    var meterLogs: [MeterLogReport]?

    enum CodingKeys: String, CodingKey {
        case inputs, layers
        case meterLogs = "meter_logs"
    }

    init(inputs: [InputDiagnostics]) {
        self.inputs = inputs
        layers = InputDiagnostics.LayerCounts(summing: inputs)
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Plain strings, numbers and containers: encoding cannot fail; writing can.
        let file = try OutputFile(path: path)
        file.write(try! encoder.encode(self))
        try file.commit()
    }
}

extension InputDiagnostics {
    /// One line for the terminal.
    public var summaryLine: String {
        guard readable else { return "\(source): unreadable: \(error ?? "unknown error")" }
        if let har { return harSummaryLine(har) }
        var line =
            "\(source): \(packets.read) packets, \(connections.total) connections"
            + " (\(connections.http) http, \(connections.tls) tls, \(connections.other) other),"
            + " \(records.requests) requests, \(records.responses) responses"
            + " (\(records.incomplete) incomplete, \(records.unpaired) unpaired)"
        if gaps.count > 0 { line += ", \(gaps.count) gaps (\(gaps.bytes) B)" }
        let skippedTotal = packets.skipped.values.reduce(0, +)
        if skippedTotal > 0 { line += ", \(skippedTotal) packets skipped" }
        if let error { line += "\n  error: \(error)" }
        for unsupported in unsupportedLinkTypes {
            line +=
                "\n  note: link type \(unsupported.linkType) on interface \(unsupported.interface) is not decoded; its packets were skipped"
        }
        return line
    }

    private func harSummaryLine(_ har: HARCounts) -> String {
        let creator = [har.creator, har.creatorVersion].compactMap { $0 }.joined(separator: " ")
        var line =
            "\(source): HAR\(har.version.map { " " + $0 } ?? "")\(creator.isEmpty ? "" : " by \(creator)"), \(har.entries) entries,"
            + " \(records.requests) requests, \(records.responses) responses"
            + " (\(har.wireSources[.unknown] ?? 0) of unknown wire size)"
        if har.webSocketMessages > 0 { line += ", \(har.webSocketMessages) WebSocket messages (not sized)" }
        if let error { line += "\n  error: \(error)" }
        for broken in har.brokenEntries {
            line += "\n  entry \(broken.index) skipped: \(broken.reason)"
        }
        return line
    }
}

/// A meter log in diagnostics.json: its file, format, lines and entries, and its diagnostics
/// (the first `MeterLogLimits.maxDiagnostics`, each naming file and line; every one counted).
struct MeterLogReport: Encodable {
    var path: String
    var format: String?
    var lines: Int
    var entries: Int
    var meters: [String]
    var diagnosticCounts: [String: Int]
    var diagnostics: [String]

    enum CodingKeys: String, CodingKey {
        case path, format, lines, entries, meters
        case diagnosticCounts = "diagnostic_counts"
        case diagnostics
    }

    static func reports(_ stage: MeterStage) -> [MeterLogReport] {
        stage.logs.map { log in
            MeterLogReport(
                path: log.path, format: log.format?.rawValue, lines: log.linesRead, entries: log.entries.count,
                meters: stage.meters.filter { $0.files.contains(log.path) }.map(\.name),
                diagnosticCounts: log.diagnosticCounts, diagnostics: log.diagnostics.map(\.description))
        }
    }
}

/// Hands the memory the allocator keeps free back to the system, once every input is read and
/// before the reports are written. glibc keeps what a thread freed in that thread's arena: the
/// reading threads of a HAR or Charles session (ReadAhead) and the body workers leave a few MB
/// there that the reports' threads, with arenas of their own, do not reuse; trimmed, the run's
/// peak RSS is 2–5 MB lower on the 500 MB bench HAR, for a few ms (docs/BENCHMARK.md, "The
/// lean HAR's memory"). Other systems' allocators return memory their own way.
private func releaseFreeMemory() {
    #if canImport(Glibc)
        // `malloc_trim` is declared in malloc.h, which the Glibc module leaves out: found by name.
        typealias Trim = @convention(c) (Int) -> Int32
        if let trim = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(trim, to: Trim.self)(0) }
    #endif
}
