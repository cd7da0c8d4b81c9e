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
        lines += costs(run)
        lines += protocols(run)
        lines += networkSection(run)
        lines += CoverageSection.markdown(run, rows: endpointRows)
        lines += endpoints(run, ranked: ranked, rows: endpointRows)
        lines += http2Headers(run, rows: endpointRows)
        lines += headerCompression(run, .qpack, rows: endpointRows)
        lines += causes(run, ranked: ranked, explained: explainedEndpoints)
        lines += dataQuality(run)
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Summary

    static func summary(_ run: RunReport, ranked: [RankedEndpoint]) -> [String] {
        let summary = SummarySection(
            run, worstPlace: ranked.first.map { (endpoint: $0.endpoint, absoluteError: $0.absoluteError) })
        var lines = ["# MeterAudit report", ""]
        var sentence =
            "MeterAudit read \(TextFormat.count(summary.inputs, "input"))"
            + " (\(TextFormat.count(summary.connections, "TCP connection")))"
        if summary.records == 0 {
            sentence += " and found no HTTP message."
            lines.append(sentence)
        } else {
            let parts = summary.totals.map { direction, figures in
                "\(TextFormat.count(figures.records, direction.noun, direction.plural)) with \(TextFormat.bytes(figures.wireBytes)) B"
            }
            lines.append(sentence + " and found \(TextFormat.count(summary.records, "HTTP message")):")
            lines.append(list(parts) + " on the wire.")
            for (name, directions) in summary.estimators where !directions.isEmpty {
                let parts = directions.map { direction, estimator -> String in
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
                        (position == 0 ? "The \(name) estimator is off by " : last ? "and " : "")
                            + part + (last ? "." : parts.count > 2 ? "," : ""))
                }
            }
            if let worst = summary.worst {
                lines.append(
                    "The largest \(worst.estimator) error is on \(MarkdownText.code(worst.endpoint)):"
                        + " \(TextFormat.bytes(worst.absoluteError)) B summed over its directions.")
            }
            let unmeasured = summary.unmeasured
            if unmeasured > 0 {
                lines.append(
                    "\(TextFormat.count(unmeasured, "message")) with no known wire size \(unmeasured == 1 ? "is" : "are")"
                        + " left out of every byte figure.")
            }
        }
        if summary.unreadableInputs > 0 {
            lines.append("\(TextFormat.count(summary.unreadableInputs, "input")) could not be read (see Inputs).")
        }
        lines.append("")
        if let line = summary.estimatorsLine { lines.append(line) }
        if !run.settings.isEmpty {
            lines.append(
                "Settings: "
                    + run.settings.map { "\(MarkdownText.inline($0.0)) \(MarkdownText.code($0.1))" }
                    .joined(separator: ", ") + ".")
        }
        if summary.estimatorsLine != nil || !run.settings.isEmpty { lines.append("") }
        return lines
    }

    // MARK: - Inputs

    static func inputs(_ run: RunReport) -> [String] {
        var lines = ["## Inputs", ""]
        guard !run.inputs.isEmpty else { return lines + ["No inputs.", ""] }
        let section = InputsSection(run.inputs)
        lines += MarkdownText.header(InputsSection.columns, right: Set(2...10))
        for row in section.rows {
            lines.append(
                MarkdownText.row(
                    Self.inputCells(
                        MarkdownText.inline(row.name), row.format.map(MarkdownText.inline) ?? "n/a", row.diagnostics,
                        errors: row.errors)))
        }
        if let total = section.total {
            lines.append(MarkdownText.row(Self.inputCells(total.name, "", total.diagnostics, errors: total.errors)))
        }
        lines.append("")
        lines += tlsLines(TLSSection(run.inputs))
        lines += quicLines(run.inputs)
        if !section.errors.isEmpty {
            lines.append("Errors:")
            lines.append("")
            for error in section.errors { lines.append("- " + MarkdownText.inline(error)) }
            lines.append("")
        }
        return lines
    }

    /// TLS connections: how many were decrypted, why the others were not, and the bytes of
    /// the undecrypted ones per server name (docs/METERING.md §2b); nothing without TLS.
    static func tlsLines(_ tls: TLSSection) -> [String] {
        let connections = tls.connections
        guard connections > 0 else { return [] }
        let decrypted = tls.decrypted
        let h2 = tls.h2
        let reasons = tls.reasons
        let bytesByName = tls.undecryptedBytes
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
        let issues = tls.keyLogIssues
        if !issues.isEmpty {
            lines.append("")
            lines.append(
                "Key log lines not used: " + issues.map { MarkdownText.inline($0) }.joined(separator: "; ") + ".")
        }
        return lines + [""]
    }

    /// QUIC connections (docs/METERING.md §2d): how many were decrypted, why the others were
    /// not, and the UDP payload of those not decrypted by server name; nothing without QUIC.
    static func quicLines(_ inputs: [InputDiagnostics]) -> [String] {
        let quic = QUICSection(inputs)
        guard quic.connections > 0 else { return [] }
        var line =
            "QUIC: \(TextFormat.count(quic.connections, "connection")),"
            + " \(TextFormat.bytes(quic.decrypted)) decrypted"
        if quic.midConnection > 0 {
            line += " (\(TextFormat.bytes(quic.midConnection)) found mid-connection: handshake not captured, 1-RTT keys by trial)"
        }
        if !quic.reasons.isEmpty {
            line +=
                "; not decrypted: "
                + quic.reasons.map { "\(TextFormat.bytes($0.count)) \(MarkdownText.inline($0.reason))" }
                .joined(separator: ", ")
        }
        var lines = [line + "."]
        if !quic.undecryptedBytes.isEmpty {
            lines += ["", "Bytes of the QUIC connections not decrypted (UDP payload, no record made of them), by server name:", ""]
            for (name, bytes) in quic.undecryptedBytes {
                let shown = name.isEmpty ? "(no SNI)" : MarkdownText.code(name)
                lines.append("- \(shown): \(TextFormat.bytes(bytes)) B")
            }
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
        lines += MarkdownText.header(TotalsSection.columns, right: Set(2...9))
        for row in TotalsSection.rows(run) { lines.append(MarkdownText.row(row)) }
        let names = run.aggregation.estimatorNames
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

    // MARK: - What costs the user

    static func costs(_ run: RunReport) -> [String] {
        var lines = ["## What costs the user", ""]
        let section = run.costs()
        guard !section.rows.isEmpty else { return lines + ["No endpoints.", ""] }
        lines += section.intro.map { MarkdownText.inline($0) }
        lines.append("")
        lines += MarkdownText.header(section.columns, right: section.numericColumns)
        for row in section.rows {
            var cells = CostSection.cells(row).map { MarkdownText.inline($0) }
            cells[1] = MarkdownText.code(
                EndpointText.shortened(row.cost.endpoint, maxLength: endpointWidth), inTable: true)
            lines.append(MarkdownText.row(cells))
        }
        lines.append("")
        for note in section.notes { lines += note.map { MarkdownText.inline($0) } + [""] }
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
        let quality = DataQualitySection(run, tls: TLSSection(run.inputs))
        let several = run.inputs.count > 1
        func perInput(_ figure: PerInput) -> String { byInput(figure, several: several) }
        /// "- description: total[ B] (per input)." when the total over the inputs is not zero.
        func addTotal(_ description: String, bytes: Bool = false, _ figure: PerInput) {
            guard figure.total > 0 else { return }
            lines.append("- \(description): \(TextFormat.bytes(figure.total))" + (bytes ? " B" : "") + perInput(figure) + ".")
        }
        /// "a requests and b responses", the directions with a count.
        func byDirection(_ counts: [RecordClass: Int]) -> [String] {
            RecordClass.allCases.compactMap { direction in
                let count = counts[direction] ?? 0
                return count > 0 ? TextFormat.count(count, direction.noun, direction.plural) : nil
            }
        }

        lines.append(
            "- Unpaired: \(TextFormat.count(quality.unpaired[.request] ?? 0, "request")) without a response,"
                + " \(TextFormat.count(quality.unpaired[.response] ?? 0, "response")) without a request"
                + perInput(quality.unpairedRecords) + ".")
        lines.append("  Interim responses are never paired and not counted here.")

        let incomplete = byDirection(quality.incomplete)
        lines.append(
            "- Incomplete (the message's end is not in the capture): "
                + (incomplete.isEmpty ? "none" : list(incomplete) + perInput(quality.incompleteRecords)) + ".")

        let unmeasured = byDirection(quality.unmeasured)
        lines.append(
            "- Unmeasured (no known wire size, left out of every byte figure): "
                + (unmeasured.isEmpty ? "none" : list(unmeasured)) + ".")

        lines.append(
            "- Gaps in the captured streams: "
                + (quality.gaps.total == 0
                    ? "none"
                    : "\(TextFormat.count(quality.gaps.total, "gap")), \(TextFormat.bytes(quality.gapBytes.total)) B missing"
                        + perInput(quality.gaps)) + ".")
        addTotal("Payload cut by the snapshot length", bytes: true, quality.truncatedBytes)
        addTotal("Bytes skipped to find a message start (mid-stream, after a gap)", bytes: true, quality.skippedBytes)
        addTotal("Connections still open at the capture's end or idle", quality.unterminated)

        if quality.notes.isEmpty {
            lines.append("- Bodies whose content coding could not be removed: none.")
        } else {
            for (kind, count) in quality.notes {
                lines.append("- \(kind.description): \(TextFormat.bytes(count.total))" + perInput(count) + ".")
            }
        }

        if quality.unestimated.isEmpty {
            lines.append("- Records an estimator could not estimate: none.")
        } else {
            for (estimator, reasons) in quality.unestimated {
                for (reason, count) in reasons {
                    lines.append(
                        "- No \(MarkdownText.inline(estimator)) estimate (\(MarkdownText.inline(reason.rawValue))):"
                            + " \(TextFormat.count(count.total, "record"))" + perInput(count) + ".")
                }
            }
        }

        // Decrypted connections are measured (HTTP/2 ones too); the others are not.
        let tls = quality.tls
        if tls.undecrypted.total == 0 {
            lines.append("- TLS connections (encrypted, not measured): none.")
        } else {
            let tlsBytes = tls.undecryptedBytes.values.reduce(0, +)
            let serverNames = tls.undecryptedServerNames
            var line =
                "- TLS connections (encrypted, not measured): \(TextFormat.bytes(tls.undecrypted.total)),"
                + " \(TextFormat.bytes(tlsBytes)) B not decrypted" + perInput(tls.undecrypted)
            if !serverNames.isEmpty {
                let shown = serverNames.prefix(10).map { MarkdownText.code($0) }
                line +=
                    "; server names " + shown.joined(separator: ", ")
                    + (serverNames.count > 10 ? " and \(serverNames.count - 10) more" : "")
            }
            lines.append(line + ".")
        }
        addTotal("Connections neither HTTP/1.x nor TLS (not measured)", quality.otherConnections)
        addTotal(
            "Bytes inside tunnels (after CONNECT or 101 Switching Protocols, not measured)", bytes: true,
            quality.tunnelBytes)
        if !quality.skippedPackets.isEmpty {
            let reasons = quality.skippedPackets.map {
                "\(MarkdownText.inline($0.reason.rawValue)) \(TextFormat.bytes($0.count.total))"
            }
            lines.append("- Packets not decoded: " + reasons.joined(separator: ", ") + ".")
        }
        for input in run.inputs {
            for link in input.unsupportedLinkTypes {
                lines.append(
                    "- \(MarkdownText.inline(input.source)): link type \(link.linkType) on interface"
                        + " \(link.interface) is not decoded; its packets were skipped.")
            }
        }
        if quality.failedInputs.total > 0 {
            lines.append("- Inputs with errors: \(TextFormat.bytes(quality.failedInputs.total)) (see Inputs).")
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
    static func byInput(_ figure: PerInput, several: Bool) -> String {
        let nonzero = figure.nonzero
        guard several, !nonzero.isEmpty else { return "" }
        let shown = nonzero.prefix(10).map { "\(MarkdownText.inline($0.source)) \(TextFormat.bytes($0.value))" }
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
