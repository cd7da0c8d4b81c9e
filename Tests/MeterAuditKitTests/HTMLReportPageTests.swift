import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// report.html as a browser sees it: loaded in headless Chromium, it requests nothing, logs
/// nothing, shows endpoints.csv's figures, and shows captured markup as text without running it.
/// Skipped only when Chromium is not installed (scripts/setup installs it).
final class HTMLReportPageTests: XCTestCase {
    private func chromium() throws -> HeadlessChromium {
        guard let chromium = HeadlessChromium() else {
            throw XCTSkip(
                "chromium is not installed (scripts/setup installs it): report.html is not loaded in a browser")
        }
        return chromium
    }

    /// The checks below can fail: a page that logs to the console and loads an image from the
    /// network is caught by both.
    func testTheBrowserChecksCatchConsoleOutputAndRequests() throws {
        let chromium = try chromium()
        let path = NSTemporaryDirectory() + "meteraudit-control-\(UUID().uuidString).html"
        try """
        <!DOCTYPE html><html><head><title>control</title></head><body>
        <img src="http://example.invalid/pixel.png"><script>console.error("control message");</script>
        </body></html>
        """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let load = try chromium.load(path)
        XCTAssertTrue(load.consoleMessages.contains { $0.contains("control message") }, "\(load.consoleMessages)")
        XCTAssertEqual(load.pageRequests, ["http://example.invalid/pixel.png"])
    }

    func testSampleReportLoadsCleanlyAndShowsTheEndpointFigures() throws {
        let chromium = try chromium()
        let out = NSTemporaryDirectory() + "meteraudit-html-samples-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out) }
        _ = try AuditRun(
            inputs: try Fixtures.sampleInputs(), outputDirectory: out, formats: ["endpoints", "html"]
        ).run()
        let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        XCTAssertEqual(Self.externalReferences(html), [], "report.html refers to something outside itself")

        let load = try chromium.load(out + "/report.html")
        XCTAssertEqual(load.consoleMessages, [], "the page wrote to the console")
        XCTAssertEqual(load.pageRequests, [], "the page made network requests")
        // The inline script ran (the Content-Security-Policy let our own script through).
        XCTAssertFalse(load.dom.contains("id=\"table-tools\" hidden"), "the table tools stayed hidden: no script ran")

        // Every row of endpoints.csv, cell by cell, in the page's endpoint table.
        let csv = Self.parseCSV(try String(contentsOfFile: out + "/endpoints.csv", encoding: .utf8))
        let table = try XCTUnwrap(Self.endpointTable(load.dom))
        XCTAssertEqual(table.header, csv[0])
        // The page's cells are read as text, trimmed: an endpoint of unknown method and host
        // (an HTTP/2 capture begun mid-connection) is "  /" in endpoints.csv and "/" there.
        let allRows = csv.dropFirst().map { [$0[0].trimmingCharacters(in: .whitespaces)] + $0.dropFirst() }
        XCTAssertGreaterThan(allRows.count, 100) // 128 endpoints in 252 rows plus the totals, in Samples today
        // The page shows the first `defaultEndpointRows` (100) endpoints of the ranking and the
        // totals: every row of those endpoints, and no other.
        let endpoints = Set(allRows.map { $0[0] }.filter { $0 != "*" })
        let shownEndpoints = Set(table.rows.map { $0[0] }.filter { $0 != "*" })
        XCTAssertEqual(shownEndpoints.count, min(endpoints.count, 100))
        let expected = allRows.filter { shownEndpoints.contains($0[0]) || $0[0] == "*" }
        XCTAssertEqual(table.rows.count, expected.count)
        var byKey: [String: [String]] = [:]
        for row in table.rows { byKey[row[0] + "\u{0}" + row[1]] = row }
        for row in expected {
            guard let shown = byKey[row[0] + "\u{0}" + row[1]] else {
                XCTFail("endpoint \(row[0]) \(row[1]) is missing from report.html")
                continue
            }
            for (column, value) in row.enumerated() where shown[column] != value {
                XCTFail(
                    "\(row[0]) \(row[1]) \(csv[0][column]): report.html shows \(shown[column]), endpoints.csv \(value)")
            }
        }
    }

    func testCapturedMarkupIsShownAsTextAndNeverRuns() throws {
        let chromium = try chromium()
        let work = NSTemporaryDirectory() + "meteraudit-html-xss-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Each payload, if it ran, would change the title or add an element the dump shows.
        let path = "/a<script>document.title='PATH1'</script>/\"><img/src=x/onerror=document.title='PATH2'>"
        let host = "<script>document.title='host1'</script>\"><img src=x onerror=\"document.title='host2'\">"
        var conversation = Conversation()
        conversation.handshake()
        conversation.send(.client, "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        conversation.send(.server, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        conversation.close()
        let capture = work + "/xss.pcap"
        try Data(conversation.pcap()).write(to: URL(fileURLWithPath: capture))
        _ = try AuditRun(inputs: [capture], outputDirectory: work, formats: ["endpoints", "html"]).run()

        let html = try String(contentsOfFile: work + "/report.html", encoding: .utf8)
        XCTAssertEqual(html.components(separatedBy: "<script").count - 1, 1, "only the page's own script")
        XCTAssertFalse(html.contains("<img"))
        XCTAssertEqual(Self.externalReferences(html), [])
        // The endpoint as endpoints.csv has it: method, host lowercased, path.
        let csv = Self.parseCSV(try String(contentsOfFile: work + "/endpoints.csv", encoding: .utf8))
        let endpoint = "GET " + host.lowercased() + " " + path
        XCTAssertEqual(csv[1][0], endpoint)

        let load = try chromium.load(work + "/report.html")
        XCTAssertEqual(Self.firstMatch("<title>(.*?)</title>", in: load.dom), "MeterAudit report")
        XCTAssertFalse(load.dom.contains("<img"), "an element was injected")
        XCTAssertEqual(load.consoleMessages, [])
        XCTAssertEqual(load.pageRequests, [])
        // Shown as text in the table, both directions.
        let table = try XCTUnwrap(Self.endpointTable(load.dom))
        XCTAssertEqual(table.rows.filter { $0[0] == endpoint }.map { $0[1] }, ["request", "response"])
    }

    // MARK: - Reading the page

    /// `src`/`href` attribute values that are not `#fragment` or `data:` (none may load
    /// anything). Attributes are looked for inside tags only: escaped text shows `&lt;`.
    static func externalReferences(_ html: String) -> [String] {
        let attribute = try! NSRegularExpression(
            pattern: "\\s(?:src|href|xlink:href)\\s*=\\s*(\"[^\"]*\"|'[^']*'|[^\\s>]+)", options: [.caseInsensitive])
        return matches("(<[A-Za-z][^>]*>)", in: html).flatMap { tag in
            attribute.matches(in: tag, range: NSRange(tag.startIndex..., in: tag)).compactMap { match -> String? in
                var value = String(tag[Range(match.range(at: 1), in: tag)!])
                if value.hasPrefix("\"") || value.hasPrefix("'") { value = String(value.dropFirst().dropLast()) }
                return value.hasPrefix("#") || value.hasPrefix("data:") ? nil : value
            }
        }
    }

    /// The endpoint table's column titles and its rows (body, then foot), as text; the
    /// endpoint cell's text is its `<summary>`.
    static func endpointTable(_ dom: String) -> (header: [String], rows: [[String]])? {
        guard let start = dom.range(of: "id=\"endpoint-table\""),
            let end = dom.range(of: "</table>", range: start.upperBound..<dom.endIndex)
        else { return nil }
        let table = String(dom[start.upperBound..<end.lowerBound])
        let rows = matches("<tr[^>]*>(.*?)</tr>", in: table)
        guard rows.count >= 2 else { return nil }
        let header = matches("<th[^>]*>(.*?)</th>", in: rows[1]).map(text)
        let body = rows.dropFirst(2).map { row in
            matches("<td[^>]*>(.*?)</td>", in: row).map { cell in
                text(firstMatch("<summary>(.*?)</summary>", in: cell) ?? cell)
            }
        }
        return (header, Array(body))
    }

    /// Markup stripped, entities decoded.
    static func text(_ html: String) -> String {
        var text = html.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
        for (entity, character) in [
            ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&nbsp;", "\u{A0}"), ("&amp;", "&"),
        ] {
            text = text.replacingOccurrences(of: entity, with: character)
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        }
    }

    static func firstMatch(_ pattern: String, in text: String) -> String? { matches(pattern, in: text).first }

    /// RFC 4180: quoted fields may hold commas, quotes (doubled) and line breaks.
    static func parseCSV(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        field.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"": quoted = true
            case ",":
                row.append(field)
                field = ""
            case "\r\n", "\n", "\r":
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            default: field.append(character)
            }
        }
        if !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }
}
