import Analysis
import Foundation

/// Bytes on the wire over capture time, up and down: when the traffic happened, from
/// `ChartSamples`' fixed bins (time since the first message of each input; several inputs
/// are overlaid on one axis).
enum TimelineChart {
    static func chart(_ samples: ChartSamples) -> Chart {
        let series = samples.timeline.series
        let frame = ChartFrame(width: 900, height: 280)
        var svg = SVG(width: frame.width, height: frame.height, label: "Bytes over capture time per direction")
        svg.legend(
            [("requests (up)", ChartColor.request), ("responses and 1xx (down)", ChartColor.response)],
            x: frame.plotLeft, y: 16)
        let binSeconds = Double(samples.timeline.binNanoseconds) / 1e9
        let start = Double(series.first?.start ?? 0) / 1e9
        let end = Double(series.last.map { $0.start + samples.timeline.binNanoseconds } ?? 1_000_000_000) / 1e9
        let x = LinearScale(
            domain: LinearScale.nice(min(start, 0), max(end, binSeconds)), range: (frame.plotLeft, frame.plotRight),
            format: Self.seconds)
        let highest = series.map { max($0.sums.up, $0.sums.down) }.max() ?? 0
        let y = LinearScale(
            domain: LinearScale.nice(0, Double(max(highest, 1))), range: (frame.plotBottom, frame.plotTop))
        frame.xAxis(&svg, scale: x, label: "time since the input's first message, seconds")
        frame.yAxis(&svg, scale: y, label: "bytes per \(Self.seconds(binSeconds)) s")
        for (direction, color) in [(RecordClass.request, ChartColor.request), (.response, ChartColor.response)] {
            // A step line: each bin's value held over its width.
            var points: [(Double, Double)] = []
            for bin in series {
                let value = Double(direction == .request ? bin.sums.up : bin.sums.down)
                let left = x.position(Double(bin.start) / 1e9)
                let right = x.position(Double(bin.start) / 1e9 + binSeconds)
                points.append((left, y.position(value)))
                points.append((right, y.position(value)))
            }
            if !points.isEmpty { svg.polyline(points, stroke: color) }
        }
        if series.isEmpty {
            svg.text(
                "no record has a time", x: (frame.plotLeft + frame.plotRight) / 2, y: frame.plotTop + 20,
                anchor: .middle)
        }
        var note =
            "Wire bytes of measured records summed in \(Self.seconds(binSeconds)) s bins by the time of their first"
            + " byte (at most \(ChartSamples.timeBins) bins; they widen as the capture gets longer)."
        if samples.timedInputs > 1 {
            note += " The \(samples.timedInputs) inputs are overlaid, each from its own first message."
        }
        if samples.untimedRecords > 0 {
            note += " \(TextFormat.count(samples.untimedRecords, "record")) without a time left out."
        }
        return Chart(
            title: "When the bytes went over the wire, up and down", svg: svg.rendered, note: note)
    }

    /// Seconds with as few decimals as needed, up to milliseconds: `0.001`, `0.25`, `12`.
    static func seconds(_ value: Double) -> String {
        var text = FixedDecimal.format(value, decimals: 3)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
