import Analysis
import Foundation
import MeterAuditKit
import Reports
import TestSupport
import XCTest

/// The rate figures and findings (docs/FIGURES.md, Rate and findings) on
/// Samples/polling-runaway.pcap, against what this test computes by hand from the client's
/// own log of when it fired each request (Samples/polling-runaway.fires.jsonl, the truth), and
/// on every other sample: no runaway anywhere else.
final class PollingSampleTests: XCTestCase {
    static let line = "GET 127.0.0.1:18095 /api/line/status"
    static let nearby = "GET 127.0.0.1:18095 /api/stops/nearby"
    static let plan = "POST 127.0.0.1:18095 /api/route/plan"
    /// Capture time is not fire time: the packet follows the client's log line by 0.03–0.23 ms
    /// (docs/SAMPLES.md). A duration may differ by two such delays.
    static let toleranceMicroseconds: Int64 = 1000

    /// The fires' times per endpoint, in microseconds, read from the decimal text (no float).
    static func fires() throws -> [String: [Int64]] {
        let text = try String(contentsOfFile: Fixtures.sample("polling-runaway.fires.jsonl"), encoding: .utf8)
        var byEndpoint: [String: [Int64]] = [:]
        for line in text.split(separator: "\n") where !line.isEmpty {
            let object = try XCTUnwrap(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let time = try XCTUnwrap(object["time"] as? String)
            let parts = time.split(separator: ".")
            XCTAssertEqual(parts.count, 2)
            XCTAssertEqual(parts[1].count, 6)
            let microseconds = try XCTUnwrap(Int64(parts[0])) * 1_000_000 + (try XCTUnwrap(Int64(parts[1])))
            byEndpoint[try XCTUnwrap(object["endpoint"] as? String), default: []].append(microseconds)
        }
        return byEndpoint
    }

    /// The figures of FIGURES.md computed the plain way: every window and third counted over
    /// every pair, no shared code with `RateFigures`.
    struct ByHand {
        var n: Int
        var span: Int64
        var perMinute: Double
        var peakPerMinute = 0
        var peakPerSecond = 0
        var median: Int64
        var minimum: Int64
        var thirds: [Int]
        /// Fires within the tolerance of a third's boundary (their third could differ in the capture).
        var nearBoundary = 0

        init(_ unsorted: [Int64]) {
            let t = unsorted.sorted()
            n = t.count
            span = t[n - 1] - t[0]
            perMinute = 60 * Double(n - 1) / (Double(span) / 1e6)
            for start in t {
                peakPerMinute = max(peakPerMinute, t.filter { $0 >= start && $0 < start + 60_000_000 }.count)
                peakPerSecond = max(peakPerSecond, t.filter { $0 >= start && $0 < start + 1_000_000 }.count)
            }
            let intervals = zip(t.dropFirst(), t).map { $0 - $1 }.sorted()
            median = intervals[(intervals.count - 1) / 2] // the lower middle of an even count
            minimum = intervals[0]
            // Boundaries at span/3 from each end, as real numbers.
            let first = Double(t[0]) + Double(span) / 3
            let last = Double(t[n - 1]) - Double(span) / 3
            thirds = [
                t.filter { Double($0) < first }.count,
                t.filter { Double($0) >= first && Double($0) < last }.count,
                t.filter { Double($0) >= last }.count,
            ]
            nearBoundary =
                t.filter {
                    abs(Double($0) - first) < Double(toleranceMicroseconds)
                        || abs(Double($0) - last) < Double(toleranceMicroseconds)
                }.count
        }
    }

    static func aggregate(_ paths: [String], options: AnalysisOptions = AnalysisOptions()) -> Aggregation {
        let analyzer = InputAnalyzer(options: options)
        var aggregation = Aggregation(estimators: options.estimators)
        for path in paths { _ = analyzer.analyze(path: path) { aggregation.add($0) } }
        return aggregation
    }

    func testEachRateFigureIsTheFiresByHand() throws {
        let fires = try Self.fires()
        XCTAssertEqual(Set(fires.keys), [Self.line, Self.nearby, Self.plan])
        XCTAssertEqual(fires.values.map(\.count).reduce(0, +), 139)
        let aggregation = Self.aggregate([Fixtures.sample("polling-runaway.pcap")])
        let tolerance = Self.toleranceMicroseconds
        for (endpoint, times) in fires.sorted(by: { $0.key < $1.key }) {
            let hand = ByHand(times)
            let rate = aggregation.rate(of: endpoint)
            XCTAssertEqual(rate.requests, hand.n, endpoint)
            XCTAssertEqual(rate.untimed, 0, endpoint)
            XCTAssertLessThanOrEqual(abs(try XCTUnwrap(rate.span) - hand.span), tolerance, endpoint)
            XCTAssertEqual(try XCTUnwrap(rate.perMinute), hand.perMinute, accuracy: hand.perMinute * 1e-5, endpoint)
            XCTAssertEqual(rate.peakPerMinute, hand.peakPerMinute, endpoint)
            XCTAssertEqual(rate.peakPerSecond, hand.peakPerSecond, endpoint)
            XCTAssertLessThanOrEqual(abs(try XCTUnwrap(rate.medianInterval) - hand.median), tolerance, endpoint)
            XCTAssertLessThanOrEqual(abs(try XCTUnwrap(rate.minimumInterval) - hand.minimum), tolerance, endpoint)
            XCTAssertEqual(hand.nearBoundary, 0, "\(endpoint): a fire this close to a third's boundary may move")
            let thirds = try XCTUnwrap(rate.thirds)
            XCTAssertEqual([thirds.first, thirds.middle, thirds.last], hand.thirds, endpoint)
        }
        // The figures docs/SAMPLES.md gives for the committed run, from the fires.
        XCTAssertEqual(ByHand(fires[Self.line]!).thirds, [17, 38, 53])
        XCTAssertEqual(ByHand(fires[Self.line]!).peakPerSecond, 4)
        XCTAssertEqual(ByHand(fires[Self.nearby]!).n, 24)
    }

    func testFindingsAreTheExpectedOnes() throws {
        let fires = try Self.fires()
        let aggregation = Self.aggregate([Fixtures.sample("polling-runaway.pcap")])
        // The leaked timers: runaway, with the growth of the thirds counted by hand.
        let line = aggregation.rate(of: Self.line)
        let hand = ByHand(fires[Self.line]!)
        XCTAssertEqual(line.findings.map(\.name), ["runaway"])
        guard case let .runaway(growth, first, last) = line.findings.first else { return XCTFail("no runaway") }
        XCTAssertEqual(first, hand.thirds[0])
        XCTAssertEqual(last, hand.thirds[2])
        XCTAssertEqual(growth, Double(hand.thirds[2]) / Double(hand.thirds[0]), accuracy: 1e-12)
        // The steady timer: polling every 2 s, within 5 % (and within a millisecond of the fires' median).
        let nearby = aggregation.rate(of: Self.nearby)
        XCTAssertEqual(nearby.findings.map(\.name), ["polling"])
        let period = try XCTUnwrap(nearby.pollingPeriod)
        XCTAssertEqual(Double(period), 2_000_000, accuracy: 0.05 * 2_000_000)
        XCTAssertLessThanOrEqual(abs(period - ByHand(fires[Self.nearby]!).median), Self.toleranceMicroseconds)
        // Called by hand: neither.
        XCTAssertEqual(aggregation.rate(of: Self.plan).findings, [])
    }

    /// The run's outputs carry them: endpoints.csv's columns, report.md's section, report.json,
    /// the terminal summary.
    func testReportsCarryTheFindings() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("polling-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try AuditRun(inputs: [Fixtures.sample("polling-runaway.pcap")], outputDirectory: out).run()
        let rows = try EndpointFiguresTests.endpointsCSV(in: out)
        let header = rows[0]
        let findings = try XCTUnwrap(header.firstIndex(of: "findings"))
        let period = try XCTUnwrap(header.firstIndex(of: "polling_period_s"))
        XCTAssertEqual(header.last, "polling_period_s", "the new columns come last")
        func row(_ endpoint: String, _ direction: String) throws -> [String] {
            try XCTUnwrap(rows.first { $0[0] == endpoint && $0[1] == direction })
        }
        XCTAssertEqual(try row(Self.line, "request")[findings], "runaway")
        XCTAssertEqual(try row(Self.line, "response")[findings], "", "rate figures are on the request row only")
        XCTAssertEqual(try row(Self.nearby, "request")[findings], "polling")
        XCTAssertEqual(Double(try row(Self.nearby, "request")[period]) ?? 0, 2, accuracy: 0.1)
        XCTAssertEqual(try row(Self.plan, "request")[findings], "")

        let markdown = try String(contentsOfFile: out + "/report.md", encoding: .utf8)
        let costs = try XCTUnwrap(markdown.range(of: "## What costs the user"))
        let totals = try XCTUnwrap(markdown.range(of: "## Totals"))
        let next = try XCTUnwrap(markdown.range(of: "\n## ", range: totals.upperBound..<markdown.endIndex))
        XCTAssertEqual(next.upperBound, markdown.index(costs.lowerBound, offsetBy: 3), "right after the totals")
        XCTAssertTrue(markdown.contains("runaway ×3.12 (17 → 53 requests per third of its span)"))
        XCTAssertTrue(markdown.contains("polling every 2.000 s"))

        let json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/report.json")))
                as? [String: Any])
        let section = try XCTUnwrap(json["costs"] as? [String: Any])
        let worst = try XCTUnwrap(section["worst_finding"] as? [String: Any])
        XCTAssertEqual(worst["endpoint"] as? String, Self.line)
        XCTAssertEqual((worst["finding"] as? [String: Any])?["name"] as? String, "runaway")
        let top = try XCTUnwrap(section["endpoints"] as? [[String: Any]])
        XCTAssertEqual(top.first?["endpoint"] as? String, Self.line, "the costliest endpoint")

        let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        XCTAssertTrue(html.contains("<h2>What costs the user</h2>"))
        XCTAssertTrue(html.contains("Requests per second over capture time"))

        let summary = Reporters.terminalSummary(result.report)
        XCTAssertTrue(summary.contains("Worst finding: \(Self.line): runaway ×3.12"), summary)
    }

    /// Every other sample, alone and all together (merged, as one run would give them): no
    /// endpoint is runaway; their polling and burst findings are listed (docs/SAMPLES.md judges them).
    func testNoOtherSampleIsRunaway() throws {
        let options = try AnalysisOptions.withSampleKeys()
        let others = try Fixtures.sampleInputs().filter { !$0.hasSuffix("polling-runaway.pcap") }
        XCTAssertGreaterThan(others.count, 20)
        var all = Aggregation(estimators: options.estimators)
        var listed: [String] = []
        for input in others {
            let aggregation = Self.aggregate([input], options: options)
            for key in aggregation.groups.keys where key.direction == .request {
                let rate = aggregation.rate(of: key.endpoint)
                XCTAssertFalse(
                    rate.findings.contains { $0.name == "runaway" }, "\(input): \(key.endpoint) is runaway")
                if !rate.findings.isEmpty {
                    listed.append("\((input as NSString).lastPathComponent): \(key.endpoint): \(rate.findings)")
                }
            }
            all.merge(aggregation)
        }
        all.merge(Self.aggregate([Fixtures.sample("polling-runaway.pcap")]))
        for key in all.groups.keys where key.direction == .request {
            let runaway = all.rate(of: key.endpoint).findings.contains { $0.name == "runaway" }
            XCTAssertEqual(runaway, key.endpoint == Self.line, "\(key.endpoint) in the whole Samples run")
        }
        print("polling and burst findings on the other samples:\n  " + listed.sorted().joined(separator: "\n  "))
    }
}
