import Analysis
import Estimation
import Mustache

/// Everything report.html shows, as plain values for `HTMLTemplates.page`: text the template
/// escapes, and charts as SVG that `SVG` escaped. Built from a `RunReport` in one place, so the
/// template only lays it out.
struct HTMLPage {
    struct ChartView {
        var title: String
        var svg: String
        var note: [String]
        /// `wide` (the page's width) or `half`.
        var size: String
    }

    struct ChartGroup {
        var heading: String
        var charts: [ChartView]
    }

    var title = "MeterAudit report"
    var csp: String
    var style = HTMLTemplates.style
    var script = HTMLTemplates.script
    var summary: [String] = []
    var totalsHeader = HTMLRows.headings(TotalsSection.columns)
    var totalsRows = ""
    var protocols = ProtocolSection()
    var estimatorsLine: [String] = []
    /// "What costs the user": its text, table and chart.
    var costsIntro = ""
    var costsHeader = ""
    var costsRows = ""
    var costsNotes: [String] = []
    var costsChart: [ChartView] = []
    var hasCosts = false
    var settingsLine: [String] = []
    var chartGroups: [ChartGroup] = []
    var endpointsIntro = ""
    var endpointGroups = ""
    var endpointHeader = ""
    var endpointRows = ""
    var endpointTotals = ""
    var inputsHeader = HTMLRows.headings(InputsSection.columns)
    var inputRows = ""
    var inputErrors: [String] = []
    var hasInputErrors = false
    /// QUIC connections (report.md's QUIC line) and the undecrypted ones' bytes by server name.
    var quicLine = ""
    var quicServerNames: [String] = []
    var quality = ""
    /// The cost-layers section: its chart and report.md's table of the same parts.
    var costLayers: [ChartView] = []
    var costHeader = ""
    var costRows = ""
    var hasCostRows = false
    /// The coverage section (app meters only): its chart, each meter's lines and tables.
    var hasCoverage = false
    var coverageCharts: [ChartView] = []
    var coverageMeters: [CoverageMeterView] = []
    var coverageHeader = ""

    struct CoverageMeterView {
        var name: String
        var lines: [String]
        var hostRows: String
        var endpointRows: String
    }

    init(_ run: RunReport, endpointRows maximumRows: Int, csp: String) {
        self.csp = csp
        // Ranked once, for the summary and the table.
        let ranking = run.endpointRanking()
        let summarySection = SummarySection(
            run, worstPlace: ranking.first.map { (endpoint: $0.endpoint, absoluteError: $0.absoluteError) })
        summary = Self.summary(summarySection)
        totalsRows = Self.totals(run)
        fillCosts(run)
        protocols = ProtocolSection(run, endpointRows: maximumRows)
        estimatorsLine = summarySection.estimatorsLine.map { [$0] } ?? []
        if !run.settings.isEmpty {
            settingsLine = ["Settings: " + run.settings.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "."]
        }
        chartGroups = Self.charts(run)
        fillEndpoints(run, ranking: ranking, maximumRows: maximumRows)
        fillInputs(run)
        quality = Self.quality(run)
        fillCostLayers(run)
        fillCoverage(run)
    }

    // MARK: - Coverage

    mutating func fillCoverage(_ run: RunReport) {
        guard let section = run.coverageSection else { return }
        hasCoverage = true
        let chart = CoverageChart.chart(section)
        coverageCharts = [
            ChartView(title: chart.title, svg: chart.svg, note: chart.note.map { [$0] } ?? [], size: "wide")
        ]
        coverageHeader = HTMLRows.headings(["host or endpoint"] + CoverageSection.columns)
        // `CoverageSection.cells` written straight into the page's bytes: the endpoints'
        // table has a row per endpoint and direction (4,444 on the bench capture), and nine
        // Strings per row were a third of the page's time with a meter log.
        func coverageRow(_ name: String, _ row: CoverageRow, into rows: inout HTMLRows) {
            rows.markup("<tr>")
            rows.cell(name, numeric: false)
            rows.cell(row.key.direction.rawValue, numeric: false)
            let unmatched = row.unmatched
            rows.bytesCell(row.wire.records)
            rows.bytesCell(row.matched.records)
            rows.bytesCell(unmatched.records)
            rows.bytesCell(unmatched.httpBytes)
            rows.bytesCell(unmatched.ipBytes)
            rows.bytesCell(row.unmatchedEntries.entries)
            rows.bytesCell(row.unmatchedEntries.bytes)
            rows.markup("</tr>\n")
        }
        coverageMeters = section.meters.map { meter in
            var hosts = HTMLRows()
            for row in meter.hosts { coverageRow(row.key.host, row, into: &hosts) }
            var endpoints = HTMLRows()
            for row in meter.endpoints { coverageRow(row.key.endpoint, row, into: &endpoints) }
            return CoverageMeterView(
                name: meter.figures.name, lines: CoverageSection.lines(meter), hostRows: hosts.html,
                endpointRows: endpoints.html)
        }
    }

    // MARK: - What costs the user

    mutating func fillCosts(_ run: RunReport) {
        let section = run.costs()
        guard !section.rows.isEmpty else { return }
        hasCosts = true
        costsIntro = section.intro.joined(separator: " ")
        costsHeader = HTMLRows.headings(section.columns)
        let numeric = section.numericColumns
        var rows = HTMLRows()
        for row in section.rows {
            rows.row(
                CostSection.cells(row).enumerated().map { (text: $0.element, numeric: numeric.contains($0.offset)) })
        }
        costsRows = rows.html
        costsNotes = section.notes.map { $0.joined(separator: " ") }
        costsChart = [Self.view(RateChart.chart(section), "wide")]
    }

    // MARK: - Cost layers

    /// The stacked chart, and per direction each part's bytes and share of the frame bytes.
    mutating func fillCostLayers(_ run: RunReport) {
        let network = NetworkSection(run.aggregation)
        let chart = CostLayersChart.chart(network)
        costLayers = [ChartView(title: chart.title, svg: chart.svg, note: chart.note.map { [$0] } ?? [], size: "wide")]
        let sides = network.sidesWithFrames
        guard !sides.isEmpty else { return }
        costHeader = HTMLRows.headings(["part"] + sides.flatMap { ["\($0.side.label) B", "\($0.side.label) %"] })
        let names = sides[0].parts.map(\.name) + ["frame bytes (all)"]
        var rows = HTMLRows()
        for (position, name) in names.enumerated() {
            rows.markup("<tr>")
            rows.cell(name, numeric: false)
            for side in sides {
                let total = side.frameTotal
                let bytes = position < side.parts.count ? side.parts[position].bytes : total
                rows.cell(TextFormat.bytes(bytes), numeric: true)
                rows.cell(MarkdownReport.share(bytes, of: total), numeric: true)
            }
            rows.markup("</tr>\n")
        }
        costRows = rows.html
        hasCostRows = true
    }

    // MARK: - Summary and totals

    static func summary(_ summary: SummarySection) -> [String] {
        var lines = [
            "\(TextFormat.count(summary.inputs, "input")), \(TextFormat.count(summary.connections, "TCP connection")),"
                + " \(TextFormat.count(summary.records, "HTTP message"))."
        ]
        for (name, directions) in summary.estimators {
            let parts = directions.compactMap { direction, estimator -> String? in
                guard estimator.count > 0 else { return nil }
                return
                    "\(TextFormat.signedBytes(estimator.error)) B (\(TextFormat.signedPercent(estimator.errorPercent)))"
                    + " on the \(direction.plural)"
            }
            if !parts.isEmpty {
                lines.append("The \(name) estimator is off by " + MarkdownReport.list(parts) + ".")
            }
        }
        if let worst = summary.worst {
            lines.append(
                "The largest \(worst.estimator) error is on \(worst.endpoint): \(TextFormat.bytes(worst.absoluteError)) B"
                    + " summed over its directions.")
        }
        return lines
    }

    static func totals(_ run: RunReport) -> String {
        var rows = HTMLRows()
        for row in TotalsSection.rows(run) { rows.row(row, leadingTexts: 2) }
        return rows.html
    }

    // MARK: - Charts

    static func charts(_ run: RunReport) -> [ChartGroup] {
        let order = run.estimatorOrder
        let samples = run.sampleCharts ?? SampleCharts(run.charts, estimatorOrder: order)
        return [
            ChartGroup(
                heading: "Endpoints ranked by error",
                charts: order.map { view(ErrorBarsChart.chart(run, estimator: $0), "wide") }),
            ChartGroup(heading: "Wire size against estimate, per record", charts: samples.scatter),
            ChartGroup(heading: "Distribution of the relative error", charts: samples.histograms),
            ChartGroup(
                heading: "Error by component: start line, headers, body",
                charts: order.map { view(ComponentChart.chart(run, estimator: $0), "wide") }),
            ChartGroup(heading: "Bytes over capture time", charts: [samples.timeline]),
        ]
    }

    static func view(_ chart: Chart, _ size: String) -> ChartView {
        ChartView(title: chart.title, svg: chart.svg, note: chart.note.map { [$0] } ?? [], size: size)
    }

    // MARK: - Endpoints

    mutating func fillEndpoints(_ run: RunReport, ranking: [EndpointPlace], maximumRows: Int) {
        let names = run.aggregation.estimatorNames
        endpointHeader = HTMLRows.headings(EndpointsCSV.columns(estimators: names))
        endpointGroups = HTMLRows.groupHeadings(EndpointsCSV.columnGroups(estimators: names))
        let wholes = EndpointsCSV.Wholes(run.aggregation)
        var rows = HTMLRows()
        var shown = 0
        for place in ranking {
            guard shown < maximumRows else { break }
            for (direction, figures) in run.figures(of: place) {
                // The row endpoints.csv writes for this endpoint and direction, under the
                // endpoint's name a disclosure of where each estimator's error comes from.
                let csv = EndpointsCSV.row(endpoint: place.endpoint, direction: direction, figures, wholes: wholes)
                rows.markup("<tr>\n<td class=\"endpoint\"><details><summary>")
                rows.text(csv[0])
                rows.markup("</summary>\n")
                for index in run.estimatorOrder {
                    let explanation = MarkdownReport.causeExplanation(
                        name: names[index], figures.estimators[index], direction: direction, quote: { $0 })
                    rows.markup("<p class=\"cause-head\">")
                    rows.text(explanation.head)
                    rows.markup("</p>")
                    if !explanation.causes.isEmpty {
                        rows.markup("<ul>")
                        for cause in explanation.causes {
                            rows.markup("<li>")
                            rows.text(cause)
                            rows.markup("</li>")
                        }
                        rows.markup("</ul>")
                    }
                    rows.markup("\n")
                }
                rows.markup("</details></td>")
                // RecordClass and protocol are text, the rest figures.
                rows.flatCells(csv.dropFirst(), leadingTexts: 2)
                rows.markup("</tr>\n")
            }
            shown += 1
        }
        endpointRows = rows.html
        var totals = HTMLRows()
        for (direction, figures) in run.aggregation.sortedTotals {
            let csv = EndpointsCSV.row(endpoint: "*", direction: direction, figures, wholes: wholes)
            totals.markup("<tr><td class=\"endpoint\">")
            totals.text(csv[0])
            totals.markup("</td>")
            totals.flatCells(csv.dropFirst(), leadingTexts: 2)
            totals.markup("</tr>\n")
        }
        endpointTotals = totals.html
        var intro =
            "\(TextFormat.count(ranking.count, "endpoint")) and direction rows, largest error of the ranking estimator"
            + " first; the * rows at the foot are the totals."
        if ranking.count > maximumRows {
            intro +=
                " The first \(TextFormat.bytes(maximumRows)) endpoints are shown; endpoints.csv and report.json hold them all."
        }
        endpointsIntro = intro
    }

    // MARK: - Inputs and data quality

    mutating func fillInputs(_ run: RunReport) {
        let section = InputsSection(run.inputs)
        var rows = HTMLRows()
        for row in section.rows + (section.total.map { [$0] } ?? []) {
            rows.row(
                MarkdownReport.inputCells(row.name, row.format ?? "n/a", row.diagnostics, errors: row.errors),
                leadingTexts: 2)
        }
        inputRows = rows.html
        inputErrors = section.errors
        hasInputErrors = !inputErrors.isEmpty
        let quic = QUICSection(run.inputs)
        if quic.connections > 0 {
            let reasons = quic.reasons.map { "\(TextFormat.bytes($0.count)) \($0.reason)" }
            quicLine =
                "QUIC: \(TextFormat.count(quic.connections, "connection")),"
                + " \(TextFormat.bytes(quic.decrypted)) decrypted"
                + (quic.midConnection > 0
                    ? " (\(TextFormat.bytes(quic.midConnection)) found mid-connection: handshake not captured, 1-RTT keys by trial)"
                    : "")
                + (reasons.isEmpty ? "" : "; not decrypted: " + reasons.joined(separator: ", ")) + "."
            quicServerNames = quic.undecryptedBytes.map {
                "\($0.name.isEmpty ? "(no SNI)" : $0.name): \(TextFormat.bytes($0.bytes)) B"
            }
        }
    }

    /// The diagnostics summed over the inputs, one row per kind of trouble, with the inputs it
    /// came from.
    static func quality(_ run: RunReport) -> String {
        let quality = DataQualitySection(run, tls: TLSSection(run.inputs))
        let several = run.inputs.count > 1
        var rows = HTMLRows()
        func row(what: String, count: String, detail: String) {
            rows.markup("<tr><th scope=\"row\">")
            rows.text(what)
            rows.markup("</th><td class=\"n\">")
            rows.text(count)
            rows.markup("</td><td>")
            rows.text(detail)
            rows.markup("</td></tr>\n")
        }
        func add(_ what: String, bytes: Bool = false, always: Bool = false, _ figure: PerInput) {
            guard figure.total > 0 || always else { return }
            let perInput = figure.nonzero
            let detail =
                several
                ? perInput.prefix(10).map { "\($0.source) \(TextFormat.bytes($0.value))" }.joined(separator: ", ")
                    + (perInput.count > 10 ? ", \(perInput.count - 10) more inputs" : "") : ""
            row(what: what, count: TextFormat.bytes(figure.total) + (bytes ? " B" : ""), detail: detail)
        }
        add("Unpaired messages (a request without a response or the reverse)", always: true, quality.unpairedRecords)
        add("Incomplete messages (the end is not in the capture)", always: true, quality.incompleteRecords)
        row(
            what: "Unmeasured messages (no known wire size, left out of every byte figure)",
            count: TextFormat.bytes(quality.unmeasured.values.reduce(0, +)), detail: "")
        add("Gaps in the captured streams", always: true, quality.gaps)
        add("Bytes missing in gaps", bytes: true, quality.gapBytes)
        add("Payload cut by the snapshot length", bytes: true, quality.truncatedBytes)
        add("Bytes skipped to find a message start (mid-stream, after a gap)", bytes: true, quality.skippedBytes)
        add("Connections still open at the capture's end or idle", quality.unterminated)
        for (kind, count) in quality.notes { add(kind.description, count) }
        for (estimator, reasons) in quality.unestimated {
            for (reason, count) in reasons { add("No \(estimator) estimate (\(reason.rawValue))", count) }
        }
        add("TLS connections (encrypted, not measured)", always: true, quality.tls.undecrypted)
        add("Bytes in TLS connections", bytes: true, quality.tls.bytes)
        add("Connections neither HTTP/1.x nor TLS (not measured)", quality.otherConnections)
        add("Bytes inside tunnels (after CONNECT or 101, not measured)", bytes: true, quality.tunnelBytes)
        for (reason, count) in quality.skippedPackets { add("Packets not decoded: \(reason.rawValue)", count) }
        add("Inputs with errors", always: true, quality.failedInputs)
        return rows.html
    }
}

// The template's values looked up by name here rather than through reflection (Mirror), which
// the template engine uses otherwise: a Mirror of the page per lookup cost more than the lookups.
extension HTMLPage: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "title": return title
        case "csp": return csp
        case "style": return style
        case "script": return script
        case "summary": return summary
        case "totalsHeader": return totalsHeader
        case "totalsRows": return totalsRows
        case "protocols": return protocols
        case "estimatorsLine": return estimatorsLine
        case "costsIntro": return costsIntro
        case "costsHeader": return costsHeader
        case "costsRows": return costsRows
        case "costsNotes": return costsNotes
        case "costsChart": return costsChart
        case "hasCosts": return hasCosts
        case "settingsLine": return settingsLine
        case "chartGroups": return chartGroups
        case "endpointsIntro": return endpointsIntro
        case "endpointGroups": return endpointGroups
        case "endpointHeader": return endpointHeader
        case "endpointRows": return endpointRows
        case "endpointTotals": return endpointTotals
        case "inputsHeader": return inputsHeader
        case "inputRows": return inputRows
        case "inputErrors": return inputErrors
        case "hasInputErrors": return hasInputErrors
        case "quicLine": return quicLine.isEmpty ? nil : quicLine
        case "quicServerNames": return quicServerNames
        case "hasQUICServerNames": return !quicServerNames.isEmpty
        case "quality": return quality
        case "costLayers": return costLayers
        case "costHeader": return costHeader
        case "costRows": return costRows
        case "hasCostRows": return hasCostRows
        case "hasCoverage": return hasCoverage
        case "coverageCharts": return coverageCharts
        case "coverageMeters": return coverageMeters
        case "coverageHeader": return coverageHeader
        default: return nil
        }
    }
}

extension HTMLPage.ChartView: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "title": return title
        case "svg": return svg
        case "note": return note
        case "size": return size
        default: return nil
        }
    }
}

extension HTMLPage.CoverageMeterView: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "name": return name
        case "lines": return lines
        case "hostRows": return hostRows
        case "endpointRows": return endpointRows
        default: return nil
        }
    }
}

extension HTMLPage.ChartGroup: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "heading": return heading
        case "charts": return charts
        default: return nil
        }
    }
}

/// report.html's charts drawn from the records' samples alone (`ChartSamples`), not from the
/// figures: a run can draw them on another core while it sorts and ranks the figures
/// (`RunReport.sampleCharts`), instead of after, with the rest of the page.
public struct SampleCharts: Sendable {
    var scatter: [HTMLPage.ChartView]
    var histograms: [HTMLPage.ChartView]
    var timeline: HTMLPage.ChartView

    /// The charts for estimators in `estimatorOrder` (`RunReport.estimatorOrder`).
    public init(_ samples: ChartSamples, estimatorOrder order: [Int]) {
        scatter = order.map { HTMLPage.view(ScatterChart.chart(samples, estimator: $0), "half") }
        histograms = order.map { HTMLPage.view(HistogramChart.chart(samples, estimator: $0), "half") }
        timeline = HTMLPage.view(TimelineChart.chart(samples), "wide")
    }
}
