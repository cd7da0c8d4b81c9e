import Analysis

/// Wire size against estimate per record, log-log, one panel per estimator: points on the
/// dashed y = x line were estimated exactly, points under it were under-counted. Drawn from
/// `ChartSamples`' bounded sample.
enum ScatterChart {
    static func chart(_ samples: ChartSamples, estimator: Int) -> Chart {
        let name = samples.estimatorNames[estimator]
        var frame = ChartFrame(width: 440, height: 400)
        frame.left = 62
        frame.top = 46
        var svg = SVG(width: frame.width, height: frame.height, label: "Wire size against \(name) estimate per record")
        let points = samples.points.filter { estimator < $0.estimates.count && $0.estimates[estimator] != nil }
        let largest = points.reduce(1) { max($0, $1.wire, $1.estimates[estimator] ?? 0) }
        let decades = LogScale.decades(covering: Double(largest))
        let x = LogScale(decades: decades, range: (frame.plotLeft, frame.plotRight))
        let y = LogScale(decades: decades, range: (frame.plotBottom, frame.plotTop))
        frame.xAxis(&svg, scale: x, label: "wire size, bytes (log scale)")
        frame.yAxis(&svg, scale: y, label: "\(name) estimate, bytes (log scale)")
        let directions = RecordClass.allCases.filter { direction in points.contains { $0.direction == direction } }
        svg.legend(
            directions.map { ($0.shortLabel, ChartColor.of($0)) } + [("y = x", ChartColor.axis)],
            x: frame.plotLeft, y: 16)
        svg.line(
            x1: x.position(1), y1: y.position(1), x2: x.position(x.tickMaximum), y2: y.position(y.tickMaximum),
            stroke: ChartColor.axis, width: 1, dash: "5 4")
        if samples.measuredRecords > samples.points.count {
            svg.text(
                "sample: \(TextFormat.bytes(samples.points.count)) of \(TextFormat.bytes(samples.measuredRecords)) records",
                x: frame.plotRight, y: 34, anchor: .end, size: 10, fill: "#555")
        }
        // Requests first, then responses: the later ones are drawn on top.
        for point in points {
            let estimate = point.estimates[estimator]!
            svg.circle(
                cx: x.position(Double(point.wire)), cy: y.position(Double(estimate)), r: 3,
                fill: ChartColor.of(point.direction), opacity: 0.55)
        }
        var note =
            "Each dot is one measured record with a \(name) estimate; an estimate of 0 B sits on the band at the bottom."
        if samples.measuredRecords > samples.points.count {
            note +=
                " Sampled: \(TextFormat.bytes(samples.points.count)) of \(TextFormat.bytes(samples.measuredRecords))"
                + " measured records, drawn uniformly at random with a fixed seed."
        }
        return Chart(
            title: "Per record, \(name): under the line the meter counts too little, above it too much",
            svg: svg.rendered, note: note)
    }
}

extension LogScale {
    /// The highest tick: 10^high.
    var tickMaximum: Double {
        var value = 1.0
        for _ in 0..<max(decades.1, 0) { value *= 10 }
        return value
    }
}
