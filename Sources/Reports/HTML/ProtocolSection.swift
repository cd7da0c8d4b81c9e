import Analysis
import Mustache

extension HTMLPage {
    /// report.html's protocol split and its headers tables (HTTP/2 against HPACK, HTTP/3 against
    /// QPACK): the figures of report.md's Protocols and headers sections, as plain text the
    /// template escapes.
    struct ProtocolSection {
        var splitHeader = HTMLRows.headings([
            "protocol", "direction", "records", "incomplete", "wire B", "estimator", "estimate B", "error B", "error %",
        ])
        var splitRows = ""
        var hasHTTP2 = false
        var http2Lines: [String] = []
        var http2Header = ""
        var http2Rows = ""
        var http2Totals = ""
        var hasHTTP3 = false
        var http3Lines: [String] = []
        var http3Header = ""
        var http3Rows = ""
        var http3Totals = ""

        init() {}

        init(_ run: RunReport, endpointRows maximumRows: Int) {
            var split = HTMLRows()
            for cells in MarkdownReport.protocolRows(run) { split.row(cells) }
            splitRows = split.html
            if let table = Self.table(run, .hpack, endpointRows: maximumRows) {
                hasHTTP2 = true
                (http2Lines, http2Header, http2Rows, http2Totals) = table
            }
            if let table = Self.table(run, .qpack, endpointRows: maximumRows) {
                hasHTTP3 = true
                (http3Lines, http3Header, http3Rows, http3Totals) = table
            }
        }

        /// `coder`'s headline lines, table header, endpoint rows and total rows; nil without
        /// records of its protocol.
        static func table(_ run: RunReport, _ coder: HeaderCoder, endpointRows maximumRows: Int) -> (
            lines: [String], header: String, rows: String, totals: String
        )? {
            let totals = run.headerCompressionTotals(coder)
            guard !totals.isEmpty else { return nil }
            var lines: [String] = []
            var headings = ["#", "endpoint", "direction", "records", "wire headers B", "header list B", "wire / list"]
            if let index = run.rankingEstimator {
                let name = run.aggregation.estimatorNames[index]
                headings += ["\(name) headers B", "\(name) / wire", "\(name) / list"]
                for (direction, figures) in totals where figures.records > 0 {
                    lines.append(
                        "\(direction.plural.capitalizedFirst): the \(name) meter counts"
                            + " \(TextFormat.bytes(figures.estimatedHeaders[index])) B of headers,"
                            + " \(RatioText.multiple(figures.estimateToWire(index))) the"
                            + " \(TextFormat.bytes(figures.wireHeaders)) B of \(coder.name) frames on the wire and"
                            + " \(RatioText.multiple(figures.estimateToHeaderList(index))) the"
                            + " \(TextFormat.bytes(figures.headerList)) B header list.")
                }
            }
            let leftOut = totals.reduce(0) { $0 + $1.figures.leftOut }
            if leftOut > 0 {
                lines.append(
                    "\(TextFormat.count(leftOut, "\(coder.protocolLabel) record")) left out"
                        + " (unmeasured, fields unknown or not estimated).")
            }
            // The rank and the figures are right-aligned; endpoint and direction are text.
            func row(_ rows: inout HTMLRows, _ first: [String], _ figures: HeaderCompressionFigures) {
                let texts = first + MarkdownReport.http2HeaderCells(run, figures)
                rows.row(texts.enumerated().map { ($0.element, $0.offset == 0 || $0.offset > 2) })
            }
            var endpointRows = HTMLRows()
            for endpoint in run.headerCompressionEndpoints(coder).prefix(maximumRows) {
                for (position, (direction, figures)) in endpoint.directions.enumerated() {
                    row(
                        &endpointRows,
                        [
                            position == 0 ? String(endpoint.rank) : "", position == 0 ? endpoint.endpoint : "",
                            direction.rawValue,
                        ], figures)
                }
            }
            var totalRows = HTMLRows()
            for total in totals { row(&totalRows, ["", "all", total.direction.rawValue], total.figures) }
            return (lines, HTMLRows.headings(headings), endpointRows.html, totalRows.html)
        }
    }
}

// Looked up by name, not through reflection (see HTMLPage's conformance).
extension HTMLPage.ProtocolSection: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "splitHeader": return splitHeader
        case "splitRows": return splitRows
        case "hasHTTP2": return hasHTTP2
        case "http2Lines": return http2Lines
        case "http2Header": return http2Header
        case "http2Rows": return http2Rows
        case "http2Totals": return http2Totals
        case "hasHTTP3": return hasHTTP3
        case "http3Lines": return http3Lines
        case "http3Header": return http3Header
        case "http3Rows": return http3Rows
        case "http3Totals": return http3Totals
        default: return nil
        }
    }
}
