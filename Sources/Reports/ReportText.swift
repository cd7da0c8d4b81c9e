import Foundation

/// Fixed number formats of report.md and the terminal summary: the same figures always give
/// the same text. Negative numbers use ASCII `-`; signed figures show `+` when positive.
public enum TextFormat {
    /// Whole bytes with `,` between thousands: `54,425`, `-9,167`.
    public static func bytes(_ value: Int) -> String {
        // By bytes, not by Character: the reports format thousands of figures.
        var grouped: [UInt8] = []
        grouped.reserveCapacity(27)
        appendBytes(value, to: &grouped)
        return String(decoding: grouped, as: UTF8.self)
    }

    /// `bytes(value)`'s text appended to `text`, without a String between.
    static func appendBytes(_ value: Int, to text: inout [UInt8]) {
        withDecimalText(value) { digits in
            if value < 0 { text.append(UInt8(ascii: "-")) }
            appendGrouped(value < 0 ? digits.dropFirst() : digits[...], to: &text)
        }
    }

    /// Whole-number digits with `,` before each group of three from the right.
    private static func appendGrouped(_ digits: some Collection<UInt8>, to text: inout [UInt8]) {
        var left = digits.count
        for digit in digits {
            if left < digits.count && left % 3 == 0 { text.append(UInt8(ascii: ",")) }
            text.append(digit)
            left -= 1
        }
    }

    /// Bytes with their sign: `+7,728`, `-134`, `0`.
    public static func signedBytes(_ value: Int) -> String {
        value > 0 ? "+" + bytes(value) : bytes(value)
    }

    /// A signed percentage with 2 decimals: `+5.42%`, `-16.84%`, `0.00%`; `n/a` when undefined.
    public static func signedPercent(_ value: Double?) -> String {
        guard let value else { return "n/a" }
        let text = fixed(value, decimals: 2)
        return value > 0 && text != "0.00" ? "+" + text + "%" : text + "%"
    }

    /// A ratio (0.0126) as an unsigned percentage with 2 decimals (`1.26%`); `n/a` when undefined.
    public static func ratioPercent(_ value: Double?) -> String {
        guard let value else { return "n/a" }
        return fixed(value * 100, decimals: 2) + "%"
    }

    /// Bytes per record: whole when exact (`-70 B`), else two decimals (`-1.98 B`).
    public static func perRecord(bytes: Int, records: Int) -> String {
        guard records > 0 else { return "n/a" }
        if bytes % records == 0 { return signedBytes(bytes / records) + " B" }
        let text = fixed(Double(bytes) / Double(records), decimals: 2)
        return (bytes > 0 ? "+" : "") + text + " B"
    }

    /// `1 request`, `2 requests`.
    public static func count(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        bytes(value) + " " + (value == 1 ? singular : plural ?? singular + "s")
    }

    /// `value` with `decimals` decimals, thousands grouped, never `-0.00`.
    static func fixed(_ value: Double, decimals: Int) -> String {
        var text = FixedDecimal.format(value, decimals: decimals)
        // The usual case by bytes: a sign, at most 18 whole digits (an Int), the decimals.
        if let grouped = groupedByBytes(text) { return grouped }
        if text.hasPrefix("-"), !text.contains(where: { $0 >= "1" && $0 <= "9" }) { text.removeFirst() }
        let negative = text.hasPrefix("-")
        if negative { text.removeFirst() }
        let parts = text.split(separator: ".", maxSplits: 1)
        let whole = Int(parts[0]).map(bytes) ?? String(parts[0])
        let joined = parts.count > 1 ? whole + "." + parts[1] : whole
        return negative ? "-" + joined : joined
    }

    /// `fixed`'s grouping of `text` (`-1234.50` → `-1,234.50`, `-0.00` → `0.00`), done on its
    /// bytes; nil for text of another shape, which `fixed` treats the slow way.
    private static func groupedByBytes(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            var start = 0
            let negative = bytes.first == UInt8(ascii: "-")
            if negative { start = 1 }
            var point = start
            while point < bytes.count && bytes[point] != UInt8(ascii: ".") {
                guard bytes[point] >= UInt8(ascii: "0") && bytes[point] <= UInt8(ascii: "9") else { return nil }
                point += 1
            }
            let wholeDigits = point - start
            guard wholeDigits > 0, wholeDigits <= 18 else { return nil }
            for index in point..<bytes.count where index > point {
                guard bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") else { return nil }
            }
            // `-0.00` is `0.00`: a minus only before a digit that is not 0.
            let keepsSign = negative && bytes[start...].contains { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }
            var grouped: [UInt8] = []
            grouped.reserveCapacity(bytes.count + wholeDigits / 3 + 1)
            if keepsSign { grouped.append(UInt8(ascii: "-")) }
            // Int(whole) drops leading zeros before grouping: "007" is 7.
            var first = start
            while first < point - 1 && bytes[first] == UInt8(ascii: "0") { first += 1 }
            appendGrouped(bytes[first..<point], to: &grouped)
            grouped.append(contentsOf: bytes[point...])
            return String(decoding: grouped, as: UTF8.self)
        }
    }
}

/// Making text safe in Markdown while keeping it readable in a pager.
public enum MarkdownText {
    /// Control characters as `\xNN`, so that one value stays on one line.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\x" + String(format: "%02X", scalar.value)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || (scalar.value >= 0x80 && scalar.value < 0xA0)
    }

    /// Plain text: characters Markdown would take as emphasis, links, HTML, code or table
    /// syntax are backslash-escaped; a backslash only when what follows would make it an escape.
    public static func inline(_ text: String) -> String {
        let scalars = Array(printable(text).unicodeScalars)
        var result = ""
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "_":
                // Inside a word an underscore cannot emphasize (CommonMark): file_names stay clean.
                let inWord =
                    index > 0 && index + 1 < scalars.count
                    && isWordCharacter(scalars[index - 1]) && isWordCharacter(scalars[index + 1])
                if !inWord { result += "\\" }
            case "*", "`", "<", ">", "[", "]", "|", "#", "~":
                result += "\\"
            case "\\":
                if index + 1 < scalars.count, isASCIIPunctuation(scalars[index + 1]) { result += "\\" }
            default: break
            }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// A code span; `inTable` escapes `|` as GitHub tables need even inside code.
    public static func code(_ text: String, inTable: Bool = false) -> String {
        var body = printable(text)
        if inTable { body = body.replacingOccurrences(of: "|", with: "\\|") }
        var longestRun = 0
        var run = 0
        for character in body {
            run = character == "`" ? run + 1 : 0
            longestRun = max(longestRun, run)
        }
        let fence = String(repeating: "`", count: longestRun + 1)
        let padded = body.hasPrefix("`") || body.hasSuffix("`") || body.isEmpty ? " " + body + " " : body
        return fence + padded + fence
    }

    private static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    private static func isASCIIPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x21...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7E: return true
        default: return false
        }
    }

    /// One table row: `| a | b |`.
    static func row(_ cells: [String]) -> String {
        "| " + cells.joined(separator: " | ") + " |"
    }

    /// A header row and its delimiter row; `right` marks the columns aligned right (numbers).
    static func header(_ titles: [String], right: Set<Int>) -> [String] {
        [row(titles), "|" + titles.indices.map { right.contains($0) ? " ---: |" : " --- |" }.joined()]
    }
}

/// Shortening endpoints for tables.
public enum EndpointText {
    /// The endpoint cut to at most `maxLength` characters: `METHOD host /first/…/last`, dropping
    /// path segments from the middle (the method, the host and the last segment stay); when even
    /// that is too long, the middle of the whole text gives way instead. Shorter endpoints are
    /// returned as they are.
    public static func shortened(_ endpoint: String, maxLength: Int = 60) -> String {
        let characters = Array(endpoint)
        guard characters.count > maxLength else { return endpoint }
        guard maxLength > 1 else { return "…" }
        if let firstSpace = characters.firstIndex(of: " "),
            let lastSpace = characters.lastIndex(of: " "), lastSpace > firstSpace,
            characters.indices.contains(lastSpace + 1), characters[lastSpace + 1] == "/"
        {
            let head = String(characters[...lastSpace]) // "METHOD host "
            let path = characters[(lastSpace + 1)...]
            // "/a/b/c" → ["", "a", "b", "c"]; a trailing slash stays with the last segment.
            var segments = path.split(separator: "/", omittingEmptySubsequences: false).map { String($0) }
            var last = segments.removeLast()
            if last.isEmpty, segments.count > 1 { last = segments.removeLast() + "/" }
            let middle = Array(segments.dropFirst()) // segments between the root and the last
            if !middle.isEmpty {
                for kept in stride(from: middle.count - 1, through: 0, by: -1) {
                    let front = middle.prefix(kept).map { "/" + $0 }.joined()
                    let candidate = head + front + "/…/" + last
                    if candidate.count <= maxLength { return candidate }
                }
            }
        }
        return cutMiddle(characters, maxLength: maxLength)
    }

    /// The first and last characters with `…` between, `maxLength` in all.
    static func cutMiddle(_ characters: [Character], maxLength: Int) -> String {
        let back = (maxLength - 1) / 2
        let front = maxLength - 1 - back
        return String(characters.prefix(front)) + "…" + String(characters.suffix(back))
    }
}
