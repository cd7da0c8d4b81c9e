import Analysis
import Estimation
import Foundation
import PacketLayers

/// `report.md`: the run for a reader, on GitHub or in a pager (plain Markdown, pipe tables, no
/// HTML). Sections: summary, inputs, totals, endpoints, where the error comes from, data
/// quality. The same run always renders the same bytes.
public enum MarkdownReport: RunReporter {
    public static let name = "markdown"
    public static let fileName = "report.md"

    /// Endpoints listed in the table by default (all of them are in endpoints.csv and report.json).
    public static let defaultEndpointRows = 50
    /// Endpoints whose error is explained cause by cause.
    public static let defaultExplainedEndpoints = 5
    /// Causes listed per estimator and group before the rest are summed up.
    public static let causesShown = 6
    /// Characters an endpoint may take in a table.
    public static let endpointWidth = 60

    public static func render(_ run: RunReport) -> String {
        render(run, endpointRows: defaultEndpointRows, explainedEndpoints: defaultExplainedEndpoints)
    }

    public static func render(_ run: RunReport, endpointRows: Int, explainedEndpoints: Int) -> String {
        let ranked = run.rankedEndpoints()
        var lines: [String] = []
        lines += summary(run, ranked: ranked)
        lines += inputs(run)
        lines += totals(run)
        lines += protocols(run)
        lines += networkSection(run)
        lines += endpoints(run, ranked: ranked, rows: endpointRows)
        lines += http2Headers(run, rows: endpointRows)
        lines += causes(run, ranked: ranked, explained: explainedEndpoints)
        lines += dataQuality(run)
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Summary

    static func summary(_ run: RunReport, ranked: [RankedEndpoint]) -> [String] {
        let totals = run.totals
        let names = run.aggregation.estimatorNames
        var lines = ["# MeterAudit report", ""]
        let connections = run.inputs.reduce(0) { $0 + $1.connections.total }
        let unreadable = run.inputs.filter { !$0.readable }.count
        let records = totals.reduce(0) { $0 + $1.figures.records }
        var sentence =
            "MeterAudit read \(TextFormat.count(run.inputs.count, "input"))"
            + " (\(TextFormat.count(connections, "TCP connection")))"
        if records == 0 {
            sentence += " and found no HTTP message."
            lines.append(sentence)
        } else {
            let parts = totals.map { direction, figures in
                "\(TextFormat.count(figures.records, direction.noun, direction.plural)) with \(TextFormat.bytes(figures.wireBytes)) B"
            }
            lines.append(sentence + " and found \(TextFormat.count(records, "HTTP message")):")
            lines.append(list(parts) + " on the wire.")
            for index in run.estimatorOrder {
                let metered = totals.filter { $0.direction != .interim }
                guard !metered.isEmpty else { break }
                let parts = metered.map { direction, figures -> String in
                    let estimator = figures.estimators[index]
                    guard estimator.count > 0 else { return "no estimate for the \(direction.plural)" }
                    var text =
                        "\(TextFormat.signedBytes(estimator.error)) B (\(TextFormat.signedPercent(estimator.errorPercent)))"
                        + " on the \(direction.plural)"
                    if estimator.unestimated > 0 {
                        text +=
                            " (\(TextFormat.count(estimator.unestimated, direction.noun, direction.plural)) not estimated)"
                    }
                    return text
                }
                // One direction per line (Markdown joins them), so that lines stay short.
                for (position, part) in parts.enumerated() {
                    let last = position == parts.count - 1
                    lines.append(
                        (position == 0 ? "The \(names[index]) estimator is off by " : last ? "and " : "")
                            + part + (last ? "." : parts.count > 2 ? "," : ""))
                }
            }
            if let worst = ranked.first, worst.absoluteError > 0, let index = run.rankingEstimator {
                lines.append(
                    "The largest \(names[index]) error is on \(MarkdownText.code(worst.endpoint)):"
                        + " \(TextFormat.bytes(worst.absoluteError)) B summed over its directions.")
            }
            let unmeasured = totals.reduce(0) { $0 + $1.figures.unmeasured }
            if unmeasured > 0 {
                lines.append(
                    "\(TextFormat.count(unmeasured, "message")) with no known wire size \(unmeasured == 1 ? "is" : "are")"
                        + " left out of every byte figure.")
            }
        }
        if unreadable > 0 {
            lines.append("\(TextFormat.count(unreadable, "input")) could not be read (see Inputs).")
        }
        lines.append("")
        if !names.isEmpty {
            let described = run.estimatorOrder.map { index in
                names[index] + (index == run.rankingEstimator ? " (ranks the endpoints)" : "")
            }
            lines.append("Estimators: " + described.joined(separator: ", ") + ".")
        }
        if !run.settings.isEmpty {
            lines.append(
                "Settings: "
                    + run.settings.map { "\(MarkdownText.inline($0.0)) \(MarkdownText.code($0.1))" }
                    .joined(separator: ", ") + ".")
        }
        if !names.isEmpty || !run.settings.isEmpty { lines.append("") }
        return lines
    }

    // MARK: - Inputs

    static func inputs(_ run: RunReport) -> [String] {
        var lines = ["## Inputs", ""]
        guard !run.inputs.isEmpty else { return lines + ["No inputs.", ""] }
        lines += MarkdownText.header(
            [
                "input", "format", "packets", "connections http/tls/other", "requests", "responses", "interim",
                "incomplete", "unpaired", "gaps", "errors",
            ],
            right: Set(2...10))
        for input in run.inputs {
            let errors = !input.readable ? "unreadable" : (input.error == nil ? "0" : "1")
            lines.append(
                MarkdownText.row(
                    Self.inputCells(
                        MarkdownText.inline(input.source),
                        input.format.isEmpty ? "n/a" : MarkdownText.inline(input.format), input,
                        errors: errors)))
        }
        if run.inputs.count > 1 {
            let errorCount = run.inputs.filter { $0.error != nil || !$0.readable }.count
            lines.append(
                MarkdownText.row(
                    Self.inputCells("all", "", InputDiagnostics.sum(run.inputs), errors: TextFormat.bytes(errorCount))))
        }
        lines.append("")
        lines += tlsLines(run.inputs)
        let failures = run.inputs.filter { $0.error != nil || !$0.readable }
        if !failures.isEmpty {
            lines.append("Errors:")
            lines.append("")
            for input in failures {
                // Errors usually name their file already.
                let error = input.error ?? "could not be read"
                lines.append(
                    "- " + MarkdownText.inline(error.hasPrefix(input.source) ? error : input.source + ": " + error))
            }
            lines.append("")
        }
        return lines
    }

    /// TLS connections: how many were decrypted, why the others were not, and the bytes of
    /// the undecrypted ones per server name (docs/METERING.md §2b); nothing without TLS.
    static func tlsLines(_ inputs: [InputDiagnostics]) -> [String] {
        let connections = inputs.reduce(0) { $0 + $1.tls.connections }
        guard connections > 0 else { return [] }
        let decrypted = inputs.reduce(0) { $0 + $1.tls.decrypted }
        let h2 = inputs.reduce(0) { $0 + $1.tls.h2 }
        var reasons: [String: Int] = [:]
        var bytesByName: [String: Int] = [:]
        for input in inputs {
            for (reason, count) in input.tls.notDecrypted { reasons[reason, default: 0] += count }
            for (name, bytes) in input.tls.undecryptedBytes { bytesByName[name, default: 0] += bytes }
        }
        var line =
            "TLS: \(TextFormat.count(connections, "connection")), \(TextFormat.bytes(decrypted)) decrypted"
            + (h2 > 0 ? " (\(TextFormat.bytes(h2)) of them HTTP/2, counted and not parsed)" : "")
        if !reasons.isEmpty {
            line +=
                "; not decrypted: "
                + reasons.keys.sorted().map { "\(TextFormat.bytes(reasons[$0]!)) \(MarkdownText.inline($0))" }
                .joined(separator: ", ")
        }
        var lines = [line + "."]
        if !bytesByName.isEmpty {
            lines.append("")
            lines.append(
                "Bytes of the TLS connections not decrypted (TCP payload, no record made of them), by server name:")
            lines.append("")
            for name in bytesByName.keys.sorted() {
                let shown = name.isEmpty ? "(no SNI)" : MarkdownText.code(name)
                lines.append("- \(shown): \(TextFormat.bytes(bytesByName[name]!)) B")
            }
        }
        let issues = Set(inputs.flatMap { $0.tls.keyLogIssues }).sorted()
        if !issues.isEmpty {
            lines.append("")
            lines.append(
                "Key log lines not used: " + issues.map { MarkdownText.inline($0) }.joined(separator: "; ") + ".")
        }
        return lines + [""]
    }

    // MARK: - Totals

    static func totals(_ run: RunReport) -> [String] {
        var lines = ["## Totals", ""]
        let totals = run.totals
        guard !totals.isEmpty else { return lines + ["No HTTP messages.", ""] }
        lines.append("Bytes on the wire against each estimator, up (requests) and down (responses).")
        lines.append("Interim (1xx) responses are kept apart: no app meter sees them.")
        lines.append("Each estimator is compared on the measured records it could estimate; error = estimate - wire.")
        lines.append("Median, p95 and max: of the per-record relative error abs(estimate - wire) / wire.")
        lines.append("")
        lines += MarkdownText.header(
            [
                "direction", "estimator", "records", "wire B", "estimate B", "error B", "error %", "median", "p95",
                "max",
            ],
            right: Set(2...9))
        let names = run.aggregation.estimatorNames
        for (direction, figures) in totals {
            for (position, index) in run.estimatorOrder.enumerated() {
                let estimator = figures.estimators[index]
                lines.append(
                    MarkdownText.row([
                        position == 0 ? direction.label : "", names[index], TextFormat.bytes(estimator.count),
                        estimator.count > 0 ? TextFormat.bytes(estimator.wire) : "n/a",
                        estimator.count > 0 ? TextFormat.bytes(estimator.estimated) : "n/a",
                        estimator.count > 0 ? TextFormat.signedBytes(estimator.error) : "n/a",
                        TextFormat.signedPercent(estimator.errorPercent),
                        TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.5)),
                        TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.95)),
                        TextFormat.ratioPercent(estimator.maxAbsoluteRelativeError),
                    ]))
            }
        }
        lines.append("")
        var notes: [String] = []
        for (direction, figures) in totals {
            if figures.unmeasured > 0 {
                notes.append(
                    "- \(TextFormat.count(figures.unmeasured, direction.noun, direction.plural)) unmeasured"
                        + " (no known wire size), left out.")
            }
            for index in run.estimatorOrder where figures.estimators[index].unestimated > 0 {
                let estimator = figures.estimators[index]
                notes.append(
                    "- \(names[index]): \(TextFormat.count(estimator.unestimated, direction.noun, direction.plural))"
                        + " with no estimate (\(TextFormat.bytes(figures.wireBytes - estimator.wire)) B on the wire), left out."
                )
            }
        }
        if !notes.isEmpty { lines += notes + ["", "See Data quality for why."] + [""] }
        return lines
    }

    // MARK: - Endpoints

    static func endpoints(_ run: RunReport, ranked: [RankedEndpoint], rows: Int) -> [String] {
        var lines = ["## Endpoints", ""]
        guard let index = run.rankingEstimator, !ranked.isEmpty else { return lines + ["No endpoints.", ""] }
        let name = run.aggregation.estimatorNames[index]
        let byIP = run.rankBy == .ip
        var intro =
            "\(TextFormat.count(ranked.count, "endpoint")), largest \(name) error first"
            + (byIP
                ? " against the IP bytes with the connection overhead shared out (ip_share;"
                    + " abs(error) summed over the endpoint's directions)."
                : " (abs(error) summed over the endpoint's directions).")
        if ranked.count > rows {
            intro += " The first \(TextFormat.bytes(rows)) are shown; endpoints.csv and report.json hold them all."
        }
        lines.append(intro)
        lines.append("Median and p95: of the per-record relative error abs(estimate - wire) / wire.")
        lines.append("")
        lines += MarkdownText.header(
            ["#", "endpoint", "direction", "records", "wire B", "\(name) B", "error B", "error %", "median", "p95"]
                + (byIP ? ["ip_share B", "error vs IP B", "error vs IP %"] : []),
            right: byIP ? [0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] : [0, 3, 4, 5, 6, 7, 8, 9])
        var partial = false
        for endpoint in ranked.prefix(rows) {
            for (position, (direction, figures)) in endpoint.directions.enumerated() {
                let estimator = figures.estimators[index]
                let isPartial = figures.unmeasured > 0 || estimator.unestimated > 0
                partial = partial || isPartial
                lines.append(
                    MarkdownText.row(
                        [
                            position == 0 ? String(endpoint.rank) : "",
                            position == 0
                                ? MarkdownText.code(
                                    EndpointText.shortened(endpoint.endpoint, maxLength: endpointWidth),
                                    inTable: true) : "",
                            direction.rawValue,
                            TextFormat.bytes(figures.records) + (isPartial ? " †" : ""),
                            TextFormat.bytes(figures.wireBytes),
                            estimator.count > 0 ? TextFormat.bytes(estimator.estimated) : "n/a",
                            estimator.count > 0 ? TextFormat.signedBytes(estimator.error) : "n/a",
                            TextFormat.signedPercent(estimator.errorPercent),
                            TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.5)),
                            TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.95)),
                        ] + (byIP ? ipCells(figures, estimator) : [])))
            }
        }
        lines.append("")
        if partial {
            lines.append("† Some of these records are unmeasured or have no \(name) estimate:")
            lines.append("the error compares only the records with both (see Data quality).")
            lines.append("")
        }
        return lines
    }

    /// `--rank-by ip`'s columns: the group's ip_share and the estimator's error against it.
    static func ipCells(_ figures: GroupFigures, _ estimator: EstimatorFigures) -> [String] {
        let layers = estimator.layers
        return [
            figures.layers.lowerRecords > 0 ? TextFormat.bytes(figures.layers.ipShare) : "n/a",
            layers.error(.ipShare).map(TextFormat.signedBytes) ?? "n/a",
            TextFormat.signedPercent(layers.errorPercent(.ipShare)),
        ]
    }

    // MARK: - Causes

    static func causes(_ run: RunReport, ranked: [RankedEndpoint], explained: Int) -> [String] {
        var lines = ["## Where the error comes from", ""]
        let totals = run.totals
        guard !totals.isEmpty, !run.aggregation.estimatorNames.isEmpty else {
            return lines + ["Nothing to explain.", ""]
        }
        let worst = ranked.prefix(explained).filter { $0.absoluteError > 0 }
        lines.append("Each estimator's error (estimate - wire; negative: the meter counts too little)")
        lines.append(
            worst.isEmpty
                ? "over all records,"
                : "over all records and for the \(TextFormat.count(worst.count, "endpoint")) with the largest error,")
        lines.append("split into start line, header block and body, then by cause, largest first.")
        lines.append("")
        lines.append("### All records")
        lines.append("")
        for (direction, figures) in totals {
            lines += explanation(run, direction: direction, figures: figures)
        }
        for endpoint in worst {
            lines.append("### \(endpoint.rank). \(MarkdownText.code(endpoint.endpoint))")
            lines.append("")
            for (direction, figures) in endpoint.directions {
                lines += explanation(run, direction: direction, figures: figures)
            }
        }
        return lines
    }

    static func explanation(_ run: RunReport, direction: RecordClass, figures: GroupFigures) -> [String] {
        var heading =
            "\(direction.plural.capitalizedFirst) (\(TextFormat.bytes(figures.records)),"
            + " \(TextFormat.bytes(figures.wireBytes)) B on the wire"
        if figures.unmeasured > 0 { heading += ", \(TextFormat.bytes(figures.unmeasured)) unmeasured" }
        var lines = [heading + "):", ""]
        if figures.unmeasured == figures.records {
            return lines + ["- nothing to compare: no wire size is known.", ""]
        }
        for index in run.estimatorOrder {
            lines += causeLines(
                name: run.aggregation.estimatorNames[index], figures.estimators[index], direction: direction)
        }
        lines.append("")
        return lines
    }

    static func causeLines(name: String, _ estimator: EstimatorFigures, direction: RecordClass) -> [String] {
        let explanation = causeExplanation(name: name, estimator, direction: direction, quote: MarkdownText.inline)
        return ["- " + explanation.head] + explanation.causes.map { "  - " + $0 }
    }

    /// One estimator's error over a group as plain sentences: a head (the error and its split
    /// into line, headers and body) and a line per cause, the first `causesShown`, then the
    /// rest summed. `quote` makes a cause's name safe for the output (report.md escapes
    /// Markdown; report.html's templates escape HTML themselves).
    static func causeExplanation(
        name: String, _ estimator: EstimatorFigures, direction: RecordClass, quote: (String) -> String
    ) -> (head: String, causes: [String]) {
        guard estimator.count > 0 else {
            return (
                "\(name): no estimate"
                    + (estimator.unestimated > 0
                        ? " (\(TextFormat.count(estimator.unestimated, direction.noun, direction.plural)) not estimated)"
                        : ""),
                []
            )
        }
        var head =
            "\(name): \(TextFormat.signedBytes(estimator.error)) B (\(TextFormat.signedPercent(estimator.errorPercent))):"
        if estimator.splitCount == 0 {
            head += " line, headers and body unknown (the wire sizes are totals only)"
        } else {
            let line = TextFormat.signedBytes(estimator.lineError)
            let headers = TextFormat.signedBytes(estimator.headersError)
            head += " line \(line) B, headers \(headers) B, body \(TextFormat.signedBytes(estimator.bodyError)) B"
            if estimator.splitCount < estimator.count {
                head +=
                    " (over the \(TextFormat.count(estimator.splitCount, direction.noun, direction.plural)) of known components)"
            }
        }
        if estimator.unestimated > 0 {
            head += "; \(TextFormat.count(estimator.unestimated, direction.noun, direction.plural)) not estimated"
        }
        var lines: [String] = []
        let causes = estimator.sortedCauses
        for cause in causes.prefix(causesShown) {
            // One interpolation per line: joined pieces would each be a string of their own.
            let perRecord = TextFormat.perRecord(bytes: cause.tally.bytes, records: cause.tally.records)
            let records = TextFormat.count(cause.tally.records, direction.noun, direction.plural)
            lines.append(
                "\(quote(cause.name)): \(perRecord) per \(direction.noun) (\(records)), \(TextFormat.signedBytes(cause.tally.bytes)) B in all"
            )
        }
        if causes.count > causesShown {
            let rest = causes.dropFirst(causesShown)
            lines.append(
                "\(TextFormat.count(rest.count, "other cause")): "
                    + "\(TextFormat.signedBytes(rest.reduce(0) { $0 + $1.tally.bytes })) B in all")
        }
        return (head, lines)
    }

    // MARK: - Data quality

    static func dataQuality(_ run: RunReport) -> [String] {
        var lines = ["## Data quality", ""]
        let totals = Dictionary(uniqueKeysWithValues: run.totals.map { ($0.direction, $0.figures) })
        let inputs = run.inputs
        func direct(_ direction: RecordClass, _ value: (GroupFigures) -> Int) -> Int { totals[direction].map(value) ?? 0 }
        func perInput(_ value: (InputDiagnostics) -> Int) -> String {
            byInput(inputs.map { ($0.source, value($0)) })
        }
        /// "- description: total[ B] (per input)." when the total over the inputs is not zero.
        func addTotal(_ description: String, bytes: Bool = false, _ value: (InputDiagnostics) -> Int) {
            let total = inputs.reduce(0) { $0 + value($1) }
            guard total > 0 else { return }
            lines.append("- \(description): \(TextFormat.bytes(total))" + (bytes ? " B" : "") + perInput(value) + ".")
        }

        let unpairedRequests = direct(.request) { $0.unpaired }
        let unpairedResponses = direct(.response) { $0.unpaired }
        lines.append(
            "- Unpaired: \(TextFormat.count(unpairedRequests, "request")) without a response,"
                + " \(TextFormat.count(unpairedResponses, "response")) without a request"
                + perInput { $0.records.unpaired } + ".")
        lines.append("  Interim responses are never paired and not counted here.")

        let incomplete = RecordClass.allCases.compactMap { direction -> String? in
            let count = direct(direction) { $0.incomplete }
            return count > 0 ? TextFormat.count(count, direction.noun, direction.plural) : nil
        }
        lines.append(
            "- Incomplete (the message's end is not in the capture): "
                + (incomplete.isEmpty ? "none" : list(incomplete) + perInput { $0.records.incomplete }) + ".")

        let unmeasured = RecordClass.allCases.compactMap { direction -> String? in
            let count = direct(direction) { $0.unmeasured }
            return count > 0 ? TextFormat.count(count, direction.noun, direction.plural) : nil
        }
        lines.append(
            "- Unmeasured (no known wire size, left out of every byte figure): "
                + (unmeasured.isEmpty ? "none" : list(unmeasured)) + ".")

        let gaps = inputs.reduce(0) { $0 + $1.gaps.count }
        let gapBytes = inputs.reduce(0) { $0 + $1.gaps.bytes }
        lines.append(
            "- Gaps in the captured streams: "
                + (gaps == 0
                    ? "none"
                    : "\(TextFormat.count(gaps, "gap")), \(TextFormat.bytes(gapBytes)) B missing"
                        + perInput { $0.gaps.count }) + ".")
        addTotal("Payload cut by the snapshot length", bytes: true) { $0.gaps.truncatedBytes }
        addTotal("Bytes skipped to find a message start (mid-stream, after a gap)", bytes: true) {
            $0.connections.skippedBytes
        }
        addTotal("Connections still open at the capture's end or idle") { $0.connections.unterminated }

        let notes = inputs.reduce(into: [DiagnosticNote: Int]()) { sums, input in
            for (kind, count) in input.notes { sums[kind, default: 0] += count }
        }
        if notes.isEmpty {
            lines.append("- Bodies whose content coding could not be removed: none.")
        } else {
            for kind in notes.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                lines.append(
                    "- \(kind.description): \(TextFormat.bytes(notes[kind]!))"
                        + perInput { $0.notes[kind] ?? 0 } + ".")
            }
        }

        let unestimated = inputs.reduce(into: [String: [EstimateUnavailable: Int]]()) { sums, input in
            for (estimator, reasons) in input.unestimated {
                for (reason, count) in reasons { sums[estimator, default: [:]][reason, default: 0] += count }
            }
        }
        if unestimated.isEmpty {
            lines.append("- Records an estimator could not estimate: none.")
        } else {
            for estimator in orderedEstimators(unestimated.keys, run: run) {
                let reasons = unestimated[estimator]!
                for reason in reasons.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                    lines.append(
                        "- No \(MarkdownText.inline(estimator)) estimate (\(MarkdownText.inline(reason.rawValue))):"
                            + " \(TextFormat.count(reasons[reason]!, "record"))"
                            + perInput { $0.unestimated[estimator]?[reason] ?? 0 } + ".")
                }
            }
        }

        // Decrypted connections are measured; the others (and HTTP/2 ones) are not.
        func unmeasuredTLS(_ input: InputDiagnostics) -> Int {
            input.tls.connections - input.tls.decrypted + input.tls.h2
        }
        let tls = inputs.reduce(0) { $0 + unmeasuredTLS($1) }
        if tls == 0 {
            lines.append("- TLS connections (encrypted, not measured): none.")
        } else {
            let tlsBytes = inputs.reduce(0) { $0 + $1.tls.undecryptedBytes.values.reduce(0, +) }
            let serverNames = Set(inputs.flatMap { $0.tls.undecryptedBytes.keys.filter { !$0.isEmpty } }).sorted()
            var line =
                "- TLS connections (encrypted, not measured): \(TextFormat.bytes(tls)),"
                + " \(TextFormat.bytes(tlsBytes)) B not decrypted" + perInput(unmeasuredTLS)
            if !serverNames.isEmpty {
                let shown = serverNames.prefix(10).map { MarkdownText.code($0) }
                line +=
                    "; server names " + shown.joined(separator: ", ")
                    + (serverNames.count > 10 ? " and \(serverNames.count - 10) more" : "")
            }
            lines.append(line + ".")
        }
        addTotal("Connections neither HTTP/1.x nor TLS (not measured)") { $0.connections.other }
        addTotal("Bytes inside tunnels (after CONNECT or 101 Switching Protocols, not measured)", bytes: true) {
            $0.connections.tunnelBytes
        }
        let skippedPackets = inputs.reduce(into: [SkipReason: Int]()) { sums, input in
            for (reason, count) in input.packets.skipped { sums[reason, default: 0] += count }
        }
        if !skippedPackets.isEmpty {
            let reasons = skippedPackets.keys.sorted(by: { $0.rawValue < $1.rawValue })
                .map { "\(MarkdownText.inline($0.rawValue)) \(TextFormat.bytes(skippedPackets[$0]!))" }
            lines.append("- Packets not decoded: " + reasons.joined(separator: ", ") + ".")
        }
        for input in inputs {
            for link in input.unsupportedLinkTypes {
                lines.append(
                    "- \(MarkdownText.inline(input.source)): link type \(link.linkType) on interface"
                        + " \(link.interface) is not decoded; its packets were skipped.")
            }
        }
        let failed = inputs.filter { $0.error != nil || !$0.readable }.count
        if failed > 0 {
            lines.append("- Inputs with errors: \(TextFormat.bytes(failed)) (see Inputs).")
        }
        return lines
    }

    /// Estimator names in the report's order, unknown names after, by name.
    static func orderedEstimators<S: Sequence>(_ names: S, run: RunReport) -> [String] where S.Element == String {
        let known = run.estimatorOrder.map { run.aggregation.estimatorNames[$0] }
        let present = Set(names)
        return known.filter(present.contains) + present.subtracting(known).sorted()
    }

    /// ` (a.pcap 2, b.pcap 1)` over the inputs with a count, in input order; empty when one
    /// input at most has one (the figure says it all).
    static func byInput(_ values: [(String, Int)]) -> String {
        let nonzero = values.filter { $0.1 != 0 }
        guard values.count > 1, !nonzero.isEmpty else { return "" }
        let shown = nonzero.prefix(10).map { "\(MarkdownText.inline($0.0)) \(TextFormat.bytes($0.1))" }
        return " (" + shown.joined(separator: ", ") + (nonzero.count > 10 ? ", \(nonzero.count - 10) more inputs" : "")
            + ")"
    }

    /// `a`, `a and b`, `a, b and c`.
    static func list(_ parts: [String]) -> String {
        guard parts.count > 1 else { return parts.first ?? "" }
        return parts.dropLast().joined(separator: ", ") + " and " + parts.last!
    }
}

extension RecordClass {
    var noun: String {
        switch self {
        case .request: return "request"
        case .response: return "response"
        case .interim: return "interim response"
        }
    }

    var plural: String { noun + "s" }

    /// The totals' row label.
    var label: String {
        switch self {
        case .request: return "up (requests)"
        case .response: return "down (responses)"
        case .interim: return "interim (1xx)"
        }
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

extension InputDiagnostics {
    /// The counts of several inputs added up (for a total row).
    static func sum(_ inputs: [InputDiagnostics]) -> InputDiagnostics {
        var total = InputDiagnostics(source: "all", path: "")
        for input in inputs {
            total.packets.read += input.packets.read
            total.connections.total += input.connections.total
            total.connections.http += input.connections.http
            total.connections.tls += input.connections.tls
            total.connections.other += input.connections.other
            total.records.requests += input.records.requests
            total.records.responses += input.records.responses
            total.records.interim += input.records.interim
            total.records.incomplete += input.records.incomplete
            total.records.unpaired += input.records.unpaired
            total.gaps.count += input.gaps.count
            total.gaps.bytes += input.gaps.bytes
        }
        return total
    }
}

extension MarkdownReport {
    /// One input's row of the inputs table (report.md and report.html): name, format, packets,
    /// connections (HTTP/TLS/other), records by kind, gaps, errors.
    static func inputCells(_ name: String, _ format: String, _ d: InputDiagnostics, errors: String) -> [String] {
        let c = d.connections
        // A HAR has neither packets nor connections to count.
        let isHAR = d.har != nil
        return [
            name, format, isHAR ? "" : TextFormat.bytes(d.packets.read),
            isHAR ? "" : "\(TextFormat.bytes(c.total)) (\(c.http)/\(c.tls)/\(c.other))",
            TextFormat.bytes(d.records.requests), TextFormat.bytes(d.records.responses - d.records.interim),
            TextFormat.bytes(d.records.interim), TextFormat.bytes(d.records.incomplete),
            TextFormat.bytes(d.records.unpaired),
            d.gaps.count == 0 ? "0" : "\(TextFormat.bytes(d.gaps.count)) (\(TextFormat.bytes(d.gaps.bytes)) B)",
            errors,
        ]
    }
}
