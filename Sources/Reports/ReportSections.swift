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
                Row(
                    name: input.source, format: input.format.isEmpty ? nil : input.format, diagnostics: input,
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
        // A UDP row one direction has (its parts are conditional) is 0 in the other: every side
        // lists the same rows, in the order of the side with the most.
        guard let names = sides.map({ $0.parts.map(\.name) }).max(by: { $0.count < $1.count }) else { return }
        for index in sides.indices where sides[index].parts.count != names.count {
            let bytes = Dictionary(sides[index].parts.map { ($0.name, $0.bytes) }, uniquingKeysWith: +)
            sides[index].parts = names.map { ($0, bytes[$0] ?? 0) }
        }
    }

    /// The directions with frame bytes (the chart's bars and report.html's table).
    var sidesWithFrames: [Side] { sides.filter { $0.frameTotal > 0 } }

    /// Records with HTTP bytes only (HAR), in no figure of the section.
    var httpOnlyRecords: Int { sides.reduce(0) { $0 + $1.figures.httpOnlyRecords } }
}

/// "What costs the user" (report.md and report.html right after the totals, report.json's
/// `costs`): the endpoints that cost the most IP bytes (overhead shared out), with their
/// requests, rate, findings and each meter's error on them; the findings over every endpoint
/// and the worst one (docs/FIGURES.md, Cost, Rate and findings).
struct CostSection: Sendable {
    /// One estimator's error on an endpoint, summed over its directions.
    struct MeterError: Sendable {
        var name: String
        /// Σ estimate − Σ `wire_total` over the records it counts, and in percent of that wire.
        var error: Int?
        var errorPercent: Double?
        /// Σ estimate − Σ `ip_share` of the records it counts (with IP layers), and in percent.
        var ipError: Int?
        var ipErrorPercent: Double?
    }

    /// What one meter log (`--meter-log`) saw of an endpoint: the bytes of the request and
    /// response records its entries joined, of every such record's, as Coverage counts them
    /// (IP = Σ `wire_ip` when the endpoint has IP layers, else HTTP = Σ `wire_total`).
    struct MeterSeen: Sendable {
        var name: String
        /// True: IP bytes; false: HTTP bytes.
        var ip: Bool
        var metered: Int
        var wire: Int

        var percent: Double? { wire == 0 ? nil : 100 * Double(metered) / Double(wire) }
        var layer: String { ip ? "IP" : "HTTP" }
    }

    struct Row: Sendable {
        /// 1-based place by cost.
        var place: Int
        var cost: EndpointCost
        var shareWire: Double?
        var shareIP: Double?
        /// Its requests' times in ascending order (report.html's chart), and their figures.
        var times: [Int64]
        var rate: RateFigures
        /// In report order.
        var meters: [MeterError]
        /// Each meter log's share of the endpoint, in Coverage's order; empty without meter logs.
        var seen: [MeterSeen] = []
    }

    /// Endpoints listed by default.
    static let defaultRows = 10

    var rows: [Row] = []
    /// Endpoints in the run.
    var endpoints = 0
    var wholes: EndpointsCSV.Wholes
    /// Endpoints per finding, over every endpoint, worst kind first (the kinds found only).
    var findingCounts: [(name: String, endpoints: Int)] = []
    /// The worst finding of the run: the most severe kind, then the costliest endpoint.
    var worst: (endpoint: String, finding: Finding, rate: RateFigures)?
    /// Requests left out of the rate for want of a time, over every endpoint.
    var untimedRequests = 0

    init(_ run: RunReport, rows shown: Int = defaultRows) {
        let aggregation = run.aggregation
        wholes = EndpointsCSV.Wholes(aggregation)
        let costs = aggregation.endpointCosts
        endpoints = costs.count
        // Every endpoint's findings, for the counts and the worst one.
        var counts: [String: (severity: Int, endpoints: Int)] = [:]
        var worstCost: EndpointCost?
        for cost in costs {
            guard let requests = aggregation.groups[GroupKey(endpoint: cost.endpoint, direction: .request)] else {
                continue
            }
            let rate = RateFigures(requests.requestTimes, endpoint: cost.endpoint)
            untimedRequests += rate.untimed
            for finding in rate.findings {
                counts[finding.name, default: (finding.severity, 0)].endpoints += 1
            }
            guard let finding = rate.worst else { continue }
            if let current = worst, let currentCost = worstCost {
                let worse =
                    finding.severity != current.finding.severity
                    ? finding.severity > current.finding.severity : EndpointCost.costlier(cost, currentCost)
                guard worse else { continue }
            }
            worst = (endpoint: cost.endpoint, finding: finding, rate: rate)
            worstCost = cost
        }
        findingCounts = counts.sorted { $0.value.severity > $1.value.severity }.map {
            (name: $0.key, endpoints: $0.value.endpoints)
        }
        let names = aggregation.estimatorNames
        for (position, cost) in TopElements.first(shown, of: costs, by: EndpointCost.costlier).enumerated() {
            let directions = RecordClass.allCases.compactMap { direction in
                aggregation.groups[GroupKey(endpoint: cost.endpoint, direction: direction)].map { (direction, $0) }
            }
            let times = directions.first { $0.0 == .request }?.1.requestTimes ?? RequestTimes()
            let sorted = times.sorted
            let meters = run.estimatorOrder.map { index in
                Self.meterError(name: names[index], directions.map { $0.1.estimators[index] })
            }
            rows.append(
                Row(
                    place: position + 1, cost: cost,
                    shareWire: EndpointsCSV.Wholes.percent(cost.wireBytes, of: wholes.wire),
                    shareIP: cost.ipBytes.flatMap { EndpointsCSV.Wholes.percent($0, of: wholes.ip) }, times: sorted,
                    rate: RateFigures(
                        sorted: sorted, untimed: times.untimed, judged: RateFigures.judges(cost.endpoint)),
                    meters: meters, seen: Self.seen(cost, run.coverage)))
        }
    }

    static func seen(_ cost: EndpointCost, _ coverage: CoverageFigures?) -> [MeterSeen] {
        guard let coverage, !coverage.meters.isEmpty else { return [] }
        var wire = CoverageCounts()
        for (key, counts) in coverage.wire where key.endpoint == cost.endpoint { wire.add(counts) }
        let ip = cost.ipBytes != nil
        return coverage.meters.map { meter in
            var matched = CoverageCounts()
            for (key, counts) in meter.matchedRecords where key.endpoint == cost.endpoint { matched.add(counts) }
            return MeterSeen(
                name: meter.name, ip: ip, metered: ip ? matched.ipBytes : matched.httpBytes,
                wire: ip ? wire.ipBytes : wire.httpBytes)
        }
    }

    static func meterError(name: String, _ figures: [EstimatorFigures]) -> MeterError {
        var meter = MeterError(name: name)
        let counted = figures.filter { $0.count > 0 }
        if !counted.isEmpty {
            let wire = counted.reduce(0) { saturatingSum($0, $1.wire) }
            let error = counted.reduce(0) { saturatingSum($0, $1.error) }
            meter.error = error
            meter.errorPercent = wire == 0 ? nil : 100 * Double(error) / Double(wire)
        }
        let layered = figures.filter { $0.layers.count(.ipShare) > 0 }
        if !layered.isEmpty {
            let ip = layered.reduce(0) { saturatingSum($0, $1.layers.bytes(.ipShare)) }
            let error = layered.reduce(0) { saturatingSum($0, $1.layers.error(.ipShare) ?? 0) }
            meter.ipError = error
            meter.ipErrorPercent = ip == 0 ? nil : 100 * Double(error) / Double(ip)
        }
        return meter
    }
}

/// The rate figures and findings as text (every report words them the same).
enum RateText {
    /// Microseconds as seconds with 6 decimals, exactly (`0.300008`, `47.400010`).
    static func seconds(_ microseconds: Int64) -> String {
        FixedDecimal.withDigits(UInt64(microseconds.magnitude), decimals: 6, negative: microseconds < 0) {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Microseconds as seconds for people: 3 decimals (`0.300 s`, `2.000 s`).
    static func shortSeconds(_ microseconds: Int64) -> String {
        TextFormat.fixed(Double(microseconds) / 1e6, decimals: 3) + " s"
    }

    /// Requests per minute for people: 1 decimal (`135.4`); `n/a` when undefined.
    static func perMinute(_ value: Double?) -> String {
        value.map { TextFormat.fixed($0, decimals: 1) } ?? "n/a"
    }

    /// One finding in words: `runaway ×3.12 (17 → 53 per third)`, `burst 5 in 1 s`,
    /// `polling every 2.000 s`.
    static func finding(_ finding: Finding) -> String {
        switch finding {
        case let .runaway(growth, first, last):
            return
                "runaway ×\(TextFormat.fixed(growth, decimals: 2)) (\(first) → \(last) requests per third of its span)"
        case let .burst(perSecond):
            return "burst \(perSecond) in 1 s"
        case let .polling(period):
            return "polling every \(shortSeconds(period))"
        }
    }

    /// The findings in words, `; `-joined; `none` without one.
    static func findings(_ findings: [Finding]) -> String {
        findings.isEmpty ? "none" : findings.map(finding).joined(separator: "; ")
    }
}

extension CostSection {
    /// The table's columns (report.md and report.html): each meter's error against the HTTP
    /// bytes and against the IP bytes, meters in report order; then, with meter logs, what each
    /// saw of the endpoint.
    var columns: [String] {
        let errors: [String] = (rows.first?.meters ?? []).flatMap { ["\($0.name) vs HTTP", "\($0.name) vs IP"] }
        let seen: [String] = (rows.first?.seen ?? []).map { $0.name + " saw" }
        return [
            "#", "endpoint", "requests", "HTTP B", "IP B", "share of IP", "req/min", "peak/min", "median interval",
            "min interval", "findings",
        ] + errors + seen
    }

    /// The right-aligned (numeric) columns of `columns`.
    var numericColumns: Set<Int> {
        Set([0, 2, 3, 4, 5, 6, 7, 8, 9]).union(
            (0..<(2 * (rows.first?.meters.count ?? 0) + (rows.first?.seen.count ?? 0))).map { 11 + $0 })
    }

    /// A row's cells as text, the endpoint as it is (each report quotes it its own way).
    static func cells(_ row: Row) -> [String] {
        let rate = row.rate
        let errors: [String] = row.meters.flatMap {
            [TextFormat.signedPercent($0.errorPercent), TextFormat.signedPercent($0.ipErrorPercent)]
        }
        let seen: [String] = row.seen.map { seen in
            let share: String = MarkdownReport.share(seen.metered, of: seen.wire)
            return seen.wire == 0 ? share : share + " of " + seen.layer
        }
        let figures: [String] = [
            String(row.place), row.cost.endpoint, TextFormat.bytes(row.cost.requests),
            TextFormat.bytes(row.cost.wireBytes), row.cost.ipBytes.map(TextFormat.bytes) ?? "n/a",
            row.shareIP.map { TextFormat.fixed($0, decimals: 2) + "%" } ?? "n/a", RateText.perMinute(rate.perMinute),
            rate.requests > 0 ? TextFormat.bytes(rate.peakPerMinute) : "n/a",
            rate.medianInterval.map(RateText.shortSeconds) ?? "n/a",
            rate.minimumInterval.map(RateText.shortSeconds) ?? "n/a",
            rate.findings.isEmpty ? "" : rate.findings.map(RateText.finding).joined(separator: "; "),
        ]
        return figures + errors + seen
    }

    /// The paragraphs under the table, each in lines of at most 120 characters (report.md keeps
    /// them, report.html joins them): the findings over every endpoint, the worst one, and the
    /// requests left out.
    var notes: [[String]] {
        var notes: [[String]] = []
        if findingCounts.isEmpty {
            notes.append([
                "No endpoint of the \(TextFormat.bytes(endpoints)) is polling, runaway or bursting"
                    + " (the rules are in docs/FIGURES.md)."
            ])
        } else {
            notes.append([
                "Findings over all \(TextFormat.count(endpoints, "endpoint")): "
                    + findingCounts.map { "\($0.name) \(TextFormat.bytes($0.endpoints))" }.joined(separator: ", ") + "."
            ])
        }
        if let worst {
            notes.append([
                "The worst finding is on \(EndpointText.shortened(worst.endpoint)):",
                RateText.finding(worst.finding) + ".",
            ])
        }
        if untimedRequests > 0 {
            notes.append([
                "\(TextFormat.count(untimedRequests, "request")) without a time \(untimedRequests == 1 ? "is" : "are")"
                    + " left out of every rate figure."
            ])
        }
        return notes
    }

    /// The text above the table, in lines of at most 120 characters.
    var intro: [String] {
        [
            (rows.count < endpoints
                ? "The \(TextFormat.bytes(rows.count)) endpoints of \(TextFormat.bytes(endpoints)) that cost the most,"
                : "The endpoints by cost,")
                + " by IP bytes over both directions with each connection's overhead",
            "shared out (ip_share); endpoints without IP layers (HAR) follow, by HTTP bytes.",
            "Share: of the IP bytes of every captured connection (\(TextFormat.bytes(wholes.ip)) B).",
            "Rate: over each endpoint's requests, first to last; peak: the most requests in 60 s.",
            "Each meter's error: estimate - wire, against the HTTP bytes and against the IP bytes.",
        ]
            + seenIntro
    }

    private var seenIntro: [String] {
        (rows.first?.seen.isEmpty ?? true)
            ? []
            : [
                "Each meter log's \"saw\": the bytes of the endpoint's requests and responses its entries joined,",
                "of all of theirs: IP bytes (HTTP without IP layers), as Coverage counts them.",
            ]
    }
}

/// QUIC connections over the inputs (docs/METERING.md §2d): how many, how many decrypted, why
/// the others were not, and their UDP payload by server name (report.md and report.html).
struct QUICSection {
    var connections = 0
    var decrypted = 0
    /// Of the decrypted ones, those found mid-way (their handshake not captured).
    var midConnection = 0
    /// Not-decrypted reasons with their connection counts, by reason.
    var reasons: [(reason: String, count: Int)] = []
    /// The undecrypted connections' UDP payload bytes by server name (`""`: no SNI), by name.
    var undecryptedBytes: [(name: String, bytes: Int)] = []

    init(_ inputs: [InputDiagnostics]) {
        var reasonCounts: [String: Int] = [:]
        var bytesByName: [String: Int] = [:]
        for count in inputs.compactMap({ $0.udp?.quic }) {
            connections += count.connections
            decrypted += count.decrypted
            midConnection += count.midConnection ?? 0
            for (reason, number) in count.notDecrypted { reasonCounts[reason, default: 0] += number }
            for (name, bytes) in count.undecryptedBytes { bytesByName[name, default: 0] += bytes }
        }
        reasons = reasonCounts.keys.sorted().map { (reason: $0, count: reasonCounts[$0]!) }
        undecryptedBytes = bytesByName.keys.sorted().map { (name: $0, bytes: bytesByName[$0]!) }
    }
}
