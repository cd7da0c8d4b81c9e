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
    private var body: [String] = []

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
        guard value.isFinite else { return "0" }
        let rounded = (value * 10).rounded() / 10
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        return FixedDecimal.format(rounded, decimals: 1)
    }

    /// ` name="value"`, the value escaped, appended to an element's text: elements are built
    /// in place (thousands of scatter points), not from lists of pairs.
    private static func attribute(_ name: String, _ value: String, to element: inout String) {
        element += " "
        element += name
        element += "=\""
        element += escape(value)
        element += "\""
    }

    /// The element's end: a `<title>` child holding `tooltip` (the browser shows it on hover),
    /// or none.
    private mutating func close(_ element: inout String, name: String, tooltip: String?) {
        if let tooltip {
            element += "><title>"
            element += Self.escape(tooltip)
            element += "</title></"
            element += name
            element += ">"
        } else {
            element += "/>"
        }
        body.append(element)
    }

    mutating func rect(
        x: Double, y: Double, width: Double, height: Double, fill: String, tooltip: String? = nil,
        extra: [(String, String)] = []
    ) {
        var element = "<rect"
        Self.attribute("x", Self.number(x), to: &element)
        Self.attribute("y", Self.number(y), to: &element)
        Self.attribute("width", Self.number(max(width, 0)), to: &element)
        Self.attribute("height", Self.number(max(height, 0)), to: &element)
        Self.attribute("fill", fill, to: &element)
        for (name, value) in extra { Self.attribute(name, value, to: &element) }
        close(&element, name: "rect", tooltip: tooltip)
    }

    mutating func line(
        x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1, dash: String? = nil
    ) {
        var element = "<line"
        Self.attribute("x1", Self.number(x1), to: &element)
        Self.attribute("y1", Self.number(y1), to: &element)
        Self.attribute("x2", Self.number(x2), to: &element)
        Self.attribute("y2", Self.number(y2), to: &element)
        Self.attribute("stroke", stroke, to: &element)
        Self.attribute("stroke-width", Self.number(width), to: &element)
        if let dash { Self.attribute("stroke-dasharray", dash, to: &element) }
        close(&element, name: "line", tooltip: nil)
    }

    mutating func circle(cx: Double, cy: Double, r: Double, fill: String, opacity: Double = 1, tooltip: String? = nil) {
        var element = "<circle"
        Self.attribute("cx", Self.number(cx), to: &element)
        Self.attribute("cy", Self.number(cy), to: &element)
        Self.attribute("r", Self.number(r), to: &element)
        Self.attribute("fill", fill, to: &element)
        if opacity < 1 { Self.attribute("fill-opacity", FixedDecimal.format(opacity, decimals: 2), to: &element) }
        close(&element, name: "circle", tooltip: tooltip)
    }

    /// A polyline through `points`.
    mutating func polyline(_ points: [(Double, Double)], stroke: String, width: Double = 1.5) {
        let coordinates = points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
        var element = "<polyline"
        Self.attribute("points", coordinates, to: &element)
        Self.attribute("fill", "none", to: &element)
        Self.attribute("stroke", stroke, to: &element)
        Self.attribute("stroke-width", Self.number(width), to: &element)
        close(&element, name: "polyline", tooltip: nil)
    }

    enum Anchor: String { case start, middle, end }

    mutating func text(
        _ content: String, x: Double, y: Double, anchor: Anchor = .start, size: Double = 11,
        weight: String? = nil, fill: String = "#222", rotate: Double? = nil, tooltip: String? = nil
    ) {
        var element = "<text"
        Self.attribute("x", Self.number(x), to: &element)
        Self.attribute("y", Self.number(y), to: &element)
        Self.attribute("text-anchor", anchor.rawValue, to: &element)
        Self.attribute("font-size", Self.number(size), to: &element)
        Self.attribute("fill", fill, to: &element)
        if let weight { Self.attribute("font-weight", weight, to: &element) }
        if let rotate {
            Self.attribute(
                "transform", "rotate(\(Self.number(rotate)) \(Self.number(x)) \(Self.number(y)))", to: &element)
        }
        element += ">"
        if let tooltip {
            element += "<title>"
            element += Self.escape(tooltip)
            element += "</title>"
        }
        element += Self.escape(content)
        element += "</text>"
        body.append(element)
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
            + "<title>\(Self.escape(label))</title>" + body.joined() + "</svg>"
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

    static func of(_ direction: Direction) -> String {
        switch direction {
        case .request: return request
        case .response: return response
        case .interim: return interim
        }
    }
}

extension Direction {
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
