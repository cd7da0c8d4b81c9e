import Analysis

/// The endpoints ranked by error, one chart per estimator: a bar per endpoint and direction
/// going left when the meter counts too little and right when it counts too much, on a
/// symmetric log scale so that a few bytes and megabytes both show.
enum ErrorBarsChart {
    /// Bars shown per estimator.
    static let rows = 15

    struct Row {
        var endpoint: String
        var direction: RecordClass
        var error: Int
        var percent: Double?
    }

    /// The `rows` endpoint-directions of largest `|error|` for `estimator`, ties by endpoint
    /// in byte order, then direction.
    static func rows(_ run: RunReport, estimator: Int) -> [Row] {
        var rows: [Row] = []
        for (key, figures) in run.aggregation.groups where estimator < figures.estimators.count {
            let figures = figures.estimators[estimator]
            guard figures.count > 0 else { continue }
            rows.append(
                Row(
                    endpoint: key.endpoint, direction: key.direction, error: figures.error,
                    percent: figures.errorPercent))
        }
        return TopElements.first(Self.rows, of: rows) {
            abs($0.error) != abs($1.error)
                ? abs($0.error) > abs($1.error)
                : GroupKey(endpoint: $0.endpoint, direction: $0.direction)
                    < GroupKey(endpoint: $1.endpoint, direction: $1.direction)
        }
    }

    static func chart(_ run: RunReport, estimator: Int) -> Chart {
        let name = run.aggregation.estimatorNames[estimator]
        let rows = rows(run, estimator: estimator)
        let rowHeight = 20.0
        let frame = ChartFrame.endpointRows(rows.count, rowHeight: rowHeight)
        var svg = SVG(width: frame.width, height: frame.height, label: "Error per endpoint, \(name) estimator")
        svg.legend(
            [("under-count (estimate < wire)", ChartColor.under), ("over-count (estimate > wire)", ChartColor.over)],
            x: frame.plotLeft, y: 16)
        let largest = Double(rows.map { abs($0.error) }.max() ?? 1)
        let scale = SymmetricLogScale(
            decades: SymmetricLogScale.decades(covering: largest), range: (frame.plotLeft, frame.plotRight))
        frame.xAxis(&svg, scale: scale, label: "error, bytes (estimate - wire; symmetric log scale)")
        let zero = scale.position(0)
        svg.line(x1: zero, y1: frame.plotTop, x2: zero, y2: frame.plotBottom, stroke: ChartColor.axis)
        if rows.isEmpty {
            svg.text(
                "no estimated records", x: (frame.plotLeft + frame.plotRight) / 2, y: frame.plotTop + 14,
                anchor: .middle)
        }
        for (position, row) in rows.enumerated() {
            let y = frame.plotTop + Double(position) * rowHeight
            let end = scale.position(Double(row.error))
            let tooltip =
                "\(row.endpoint) (\(row.direction.rawValue)): \(TextFormat.signedBytes(row.error)) B"
                + " (\(TextFormat.signedPercent(row.percent)))"
            svg.rect(
                x: min(zero, end), y: y + 3, width: abs(end - zero), height: rowHeight - 6,
                fill: row.error < 0 ? ChartColor.under : ChartColor.over, tooltip: tooltip)
            let arrow = row.direction == .request ? "↑" : row.direction == .response ? "↓" : "1xx"
            svg.text(
                "\(arrow) " + EndpointText.shortened(row.endpoint, maxLength: 50), x: frame.plotLeft - 8,
                y: y + rowHeight / 2 + 4, anchor: .end, size: 11, tooltip: row.endpoint)
            let valueText = TextFormat.signedBytes(row.error) + " B"
            let inside = abs(end - zero) > Double(valueText.count) * 6.5 + 8
            if row.error < 0 {
                svg.text(
                    valueText, x: inside ? end + 4 : end - 4, y: y + rowHeight / 2 + 4,
                    anchor: inside ? .start : .end, size: 10, fill: inside ? "#fff" : "#222")
            } else {
                svg.text(
                    valueText, x: inside ? end - 4 : end + 4, y: y + rowHeight / 2 + 4,
                    anchor: inside ? .end : .start, size: 10, fill: inside ? "#fff" : "#222")
            }
        }
        return Chart(
            title: "Which endpoints the \(name) meter gets most wrong, and which way",
            svg: svg.rendered,
            note: "The \(rows.count) endpoint directions of largest absolute \(name) error (↑ requests, ↓ responses);"
                + " hover a bar for its figures. All endpoints are in the table below.")
    }
}
