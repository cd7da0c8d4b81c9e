import Analysis
import Foundation
import XCTest

@testable import Reports

/// report.html without a browser: its bounded chart data, its escaping and its determinism.
/// HTMLReportPageTests (MeterAuditKitTests) loads it in Chromium.
final class HTMLReportTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    func testHistogramBinsAreTenPercentWide() {
        // (estimate - wire) / wire → bin; bin i holds [(i - 10) × 10 %, (i - 9) × 10 %), bin 20 ≥ +100 %.
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 0, wire: 100), 0) // -100 %
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 9, wire: 100), 0) // -91 %
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 10, wire: 100), 1) // -90 %
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 95, wire: 100), 9) // -5 %
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 100, wire: 100), 10) // 0 %
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 199, wire: 100), 19) // +99 %
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 200, wire: 100), 20) // +100 %
        XCTAssertEqual(ChartSamples.histogramBin(estimate: 1_048_576, wire: 260), 20)
        XCTAssertEqual(ChartSamples.histogramBin(estimate: Int.max, wire: 3), 20) // overflow: still the top bin
    }

    func testHistogramOfTheFixture() {
        var samples = ChartSamples(estimatorNames: ReportFixture.estimators)
        for record in ReportFixture.records { samples.add(record) }
        var naiveRequests = Array(repeating: 0, count: 21)
        var naiveResponses = Array(repeating: 0, count: 21)
        var documentedRequests = Array(repeating: 0, count: 21)
        var documentedResponses = Array(repeating: 0, count: 21)
        // Naive: R1, R2, X1 0 of 200 (-100 %), R3 4800 of 5000 (-4 %); S1 800 of 1000 (-20 %),
        // S2 300 of 500 (-40 %), S3 0 of 100 (-100 %), U1 20 of 100 (-80 %).
        naiveRequests[0] = 3
        naiveRequests[9] = 1
        naiveResponses[8] = 1
        naiveResponses[6] = 1
        naiveResponses[0] = 1
        naiveResponses[2] = 1
        // Documented: R1, R2 100 of 200 (-50 %), R3 4950 of 5000 (-1 %), X1 190 of 200 (-5 %);
        // S1 1098 of 1000 (+9.8 %), S2 498 of 500 (-0.4 %), S3 98 of 100 (-2 %); U1 none.
        documentedRequests[5] = 2
        documentedRequests[9] = 2
        documentedResponses[10] = 1
        documentedResponses[9] = 2
        // I1 (interim) and M1 (unmeasured) are left out.
        XCTAssertEqual(samples.histogram[0][0], naiveRequests)
        XCTAssertEqual(samples.histogram[0][1], naiveResponses)
        XCTAssertEqual(samples.histogram[1][0], documentedRequests)
        XCTAssertEqual(samples.histogram[1][1], documentedResponses)
        // 9 measured records (M1 is not): all kept, fewer than the capacity.
        XCTAssertEqual(samples.measuredRecords, 9)
        XCTAssertEqual(samples.points.count, 9)
    }

    func testScatterSampleIsBoundedAndTheSameEveryRun() {
        let record = ReportFixture.records[0]
        func sample() -> ChartSamples {
            var samples = ChartSamples(estimatorNames: ReportFixture.estimators, pointCapacity: 10)
            for index in 0..<1000 {
                var copy = record
                copy.wire.total = index + 1 // tells the points apart
                samples.add(copy)
            }
            return samples
        }
        let first = sample()
        XCTAssertEqual(first.points.count, 10)
        XCTAssertEqual(first.measuredRecords, 1000)
        XCTAssertEqual(first.points, sample().points)
        // Not just the first ten: later records replaced some.
        XCTAssertGreaterThan(first.points.map(\.wire).max()!, 10)
        XCTAssertEqual(Set(first.points.map(\.wire)).count, 10)
    }

    func testTimelineBinsWidenToStayBounded() {
        var timeline = Timeline()
        timeline.add(offset: 0, bytes: 10, direction: .request)
        timeline.add(offset: 1_500_000, bytes: 20, direction: .response) // 1.5 ms: bin 1 of 1 ms
        XCTAssertEqual(timeline.binNanoseconds, 1_000_000)
        // 250 ms needs bins 0...250 of 1 ms: too many (120); 2 ms gives 0...125, still too many;
        // 4 ms gives 0...62.
        timeline.add(offset: 250_000_000, bytes: 30, direction: .request)
        XCTAssertEqual(timeline.binNanoseconds, 4_000_000)
        let series = timeline.series
        XCTAssertEqual(series.count, 63)
        XCTAssertEqual(series[0].sums, Timeline.Sums(up: 10, down: 20)) // 0 and 1.5 ms share [0, 4 ms)
        XCTAssertEqual(series[62].start, 248_000_000)
        XCTAssertEqual(series[62].sums, Timeline.Sums(up: 30, down: 0))
        // Before the origin (a record finished out of order): floor division, bin -1.
        timeline.add(offset: -1, bytes: 5, direction: .response)
        XCTAssertEqual(timeline.series.first?.start, -4_000_000)
        XCTAssertEqual(timeline.series.first?.sums, Timeline.Sums(up: 0, down: 5))
    }

    func testSVGEscapesTextAndAttributes() {
        XCTAssertEqual(
            SVG.escape("<script>alert(1)</script>\"><img src=x onerror='y'>&"),
            "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;")
        var svg = SVG(width: 10, height: 10, label: "a<b")
        svg.text("</text><script>", x: 1, y: 2, tooltip: "\"'")
        XCTAssertEqual(
            svg.rendered,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 10 10\" role=\"img\" font-family=\"system-ui, sans-serif\">"
                + "<title>a&lt;b</title><text x=\"1\" y=\"2\" text-anchor=\"start\" font-size=\"11\" fill=\"#222\">"
                + "<title>&quot;&#39;</title>&lt;/text&gt;&lt;script&gt;</text></svg>")
    }

    func testTemplateTextIsEscapedByByte() {
        let escaping = HTMLByteEscaping()
        XCTAssertEqual(
            escaping.escapeText("<a href=\"x\">Tom & 'Jerry'</a> é"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt; é")
        // A quote that a combining mark follows is one character, and is escaped all the same.
        XCTAssertEqual(escaping.escapeText("\"\u{301}>"), "&quot;\u{301}&gt;")
        XCTAssertEqual(escaping.escapeText("plain text, 12.5 %"), "plain text, 12.5 %")
        XCTAssertEqual(escaping.escapeText(""), "")
    }

    func testTopElementsIsThePrefixOfTheSort() {
        // A fixed pseudo-random sequence with repeated magnitudes, ordered by |value| descending
        // then by value (a strict total order on distinct values).
        var state: UInt64 = 42
        var values: [Int] = []
        for _ in 0..<500 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let candidate = Int(state >> 54) - 512
            if !values.contains(candidate) { values.append(candidate) }
        }
        let precedes = { (a: Int, b: Int) in abs(a) != abs(b) ? abs(a) > abs(b) : a < b }
        for count in [0, 1, 12, 15, values.count, values.count + 3] {
            XCTAssertEqual(
                TopElements.first(count, of: values, by: precedes), Array(values.sorted(by: precedes).prefix(count)))
        }
    }

    func testPageIsDeterministicAndEscapesEndpoints() {
        let run = ReportFixture.run
        let page = HTMLReport.render(run)
        XCTAssertEqual(page, HTMLReport.render(run))
        // The fixture's endpoints, each once in the table (escaped text; none has markup).
        XCTAssertTrue(page.contains("<summary>GET api.test /users/{id}</summary>"))
        XCTAssertTrue(page.contains("<summary>? 10.0.0.2:80 ?</summary>"))
        // Exactly one script, ours, and the policy allowing only it.
        XCTAssertEqual(page.components(separatedBy: "<script").count - 1, 1)
        // (In an attribute, so its quotes are escaped.)
        XCTAssertTrue(page.contains("script-src &#39;sha256-"))
        XCTAssertTrue(page.contains("default-src &#39;none&#39;"))
        // The cost layers have their place and no figures yet.
        XCTAssertTrue(page.contains("id=\"cost-layers\""))
    }

    func testCausesAreThoseOfTheMarkdownReport() {
        let run = ReportFixture.run
        var page = HTMLReport.render(run)
        for (entity, character) in [("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")] {
            page = page.replacingOccurrences(of: entity, with: character)
        }
        let markdown = MarkdownReport.render(run, endpointRows: 50, explainedEndpoints: 50)
        // R3 (POST /upload): documented 4950 of 5000; every cause line report.md gives it is on
        // the page too, without the Markdown list marks.
        let uploadSection = markdown.components(separatedBy: "/upload`\n\n").dropFirst().first ?? ""
        let causeLines = uploadSection.split(separator: "\n").prefix { !$0.hasPrefix("###") }
            .filter { $0.hasPrefix("- ") || $0.hasPrefix("  - ") }
        XCTAssertFalse(causeLines.isEmpty)
        for line in causeLines {
            let text = line.trimmingCharacters(in: .whitespaces).dropFirst(2)
            XCTAssertTrue(page.contains(String(text)), "report.html lacks: \(text)")
        }
    }
}
