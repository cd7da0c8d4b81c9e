import Crypto
import Foundation
import Mustache

/// `report.html`: the run as one self-contained page to look at and share: inline style,
/// charts drawn as SVG, the endpoint table (sortable and filterable when scripts run, whole
/// without them). It loads nothing: its Content-Security-Policy allows no request at all, and
/// runs no script but its own, named by hash. The same run always renders the same bytes.
public enum HTMLReport: RunReporter {
    public static let name = "html"
    public static let fileName = "report.html"

    /// Endpoints in the table (every direction of each), largest error first; endpoints.csv
    /// holds them all. Keeps the page quick to open and to send (about 1.3 KB per row).
    public static let defaultEndpointRows = 100

    static let template: MustacheTemplate = {
        // Registered before the template that names it (its first tag) is parsed.
        MustacheContentTypes.register(HTMLByteEscaping(), named: HTMLByteEscaping.name)
        do {
            return try MustacheTemplate(string: HTMLTemplates.page)
        } catch {
            // The template is a constant of this module: a parse error is a bug, caught by any test.
            fatalError("report.html template: \(error)")
        }
    }()

    /// No fetch, frame, font, image or connection of any kind; the inline style, and the
    /// inline script only if it is ours (a script or handler smuggled in by captured text
    /// would not run even if escaping failed).
    static let contentSecurityPolicy: String = {
        let digest = SHA256.hash(data: Array(HTMLTemplates.script.utf8))
        let hash = Data(digest).base64EncodedString()
        return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-\(hash)'; img-src data:;"
            + " base-uri 'none'; form-action 'none'"
    }()

    /// Parses the page's template and hashes its script now (once per process, about 3 ms),
    /// so that a run can do it on a core that is free while reading starts rather than at the
    /// end, where every report waits on the slowest.
    public static func prepare() {
        _ = template
        _ = contentSecurityPolicy
    }

    public static func render(_ run: RunReport) -> String {
        render(run, endpointRows: defaultEndpointRows)
    }

    public static func render(_ run: RunReport, endpointRows: Int) -> String {
        let page = HTMLPage(run, endpointRows: endpointRows, csp: contentSecurityPolicy)
        return template.render(page)
    }
}

/// The page's escaping: `& < > " '` as swift-mustache's HTML content type writes them
/// (`&amp; &lt; &gt; &quot; &#39;`), found by byte instead of by grapheme cluster through a
/// dictionary, which made escaping a sixth of the page's rendering time. Per byte, a
/// character that a combining mark follows is escaped too (the grapheme walk would leave
/// `"` + U+0301 as it is). Text without any of the five is returned as it is.
struct HTMLByteEscaping: MustacheContentType {
    static let name = "HTMLBYTES"

    func escapeText(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.contains(where: Self.needsEscape) else { return nil }
            var escaped: [UInt8] = []
            escaped.reserveCapacity(bytes.count + 32)
            Self.escape(bytes, into: &escaped)
            return String(decoding: escaped, as: UTF8.self)
        } ?? text
    }

    /// `text` escaped, appended to `escaped`: what `escapeText` gives, without a String between.
    static func escape(_ text: String, into escaped: inout [UInt8]) {
        var text = text
        text.withUTF8 { escape($0, into: &escaped) }
    }

    private static func escape(_ bytes: UnsafeBufferPointer<UInt8>, into escaped: inout [UInt8]) {
        guard bytes.contains(where: needsEscape) else {
            escaped.append(contentsOf: bytes)
            return
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "&"): escaped.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): escaped.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): escaped.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): escaped.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): escaped.append(contentsOf: "&#39;".utf8)
            default: escaped.append(byte)
            }
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }
}
