import Analysis
import Foundation

/// A small SVG builder for report.html's charts. Every text and attribute value goes through
/// `escape`: endpoint paths and hosts come from captured traffic and may carry markup.
/// Coordinates are written with one decimal, so the same chart is always the same bytes.
struct SVG {
    let width: Double
    let height: Double
    /// Describes the chart for screen readers (`<title>` inside the `<svg>`).
    let label: String
    /// The elements' text so far, as UTF-8.
    private var body = ByteText(capacity: 4096)

    init(width: Double, height: Double, label: String) {
        self.width = width
        self.height = height
        self.label = label
    }

    /// `& < > " '` as entities: safe in text content and in quoted attribute values.
    static func escape(_ text: String) -> String {
        // Most texts (numbers, colors, labels) hold none of them: returned as they are.
        let plain = !text.utf8.contains {
            $0 < 0x20 || $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">")
                || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'")
        }
        if plain { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default:
                // Control characters are not allowed in XML text: shown as U+FFFD.
                if character.value < 0x20 && character != "\n" && character != "\t" {
                    escaped += "\u{FFFD}"
                } else {
                    escaped.unicodeScalars.append(character)
                }
            }
        }
        return escaped
    }

    /// A coordinate or length with one decimal (`12.5`, `-3`, never `-0`).
    static func number(_ value: Double) -> String {
        withNumberText(value) { String(decoding: $0, as: UTF8.self) }
    }

    /// `body` of `number`'s text: rounded to one decimal, without it when that is a whole number.
    private static func withNumberText<Result>(
        _ value: Double, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        guard value.isFinite else { return ("0" as StaticString).withUTF8Buffer(body) }
        let rounded = (value * 10).rounded() / 10
        if rounded == rounded.rounded(), let whole = Int(exactly: rounded) { return withDecimalText(whole, body) }
        return FixedDecimal.withText(rounded, decimals: 1, body)
    }

    /// Markup of the builder's own, written as it is.
    private mutating func put(_ markup: StaticString) {
        body.append(markup)
    }

    /// Text from the run, escaped.
    private mutating func put(escaping text: String) {
        var escaped = Self.escape(text)
        escaped.withUTF8 { body.append($0) }
    }

    /// ` name="value"`, the value escaped. Elements are written straight into the body
    /// (the scatter charts have thousands), not assembled from strings first.
    private mutating func attribute(_ name: StaticString, _ value: String) {
        put(" ")
        put(name)
        put(value: value)
    }

    /// `="value"`, the value escaped.
    private mutating func put(value: String) {
        put("=\"")
        put(escaping: value)
        put("\"")
    }

    /// ` name="number"`: a coordinate as `number` writes it, its digits straight into the body
    /// (digits, a point and a minus need no escaping).
    private mutating func attribute(_ name: StaticString, number value: Double) {
        put(" ")
        put(name)
        put("=\"")
        Self.withNumberText(value) { body.append($0) }
        put("\"")
    }

    /// The element's end: a `<title>` child holding `tooltip` (the browser shows it on hover)
    /// and the closing tag `</name>`, or `/>` without a tooltip.
    private mutating func close(_ name: StaticString, tooltip: String?) {
        guard let tooltip else { return put("/>") }
        put("><title>")
        put(escaping: tooltip)
        put("</title></")
        put(name)
        put(">")
    }

    mutating func rect(
        x: Double, y: Double, width: Double, height: Double, fill: String, tooltip: String? = nil,
        extra: [(String, String)] = []
    ) {
        put("<rect")
        attribute("x", number: x)
        attribute("y", number: y)
        attribute("width", number: max(width, 0))
        attribute("height", number: max(height, 0))
        attribute("fill", fill)
        for (name, value) in extra {
            put(" ")
            body.append(name)
            put(value: value)
        }
        close("rect", tooltip: tooltip)
    }

    mutating func line(
        x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1, dash: String? = nil
    ) {
        put("<line")
        attribute("x1", number: x1)
        attribute("y1", number: y1)
        attribute("x2", number: x2)
        attribute("y2", number: y2)
        attribute("stroke", stroke)
        attribute("stroke-width", number: width)
        if let dash { attribute("stroke-dasharray", dash) }
        close("line", tooltip: nil)
    }

    mutating func circle(cx: Double, cy: Double, r: Double, fill: String, opacity: Double = 1, tooltip: String? = nil) {
        put("<circle")
        attribute("cx", number: cx)
        attribute("cy", number: cy)
        attribute("r", number: r)
        attribute("fill", fill)
        if opacity < 1 { attribute("fill-opacity", FixedDecimal.format(opacity, decimals: 2)) }
        close("circle", tooltip: tooltip)
    }

    /// A polyline through `points`.
    mutating func polyline(_ points: [(Double, Double)], stroke: String, width: Double = 1.5) {
        let coordinates = points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
        put("<polyline")
        attribute("points", coordinates)
        attribute("fill", "none")
        attribute("stroke", stroke)
        attribute("stroke-width", number: width)
        close("polyline", tooltip: nil)
    }

    enum Anchor: String { case start, middle, end }

    mutating func text(
        _ content: String, x: Double, y: Double, anchor: Anchor = .start, size: Double = 11,
        weight: String? = nil, fill: String = "#222", rotate: Double? = nil, tooltip: String? = nil
    ) {
        put("<text")
        attribute("x", number: x)
        attribute("y", number: y)
        attribute("text-anchor", anchor.rawValue)
        attribute("font-size", number: size)
        attribute("fill", fill)
        if let weight { attribute("font-weight", weight) }
        if let rotate {
            attribute("transform", "rotate(\(Self.number(rotate)) \(Self.number(x)) \(Self.number(y)))")
        }
        put(">")
        if let tooltip {
            put("<title>")
            put(escaping: tooltip)
            put("</title>")
        }
        put(escaping: content)
        put("</text>")
    }

    /// A legend row at (`x`, `y`): a swatch and a label per entry, left to right.
    mutating func legend(_ entries: [(label: String, color: String)], x: Double, y: Double) {
        var position = x
        for entry in entries {
            rect(x: position, y: y - 9, width: 12, height: 10, fill: entry.color)
            text(entry.label, x: position + 16, y: y, size: 11)
            position += 16 + Double(entry.label.count) * 6.2 + 18
        }
    }

    /// The `<svg>` element, sized by its viewBox so it scales to the page's width.
    var rendered: String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Self.number(width)) \(Self.number(height))\""
            + " role=\"img\" font-family=\"system-ui, sans-serif\">"
            + "<title>\(Self.escape(label))</title>" + body.withBytes { String(decoding: $0, as: UTF8.self) } + "</svg>"
    }
}

/// The colors of report.html: one per direction, one per component, legible on white and
/// told apart by people with the common color-vision deficiencies (Okabe–Ito palette).
enum ChartColor {
    static let request = "#0072B2"
    static let response = "#E69F00"
    static let interim = "#999999"
    static let line = "#56B4E9"
    static let headers = "#CC79A7"
    static let body = "#009E73"
    static let under = "#D55E00"
    static let over = "#0072B2"
    static let axis = "#444444"
    static let grid = "#E3E3E3"

    static func of(_ direction: RecordClass) -> String {
        switch direction {
        case .request: return request
        case .response: return response
        case .interim: return interim
        }
    }
}

extension RecordClass {
    /// The legend's name for a direction.
    var chartLabel: String {
        switch self {
        case .request: return "requests (up)"
        case .response: return "responses (down)"
        case .interim: return "interim 1xx"
        }
    }

    /// The legend's name where room is short.
    var shortLabel: String {
        switch self {
        case .request: return "requests"
        case .response: return "responses"
        case .interim: return "1xx"
        }
    }
}
