import Foundation
@testable import MeterLog
import XCTest

/// The join on a synthetic but realistic session: 150 exchanges (300 records) over about two
/// minutes: a polling endpoint every 250-400 ms, bursts of two identical requests 10 ms apart,
/// repeated POSTs to one URL, items, images logged one line per exchange, a token endpoint with
/// a query. Each record and each log line carries a tag (the log's as an unknown field the reader
/// ignores); the pairs are checked against the tags, not against the join's own rules.
final class SyntheticJoinTests: XCTestCase {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    static let start: Int64 = 1_795_511_702 * second

    struct Exchange {
        var method: String
        var url: String
        var status: Int
        var requestTime: Int64
        var responseTime: Int64
        /// The meter's lag behind the wire for each message (its noise), ns.
        var requestNoise: Int64
        var responseNoise: Int64
        /// One log line for the whole exchange (`request_bytes`/`response_bytes`).
        var oneLine: Bool
        var id: String?
    }

    struct Session {
        var exchanges: [Exchange] = []
        var records: [WireRecord] = []
        /// Tag of each record (by index): "x<exchange>-request" / "-response".
        var recordTags: [String] = []
    }

    static func session(seed: UInt64 = 37) -> Session {
        var random = SplitMix(seed: seed)
        func uniform(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &random) }
        var session = Session()
        // Polling from 10 s on, 40 requests 250-400 ms apart, answered in 30-80 ms.
        var time = start + 10 * second
        for _ in 0..<40 {
            time += uniform(250...400) * ms
            session.exchanges.append(
                Exchange(
                    method: "GET", url: "https://api.example.com/v1/poll",
                    status: Bool.random(using: &random) ? 200 : 304,
                    requestTime: time, responseTime: time + uniform(30...80) * ms,
                    requestNoise: uniform(-3...3) * ms, responseNoise: uniform(-3...3) * ms, oneLine: false,
                    id: "poll-\(session.exchanges.count)"))
        }
        // The rest at least 120 ms apart; 10 of them bursts of two identical requests 10 ms apart.
        time = start
        var bursts = 0
        while session.exchanges.count < 150 {
            time += uniform(120...1300) * ms
            let kind = Int.random(in: 0..<10, using: &random)
            let latency = uniform(20...400) * ms
            var exchange = Exchange(
                method: "GET", url: "", status: 200, requestTime: time, responseTime: time + latency,
                requestNoise: uniform(-20...20) * ms, responseNoise: uniform(-20...20) * ms, oneLine: false,
                id: "task-\(session.exchanges.count)")
            if bursts < 10, kind == 0, session.exchanges.count <= 148 {
                bursts += 1
                exchange.url = "https://api.example.com/v1/feed?page=1"
                exchange.requestNoise = uniform(-3...3) * ms
                exchange.responseNoise = uniform(-3...3) * ms
                exchange.responseTime = time + 60 * ms
                var second = exchange
                second.requestTime += 10 * ms
                second.responseTime += 10 * ms
                second.id = "task-\(session.exchanges.count + 1)"
                session.exchanges += [exchange, second]
                continue
            }
            switch kind {
            case 0, 1, 2:
                exchange.url = "https://api.example.com/v1/items/\(Int.random(in: 0..<30, using: &random))"
                exchange.status = [200, 200, 304, 404][Int.random(in: 0..<4, using: &random)]
            case 3, 4:
                exchange.method = "POST"
                exchange.url = "https://api.example.com/v1/events"
                exchange.status = 202
            case 5, 6:
                exchange.url = "https://cdn.example.com/img/\(Int.random(in: 0..<8, using: &random)).png"
                exchange.oneLine = true
                exchange.id = nil
            default:
                exchange.url = "https://auth.example.com/token?client=ios&n=\(Int.random(in: 0..<3, using: &random))"
                exchange.id = nil
            }
            session.exchanges.append(exchange)
        }
        for (number, exchange) in session.exchanges.enumerated() {
            let url = NormalizedURL(exchange.url)!
            session.records.append(
                WireRecord(
                    direction: .request, method: exchange.method, url: url, status: nil, time: exchange.requestTime,
                    exchange: number, index: session.records.count))
            session.recordTags.append("x\(number)-request")
            session.records.append(
                WireRecord(
                    direction: .response, method: exchange.method, url: url, status: exchange.status,
                    time: exchange.responseTime, exchange: number, index: session.records.count))
            session.recordTags.append("x\(number)-response")
        }
        // The capture's records in time order, as a capture gives them; indexes follow.
        let order = session.records.indices.sorted { session.records[$0].time < session.records[$1].time }
        session.records = order.enumerated().map { index, old in
            var record = session.records[old]
            record.index = index
            return record
        }
        session.recordTags = order.map { session.recordTags[$0] }
        return session
    }

    /// A meter log of the session: the meter's clock `shift` ahead of the capture's, `removed`
    /// of the lines left out (seeded), `extra` lines for URLs never sent added. Returns the file's
    /// text and, per line, the tags of its entries by direction (extras: none).
    static func log(
        _ session: Session, shift: Int64, removed: Double = 0, extra: Double = 0, seed: UInt64 = 5
    ) -> (text: String, tags: [[MeterDirection: String]]) {
        var random = SplitMix(seed: seed)
        var lines: [(time: Int64, text: String, tags: [MeterDirection: String])] = []
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        iso.timeZone = TimeZone(secondsFromGMT: 2 * 3600)
        func timeText(_ nanoseconds: Int64, _ number: Int) -> String {
            if number % 3 == 0 {
                return "\"" + iso.string(from: Date(timeIntervalSince1970: Double(nanoseconds) / 1e9)) + "\""
            }
            let fraction = String(nanoseconds % second)
            return "\(nanoseconds / second).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)"
        }
        for (number, exchange) in session.exchanges.enumerated() {
            let requestTime = exchange.requestTime + shift + exchange.requestNoise
            let responseTime = exchange.responseTime + shift + exchange.responseNoise
            let id = exchange.id.map { ",\"id\":\"\($0)\"" } ?? ""
            let common = "\"method\":\"\(exchange.method)\",\"url\":\"\(exchange.url)\""
            if exchange.oneLine {
                lines.append(
                    (
                        requestTime,
                        "{\"time\":\(timeText(requestTime, number)),\(common),\"request_bytes\":300,\"response_bytes\":4000,\"status\":\(exchange.status),\"tag\":\"x\(number)\"}",
                        [.request: "x\(number)-request", .response: "x\(number)-response"]
                    ))
                continue
            }
            lines.append(
                (
                    requestTime,
                    "{\"time\":\(timeText(requestTime, number)),\"kind\":\"request\",\(common),\"bytes\":420,\"line\":40,\"headers\":380,\"body\":0\(id),\"tag\":\"x\(number)-request\"}",
                    [.request: "x\(number)-request"]
                ))
            lines.append(
                (
                    responseTime,
                    "{\"time\":\(timeText(responseTime, number + 1)),\"kind\":\"response\",\(common),\"status\":\(exchange.status),\"bytes\":900\(id),\"tag\":\"x\(number)-response\"}",
                    [.response: "x\(number)-response"]
                ))
        }
        // Left out: the meter missed them.
        let removeCount = Int((Double(lines.count) * removed).rounded())
        var indexes = Array(lines.indices)
        indexes.shuffle(using: &random)
        let gone = Set(indexes.prefix(removeCount))
        lines = lines.indices.filter { !gone.contains($0) }.map { lines[$0] }
        // Extras: cache hits and hosts outside the capture, at times among the others.
        let extraCount = Int((Double(lines.count) * extra).rounded())
        let span = session.exchanges.map(\.responseTime).max()! - start
        for number in 0..<extraCount {
            let time = start + shift + Int64.random(in: 0...span, using: &random)
            let url =
                number % 2 == 0 ? "https://api.example.com/v1/cached/\(number)" : "https://sdk.other.example/collect"
            let kind = number % 3 == 0 ? "response\",\"status\":\"200" : "request"
            lines.append(
                (
                    time,
                    "{\"time\":\(timeText(time, number)),\"kind\":\"\(kind)\",\"method\":\"GET\",\"url\":\"\(url)\",\"bytes\":77}",
                    [:]
                ))
        }
        // A meter writes in its own order: by time, roughly.
        lines.sort { $0.time < $1.time }
        return (lines.map(\.text).joined(separator: "\n") + "\n", lines.map(\.tags))
    }

    /// Reads the log text through the reader and joins it; checks every pair against the tags,
    /// every unmatched entry is an extra and every unmatched record lost its entry.
    /// `numbered`: every entry and record carries a `groupKey` (numbered here, by direction,
    /// method and path), as a run gives them; the pairs are also those of the join by strings.
    func check(
        shift: Int64, removed: Double = 0, extra: Double = 0, numbered: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let session = Self.session()
        let (text, tags) = Self.log(session, shift: shift, removed: removed, extra: extra)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("meterlog-synthetic-\(getpid()).jsonl")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let log = try MeterLogReader.read(path: url.path)
        XCTAssertEqual(log.diagnostics, [], file: file, line: line)
        var entries = log.joinEntries(meter: "")
        var records = session.records
        var result = MeterJoin.join(entries: entries, records: records)
        if numbered {
            var numbers: [String: Int64] = [:]
            func number(_ direction: MeterDirection, _ method: String, _ url: NormalizedURL) -> Int64 {
                let key = "\(direction) \(method) \(url.pathKey)"
                if let known = numbers[key] { return known }
                numbers[key] = Int64(numbers.count)
                return Int64(numbers.count - 1)
            }
            for index in entries.indices {
                entries[index].groupKey = number(entries[index].direction, entries[index].method, entries[index].url)
            }
            for index in records.indices {
                records[index].groupKey = number(records[index].direction, records[index].method, records[index].url)
            }
            XCTAssertGreaterThan(numbers.count, 10, file: file, line: line)
            let byStrings = result
            result = MeterJoin.join(entries: entries, records: records)
            XCTAssertEqual(result, byStrings, file: file, line: line)
        }

        func tag(ofEntry index: Int) -> String? {
            let entry = log.entries[index]
            return tags[Int(entry.logLine) - 1][entry.direction]
        }
        let expectedTags = Set(log.entries.indices.compactMap(tag(ofEntry:)))
        var wrong: [String] = []
        for pair in result.pairs where tag(ofEntry: pair.entry) != session.recordTags[pair.record] {
            wrong.append("\(tag(ofEntry: pair.entry) ?? "extra") → \(session.recordTags[pair.record])")
        }
        XCTAssertEqual(wrong, [], file: file, line: line)
        // Every tagged entry matched; the entries left are the extras; the records left lost their entry.
        XCTAssertEqual(result.pairs.count, expectedTags.count, file: file, line: line)
        XCTAssertTrue(result.unmatchedEntries.allSatisfy { tag(ofEntry: $0) == nil }, file: file, line: line)
        XCTAssertEqual(
            Set(result.unmatchedRecords.map { session.recordTags[$0] }),
            Set(session.recordTags).subtracting(expectedTags), file: file, line: line)
        XCTAssertTrue(result.offset.estimated, file: file, line: line)
        XCTAssertLessThan(
            abs(result.offset.nanoseconds + shift), 30 * Self.ms, "offset \(result.offset)", file: file, line: line)
        XCTAssertLessThan(result.offset.spread, 30 * Self.ms, file: file, line: line)
    }

    func testTheSessionIsWhatItSays() {
        let session = Self.session()
        XCTAssertEqual(session.records.count, 300)
        XCTAssertEqual(session.exchanges.filter { $0.url.hasSuffix("/poll") }.count, 40)
        XCTAssertEqual(session.exchanges.filter { $0.url.hasSuffix("feed?page=1") }.count, 20)
        XCTAssertGreaterThan(session.exchanges.filter { $0.url.hasSuffix("/events") }.count, 5)
        XCTAssertGreaterThan(session.exchanges.filter(\.oneLine).count, 5)
        let (text, tags) = Self.log(session, shift: 0)
        XCTAssertEqual(text.split(separator: "\n").count, tags.count)
    }

    func testUnshifted() throws { try check(shift: 0) }
    func testShiftedBy37Seconds() throws { try check(shift: 37 * Self.second) }
    func testShiftedByMinusTwoHours() throws { try check(shift: -2 * 3600 * Self.second) }
    func testShiftedByNineAndAHalfHours() throws { try check(shift: 9 * 3600 * Self.second + 1800 * Self.second) }

    func testFivePercentOfEntriesRemoved() throws {
        for shift in [37 * Self.second, -2 * 3600 * Self.second, 34_200 * Self.second] {
            try check(shift: shift, removed: 0.05)
        }
    }

    func testTenPercentExtraEntriesForURLsNeverSent() throws {
        for shift in [37 * Self.second, -2 * 3600 * Self.second, 34_200 * Self.second] {
            try check(shift: shift, extra: 0.10)
        }
    }

    func testAllAtOnce() throws {
        try check(shift: -2 * 3600 * Self.second, removed: 0.05, extra: 0.10)
    }

    /// A given offset gives the same pairs as the estimate.
    func testGroupKeysGivenGiveTheSamePairs() throws {
        for shift in [37 * Self.second, -2 * 3600 * Self.second, 34_200 * Self.second] {
            try check(shift: shift, removed: 0.05, extra: 0.1, numbered: true)
        }
    }

    func testGivenOffsetGivesTheSamePairs() throws {
        let session = Self.session()
        let shift = 37 * Self.second
        let (text, _) = Self.log(session, shift: shift)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("meterlog-given-\(getpid()).jsonl")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let entries = try MeterLogReader.read(path: url.path).joinEntries(meter: "")
        let estimated = MeterJoin.join(entries: entries, records: session.records)
        let given = MeterJoin.join(
            entries: entries, records: session.records, options: JoinOptions(clockOffset: -shift))
        XCTAssertEqual(estimated.pairs.map(\.record), given.pairs.map(\.record))
        XCTAssertFalse(given.offset.estimated)
    }
}

extension SyntheticJoinTests {
    /// The check can fail: a wrong offset (off by 300 ms, about one polling period) is caught
    /// by the tags, and the log tells the polling and burst exchanges apart only by time.
    func testTheTagsCatchAWrongOffset() throws {
        let session = Self.session()
        let (text, tags) = Self.log(session, shift: 0, removed: 0.05)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("meterlog-wrong-\(getpid()).jsonl")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let log = try MeterLogReader.read(path: url.path)
        let result = MeterJoin.join(
            entries: log.joinEntries(meter: ""), records: session.records,
            options: JoinOptions(clockOffset: 300 * Self.ms))
        let wrong = result.pairs.filter { pair in
            let entry = log.entries[pair.entry]
            return tags[Int(entry.logLine) - 1][entry.direction] != session.recordTags[pair.record]
        }
        XCTAssertGreaterThan(wrong.count, 10)
        print("pairs \(result.pairs.count), wrong at +300 ms: \(wrong.count)")
    }
}

extension SyntheticJoinTests {
    /// 10,000 requests to 20 URLs (each repeated every ~200 ms) with a 1 h offset: every pair
    /// right (the time printed: about 3 s in a debug build; 50,000 take 0.6 s in release).
    func testTenThousandEntries() {
        var random = SplitMix(seed: 9)
        let urls = (0..<20).map { NormalizedURL("https://api.example.com/v1/poll/\($0)")! }
        var records: [WireRecord] = []
        var entries: [JoinEntry] = []
        var time = Self.start
        let shift = 3600 * Self.second
        for index in 0..<10_000 {
            time += Int64.random(in: 5...15, using: &random) * Self.ms
            let url = urls[index % urls.count]
            records.append(
                WireRecord(
                    direction: .request, method: "GET", url: url, status: nil, time: time, exchange: nil, index: index))
            entries.append(
                JoinEntry(
                    direction: .request, method: "GET", url: url, status: nil,
                    time: time + shift + Int64.random(in: -2...2, using: &random) * Self.ms, pairing: nil, index: index)
            )
        }
        let clock = ContinuousClock()
        var result: JoinResult?
        let elapsed = clock.measure { result = MeterJoin.join(entries: entries, records: records) }
        print("10,000 entries × 10,000 records joined in \(elapsed), \(result!.offset.candidatesTried) offsets tried")
        XCTAssertEqual(result!.pairs.count, 10_000)
        XCTAssertTrue(result!.pairs.allSatisfy { $0.entry == $0.record })
        XCTAssertLessThan(abs(result!.offset.nanoseconds + shift), 3 * Self.ms)
    }
}

extension SyntheticJoinTests {
    /// A log of nothing but one URL every 10 ms, the records 5 s after the entries: the densest
    /// window may sit whole periods off (hundreds of identical pairs fit any offset near the
    /// truth); the hill-climb on the full assignment finds the offset that pairs everything.
    func testOnePollingURLAloneFixesTheOffset() {
        var random = SplitMix(seed: 12)
        let url = NormalizedURL("https://api.example.com/v1/poll")!
        var records: [WireRecord] = []
        var entries: [JoinEntry] = []
        for index in 0..<5_000 {
            let time = Self.start + Int64(index) * 10 * Self.ms
            entries.append(
                JoinEntry(
                    direction: .request, method: "GET", url: url, status: nil, time: time, pairing: nil, index: index))
            records.append(
                WireRecord(
                    direction: .request, method: "GET", url: url, status: nil,
                    time: time + 5 * Self.second + Int64.random(in: -1...1, using: &random) * Self.ms, exchange: nil,
                    index: index))
        }
        let result = MeterJoin.join(entries: entries, records: records)
        XCTAssertEqual(result.pairs.count, 5_000)
        XCTAssertTrue(result.pairs.allSatisfy { $0.entry == $0.record })
        XCTAssertLessThanOrEqual(abs(result.offset.nanoseconds - 5 * Self.second), 1 * Self.ms)
    }
}
