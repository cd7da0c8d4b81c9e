import Analysis
import Foundation

/// Requests per second over capture time for the costliest endpoints ("What costs the user"),
/// a step line each, its findings marked: a runaway's thirds of its span shaded with their
/// counts, a burst's busiest second ringed, a poller's period named at its line's end.
enum RateChart {
    /// Endpoints drawn (the first of the section's rows with a timed request).
    static let endpointsDrawn = 5
    /// Bins at most: a bin is 1 s, or wider (whole seconds) when the capture is longer.
    static let maximumBins = 600
    /// One color per endpoint line (Okabe–Ito, as the other charts).
    static let colors = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00"]

    static func chart(_ section: CostSection) -> Chart {
        let rows = Array(section.rows.filter { $0.rate.requests > 0 }.prefix(endpointsDrawn))
        let frame = ChartFrame(width: 900, height: 300)
        var svg = SVG(width: frame.width, height: frame.height, label: "Requests per second over capture time")
        guard let start = rows.compactMap(\.rate.first).min(), let end = rows.compactMap(\.rate.last).max() else {
            svg.text(
                "no endpoint has a request with a time", x: frame.width / 2, y: frame.height / 2, anchor: .middle)
            return Chart(title: "Requests per second over capture time", svg: svg.rendered, note: nil)
        }
        // Whole-second bins from the first request drawn; wider when there would be too many.
        let seconds = (end - start) / 1_000_000 + 1
        let binSeconds = max((seconds + Int64(maximumBins) - 1) / Int64(maximumBins), 1)
        let bin = binSeconds * 1_000_000
        let binCount = Int((end - start) / bin) + 1
        var series: [[Int]] = []
        for row in rows {
            var counts = Array(repeating: 0, count: binCount)
            for time in row.times { counts[Int((time - start) / bin)] += 1 }
            series.append(counts)
        }
        let highest = series.flatMap { $0 }.max() ?? 0
        let perSecond = { (count: Int) in Double(count) / Double(binSeconds) }
        let x = LinearScale(
            domain: LinearScale.nice(0, Double(Int64(binCount) * binSeconds)), range: (frame.plotLeft, frame.plotRight),
            format: TimelineChart.seconds)
        let y = LinearScale(
            domain: LinearScale.nice(0, max(perSecond(highest), 1)), range: (frame.plotBottom, frame.plotTop))
        frame.xAxis(&svg, scale: x, label: "seconds since the first request drawn")
        frame.yAxis(&svg, scale: y, label: "requests per second")
        let legend = rows.enumerated().map { position, row in
            (
                label: "\(row.place). " + EndpointText.shortened(row.cost.endpoint, maxLength: 44),
                color: colors[position]
            )
        }
        svg.legend(Array(legend.prefix(3)), x: frame.plotLeft, y: 14)
        if legend.count > 3 { svg.legend(Array(legend.dropFirst(3)), x: frame.plotLeft, y: 28) }
        func time(_ microseconds: Int64) -> Double { Double(microseconds - start) / 1e6 }
        for (position, row) in rows.enumerated() {
            let color = colors[position]
            // Runaway: its span's thirds, shaded, each with its count.
            for finding in row.rate.findings {
                guard case .runaway = finding, let first = row.rate.first, let span = row.rate.span,
                    let thirds = row.rate.thirds
                else { continue }
                let counts = [thirds.first, thirds.middle, thirds.last]
                for part in 0..<3 {
                    let left = x.position(time(first + span * Int64(part) / 3))
                    let right = x.position(time(first + span * Int64(part + 1) / 3))
                    svg.rect(
                        x: left, y: frame.plotTop, width: right - left, height: frame.plotBottom - frame.plotTop,
                        fill: color,
                        extra: [("fill-opacity", FixedDecimal.format(0.04 + 0.04 * Double(part), decimals: 2))])
                    svg.text(
                        "\(counts[part])", x: (left + right) / 2, y: frame.plotTop + 12, anchor: .middle, size: 10,
                        fill: color,
                        tooltip: "\(row.cost.endpoint): \(counts[part]) requests in this third of its span")
                }
            }
            var points: [(Double, Double)] = []
            for (index, count) in series[position].enumerated() {
                let left = x.position(Double(Int64(index) * binSeconds))
                let right = x.position(Double(Int64(index + 1) * binSeconds))
                points.append((left, y.position(perSecond(count))))
                points.append((right, y.position(perSecond(count))))
            }
            svg.polyline(points, stroke: color)
            // The findings named where the line ends; a burst's busiest second ringed.
            let label = row.rate.findings.map { RateText.finding($0) }.joined(separator: "; ")
            if !label.isEmpty, let last = row.rate.last {
                let lastBin = Int((last - start) / bin)
                let markX = x.position(Double(Int64(lastBin + 1) * binSeconds))
                let markY = y.position(perSecond(series[position][lastBin]))
                svg.circle(cx: markX, cy: markY, r: 3.5, fill: color, tooltip: "\(row.cost.endpoint): \(label)")
                svg.text(
                    row.rate.findings.map(\.name).joined(separator: ", "), x: min(markX + 5, frame.plotRight - 2),
                    y: markY - 5, anchor: markX + 60 > frame.plotRight ? .end : .start, size: 10, weight: "600",
                    fill: color, tooltip: "\(row.cost.endpoint): \(label)")
            }
            if let busiest = busiestSecond(row.times), row.rate.findings.contains(where: { $0.name == "burst" }) {
                let cx = x.position(time(busiest.start) + 0.5)
                svg.circle(
                    cx: cx, cy: y.position(perSecond(series[position][Int((busiest.start - start) / bin)])), r: 7,
                    fill: color, opacity: 0.35,
                    tooltip: "\(row.cost.endpoint): \(busiest.count) requests in the second from here")
            }
        }
        let note =
            "Requests of each endpoint counted in \(binSeconds) s bins from the first request drawn (at most"
            + " \(maximumBins) bins; wider as the capture gets longer), for the first \(rows.count) endpoints of the"
            + " table that have a request with a time. Runaway: its span's thirds shaded with their requests."
            + " Findings are named at the end of their line."
        return Chart(title: "Requests per second over capture time", svg: svg.rendered, note: note)
    }

    /// The window [t, t + 1 s) starting at a request that holds the most requests, the first such.
    static func busiestSecond(_ times: [Int64]) -> (start: Int64, count: Int)? {
        var best: (start: Int64, count: Int)?
        var end = 0
        for start in times.indices {
            if end < start { end = start }
            while end < times.count && times[end] - times[start] < 1_000_000 { end += 1 }
            if best == nil || end - start > best!.count { best = (times[start], end - start) }
        }
        return best
    }
}
