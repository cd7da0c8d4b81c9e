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

    public static func render(_ run: RunReport) -> String {
        render(run, endpointRows: defaultEndpointRows)
    }

    public static func render(_ run: RunReport, endpointRows: Int) -> String {
        let page = HTMLPage(run, endpointRows: endpointRows, csp: contentSecurityPolicy)
        return template.render(page)
    }
}
