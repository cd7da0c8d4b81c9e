import CaptureIO
import Foundation
@testable import MeterLog
import XCTest

/// The reader on the fixtures of Tests/Fixtures/meter-log: each bad input gives its diagnostic
/// at its line, and the good lines around it give their entries.
final class MeterLogReaderTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/meter-log")

    static func read(_ name: String, limits: MeterLogLimits = MeterLogLimits()) throws -> MeterLog {
        try MeterLogReader.read(path: fixtures.appendingPathComponent(name).path, limits: limits)
    }

    /// (line, kind) of each diagnostic.
    static func problems(_ log: MeterLog) -> [(Int, MeterLogDiagnostic.Kind)] {
        log.diagnostics.map { ($0.line, $0.kind) }
    }

    static let base: Int64 = 1_795_511_702 * 1_000_000_000 // 2026-11-24T09:15:02Z

    func testEntryIsCompact() {
        XCTAssertEqual(MemoryLayout<MeterEntry>.size, 60)
        XCTAssertEqual(MemoryLayout<MeterEntry>.stride, 64)
    }

    func testWorkedExampleAsJSONLines() throws {
        let log = try Self.read("example.jsonl")
        XCTAssertEqual(log.format, .jsonLines)
        XCTAssertEqual(log.diagnostics, [])
        XCTAssertEqual(log.entries.count, 5)
        let request = log.entries[0]
        XCTAssertEqual(request.direction, .request)
        XCTAssertEqual(request.time, Self.base + 120_000_000)
        XCTAssertEqual(request.bytes, 412)
        XCTAssertEqual(request.lineBytes, 38)
        XCTAssertEqual(request.headersBytes, 374)
        XCTAssertEqual(request.bodyBytes, 0)
        XCTAssertNil(request.status)
        XCTAssertEqual(request.logLine, 1)
        XCTAssertEqual(log.method(of: request), "GET")
        XCTAssertEqual(log.url(of: request).description, "https://api.example.com/v1/items?page=2")
        XCTAssertEqual(log.id(of: request), "task-7")
        XCTAssertEqual(log.meter(of: request), "")
        let response = log.entries[1]
        XCTAssertEqual(response.direction, .response)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.time, Self.base + 318_000_000)
        XCTAssertEqual(log.id(of: response), "task-7")
        // One exchange line: two entries, the status on the response only; the unknown field ignored.
        let (exchangeRequest, exchangeResponse) = (log.entries[2], log.entries[3])
        XCTAssertEqual(exchangeRequest.direction, .request)
        XCTAssertEqual(exchangeResponse.direction, .response)
        XCTAssertEqual(exchangeRequest.time, Self.base + 500_000_000)
        XCTAssertEqual(exchangeResponse.time, Self.base + 500_000_000)
        XCTAssertEqual(exchangeRequest.bytes, 950)
        XCTAssertEqual(exchangeRequest.bodyBytes, 612)
        XCTAssertNil(exchangeRequest.lineBytes)
        XCTAssertEqual(exchangeResponse.bytes, 210)
        XCTAssertNil(exchangeRequest.status)
        XCTAssertEqual(exchangeResponse.status, 202)
        XCTAssertTrue(exchangeRequest.flags.contains(.fromExchange))
        XCTAssertEqual(exchangeRequest.logLine, 3)
        XCTAssertEqual(exchangeResponse.logLine, 3)
        XCTAssertEqual(log.url(of: exchangeRequest).description, "https://api.example.com/v1/~events")
        let other = log.entries[4]
        XCTAssertEqual(log.meter(of: other), "body-only")
        XCTAssertEqual(other.time, Self.base + 1_000_000_000)
        XCTAssertEqual(log.meterNames, ["", "body-only"])
        XCTAssertEqual(log.joinEntries(meter: "").map(\.index), [0, 1, 2, 3])
        XCTAssertEqual(log.joinEntries(meter: "body-only").map(\.index), [4])
    }

    func testCSVGivesTheSameEntriesAsJSONLines() throws {
        let json = try Self.read("example.jsonl")
        let csv = try Self.read("example.csv")
        XCTAssertEqual(csv.format, .csv)
        XCTAssertEqual(csv.diagnostics, [])
        XCTAssertEqual(csv.entries.count, json.entries.count)
        for (a, b) in zip(json.entries, csv.entries) {
            XCTAssertEqual(a.time, b.time)
            XCTAssertEqual(a.bytes, b.bytes)
            XCTAssertEqual([a.lineBytes, a.headersBytes, a.bodyBytes], [b.lineBytes, b.headersBytes, b.bodyBytes])
            XCTAssertEqual(a.status, b.status)
            XCTAssertEqual(a.direction, b.direction)
            XCTAssertEqual(a.flags, b.flags)
            XCTAssertEqual(json.method(of: a), csv.method(of: b))
            XCTAssertEqual(json.url(of: a), csv.url(of: b))
            XCTAssertEqual(json.id(of: a), csv.id(of: b))
            XCTAssertEqual(json.meter(of: a), csv.meter(of: b))
            XCTAssertEqual(a.logLine + 1, b.logLine) // the header is line 1
        }
    }

    func testTinyChunksReadTheSame() throws {
        for name in ["example.jsonl", "example.csv", "broken-json.jsonl", "csv-rows.csv"] {
            let whole = try Self.read(name)
            let chunked = try Self.read(name, limits: MeterLogLimits(chunkBytes: 7))
            XCTAssertEqual(whole.entries, chunked.entries, name)
            XCTAssertEqual(whole.diagnostics, chunked.diagnostics, name)
        }
    }

    func testBrokenJSONLineIsReportedAndTheRestKept() throws {
        let log = try Self.read("broken-json.jsonl")
        XCTAssertEqual(log.entries.map(\.logLine), [1, 3, 6])
        XCTAssertEqual(log.entries.map(\.bytes), [101, 103, 106])
        let problems = Self.problems(log)
        XCTAssertEqual(problems.map(\.0), [2, 4, 5])
        XCTAssertEqual(problems[0].1, .invalidJSON(column: 64, reason: "expected ',' or '}', found '\"'"))
        guard case .invalidJSON(_, let reason) = problems[1].1 else { return XCTFail("\(problems[1])") }
        XCTAssertEqual(reason, "unexpected end of file")
        XCTAssertEqual(problems[2].1, .invalidJSON(column: 1, reason: "a line must hold one JSON object"))
        XCTAssertEqual(
            log.diagnostics[0].description,
            "\(Self.fixtures.path)/broken-json.jsonl:2:64: invalid JSON: expected ',' or '}', found '\"'; line skipped")
        XCTAssertEqual(log.diagnosticCounts, ["meter-log-invalid-json": 3])
    }

    func testCSVWithoutHeaderIsReported() throws {
        let log = try Self.read("no-header.csv")
        XCTAssertEqual(log.format, .csv)
        XCTAssertEqual(log.entries, [])
        XCTAssertEqual(
            Self.problems(log).map(\.0), [1])
        XCTAssertEqual(
            log.diagnostics.first?.kind,
            .missingHeader(reason: "the first line names no known column (time, kind, method, url, bytes, ...)"))
        XCTAssertTrue(log.diagnostics[0].description.contains("no-header.csv:1: CSV meter log without a header row"))
    }

    func testCSVRows() throws {
        let log = try Self.read("csv-rows.csv")
        XCTAssertEqual(log.entries.map(\.logLine), [2, 5])
        XCTAssertEqual(log.url(of: log.entries[0]).query, "a=1,2")
        XCTAssertEqual(
            Self.problems(log).map(\.1),
            [.invalidCSV(reason: "7 fields where the header has 6"), .invalidCSV(reason: "unterminated quoted field")])
        XCTAssertEqual(Self.problems(log).map(\.0), [3, 4])
    }

    func testCSVHeaderWithoutRequiredColumns() throws {
        let path = try temporaryFile("time,method,bytes\n2026-11-24T09:15:01Z,GET,1\n", name: "no-url.csv")
        let log = try MeterLogReader.read(path: path)
        XCTAssertEqual(log.diagnostics.map(\.kind), [.missingHeader(reason: "the header has no `url` column")])
        XCTAssertEqual(log.entries, [])
    }

    func testMissingTimeIsReportedAndTheRestKept() throws {
        let log = try Self.read("missing-time.jsonl")
        XCTAssertEqual(log.entries.map(\.logLine), [1, 4])
        XCTAssertEqual(Self.problems(log).map(\.0), [2, 3])
        XCTAssertEqual(Self.problems(log).map(\.1), [.missingField("time"), .missingField("time")])
    }

    func testTimeOutOfRangeIsReportedAndTheRestKept() throws {
        let log = try Self.read("time-out-of-range.jsonl")
        XCTAssertEqual(log.entries.map(\.logLine), [1, 6])
        XCTAssertEqual(
            Self.problems(log).map(\.1),
            [
                .timeOutOfRange("1795511702120"), .timeOutOfRange("1969-12-31T23:59:59Z"), .timeOutOfRange("-5"),
                .invalidField("time", reason: "has no UTC offset (Z or ±hh:mm)"),
            ])
        XCTAssertEqual(Self.problems(log).map(\.0), [2, 3, 4, 5])
    }

    func testComponentsThatDoNotSumAreReportedAndKept() throws {
        let log = try Self.read("components.jsonl")
        XCTAssertEqual(log.entries.map(\.logLine), [1, 2, 3, 3, 4])
        XCTAssertEqual(
            Self.problems(log).map(\.1),
            [
                .componentsDoNotSum(bytes: 1000, line: 17, headers: 200, body: 700),
                .componentsDoNotSum(bytes: 50, line: 20, headers: 30, body: 1),
            ])
        XCTAssertEqual(Self.problems(log).map(\.0), [2, 3])
        XCTAssertEqual(
            log.entries.map { $0.flags.contains(.componentsDoNotSum) }, [false, true, true, false, false])
        XCTAssertEqual(log.entries[1].bytes, 1000)
        XCTAssertTrue(log.diagnostics.allSatisfy(\.entryKept))
    }

    func testDuplicateIDsAreReportedAndTheEntryKeptWithoutIt() throws {
        let log = try Self.read("duplicate-ids.jsonl")
        XCTAssertEqual(log.entries.count, 5)
        XCTAssertEqual(log.entries.map { log.id(of: $0) }, ["a", "a", nil, "a", "b"])
        XCTAssertEqual(Self.problems(log).map(\.0), [3])
        XCTAssertEqual(Self.problems(log).map(\.1), [.duplicateID("a", firstLine: 1)])
    }

    func testEmptyFilesAreReported() throws {
        for name in ["empty.jsonl", "blank.csv"] {
            let log = try Self.read(name)
            XCTAssertNil(log.format, name)
            XCTAssertEqual(log.entries, [], name)
            XCTAssertEqual(log.diagnostics.map(\.kind), [.emptyFile], name)
            XCTAssertEqual(log.diagnostics.map(\.line), [0], name)
        }
    }

    func testMissingFileThrows() {
        XCTAssertThrowsError(try MeterLogReader.read(path: "/nonexistent/meter.jsonl")) { error in
            guard case MeterLogError.cannotOpen(let path, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/nonexistent/meter.jsonl")
        }
    }

    func testFieldErrors() throws {
        let line = { (fields: String) in
            "{\"time\":\"2026-11-24T09:15:01Z\",\"method\":\"GET\",\"url\":\"https://a.example/x\",\(fields)}\n"
        }
        let text = [
            line("\"kind\":\"request\",\"bytes\":1"),
            line("\"kind\":\"fetch\",\"bytes\":1"),
            line("\"kind\":\"request\",\"bytes\":-1"),
            line("\"kind\":\"request\",\"bytes\":99999999999999999999"),
            line("\"kind\":\"request\""),
            line("\"bytes\":1"),
            line("\"kind\":\"response\",\"bytes\":1,\"status\":42"),
            line("\"kind\":\"request\",\"bytes\":[1]"),
            "{\"time\":1,\"method\":\"GET\",\"url\":\"/relative\",\"kind\":\"request\",\"bytes\":1}\n",
            line("\"kind\":\"request\",\"bytes\":\"7\",\"status\":\"204\",\"line\":true"),
            line("\"kind\":\"Response\",\"bytes\":\"7\",\"status\":\"204\",\"extra\":{\"a\":[1,2]}"),
        ].joined()
        let log = try MeterLogReader.read(path: try temporaryFile(text, name: "fields.jsonl"))
        XCTAssertEqual(log.entries.map(\.logLine), [1, 11])
        XCTAssertEqual(log.entries[1].status, 204)
        let count = "is not a byte count (a non-negative integer)"
        XCTAssertEqual(
            Self.problems(log).map(\.1),
            [
                .invalidField("kind", reason: "is neither request nor response"), .invalidField("bytes", reason: count),
                .invalidField("bytes", reason: count), .missingField("bytes"), .missingField("kind"),
                .invalidField("status", reason: "is not a status code (100...999)"),
                .invalidField("bytes", reason: "is an array"),
                .invalidField("url", reason: "is not an absolute URL (scheme://host/path)"),
                .invalidField("line", reason: "is true, not a value"),
            ])
    }

    func testEpochSeconds() {
        typealias State = MeterLogReader.State
        func ns(_ text: String) -> MeterLogReader.EpochTime { State.epochNanoseconds(Array(text.utf8)) }
        XCTAssertEqual(ns("1795511702"), .nanoseconds(1_795_511_702_000_000_000))
        XCTAssertEqual(ns("1795511702.25"), .nanoseconds(1_795_511_702_250_000_000))
        XCTAssertEqual(ns("1.7955117025e9"), .nanoseconds(1_795_511_702_500_000_000))
        XCTAssertEqual(ns("0.000000001"), .nanoseconds(1))
        XCTAssertEqual(ns("0.0000000009"), .nanoseconds(0))
        XCTAssertEqual(ns("0"), .nanoseconds(0))
        XCTAssertEqual(ns("9223372036.854775807"), .nanoseconds(Int64.max))
        XCTAssertEqual(ns("9223372036.854775808"), .outOfRange)
        XCTAssertEqual(ns("1e30"), .outOfRange)
        XCTAssertEqual(ns("1e-30"), .nanoseconds(0))
        XCTAssertEqual(ns("-1"), .outOfRange)
        XCTAssertEqual(.notADecimal, ns("12:00"))
        XCTAssertEqual(.notADecimal, ns("."))
        XCTAssertEqual(.notADecimal, ns("1e"))
        XCTAssertEqual(.notADecimal, ns(""))
    }

    func testSeveralMetersInOneFile() throws {
        let text = """
            {"time":1,"kind":"request","method":"GET","url":"http://a.example/","bytes":1,"meter":"seed"}
            {"time":2,"kind":"request","method":"GET","url":"http://a.example/","bytes":2,"meter":"body-only"}
            {"time":3,"kind":"request","method":"GET","url":"http://a.example/","bytes":3,"meter":"seed"}

            """
        let log = try MeterLogReader.read(path: try temporaryFile(text, name: "meters.jsonl"))
        XCTAssertEqual(log.meterNames, ["seed", "body-only"])
        XCTAssertEqual(log.joinEntries(meter: "seed").map(\.index), [0, 2])
        XCTAssertEqual(log.joinEntries(meter: "body-only").map(\.time), [2_000_000_000])
        XCTAssertEqual(log.joinEntries(meter: "none"), [])
    }

    /// A line of 1 GiB (a sparse file: no disk used) between two good lines: skipped as it streams,
    /// never held (the most a line held is the limit), and both neighbours kept.
    func testGigabyteLineIsCutOff() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("meterlog-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("huge.jsonl").path
        let first = #"{"time":1,"kind":"request","method":"GET","url":"http://a.example/1","bytes":1}"# + "\n"
        let hugeStart = #"{"time":2,"kind":"request","method":"GET","url":"http://a.example/2","bytes":2,"pad":""#
        let last = "\n" + #"{"time":3,"kind":"request","method":"GET","url":"http://a.example/3","bytes":3}"# + "\n"
        let gigabyte = 1 << 30
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        _ = (first + hugeStart).withCString { write(descriptor, $0, strlen($0)) }
        let hugeEnd = off_t(first.utf8.count + gigabyte)
        XCTAssertEqual(ftruncate(descriptor, hugeEnd), 0) // a hole of zero bytes up to here
        XCTAssertEqual(lseek(descriptor, hugeEnd, SEEK_SET), hugeEnd)
        _ = last.withCString { write(descriptor, $0, strlen($0)) }
        close(descriptor)

        let limits = MeterLogLimits()
        let log = try MeterLogReader.read(path: path, limits: limits)
        XCTAssertEqual(log.entries.map(\.bytes), [1, 3])
        XCTAssertEqual(log.entries.map(\.logLine), [1, 3])
        XCTAssertEqual(Self.problems(log).map(\.0), [2])
        XCTAssertEqual(Self.problems(log).map(\.1), [.lineTooLong(bytes: gigabyte)])
        XCTAssertLessThanOrEqual(log.peakLineBytes, limits.maxLineBytes)
        XCTAssertTrue(
            log.diagnostics[0].description.hasSuffix(
                "huge.jsonl:2: line of 1073741824 bytes is longer than the limit; skipped"))
    }

    func testLineAtTheLimitIsKept() throws {
        let line = #"{"time":1,"kind":"request","method":"GET","url":"http://a.example/1","bytes":1}"#
        let path = try temporaryFile(line + "\r\n" + line + "xx\n" + line, name: "limit.jsonl")
        let log = try MeterLogReader.read(
            path: path, limits: MeterLogLimits(chunkBytes: 5, maxLineBytes: line.utf8.count + 1))
        XCTAssertEqual(log.entries.map(\.logLine), [1, 3])
        XCTAssertEqual(log.diagnostics.map(\.kind), [.lineTooLong(bytes: line.utf8.count + 2)])
    }

    func testDiagnosticsBeyondTheLimitAreCounted() throws {
        let text = String(repeating: "{oops}\n", count: 20)
        let log = try MeterLogReader.read(
            path: try temporaryFile(text, name: "many.jsonl"), limits: MeterLogLimits(maxDiagnostics: 5))
        XCTAssertEqual(log.diagnostics.count, 5)
        XCTAssertEqual(log.diagnosticCounts["meter-log-invalid-json"], 20)
        XCTAssertEqual(log.linesRead, 20)
    }

    func temporaryFile(_ text: String, name: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("meterlog-\(getpid())-\(name)")
        try Data(text.utf8).write(to: url)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }

    /// The fast reading of a JSON Lines line against the tokenizer's, on lines made from a
    /// real one by random cuts, insertions and replacements: when the fast path reads a line it
    /// gives the tokenizer's fields exactly, and it never reads a line the tokenizer refuses.
    func testFlatJSONFieldsAgreeWithTheTokenizer() {
        let simple = Array(
            (#"{"time":"1795511702.5","kind":"response","method":"GET","url":"https://a.example/x?y=1","#
                + #""status":200,"bytes":-0.5e+3,"line":17,"headers":null,"body":"","id":"t-1","#
                + #""meter":"m","time":"again"}"#).utf8)
        let nested = Array(#"{"time":1,"x":[1,{"a":true}],"kind":"request","bytes":0}"#.utf8)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 nulltrue"abc\é"#.utf8) + [0x09]
        var generator = SplitMix(seed: 11)
        var fastRead = 0
        for round in 0..<20_000 {
            var bytes = round % 4 == 3 ? nested : simple
            for _ in 0..<(round == 0 ? 0 : 1 + Int(generator.next() % 3)) {
                let at = Int(generator.next() % UInt64(bytes.count + 1))
                switch generator.next() % 3 {
                case 0: if at < bytes.count { bytes.remove(at: at) }
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                default:
                    if at < bytes.count { bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))] }
                }
            }
            let state = MeterLogReader.State(log: MeterLog(path: "fuzz"), limits: MeterLogLimits())
            let fast = bytes.withUnsafeBytes(MeterLogReader.State.flatJSONFields)
            let slow = try? state.tokenizedJSONFields(bytes, line: 1)
            guard let fast else { continue }
            fastRead += 1
            XCTAssertEqual(fast.values, slow?.values, String(decoding: bytes, as: UTF8.self))
        }
        XCTAssertGreaterThan(fastRead, 1000)
    }
}
