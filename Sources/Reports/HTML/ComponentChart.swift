import Analysis

/// Where each endpoint's error lies: the error split into start line, header block and body,
/// stacked per endpoint and direction (negative parts to the left of zero, positive ones to
/// the right), one chart per estimator, on a linear byte scale.
enum ComponentChart {
    static let rows = 12

    struct Row {
        var endpoint: String
        var direction: RecordClass
        var parts: [(name: String, bytes: Int, color: String)]
    }

    /// The endpoint directions of largest `|error|` whose records split into components.
    static func rows(_ run: RunReport, estimator: Int) -> [Row] {
        typealias Candidate = (key: GroupKey, error: Int, line: Int, headers: Int, body: Int)
        var candidates: [Candidate] = []
        for (key, figures) in run.aggregation.groups where estimator < figures.estimators.count {
            let figures = figures.estimators[estimator]
            if figures.count > 0, figures.splitCount > 0 {
                candidates.append((key, figures.error, figures.lineError, figures.headersError, figures.bodyError))
            }
        }
        let largest = TopElements.first(Self.rows, of: candidates) {
            abs($0.error) != abs($1.error) ? abs($0.error) > abs($1.error) : $0.key < $1.key
        }
        return largest.map { candidate in
            Row(
                endpoint: candidate.key.endpoint, direction: candidate.key.direction,
                parts: [
                    ("line", candidate.line, ChartColor.line), ("headers", candidate.headers, ChartColor.headers),
                    ("body", candidate.body, ChartColor.body),
                ])
        }
    }

    static func chart(_ run: RunReport, estimator: Int) -> Chart {
        let name = run.aggregation.estimatorNames[estimator]
        let rows = rows(run, estimator: estimator)
        let rowHeight = 20.0
        let frame = ChartFrame.endpointRows(rows.count, rowHeight: rowHeight)
        var svg = SVG(width: frame.width, height: frame.height, label: "Error by component, \(name) estimator")
        svg.legend(
            [("start line", ChartColor.line), ("header block", ChartColor.headers), ("body", ChartColor.body)],
            x: frame.plotLeft, y: 16)
        let negative = rows.map { $0.parts.reduce(0) { $0 + min($1.bytes, 0) } }.min() ?? 0
        let positive = rows.map { $0.parts.reduce(0) { $0 + max($1.bytes, 0) } }.max() ?? 0
        var domain = LinearScale.nice(Double(min(negative, 0)), Double(max(positive, 0)), count: 6)
        if domain.0 == domain.1 { domain = (-1, 1) }
        let scale = LinearScale(domain: domain, range: (frame.plotLeft, frame.plotRight))
        frame.xAxis(&svg, scale: scale, label: "error, bytes (estimate - wire), summed over the endpoint's records")
        let zero = scale.position(0)
        svg.line(x1: zero, y1: frame.plotTop, x2: zero, y2: frame.plotBottom, stroke: ChartColor.axis)
        if rows.isEmpty {
            svg.text(
                "no records split into line, headers and body", x: (frame.plotLeft + frame.plotRight) / 2,
                y: frame.plotTop + 14, anchor: .middle)
        }
        for (position, row) in rows.enumerated() {
            let y = frame.plotTop + Double(position) * rowHeight
            var below = 0
            var above = 0
            for part in row.parts where part.bytes != 0 {
                let start = part.bytes < 0 ? below : above
                let end = start + part.bytes
                if part.bytes < 0 { below = end } else { above = end }
                let x0 = scale.position(Double(start))
                let x1 = scale.position(Double(end))
                svg.rect(
                    x: min(x0, x1), y: y + 3, width: max(abs(x1 - x0), 1), height: rowHeight - 6, fill: part.color,
                    tooltip:
                        "\(row.endpoint) (\(row.direction.rawValue)), \(part.name): \(TextFormat.signedBytes(part.bytes)) B"
                )
            }
            let arrow = row.direction == .request ? "↑" : row.direction == .response ? "↓" : "1xx"
            svg.text(
                "\(arrow) " + EndpointText.shortened(row.endpoint, maxLength: 50), x: frame.plotLeft - 8,
                y: y + rowHeight / 2 + 4, anchor: .end, size: 11, tooltip: row.endpoint)
        }
        return Chart(
            title: "Which part of the message the \(name) meter miscounts: start line, headers or body",
            svg: svg.rendered,
            note: "The \(rows.count) endpoint directions of largest absolute \(name) error among records whose line,"
                + " headers and body are known; hover a segment for its bytes.")
    }
}
