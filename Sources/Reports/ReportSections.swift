import Analysis
import CaptureIO
import Estimation
import Flows
import PacketLayers

// The report's sections as values: each section's figures are computed here once from the run,
// and report.md, report.html and report.json render them (each in its own text and escaping).
// Before, each report summed the diagnostics itself and two figures drifted apart.

/// A figure summed over the inputs, with each input's part (in input order).
struct PerInput {
    /// Each input's name and value, in input order.
    var values: [(source: String, value: Int)]
    var total: Int

    init(_ inputs: [InputDiagnostics], _ value: (InputDiagnostics) -> Int) {
        values = inputs.map { (source: $0.source, value: value($0)) }
        total = values.reduce(0) { $0 + $1.value }
    }

    /// The inputs whose value is not zero, in input order.
    var nonzero: [(source: String, value: Int)] { values.filter { $0.value != 0 } }
}

extension InputDiagnostics.TLSCounts {
    /// TLS connections not (wholly) decrypted: the connections.csv rows whose `decrypted` is a
    /// reason rather than `yes`. They are the TLS connections nothing was measured in.
    var undecrypted: Int { connections - decrypted }
}

/// report.md's first lines and report.html's summary.
struct SummarySection {
    var inputs: Int
    var unreadableInputs: Int
    var connections: Int
    var records: Int
    /// Records without a known wire size, in no byte figure.
    var unmeasured: Int
    /// The totals by direction (`RunReport.totals`).
    var totals: [(direction: RecordClass, figures: GroupFigures)]
    /// Per estimator in report order: its figures on each metered direction (not interim).
    var estimators: [(name: String, directions: [(direction: RecordClass, figures: EstimatorFigures)])]
    /// The endpoint with the largest error of the ranking estimator, when that error is not zero.
    var worst: (estimator: String, endpoint: String, absoluteError: Int)?
    /// "Estimators: …" (the ranking estimator marked); nil without estimators.
    var estimatorsLine: String?

    init(_ run: RunReport, worstPlace: (endpoint: String, absoluteError: Int)?) {
        let totals = run.totals
        let names = run.aggregation.estimatorNames
        inputs = run.inputs.count
        unreadableInputs = run.inputs.filter { !$0.readable }.count
        connections = run.inputs.reduce(0) { $0 + $1.connections.total }
        records = totals.reduce(0) { $0 + $1.figures.records }
        unmeasured = totals.reduce(0) { $0 + $1.figures.unmeasured }
        self.totals = totals
        let metered = totals.filter { $0.direction != .interim }
        estimators = run.estimatorOrder.map { index in
            (
                name: names[index],
                directions: metered.map { (direction: $0.direction, figures: $0.figures.estimators[index]) }
            )
        }
        if let place = worstPlace, place.absoluteError > 0, let index = run.rankingEstimator {
            worst = (estimator: names[index], endpoint: place.endpoint, absoluteError: place.absoluteError)
        }
        if !names.isEmpty {
            estimatorsLine =
                "Estimators: "
                + run.estimatorOrder.map { names[$0] + ($0 == run.rankingEstimator ? " (ranks the endpoints)" : "") }
                .joined(separator: ", ") + "."
        }
    }
}

/// The totals table (report.md and report.html): a row per direction and estimator.
enum TotalsSection {
    static let columns = [
        "direction", "estimator", "records", "wire B", "estimate B", "error B", "error %", "median", "p95", "max",
    ]

    static func rows(_ run: RunReport) -> [[String]] {
        let names = run.aggregation.estimatorNames
        var rows: [[String]] = []
        for (direction, figures) in run.totals {
            for (position, index) in run.estimatorOrder.enumerated() {
                let estimator = figures.estimators[index]
                let counted = estimator.count > 0
                rows.append([
                    position == 0 ? direction.label : "", names[index], TextFormat.bytes(estimator.count),
                    counted ? TextFormat.bytes(estimator.wire) : "n/a",
                    counted ? TextFormat.bytes(estimator.estimated) : "n/a",
                    counted ? TextFormat.signedBytes(estimator.error) : "n/a",
                    TextFormat.signedPercent(estimator.errorPercent),
                    TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.5)),
                    TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.95)),
                    TextFormat.ratioPercent(estimator.maxAbsoluteRelativeError),
                ])
            }
        }
        return rows
    }
}

/// The inputs table and its errors (report.md and report.html).
struct InputsSection {
    struct Row {
        /// The input's name, unescaped ("all" for the total row).
        var name: String
        /// Its format; nil when unknown (shown as `n/a`), "" on the total row.
        var format: String?
        var diagnostics: InputDiagnostics
        var errors: String
    }

    static let columns = [
        "input", "format", "packets", "connections http/tls/other", "requests", "responses", "interim", "incomplete",
        "unpaired", "gaps", "errors",
    ]

    var rows: [Row] = []
    /// The total row, with more than one input.
    var total: Row?
    /// Each failed input's error, naming the input.
    var errors: [String] = []

    init(_ inputs: [InputDiagnostics]) {
        for input in inputs {
            let errors = !input.readable ? "unreadable" : (input.error == nil ? "0" : "1")
            rows.append(
                Row(name: input.source, format: input.format.isEmpty ? nil : input.format, diagnostics: input,
                    errors: errors))
        }
        let failed = inputs.filter { $0.error != nil || !$0.readable }
        if inputs.count > 1 {
            total = Row(
                name: "all", format: "", diagnostics: InputDiagnostics.sum(inputs),
                errors: TextFormat.bytes(failed.count))
        }
        for input in failed {
            // Errors usually name their file already.
            let error = input.error ?? "could not be read"
            errors.append(error.hasPrefix(input.source) ? error : input.source + ": " + error)
        }
    }
}

/// The TLS connections over every input (docs/METERING.md §2b).
struct TLSSection {
    var connections: Int
    var decrypted: Int
    /// Decrypted connections that carried HTTP/2.
    var h2: Int
    /// The connections not decrypted (connections.csv's rows whose TLS was not decrypted), per input.
    var undecrypted: PerInput
    /// Their count by reason.
    var reasons: [String: Int] = [:]
    /// Their TCP payload bytes by server name (`""`: no SNI).
    var undecryptedBytes: [String: Int] = [:]
    /// The TCP payload of every TLS connection, per input.
    var bytes: PerInput
    var keyLogIssues: [String]

    init(_ inputs: [InputDiagnostics]) {
        connections = inputs.reduce(0) { $0 + $1.tls.connections }
        decrypted = inputs.reduce(0) { $0 + $1.tls.decrypted }
        h2 = inputs.reduce(0) { $0 + $1.tls.h2 }
        undecrypted = PerInput(inputs) { $0.tls.undecrypted }
        bytes = PerInput(inputs) { $0.tls.bytes }
        for input in inputs {
            for (reason, count) in input.tls.notDecrypted { reasons[reason, default: 0] += count }
            for (name, bytes) in input.tls.undecryptedBytes { undecryptedBytes[name, default: 0] += bytes }
        }
        keyLogIssues = Set(inputs.flatMap { $0.tls.keyLogIssues }).sorted()
    }

    /// The server names of the connections not decrypted, sorted, without the empty one.
    var undecryptedServerNames: [String] { undecryptedBytes.keys.filter { !$0.isEmpty }.sorted() }
}

/// "Data quality": what the figures leave out and why, summed over the inputs.
struct DataQualitySection {
    /// By direction, from the totals: records without a partner, not complete, not measured.
    var unpaired: [RecordClass: Int] = [:]
    var incomplete: [RecordClass: Int] = [:]
    var unmeasured: [RecordClass: Int] = [:]
    /// The same per input, from the diagnostics.
    var unpairedRecords: PerInput
    var incompleteRecords: PerInput
    var gaps: PerInput
    var gapBytes: PerInput
    var truncatedBytes: PerInput
    var skippedBytes: PerInput
    var unterminated: PerInput
    /// Bodies whose content coding could not be removed, by kind (sorted).
    var notes: [(kind: DiagnosticNote, count: PerInput)]
    /// Records an estimator could not estimate, by estimator (report order) and reason (sorted).
    var unestimated: [(estimator: String, reasons: [(reason: EstimateUnavailable, count: PerInput)])]
    var tls: TLSSection
    var otherConnections: PerInput
    var tunnelBytes: PerInput
    /// Packets not decoded, by reason (sorted).
    var skippedPackets: [(reason: SkipReason, count: PerInput)]
    var failedInputs: PerInput

    init(_ run: RunReport, tls: TLSSection) {
        let inputs = run.inputs
        for (direction, figures) in run.totals {
            unpaired[direction] = figures.unpaired
            incomplete[direction] = figures.incomplete
            unmeasured[direction] = figures.unmeasured
        }
        unpairedRecords = PerInput(inputs) { $0.records.unpaired }
        incompleteRecords = PerInput(inputs) { $0.records.incomplete }
        gaps = PerInput(inputs) { $0.gaps.count }
        gapBytes = PerInput(inputs) { $0.gaps.bytes }
        truncatedBytes = PerInput(inputs) { $0.gaps.truncatedBytes }
        skippedBytes = PerInput(inputs) { $0.connections.skippedBytes }
        unterminated = PerInput(inputs) { $0.connections.unterminated }
        notes = Set(inputs.flatMap { $0.notes.keys }).sorted { $0.rawValue < $1.rawValue }.map { kind in
            (kind: kind, count: PerInput(inputs) { $0.notes[kind] ?? 0 })
        }
        let estimators = MarkdownReport.orderedEstimators(Set(inputs.flatMap { $0.unestimated.keys }), run: run)
        unestimated = estimators.map { estimator in
            let reasons = Set(inputs.flatMap { Array(($0.unestimated[estimator] ?? [:]).keys) })
                .sorted { $0.rawValue < $1.rawValue }
            return (
                estimator: estimator,
                reasons: reasons.map { reason in
                    (reason: reason, count: PerInput(inputs) { $0.unestimated[estimator]?[reason] ?? 0 })
                }
            )
        }
        self.tls = tls
        otherConnections = PerInput(inputs) { $0.connections.other }
        tunnelBytes = PerInput(inputs) { $0.connections.tunnelBytes }
        skippedPackets = Set(inputs.flatMap { $0.packets.skipped.keys }).sorted { $0.rawValue < $1.rawValue }.map {
            reason in (reason: reason, count: PerInput(inputs) { $0.packets.skipped[reason] ?? 0 })
        }
        failedInputs = PerInput(inputs) { $0.error != nil || !$0.readable ? 1 : 0 }
    }
}

/// "What the network carried" (report.md, report.html's cost layers, report.json's `network`):
/// per direction present, its figures and their parts, computed once.
struct NetworkSection {
    struct Side {
        var side: Direction
        var figures: NetworkFigures
        /// `figures.parts`, partitioning `frameTotal`.
        var parts: [(name: String, bytes: Int)]
        var frameTotal: Int
    }

    /// The directions the aggregation has, up first.
    var sides: [Side]

    init(_ aggregation: Aggregation) {
        sides = Direction.allCases.compactMap { side in
            aggregation.network[side].map { figures in
                let parts = figures.parts
                return Side(
                    side: side, figures: figures, parts: parts,
                    frameTotal: parts.reduce(0) { saturatingSum($0, $1.bytes) })
            }
        }
    }

    /// The directions with frame bytes (the chart's bars and report.html's table).
    var sidesWithFrames: [Side] { sides.filter { $0.frameTotal > 0 } }

    /// Records with HTTP bytes only (HAR), in no figure of the section.
    var httpOnlyRecords: Int { sides.reduce(0) { $0 + $1.figures.httpOnlyRecords } }
}
