import Analysis

/// report.html's coverage chart: per meter and direction, one bar of the wire's HTTP bytes split
/// into what the meter saw (joined records) and what it did not, and beside it the bytes the
/// meter counted for entries the wire never carried; on a linear byte scale.
enum CoverageChart {
    static let legend: [(label: String, color: String)] = [
        ("metered", ChartColor.body), ("on the wire, not metered", ChartColor.under),
        ("metered, not on the wire (meter's bytes)", ChartColor.interim),
    ]

    static func chart(_ section: CoverageSection) -> Chart {
        var bars: [(label: String, parts: [Int])] = []
        for meter in section.meters {
            for direction in meter.directions {
                let notOnWire = meter.figures.unmatchedEntries.filter { $0.key.direction == direction.direction }
                    .reduce(0) { $0 + $1.value.bytes }
                bars.append(
                    (
                        "\(meter.figures.name) \(direction.direction == .request ? "↑ up" : "↓ down")",
                        [
                            direction.matched.httpBytes, direction.wire.httpBytes - direction.matched.httpBytes,
                            notOnWire,
                        ]
                    ))
            }
        }
        let rowHeight = 30.0
        var frame = ChartFrame.endpointRows(bars.count, rowHeight: rowHeight)
        frame.left = 170
        var svg = SVG(width: frame.width, height: frame.height, label: "What each meter saw of the wire's HTTP bytes")
        svg.legend(legend, x: frame.plotLeft, y: 16)
        let largest = bars.map { Double($0.parts.reduce(0, +)) }.max() ?? 0
        var domain = LinearScale.nice(0, largest, count: 6)
        if domain.0 == domain.1 { domain = (0, 1) }
        let scale = LinearScale(domain: domain, range: (frame.plotLeft, frame.plotRight))
        frame.xAxis(&svg, scale: scale, label: "HTTP bytes (wire_total; the last part: the meter's own count)")
        svg.line(
            x1: frame.plotLeft, y1: frame.plotTop, x2: frame.plotLeft, y2: frame.plotBottom, stroke: ChartColor.axis)
        for (position, bar) in bars.enumerated() {
            let y = frame.plotTop + Double(position) * rowHeight
            var start = 0
            for (index, bytes) in bar.parts.enumerated() where bytes > 0 {
                let end = start + bytes
                let x0 = scale.position(Double(start))
                let x1 = scale.position(Double(end))
                svg.rect(
                    x: x0, y: y + 4, width: max(x1 - x0, 1), height: rowHeight - 8, fill: legend[index].color,
                    tooltip: "\(bar.label), \(legend[index].label): \(TextFormat.bytes(bytes)) B")
                start = end
            }
            svg.text(bar.label, x: frame.plotLeft - 8, y: y + rowHeight / 2 + 4, anchor: .end, size: 11)
        }
        return Chart(
            title: "Coverage: the wire's HTTP bytes each meter saw, and what it logged that the wire never carried",
            svg: svg.rendered,
            note: "Per meter and direction: the HTTP bytes of the records its entries joined, of those none joined,"
                + " then the bytes the meter counted for entries that joined no record; hover a segment for its bytes.")
    }
}
