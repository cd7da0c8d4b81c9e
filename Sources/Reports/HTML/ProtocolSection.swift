import Analysis

extension HTMLPage {
    /// report.html's protocol split and HTTP/2 headers table: the figures of report.md's
    /// Protocols and HTTP/2 headers sections, as plain text the template escapes.
    struct ProtocolSection {
        var splitHeader = [
            "protocol", "direction", "records", "incomplete", "wire B", "estimator", "estimate B", "error B", "error %",
        ]
        var splitRows: [Row] = []
        var hasHTTP2 = false
        var http2Lines: [String] = []
        var http2Header: [String] = []
        var http2Rows: [Row] = []
        var http2Totals: [Row] = []

        init() {}

        init(_ run: RunReport, endpointRows maximumRows: Int) {
            splitRows = MarkdownReport.protocolRows(run).map { cells in
                Row(cells: cells.map { Cell(text: $0.text, numeric: $0.numeric) })
            }
            let totals = run.headerCompressionTotals
            guard !totals.isEmpty else { return }
            hasHTTP2 = true
            http2Header = ["#", "endpoint", "direction", "records", "wire headers B", "header list B", "wire / list"]
            if let index = run.rankingEstimator {
                let name = run.aggregation.estimatorNames[index]
                http2Header += ["\(name) headers B", "\(name) / wire", "\(name) / list"]
                for (direction, figures) in totals where figures.records > 0 {
                    http2Lines.append(
                        "\(direction.plural.capitalizedFirst): the \(name) meter counts"
                            + " \(TextFormat.bytes(figures.estimatedHeaders[index])) B of headers,"
                            + " \(RatioText.multiple(figures.estimateToWire(index))) the"
                            + " \(TextFormat.bytes(figures.wireHeaders)) B of HPACK frames on the wire and"
                            + " \(RatioText.multiple(figures.estimateToHeaderList(index))) the"
                            + " \(TextFormat.bytes(figures.headerList)) B header list.")
                }
            }
            let leftOut = totals.reduce(0) { $0 + $1.figures.leftOut }
            if leftOut > 0 {
                http2Lines.append(
                    "\(TextFormat.count(leftOut, "HTTP/2 record")) left out (unmeasured, fields unknown or not estimated)."
                )
            }
            func row(_ first: [String], _ figures: HeaderCompressionFigures) -> Row {
                let texts = first + MarkdownReport.http2HeaderCells(run, figures)
                return Row(
                    cells: texts.enumerated().map { Cell(text: $0.element, numeric: $0.offset == 0 || $0.offset > 2) })
            }
            for endpoint in run.headerCompressionEndpoints().prefix(maximumRows) {
                for (position, (direction, figures)) in endpoint.directions.enumerated() {
                    http2Rows.append(
                        row(
                            [
                                position == 0 ? String(endpoint.rank) : "", position == 0 ? endpoint.endpoint : "",
                                direction.rawValue,
                            ], figures))
                }
            }
            http2Totals = totals.map { row(["", "all", $0.direction.rawValue], $0.figures) }
        }
    }
}
