/// The layout every chart shares: a plot area inside margins, an x axis under it and a y axis
/// on its left, each with ticks, grid lines and a label naming the unit.
struct ChartFrame {
    var width: Double
    var height: Double
    var left: Double = 70
    var right: Double = 20
    var top: Double = 34
    var bottom: Double = 48

    /// The frame of a chart with one labeled row per endpoint: the label column on the left,
    /// the legend above.
    static func endpointRows(_ count: Int, rowHeight: Double) -> ChartFrame {
        var frame = ChartFrame(width: 900, height: 0)
        frame.left = 330
        frame.right = 30
        frame.top = 40
        frame.height = frame.top + frame.bottom + rowHeight * Double(max(count, 1))
        return frame
    }

    var plotLeft: Double { left }
    var plotRight: Double { width - right }
    var plotTop: Double { top }
    var plotBottom: Double { height - bottom }

    /// Draws an x axis with `scale`'s ticks and `label` under it.
    func xAxis(_ svg: inout SVG, scale: some ChartScale, label: String, grid: Bool = true) {
        svg.line(x1: plotLeft, y1: plotBottom, x2: plotRight, y2: plotBottom, stroke: ChartColor.axis)
        for tick in scale.ticks {
            let x = scale.position(tick.value)
            if grid { svg.line(x1: x, y1: plotTop, x2: x, y2: plotBottom, stroke: ChartColor.grid) }
            svg.line(x1: x, y1: plotBottom, x2: x, y2: plotBottom + 4, stroke: ChartColor.axis)
            svg.text(tick.label, x: x, y: plotBottom + 16, anchor: .middle, size: 10)
        }
        svg.text(label, x: (plotLeft + plotRight) / 2, y: height - 10, anchor: .middle, size: 11, weight: "600")
    }

    /// Draws a y axis with `scale`'s ticks and `label` beside it, turned.
    func yAxis(_ svg: inout SVG, scale: some ChartScale, label: String, grid: Bool = true) {
        svg.line(x1: plotLeft, y1: plotTop, x2: plotLeft, y2: plotBottom, stroke: ChartColor.axis)
        for tick in scale.ticks {
            let y = scale.position(tick.value)
            if grid { svg.line(x1: plotLeft, y1: y, x2: plotRight, y2: y, stroke: ChartColor.grid) }
            svg.line(x1: plotLeft - 4, y1: y, x2: plotLeft, y2: y, stroke: ChartColor.axis)
            svg.text(tick.label, x: plotLeft - 6, y: y + 3.5, anchor: .end, size: 10)
        }
        let middle = (plotTop + plotBottom) / 2
        svg.text(label, x: 14, y: middle, anchor: .middle, size: 11, weight: "600", rotate: -90)
    }
}

/// One drawn chart: what to read from it (the heading), the SVG, and a note under it (what
/// was sampled or left out), all plain text but the SVG, which escapes its own values.
struct Chart {
    var title: String
    var svg: String
    var note: String?
}

/// The first `count` elements of a sort, without sorting the rest: the charts show a dozen
/// endpoint rows out of thousands. The order must be strict and total (no two elements
/// equivalent), so the result is the prefix of the full sort.
enum TopElements {
    static func first<Element>(
        _ count: Int, of elements: [Element], by precedes: (Element, Element) -> Bool
    ) -> [Element] {
        var best: [Element] = []
        best.reserveCapacity(count + 1)
        guard count > 0 else { return best }
        for element in elements {
            if best.count == count {
                guard precedes(element, best[count - 1]) else { continue }
                best.removeLast()
            }
            var position = best.count
            while position > 0 && precedes(element, best[position - 1]) { position -= 1 }
            best.insert(element, at: position)
        }
        return best
    }
}
