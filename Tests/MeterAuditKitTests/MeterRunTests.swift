import Analysis
import Estimation
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// `--meter-log` in a run (docs/METER-LOG.md, "In a run"): on Samples/meter-app.*, each entry
/// joins the record its tag names, read from the ground truth (meter-app.tags.jsonl) and the
/// logs' own `tag` fields, never from the join's code.
final class MeterRunTests: XCTestCase {
    static let meters = ["seed001": "meter-app.meter.jsonl", "bodyonly": "meter-app.bodyonly.meter.jsonl"]

    struct Tag: Decodable {
        var tag: String
        var on_wire: Bool
        var in_meter: Bool
        var meter_entries: [String: Int]
    }

    static func tags() throws -> [String: Tag] {
        let text = try String(contentsOfFile: Fixtures.sample("meter-app.tags.jsonl"), encoding: .utf8)
        var tags: [String: Tag] = [:]
        for line in text.split(separator: "\n") {
            let tag = try JSONDecoder().decode(Tag.self, from: Data(line.utf8))
            tags[tag.tag] = tag
        }
        return tags
    }

    /// A log's lines as JSON objects, by line number (1-based).
    static func logLines(_ path: String) throws -> [Int: [String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines: [Int: [String: Any]] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.isEmpty {
            lines[index + 1] = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
        return lines
    }

    /// The tag a wire record carries: its query's `tag` parameter.
    static func tag(ofQuery query: String) -> String? {
        for part in query.split(separator: "&") where part.hasPrefix("tag=") { return String(part.dropFirst(4)) }
        return nil
    }

    struct Run {
        var directory: String
        var header: [String]
        var rows: [[String]]
        var result: AuditRun.Result

        func column(_ name: String) -> Int { header.firstIndex(of: name)! }
        func values(_ name: String) -> [String] { rows.map { $0[column(name)] } }
        func json(_ file: String) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory + "/" + file)))
                as! [String: Any]
        }
    }

    static func run(
        inputs: [String] = [Fixtures.sample("meter-app.pcap")], meterLogs: [MeterLogSource], offset: Double? = nil
    ) throws -> Run {
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample("meter-app.keys")])
        options.meterLogs = meterLogs
        options.meterClockOffset = offset
        let directory = NSTemporaryDirectory() + "meter-run-\(UUID().uuidString)"
        let result = try AuditRun(inputs: inputs, outputDirectory: directory, options: options).run()
        let csv = EndpointFiguresTests.parseCSV(
            try Data(contentsOf: URL(fileURLWithPath: directory + "/messages.csv")))
        return Run(directory: directory, header: csv[0], rows: Array(csv.dropFirst()), result: result)
    }

    static func bothMeters() -> [MeterLogSource] {
        meters.values.sorted().map { MeterLogSource(path: Fixtures.sample($0)) }
    }

    func testEachEntryJoinsTheRecordItsTagNames() throws {
        let tags = try Self.tags()
        let run = try Self.run(meterLogs: Self.bothMeters())
        XCTAssertEqual(run.rows.count, 40, "20 requests and 20 responses on the wire (docs/SAMPLES.md)")
        for (meter, file) in Self.meters {
            let lines = try Self.logLines(Fixtures.sample(file))
            var used = Set<Int>()
            for row in run.rows {
                let tag = try XCTUnwrap(Self.tag(ofQuery: row[run.column("query")]), "record without tag")
                let cell = row[run.column("meter_\(meter)_line")]
                guard let line = Int(cell) else {
                    XCTAssertFalse(tags[tag]?.in_meter ?? false, "\(meter): \(tag) is metered but joined nothing")
                    continue
                }
                let entry = try XCTUnwrap(lines[line])
                XCTAssertEqual(entry["tag"] as? String, tag, "\(meter): line \(line)")
                XCTAssertEqual(entry["kind"] as? String, row[run.column("kind")], "\(meter): line \(line)")
                XCTAssertEqual(row[run.column("est_\(meter)")], String(entry["bytes"] as! Int))
                XCTAssertEqual(row[run.column("est_\(meter)_body")], String(entry["body"] as! Int))
                XCTAssertTrue(used.insert(line).inserted, "\(meter): line \(line) joined twice")
            }
            // The entries left over are exactly those of the tags not on the wire.
            let unjoined = lines.keys.filter { !used.contains($0) }.map { lines[$0]!["tag"] as! String }
            var expected: [String] = []
            for tag in tags.values where !tag.on_wire {
                for count in tag.meter_entries.values { expected += Array(repeating: tag.tag, count: count) }
            }
            XCTAssertEqual(unjoined.sorted(), expected.sorted(), meter)
            XCTAssertEqual(Set(unjoined), ["h1-ipv6-literal", "h1-cache-hit", "h1-uncaptured"])
        }
        // Every record on the wire is metered (the truth: every captured message is).
        XCTAssertTrue(tags.values.filter(\.on_wire).allSatisfy(\.in_meter))
        XCTAssertFalse(run.values("est_seed001").contains(""))
    }

    func testCoverageAgainstCountsByHand() throws {
        let run = try Self.run(meterLogs: Self.bothMeters())
        let report = try run.json("report.json")
        let coverage = try XCTUnwrap(report["coverage"] as? [[String: Any]])
        XCTAssertEqual(coverage.map { $0["meter"] as? String }, ["bodyonly", "seed001"])
        let lines = try Self.logLines(Fixtures.sample("meter-app.meter.jsonl"))
        let seed = try XCTUnwrap(coverage.first { $0["meter"] as? String == "seed001" })
        // By hand: 45 entries; 5 of the tags not on the wire (ipv6-literal: request only;
        // cache-hit and uncaptured: request and response).
        let notOnWire = lines.values.filter {
            ["h1-ipv6-literal", "h1-cache-hit", "h1-uncaptured"].contains($0["tag"] as! String)
        }
        let entries = try XCTUnwrap(seed["entries"] as? [String: Int])
        XCTAssertEqual(entries["total"], 45)
        XCTAssertEqual(entries["matched"], 40)
        XCTAssertEqual(entries["unmatched"], 5)
        XCTAssertEqual(notOnWire.count, 5)
        XCTAssertEqual(entries["unmatched_bytes"], notOnWire.reduce(0) { $0 + ($1["bytes"] as! Int) })
        let records = try XCTUnwrap(seed["records"] as? [String: [String: Int]])
        XCTAssertEqual(records["total"]?["records"], 40)
        XCTAssertEqual(records["matched"]?["records"], 40)
        XCTAssertEqual(records["unmatched"]?["records"], 0)
        // Each direction's wire bytes, summed from messages.csv.
        let directions = try XCTUnwrap(seed["directions"] as? [String: [String: [String: Int]]])
        for kind in ["request", "response"] {
            let rows = run.rows.filter { $0[run.column("kind")] == kind }
            let http = rows.reduce(0) { $0 + Int($1[run.column("wire_total")])! }
            let ip = rows.reduce(0) { $0 + Int($1[run.column("wire_ip")])! }
            XCTAssertEqual(directions[kind]?["wire"]?["http_bytes"], http)
            XCTAssertEqual(directions[kind]?["metered"]?["http_bytes"], http)
            XCTAssertEqual(directions[kind]?["wire"]?["ip_bytes"], ip)
            XCTAssertEqual(directions[kind]?["wire"]?["records"], 20)
        }
        // The uncaptured port's host: two entries, no record.
        let hosts = try XCTUnwrap(seed["hosts"] as? [[String: Any]])
        let uncaptured = hosts.filter { $0["host"] as? String == "127.0.0.1:18182" }
        XCTAssertEqual(uncaptured.count, 2)
        for host in uncaptured {
            XCTAssertEqual((host["entries_not_on_wire"] as? [String: Int])?["entries"], 1)
            XCTAssertEqual((host["wire"] as? [String: Int])?["records"], 0)
        }
        let offset = try XCTUnwrap(seed["clock_offset"] as? [String: Any])
        XCTAssertEqual(offset["estimated"] as? Bool, true)
        XCTAssertLessThan(abs(offset["offset_ns"] as! Int), 50_000_000, "the app and tcpdump share one clock")
        // The meter in the figures: its totals are the sums of its column.
        let totals = try XCTUnwrap(report["totals"] as? [String: [String: Any]])
        for kind in ["request", "response"] {
            let estimators = try XCTUnwrap(totals[kind]?["estimators"] as? [String: [String: Any]])
            let sum = run.rows.filter { $0[run.column("kind")] == kind }.reduce(0) {
                $0 + Int($1[run.column("est_seed001")])!
            }
            XCTAssertEqual(estimators["seed001"]?["estimated"] as? Int, sum, kind)
            XCTAssertEqual(estimators["seed001"]?["count"] as? Int, 20, kind)
        }
        XCTAssertTrue(try String(contentsOfFile: run.directory + "/report.md", encoding: .utf8).contains("## Coverage"))
        XCTAssertTrue(
            try String(contentsOfFile: run.directory + "/report.html", encoding: .utf8).contains("id=\"coverage\""))
        XCTAssertTrue(try String(contentsOfFile: run.directory + "/endpoints.csv", encoding: .utf8).contains("seed001"))
    }

    func testRecordWithoutEntryIsNotMetered() throws {
        // A log of the first 10 lines only: the other records get no estimate, never 0.
        let lines = try String(contentsOfFile: Fixtures.sample("meter-app.meter.jsonl"), encoding: .utf8)
            .split(separator: "\n").prefix(10)
        let path = try CaptureFileWriter.temporaryFile(
            named: "partial.jsonl", containing: Array((lines.joined(separator: "\n") + "\n").utf8))
        let run = try Self.run(meterLogs: [MeterLogSource(path: path, name: "part")])
        let estimates = run.values("est_part")
        XCTAssertEqual(estimates.filter { !$0.isEmpty }.count, 10)
        XCTAssertEqual(estimates.filter { $0.isEmpty }.count, 30)
        let diagnostics = try run.json("diagnostics.json")
        let input = try XCTUnwrap((diagnostics["inputs"] as? [[String: Any]])?.first)
        XCTAssertEqual((input["unestimated"] as? [String: [String: Int]])?["part"]?["not-metered"], 30)
        let totals = try XCTUnwrap(run.json("report.json")["totals"] as? [String: [String: Any]])
        let counted = ["request", "response"].map {
            ((totals[$0]?["estimators"] as? [String: [String: Any]])?["part"]?["count"] as? Int) ?? -1
        }
        let unestimated = ["request", "response"].map {
            ((totals[$0]?["estimators"] as? [String: [String: Any]])?["part"]?["unestimated"] as? Int) ?? -1
        }
        XCTAssertEqual(counted.reduce(0, +), 10)
        XCTAssertEqual(unestimated.reduce(0, +), 30)
    }

    func testCostsSayWhatEachMeterSawOfATopEndpoint() throws {
        // A log of the first 11 lines only: of each top endpoint, the meter saw the IP bytes
        // (Σ wire_ip, as Coverage counts them) of the records it has an estimate for, of all
        // the endpoint's requests and responses: sums taken from messages.csv.
        let lines = try String(contentsOfFile: Fixtures.sample("meter-app.meter.jsonl"), encoding: .utf8)
            .split(separator: "\n").prefix(11)
        let path = try CaptureFileWriter.temporaryFile(
            named: "partial.jsonl", containing: Array((lines.joined(separator: "\n") + "\n").utf8))
        let run = try Self.run(meterLogs: [MeterLogSource(path: path, name: "part")])
        let costs = try XCTUnwrap(run.json("report.json")["costs"] as? [String: Any])
        let endpoints = try XCTUnwrap(costs["endpoints"] as? [[String: Any]])
        XCTAssertEqual(endpoints.count, 10)
        var partial = 0
        for endpoint in endpoints {
            let name = try XCTUnwrap(endpoint["endpoint"] as? String)
            let rows = run.rows.filter {
                $0[run.column("endpoint")] == name && ["request", "response"].contains($0[run.column("kind")])
            }
            let wire = rows.reduce(0) { $0 + Int($1[run.column("wire_ip")])! }
            let metered = rows.filter { !$0[run.column("est_part")].isEmpty }.reduce(0) {
                $0 + Int($1[run.column("wire_ip")])!
            }
            let meters = try XCTUnwrap(endpoint["meter_logs"] as? [[String: Any]], name)
            XCTAssertEqual(meters.count, 1)
            XCTAssertEqual(meters[0]["meter"] as? String, "part")
            XCTAssertEqual(meters[0]["layer"] as? String, "ip")
            XCTAssertEqual(meters[0]["wire_bytes"] as? Int, wire, name)
            XCTAssertEqual(meters[0]["metered_bytes"] as? Int, metered, name)
            let share = try XCTUnwrap(meters[0]["share_pct"] as? Double, name)
            XCTAssertEqual(share, 100 * Double(metered) / Double(wire), accuracy: 1e-6, name)
            if metered > 0 && metered < wire { partial += 1 }
        }
        // By hand: GET 127.0.0.1:18180 /page.html, the costliest, is h1-get and h1-redirected,
        // both logged in full (lines 1-2, 9-10): all seen. GET 127.0.0.1:18180 /style.css is
        // h1-etag and its revalidation; line 11 logs h1-etag's request only: part seen.
        XCTAssertEqual(endpoints[0]["endpoint"] as? String, "GET 127.0.0.1:18180 /page.html")
        XCTAssertEqual((endpoints[0]["meter_logs"] as? [[String: Any]])?.first?["share_pct"] as? Double, 100)
        XCTAssertEqual(partial, 1)
        let report = try String(contentsOfFile: run.directory + "/report.md", encoding: .utf8)
        XCTAssertTrue(report.contains("| part saw |"))
        XCTAssertTrue(try String(contentsOfFile: run.directory + "/report.html", encoding: .utf8).contains("part saw"))
    }

    func testGivenOffsetAndShiftedClock() throws {
        // The log's clock 37 s behind: estimated, the offset comes out near +37 s and the
        // pairs are the same; given, the same.
        let text = try String(contentsOfFile: Fixtures.sample("meter-app.meter.jsonl"), encoding: .utf8)
        var shifted: [String] = []
        for line in text.split(separator: "\n") {
            var object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            object["time"] = (object["time"] as! Double) - 37
            shifted.append(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        }
        let path = try CaptureFileWriter.temporaryFile(
            named: "shifted.jsonl", containing: Array((shifted.joined(separator: "\n") + "\n").utf8))
        let reference = try Self.run(meterLogs: [MeterLogSource(path: Fixtures.sample("meter-app.meter.jsonl"))])
        for offset in [nil, 37.0] {
            let run = try Self.run(meterLogs: [MeterLogSource(path: path, name: "seed001")], offset: offset)
            XCTAssertEqual(run.values("meter_seed001_line"), reference.values("meter_seed001_line"))
            let coverage = try XCTUnwrap(run.json("report.json")["coverage"] as? [[String: Any]])
            let clock = try XCTUnwrap(coverage.first?["clock_offset"] as? [String: Any])
            XCTAssertEqual(Double(clock["offset_ns"] as! Int) / 1e9, 37, accuracy: 0.05)
            XCTAssertEqual(clock["estimated"] as? Bool, offset == nil)
        }
    }

    func testMalformedLineIsReportedWithFileAndLineAndTheRestUsed() throws {
        var lines = try String(contentsOfFile: Fixtures.sample("meter-app.meter.jsonl"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        lines.insert("{\"time\": 1795696700.2, \"kind\": \"request\", broken", at: 2)
        let path = try CaptureFileWriter.temporaryFile(
            named: "broken.jsonl", containing: Array((lines.joined(separator: "\n") + "\n").utf8))
        let directory = NSTemporaryDirectory() + "meter-cli-\(UUID().uuidString)"
        let result = try BuiltExecutable.run(
            BuiltExecutable.meteraudit(),
            [
                "analyze", Fixtures.sample("meter-app.pcap"), "--keylog", Fixtures.sample("meter-app.keys"),
                "--meter-log", "app=" + path, "--out", directory, "--quiet",
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("meter log: \(path):3:"), result.stderr)
        XCTAssertTrue(result.stderr.contains("invalid JSON"), result.stderr)
        let diagnostics =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: directory + "/diagnostics.json"))) as! [String: Any]
        let logs = try XCTUnwrap(diagnostics["meter_logs"] as? [[String: Any]])
        XCTAssertEqual((logs.first?["diagnostic_counts"] as? [String: Int])?["meter-log-invalid-json"], 1)
        XCTAssertEqual(logs.first?["entries"] as? Int, 45)
        XCTAssertEqual(logs.first?["meters"] as? [String], ["app"])
        // The rest of the log used: every record joined, the entries after the bad line too.
        let csv = EndpointFiguresTests.parseCSV(
            try Data(contentsOf: URL(fileURLWithPath: directory + "/messages.csv")))
        let column = try XCTUnwrap(csv[0].firstIndex(of: "meter_app_line"))
        let joined = csv.dropFirst().map { $0[column] }
        XCTAssertFalse(joined.contains(""))
        XCTAssertTrue(joined.contains("4"), "the line after the bad one (now line 4) joins")
    }

    /// A meter name that only the log's entries give is known once the log is read (on another
    /// core, while the inputs are analyzed): the run stops all the same, and leaves no file.
    func testEstimatorNameFromTheEntriesStopsTheRunAndLeavesNoFile() throws {
        let text = try String(contentsOfFile: Fixtures.sample("meter-app.meter.jsonl"), encoding: .utf8)
            .replacingOccurrences(of: "\"meter\":\"seed001\"", with: "\"meter\":\"documented\"")
        XCTAssertTrue(text.contains("\"meter\":\"documented\""))
        let path = try CaptureFileWriter.temporaryFile(named: "renamed.jsonl", containing: Array(text.utf8))
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample("meter-app.keys")])
        options.meterLogs = [MeterLogSource(path: path)]
        let directory = NSTemporaryDirectory() + "meter-run-\(UUID().uuidString)"
        XCTAssertThrowsError(
            try AuditRun(inputs: [Fixtures.sample("meter-app.pcap")], outputDirectory: directory, options: options)
                .run()
        ) { error in
            XCTAssertTrue(
                "\(error)".contains("\(path): meter name 'documented' is an estimator's"), "\(error)")
        }
        // Not messages.csv, connections.csv nor messages.csv's scratch file.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [])
    }

    /// A meter log that cannot be read at all (here a directory), or a name given that cannot
    /// name a meter, stops the run before any input is read.
    func testUnreadableLogOrBadNameStopsTheRunBeforeAnyInput() throws {
        for source in [
            MeterLogSource(path: NSTemporaryDirectory()),
            MeterLogSource(path: Fixtures.sample("meter-app.meter.jsonl"), name: "naive"),
            MeterLogSource(path: Fixtures.sample("meter-app.meter.jsonl"), name: "a,b"),
        ] {
            var options = AnalysisOptions()
            options.meterLogs = [source]
            var inputsStarted = 0
            var progress = AuditRun.Progress()
            progress.input = { _, _ in inputsStarted += 1 }
            let directory = NSTemporaryDirectory() + "meter-run-\(UUID().uuidString)"
            XCTAssertThrowsError(
                try AuditRun(inputs: [Fixtures.sample("meter-app.pcap")], outputDirectory: directory, options: options)
                    .run(progress: progress)
            ) { error in
                XCTAssertTrue("\(error)".hasPrefix("--meter-log \(source.path)"), "\(error)")
            }
            XCTAssertEqual(inputsStarted, 0, "\(source)")
        }
    }

    func testMeterLogArguments() throws {
        XCTAssertEqual(MeterLogSource(parsing: "a.jsonl"), MeterLogSource(path: "a.jsonl"))
        XCTAssertEqual(MeterLogSource(parsing: "app=logs/a.jsonl"), MeterLogSource(path: "logs/a.jsonl", name: "app"))
        XCTAssertEqual(MeterLogSource(parsing: "./x=y.jsonl"), MeterLogSource(path: "./x=y.jsonl"))
        XCTAssertEqual(MeterLogSource(path: "/tmp/meter-app.meter.jsonl").stem, "meter-app.meter")
        let executable = try BuiltExecutable.meteraudit()
        let out = NSTemporaryDirectory() + "meter-cli-\(UUID().uuidString)"
        let pcap = Fixtures.sample("meter-app.pcap")
        let log = Fixtures.sample("meter-app.meter.jsonl")
        for arguments in [
            ["analyze", pcap, "--out", out, "--meter-clock-offset", "3"],
            ["analyze", pcap, "--out", out, "--meter-log", log, "--meter-tolerance", "0"],
            ["analyze", pcap, "--out", out, "--meter-log", "=" + log],
            ["analyze", pcap, "--out", out, "--meter-log", "documented=" + log],
            ["analyze", pcap, "--out", out, "--meter-log", "/nonexistent/meter.jsonl"],
        ] {
            let result = try BuiltExecutable.run(executable, arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
        }
        let named = try BuiltExecutable.run(
            executable,
            [
                "analyze", pcap, "--keylog", Fixtures.sample("meter-app.keys"), "--out", out,
                "--meter-log", "mine=" + log, "--meter-clock-offset", "0",
            ])
        XCTAssertEqual(named.status, 0, named.stderr)
        XCTAssertTrue(named.stdout.contains("mine: 40 of 45 entries joined"), named.stdout)
        XCTAssertTrue(named.stdout.contains("(given)"), named.stdout)
    }

    // MARK: A HAR with a meter log of its own (Samples/har-meter-app.*)

    struct HARTag: Decodable {
        var tag: String
        var in_har: Bool
        var in_meter: Bool
        var meter_entries: [String: Int]
    }

    /// The HAR sample's app logged its own meter from the traffic it made; its truth says, per
    /// tag, whether the HAR and the log hold it. Each joined entry is the one its tag names; the
    /// entries and records left are exactly the truth's.
    func testHARSampleEachEntryJoinsTheRecordItsTagNames() throws {
        let text = try String(contentsOfFile: Fixtures.sample("har-meter-app.tags.jsonl"), encoding: .utf8)
        let tags = try text.split(separator: "\n").map { try JSONDecoder().decode(HARTag.self, from: Data($0.utf8)) }
        let log = Fixtures.sample("har-meter-app.meter.jsonl")
        let run = try Self.run(inputs: [Fixtures.sample("har-meter-app.har")], meterLogs: [MeterLogSource(path: log)])
        let lines = try Self.logLines(log)
        // The truth's counts: two records per tag in the HAR, the log's entries per tag.
        XCTAssertEqual(run.rows.count, 2 * tags.filter(\.in_har).count)
        XCTAssertEqual(lines.count, tags.reduce(0) { $0 + $1.meter_entries.values.reduce(0, +) })
        var used = Set<Int>()
        var unmetered: [String] = []
        for row in run.rows {
            let tag = try XCTUnwrap(Self.tag(ofQuery: row[run.column("query")]), "record without tag")
            guard let line = Int(row[run.column("meter_harapp_line")]) else {
                unmetered.append(tag)
                continue
            }
            let entry = try XCTUnwrap(lines[line])
            XCTAssertEqual(entry["tag"] as? String, tag, "line \(line)")
            XCTAssertEqual(entry["kind"] as? String, row[run.column("kind")], "line \(line)")
            XCTAssertEqual(row[run.column("est_harapp")], String(entry["bytes"] as! Int))
            // The app's meter counts the bytes it sent and received: the wire's figures.
            XCTAssertEqual(row[run.column("est_harapp")], row[run.column("wire_total")], tag)
            XCTAssertTrue(used.insert(line).inserted, "line \(line) joined twice")
        }
        let unjoined = lines.keys.filter { !used.contains($0) }.map { lines[$0]!["tag"] as! String }
        var expectedUnjoined: [String] = []
        for tag in tags where !tag.in_har {
            for count in tag.meter_entries.values { expectedUnjoined += Array(repeating: tag.tag, count: count) }
        }
        XCTAssertEqual(unjoined.sorted(), expectedUnjoined.sorted())
        let expectedUnmetered = tags.filter { $0.in_har && !$0.in_meter }.flatMap { [$0.tag, $0.tag] }
        XCTAssertEqual(unmetered.sorted(), expectedUnmetered.sorted())
        XCTAssertFalse(expectedUnjoined.isEmpty)
        XCTAssertFalse(expectedUnmetered.isEmpty)
    }

    // MARK: The documented estimator against the real seed-001 meter

    /// scripts/compare-documented-meter's counts (equal per component and total, and the
    /// causes) against counts made here from the meter log's own entries, found by the tag the
    /// record carries (not through the join), and request and status lines worked out by hand:
    /// the request line from the truth's URL (docs/METERING.md §4.1), the status line from the
    /// capture's bytes (`wire_line` less its CRLF) or `HTTP/2 {status}`.
    func testDocumentedAgainstTheRealMeterByHand() throws {
        guard let python = executable("python3") else { throw XCTSkip("python3 not installed") }
        let run = try Self.run(meterLogs: [MeterLogSource(path: Fixtures.sample("meter-app.meter.jsonl"))])
        let tags = try Self.tags()
        let truth = try String(contentsOfFile: Fixtures.sample("meter-app.tags.jsonl"), encoding: .utf8)
        var urls: [String: String] = [:]
        for line in truth.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            urls[object["tag"] as! String] = object["url"] as? String
        }
        var entries: [String: [String: Any]] = [:] // "tag kind" -> the log's entry
        for entry in try Self.logLines(Fixtures.sample("meter-app.meter.jsonl")).values {
            entries["\(entry["tag"] as! String) \(entry["kind"] as! String)"] = entry
        }
        var equal = ["line": 0, "headers": 0, "body": 0, "total": 0]
        var lineDifferences: [String] = []
        var bodyDifferences: [String] = []
        var compared = 0
        for row in run.rows {
            let tag = try XCTUnwrap(Self.tag(ofQuery: row[run.column("query")]))
            let kind = row[run.column("kind")]
            guard tags[tag]?.in_meter == true, let entry = entries["\(tag) \(kind)"] else { continue }
            compared += 1
            // The documented line by hand.
            let line: Int
            if kind == "request" {
                let url = try XCTUnwrap(URLComponents(string: try XCTUnwrap(urls[tag])))
                let host = (url.host ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                line = "\(host) \(row[run.column("method")]) \(url.path) HTTP/1.1 \(url.query ?? "(null)")\n".utf8.count
            } else if row[run.column("protocol")] == "h2" {
                line = "HTTP/2 \(row[run.column("status")])".utf8.count
            } else {
                line = try XCTUnwrap(Int(row[run.column("wire_line")])) - 2
            }
            XCTAssertEqual(String(line), row[run.column("est_documented_line")], "\(tag) \(kind)")
            let documented = [
                "line": line, "headers": Int(row[run.column("est_documented_headers")])!,
                "body": Int(row[run.column("est_documented_body")])!,
            ]
            for component in ["line", "headers", "body"] {
                if documented[component] == entry[component] as? Int {
                    equal[component]! += 1
                } else if component == "line" {
                    lineDifferences.append("\(tag) \(kind)")
                } else if component == "body" {
                    bodyDifferences.append("\(tag) \(kind)")
                }
            }
            if documented.values.reduce(0, +) == entry["bytes"] as? Int { equal["total"]! += 1 }
        }
        // What the Linux stack does, by hand: HTTP/2 responses reported as HTTP/1.1 (15 B for
        // "HTTP/1.1 200 OK"), nginx's "Moved Temporarily" against the meter's "Found", and the
        // followed redirect's body never handed to the URLProtocol.
        XCTAssertEqual(
            lineDifferences.sorted(),
            ["h1-redirect response", "h2-get response", "h2-json response", "h2-post-json response"])
        XCTAssertEqual(bodyDifferences, ["h1-redirect response"])
        XCTAssertEqual(entries["h2-get response"]?["line"] as? Int, "HTTP/1.1 200 OK".utf8.count)
        XCTAssertEqual(entries["h1-redirect response"]?["line"] as? Int, "HTTP/1.1 302 Found".utf8.count)
        XCTAssertEqual(entries["h1-redirect response"]?["body"] as? Int, 0)
        let messages = run.directory + "/messages.csv"
        let script = Fixtures.root.appendingPathComponent("scripts/compare-documented-meter").path
        let output = try BuiltExecutable.run(URL(fileURLWithPath: python), [script, messages, "--json"])
        XCTAssertEqual(output.status, 0, output.stderr)
        let counts = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(counts["records"] as? Int, compared)
        XCTAssertEqual(counts["equal"] as? [String: Int], equal)
        XCTAssertEqual(
            counts["causes"] as? [String: Int],
            ["line:h2-status-line": 3, "line:reason-phrase": 1, "body:redirect-body-not-delivered": 1])
    }
}
