import Analysis

/// How the per-record relative error `(estimate − wire) / wire` is distributed, one chart per
/// estimator: 10 % bins from −100 % to +100 % and one for +100 % and more, requests and
/// responses stacked. A meter that is right sits in the middle.
enum HistogramChart {
    static func chart(_ samples: ChartSamples, estimator: Int) -> Chart {
        let name = samples.estimatorNames[estimator]
        let counts = samples.histogram[estimator]
        let bins = ChartSamples.histogramBins
        var frame = ChartFrame(width: 440, height: 300)
        frame.left = 56
        var svg = SVG(width: frame.width, height: frame.height, label: "Relative error of the \(name) estimate")
        svg.legend(
            [(RecordClass.request.chartLabel, ChartColor.request), (RecordClass.response.chartLabel, ChartColor.response)],
            x: frame.plotLeft, y: 16)
        let highest = (0..<bins).map { counts[0][$0] + counts[1][$0] }.max() ?? 0
        let y = LinearScale(
            domain: LinearScale.nice(0, Double(max(highest, 1))), range: (frame.plotBottom, frame.plotTop))
        frame.yAxis(&svg, scale: y, label: "records")
        // The axis runs over the bins: bin i spans [x(i), x(i + 1)).
        let binWidth = (frame.plotRight - frame.plotLeft) / Double(bins)
        svg.line(
            x1: frame.plotLeft, y1: frame.plotBottom, x2: frame.plotRight, y2: frame.plotBottom,
            stroke: ChartColor.axis)
        for edge in stride(from: 0, through: bins - 1, by: 5) {
            let x = frame.plotLeft + Double(edge) * binWidth
            svg.line(x1: x, y1: frame.plotBottom, x2: x, y2: frame.plotBottom + 4, stroke: ChartColor.axis)
            // The +100% edge is the last bin's start: that bin is labeled instead.
            guard edge < bins - 1 else { continue }
            let percent = (edge - 10) * 10
            svg.text(
                percent > 0 ? "+\(percent)%" : "\(percent)%", x: x, y: frame.plotBottom + 16, anchor: .middle,
                size: 10)
        }
        svg.text(
            "≥+100%", x: frame.plotRight + 12, y: frame.plotBottom + 16, anchor: .end, size: 10)
        svg.text(
            "relative error, % of wire size ((estimate - wire) / wire)", x: (frame.plotLeft + frame.plotRight) / 2,
            y: frame.height - 10, anchor: .middle, size: 11, weight: "600")
        for bin in 0..<bins {
            let x = frame.plotLeft + Double(bin) * binWidth
            let range =
                bin == bins - 1 ? "+100% and more" : "\((bin - 10) * 10)% to \((bin - 9) * 10)%"
            var base = 0
            for (side, color) in [(0, ChartColor.request), (1, ChartColor.response)] {
                let count = counts[side][bin]
                guard count > 0 else { continue }
                let top = y.position(Double(base + count))
                let bottom = y.position(Double(base))
                svg.rect(
                    x: x + 1, y: top, width: binWidth - 2, height: bottom - top, fill: color,
                    tooltip: "\(range): \(TextFormat.count(count, side == 0 ? "request" : "response"))")
                base += count
            }
        }
        let zero = frame.plotLeft + 10 * binWidth
        svg.line(x1: zero, y1: frame.plotTop, x2: zero, y2: frame.plotBottom, stroke: ChartColor.axis, dash: "3 3")
        return Chart(
            title: "How far off each record is, \(name): left of 0 under-counted, right of it over-counted",
            svg: svg.rendered,
            note: "Every measured request and response with a \(name) estimate and a wire size above 0, counted in"
                + " 10% bins; the last bin holds everything from +100% up. Interim responses are left out.")
    }
}
