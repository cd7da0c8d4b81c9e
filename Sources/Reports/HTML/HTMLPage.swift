import Analysis
import Estimation
import Mustache

/// Everything report.html shows, as plain values for `HTMLTemplates.page`: text the template
/// escapes, and charts as SVG that `SVG` escaped. Built from a `RunReport` in one place, so the
/// template only lays it out.
struct HTMLPage {
    struct Cell {
        var text: String
        var numeric: Bool
    }

    struct Row {
        var cells: [Cell]
    }

    /// A row of a large table: its leading text cells, then its figures (right-aligned). The
    /// totals, endpoint and input tables have their text columns first, so the template walks
    /// two plain string arrays instead of looking up each cell's text and kind.
    struct FlatRow {
        var texts: [CellText]
        var figures: [CellText]

        init(_ cells: [String], leadingTexts: Int) {
            texts = cells.prefix(leadingTexts).map(CellText.init)
            figures = cells.dropFirst(leadingTexts).map(CellText.init)
        }
    }

    /// A cell's text, which the template escapes like any value: as a custom renderable,
    /// swift-mustache takes it after two type checks instead of six and a `String(describing:)`.
    struct CellText: MustacheCustomRenderable {
        var text: String
        var renderText: String { text }
        var isNull: Bool { false }
    }

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

    /// Stored flags, not computed ones: the templates see stored properties only (Mirror).
    struct Explanation {
        var head: String
        var causes: [String]
        var hasCauses: Bool

        init(head: String, causes: [String]) {
            self.head = head
            self.causes = causes
            hasCauses = !causes.isEmpty
        }
    }

    struct EndpointRow {
        var endpoint: String
        /// Every column of endpoints.csv after `endpoint`: direction and protocol, then figures.
        var cells: FlatRow
        var explanations: [Explanation]
    }

    struct ColumnGroup {
        var name: String
        var span: Int
    }

    struct QualityRow {
        var what: String
        var count: String
        var detail: String
    }

    var title = "MeterAudit report"
    var csp: String
    var style = HTMLTemplates.style
    var script = HTMLTemplates.script
    var summary: [String] = []
    var totalsHeader = [
        "direction", "estimator", "records", "wire B", "estimate B", "error B", "error %", "median", "p95", "max",
    ]
    var totalsRows: [FlatRow] = []
    var protocols = ProtocolSection()
    var estimatorsLine: [String] = []
    var settingsLine: [String] = []
    var chartGroups: [ChartGroup] = []
    var endpointsIntro = ""
    var endpointGroups: [ColumnGroup] = []
    var endpointHeader: [String] = []
    var endpointRows: [EndpointRow] = []
    var endpointTotals: [EndpointRow] = []
    var inputsHeader = [
        "input", "format", "packets", "connections http/tls/other", "requests", "responses", "interim", "incomplete",
        "unpaired", "gaps", "errors",
    ]
    var inputRows: [FlatRow] = []
    var inputErrors: [String] = []
    var hasInputErrors = false
    var quality: [QualityRow] = []
    /// The cost-layers section: its chart and report.md's table of the same parts.
    var costLayers: [ChartView] = []
    var costHeader: [String] = []
    var costRows: [Row] = []
    var hasCostRows = false

    init(_ run: RunReport, endpointRows maximumRows: Int, csp: String) {
        self.csp = csp
        // Ranked once, for the summary and the table.
        let ranking = run.endpointRanking()
        summary = Self.summary(run, ranking: ranking)
        totalsRows = Self.totals(run)
        protocols = ProtocolSection(run, endpointRows: maximumRows)
        let names = run.aggregation.estimatorNames
        if !names.isEmpty {
            estimatorsLine = [
                "Estimators: "
                    + run.estimatorOrder.map {
                        names[$0] + ($0 == run.rankingEstimator ? " (ranks the endpoints)" : "")
                    }
                    .joined(separator: ", ") + "."
            ]
        }
        if !run.settings.isEmpty {
            settingsLine = ["Settings: " + run.settings.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "."]
        }
        chartGroups = Self.charts(run)
        fillEndpoints(run, ranking: ranking, maximumRows: maximumRows)
        fillInputs(run)
        quality = Self.quality(run)
        fillCostLayers(run)
    }

    // MARK: - Cost layers

    /// The stacked chart, and per direction each part's bytes and share of the frame bytes.
    mutating func fillCostLayers(_ run: RunReport) {
        let chart = CostLayersChart.chart(run)
        costLayers = [ChartView(title: chart.title, svg: chart.svg, note: chart.note.map { [$0] } ?? [], size: "wide")]
        let sides = CostLayersChart.sides(run)
        guard !sides.isEmpty else { return }
        costHeader = ["part"] + sides.flatMap { ["\($0.side.label) B", "\($0.side.label) %"] }
        let names = sides[0].figures.parts.map(\.name) + ["frame bytes (all)"]
        for (position, name) in names.enumerated() {
            var cells = [Cell(text: name, numeric: false)]
            for (_, figures) in sides {
                let total = figures.frameTotal
                let bytes = position < figures.parts.count ? figures.parts[position].bytes : total
                cells.append(Cell(text: TextFormat.bytes(bytes), numeric: true))
                cells.append(
                    Cell(
                        text: total == 0
                            ? "n/a" : TextFormat.fixed(100 * Double(bytes) / Double(total), decimals: 2) + "%",
                        numeric: true))
            }
            costRows.append(Row(cells: cells))
        }
        hasCostRows = true
    }

    // MARK: - Summary and totals

    static func summary(_ run: RunReport, ranking: [EndpointPlace]) -> [String] {
        let totals = run.totals
        let records = totals.reduce(0) { $0 + $1.figures.records }
        let connections = run.inputs.reduce(0) { $0 + $1.connections.total }
        var lines = [
            "\(TextFormat.count(run.inputs.count, "input")), \(TextFormat.count(connections, "TCP connection")),"
                + " \(TextFormat.count(records, "HTTP message"))."
        ]
        let names = run.aggregation.estimatorNames
        for index in run.estimatorOrder {
            let parts = totals.filter { $0.direction != .interim }.compactMap { direction, figures -> String? in
                let estimator = figures.estimators[index]
                guard estimator.count > 0 else { return nil }
                return
                    "\(TextFormat.signedBytes(estimator.error)) B (\(TextFormat.signedPercent(estimator.errorPercent)))"
                    + " on the \(direction.plural)"
            }
            if !parts.isEmpty {
                lines.append("The \(names[index]) estimator is off by " + MarkdownReport.list(parts) + ".")
            }
        }
        if let worst = ranking.first, worst.absoluteError > 0, let index = run.rankingEstimator {
            lines.append(
                "The largest \(names[index]) error is on \(worst.endpoint): \(TextFormat.bytes(worst.absoluteError)) B"
                    + " summed over its directions.")
        }
        return lines
    }

    static func totals(_ run: RunReport) -> [FlatRow] {
        var rows: [FlatRow] = []
        let names = run.aggregation.estimatorNames
        for (direction, figures) in run.totals {
            for (position, index) in run.estimatorOrder.enumerated() {
                let estimator = figures.estimators[index]
                let counted = estimator.count > 0
                rows.append(
                    FlatRow(
                        [
                            position == 0 ? direction.label : "",
                            names[index],
                            TextFormat.bytes(estimator.count),
                            counted ? TextFormat.bytes(estimator.wire) : "n/a",
                            counted ? TextFormat.bytes(estimator.estimated) : "n/a",
                            counted ? TextFormat.signedBytes(estimator.error) : "n/a",
                            TextFormat.signedPercent(estimator.errorPercent),
                            TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.5)),
                            TextFormat.ratioPercent(estimator.absoluteRelativeError(quantile: 0.95)),
                            TextFormat.ratioPercent(estimator.maxAbsoluteRelativeError),
                        ], leadingTexts: 2))
            }
        }
        return rows
    }

    // MARK: - Charts

    static func charts(_ run: RunReport) -> [ChartGroup] {
        let order = run.estimatorOrder
        func view(_ chart: Chart, _ size: String) -> ChartView {
            ChartView(title: chart.title, svg: chart.svg, note: chart.note.map { [$0] } ?? [], size: size)
        }
        return [
            ChartGroup(
                heading: "Endpoints ranked by error",
                charts: order.map { view(ErrorBarsChart.chart(run, estimator: $0), "wide") }),
            ChartGroup(
                heading: "Wire size against estimate, per record",
                charts: order.map { view(ScatterChart.chart(run.charts, estimator: $0), "half") }),
            ChartGroup(
                heading: "Distribution of the relative error",
                charts: order.map { view(HistogramChart.chart(run.charts, estimator: $0), "half") }),
            ChartGroup(
                heading: "Error by component: start line, headers, body",
                charts: order.map { view(ComponentChart.chart(run, estimator: $0), "wide") }),
            ChartGroup(heading: "Bytes over capture time", charts: [view(TimelineChart.chart(run.charts), "wide")]),
        ]
    }

    // MARK: - Endpoints

    mutating func fillEndpoints(_ run: RunReport, ranking: [EndpointPlace], maximumRows: Int) {
        let names = run.aggregation.estimatorNames
        let columns = EndpointsCSV.columns(estimators: names)
        endpointHeader = columns
        endpointGroups = EndpointsCSV.columnGroups(estimators: names).map { ColumnGroup(name: $0.name, span: $0.span) }
        var shown = 0
        for place in ranking {
            guard shown < maximumRows else { break }
            for (direction, figures) in run.figures(of: place) {
                // The row endpoints.csv writes for this endpoint and direction.
                let csv = EndpointsCSV.row(endpoint: place.endpoint, direction: direction, figures)
                let explanations = run.estimatorOrder.map { index -> Explanation in
                    let explanation = MarkdownReport.causeExplanation(
                        name: names[index], figures.estimators[index], direction: direction, quote: { $0 })
                    return Explanation(head: explanation.head, causes: explanation.causes)
                }
                endpointRows.append(
                    EndpointRow(endpoint: csv[0], cells: Self.cells(csv.dropFirst()), explanations: explanations))
            }
            shown += 1
        }
        for (direction, figures) in run.aggregation.sortedTotals {
            let csv = EndpointsCSV.row(endpoint: "*", direction: direction, figures)
            endpointTotals.append(EndpointRow(endpoint: csv[0], cells: Self.cells(csv.dropFirst()), explanations: []))
        }
        var intro =
            "\(TextFormat.count(ranking.count, "endpoint")) and direction rows, largest error of the ranking estimator"
            + " first; the * rows at the foot are the totals."
        if ranking.count > maximumRows {
            intro +=
                " The first \(TextFormat.bytes(maximumRows)) endpoints are shown; endpoints.csv and report.json hold them all."
        }
        endpointsIntro = intro
    }

    /// endpoints.csv's cells after the endpoint; the direction and protocol are text, the rest figures.
    static func cells(_ values: ArraySlice<String>) -> FlatRow {
        FlatRow(Array(values), leadingTexts: 2)
    }

    // MARK: - Inputs and data quality

    mutating func fillInputs(_ run: RunReport) {
        func cells(_ name: String, _ format: String, _ d: InputDiagnostics, errors: String) -> FlatRow {
            let texts = MarkdownReport.inputCells(name, format, d, errors: errors)
            return FlatRow(texts, leadingTexts: 2)
        }
        for input in run.inputs {
            let errors = !input.readable ? "unreadable" : (input.error == nil ? "0" : "1")
            inputRows.append(cells(input.source, input.format.isEmpty ? "n/a" : input.format, input, errors: errors))
        }
        if run.inputs.count > 1 {
            let errorCount = run.inputs.filter { $0.error != nil || !$0.readable }.count
            inputRows.append(cells("all", "", InputDiagnostics.sum(run.inputs), errors: TextFormat.bytes(errorCount)))
        }
        for input in run.inputs where input.error != nil || !input.readable {
            let error = input.error ?? "could not be read"
            inputErrors.append(error.hasPrefix(input.source) ? error : input.source + ": " + error)
        }
        hasInputErrors = !inputErrors.isEmpty
    }

    /// The diagnostics summed over the inputs, one row per kind of trouble, with the inputs it
    /// came from.
    static func quality(_ run: RunReport) -> [QualityRow] {
        let inputs = run.inputs
        var rows: [QualityRow] = []
        func add(_ what: String, bytes: Bool = false, always: Bool = false, _ value: (InputDiagnostics) -> Int) {
            let total = inputs.reduce(0) { $0 + value($1) }
            guard total > 0 || always else { return }
            let perInput = inputs.filter { value($0) != 0 }
            let detail =
                inputs.count > 1
                ? perInput.prefix(10).map { "\($0.source) \(TextFormat.bytes(value($0)))" }.joined(separator: ", ")
                    + (perInput.count > 10 ? ", \(perInput.count - 10) more inputs" : "") : ""
            rows.append(QualityRow(what: what, count: TextFormat.bytes(total) + (bytes ? " B" : ""), detail: detail))
        }
        add("Unpaired messages (a request without a response or the reverse)", always: true) { $0.records.unpaired }
        add("Incomplete messages (the end is not in the capture)", always: true) { $0.records.incomplete }
        let unmeasured = run.totals.reduce(0) { $0 + $1.figures.unmeasured }
        rows.append(
            QualityRow(
                what: "Unmeasured messages (no known wire size, left out of every byte figure)",
                count: TextFormat.bytes(unmeasured), detail: ""))
        add("Gaps in the captured streams", always: true) { $0.gaps.count }
        add("Bytes missing in gaps", bytes: true) { $0.gaps.bytes }
        add("Payload cut by the snapshot length", bytes: true) { $0.gaps.truncatedBytes }
        add("Bytes skipped to find a message start (mid-stream, after a gap)", bytes: true) {
            $0.connections.skippedBytes
        }
        add("Connections still open at the capture's end or idle") { $0.connections.unterminated }
        let notes = Set(inputs.flatMap { $0.notes.keys }).sorted { $0.rawValue < $1.rawValue }
        for note in notes { add(note.description) { $0.notes[note] ?? 0 } }
        let estimators = MarkdownReport.orderedEstimators(Set(inputs.flatMap { $0.unestimated.keys }), run: run)
        for estimator in estimators {
            let reasons = Set(inputs.flatMap { Array(($0.unestimated[estimator] ?? [:]).keys) })
                .sorted { $0.rawValue < $1.rawValue }
            for reason in reasons {
                add("No \(estimator) estimate (\(reason.rawValue))") { $0.unestimated[estimator]?[reason] ?? 0 }
            }
        }
        add("TLS connections (encrypted, not measured)", always: true) { $0.tls.connections }
        add("Bytes in TLS connections", bytes: true) { $0.tls.bytes }
        add("Connections neither HTTP/1.x nor TLS (not measured)") { $0.connections.other }
        add("Bytes inside tunnels (after CONNECT or 101, not measured)", bytes: true) { $0.connections.tunnelBytes }
        let reasons = Set(inputs.flatMap { $0.packets.skipped.keys }).sorted { $0.rawValue < $1.rawValue }
        for reason in reasons { add("Packets not decoded: \(reason.rawValue)") { $0.packets.skipped[reason] ?? 0 } }
        add("Inputs with errors", always: true) { $0.error != nil || !$0.readable ? 1 : 0 }
        return rows
    }
}

// The table's cells and rows are many (an endpoint row has over thirty): looked up by name
// here instead of through reflection (Mirror), which the templates use otherwise and which
// would dominate the page's rendering time.
extension HTMLPage.Cell: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "text": return text
        case "numeric": return numeric
        default: return nil
        }
    }
}

extension HTMLPage.Row: MustacheParent {
    func child(named name: String) -> Any? { name == "cells" ? cells : nil }
}

extension HTMLPage.FlatRow: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "texts": return texts
        case "figures": return figures
        default: return nil
        }
    }
}

extension HTMLPage.EndpointRow: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "endpoint": return endpoint
        case "cells": return cells
        case "explanations": return explanations
        default: return nil
        }
    }
}

extension HTMLPage.Explanation: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "head": return head
        case "causes": return causes
        case "hasCauses": return hasCauses
        default: return nil
        }
    }
}
