import Analysis
import Foundation
import MessageModel
import MeterAuditKit
import TestSupport
import XCTest

/// HPACK bombs (issue 22; fixtures by scripts/make-hpack-bomb-fixtures): small header blocks
/// that index one ~4 KB dynamic-table entry 259 times each, about 1 MiB of fields per block.
/// The run stays under 64 MB of peak RSS, measured on the built `meteraudit` in a child
/// process (GNU time's maximum resident set size: the child's VmHWM at its exit), and every
/// record keeps its exact wire size.
final class HTTP2BombTests: XCTestCase {
    static let limitKiB = 64 * 1024

    /// A request block: 3 static fields, a literal authority (2 + 9 bytes), 259 references.
    static let requestBlock = 3 + 11 + 259
    /// The first one also inserts the entry (a literal of 1 + 7 + 3 + 4,000 bytes) in place of
    /// one reference.
    static let firstRequestBlock = 3 + 11 + 4011 + 258
    static let responseBlock = 1 + 259
    static let firstResponseBlock = 1 + 4011 + 258
    static let fieldBytes = 6 + 4000 + 32

    func peakKiB(_ fixture: String, out: URL) throws -> Int {
        let time = URL(fileURLWithPath: "/usr/bin/time")
        guard FileManager.default.isExecutableFile(atPath: time.path) else { throw XCTSkip("no /usr/bin/time") }
        let binary = try BuiltExecutable.meteraudit()
        let input = Fixtures.root.appendingPathComponent("Tests/Fixtures/hpack-bomb/\(fixture)").path
        let run = try BuiltExecutable.run(
            time, ["-f", "maxrss=%M", binary.path, "analyze", input, "--out", out.path, "--quiet"])
        XCTAssertLessThanOrEqual(run.status, 1, run.stderr)
        let line = try XCTUnwrap(run.stderr.split(separator: "\n").last { $0.hasPrefix("maxrss=") })
        return try XCTUnwrap(Int(line.dropFirst("maxrss=".count)))
    }

    func records(_ fixture: String) throws -> [MessageRecord] {
        var records: [MessageRecord] = []
        let diagnostics = InputAnalyzer(options: AnalysisOptions()).analyze(
            path: Fixtures.root.appendingPathComponent("Tests/Fixtures/hpack-bomb/\(fixture)").path,
            connection: { _ in }
        ) { records.append($0) }
        XCTAssertNil(diagnostics.error)
        return records
    }

    func testEveryBombStaysUnder64MBPeakRSS() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hpack-bomb-\(getpid())")
        defer { try? FileManager.default.removeItem(at: out) }
        var figures: [String] = []
        for fixture in ["bomb.pcap.gz", "bomb-open.pcap.gz", "bomb-connections.pcap.gz", "bomb-midconn.pcap.gz"] {
            try? FileManager.default.removeItem(at: out)
            let peak = try peakKiB(fixture, out: out)
            XCTAssertLessThan(peak, Self.limitKiB, fixture)
            figures.append("\(fixture): \(peak) KiB")
        }
        print("peak RSS: " + figures.joined(separator: ", "))
    }

    /// The client's bomb: 1,500 requests, never answered. Each keeps its exact wire size and
    /// header list size; past the bound its values are dropped (`header-values-dropped`).
    func testBombRecordsKeepExactSizes() throws {
        let records = try records("bomb.pcap.gz")
        XCTAssertEqual(records.count, 1500)
        for record in records {
            let first = record.message.index == 0
            XCTAssertEqual(record.wire.headers, 9 + (first ? Self.firstRequestBlock : Self.requestBlock))
            XCTAssertEqual(record.wire.total, record.wire.headers)
            let pseudo = (7 + 3 + 32) + (7 + 4 + 32) + (5 + 1 + 32) + (10 + 9 + 32)
            XCTAssertEqual(record.message.protocolFacts.headerListSize, pseudo + 259 * Self.fieldBytes)
            XCTAssertTrue(record.message.anomalies.contains(.headerValuesDropped))
            XCTAssertTrue(record.message.fields.isEmpty)
            XCTAssertEqual(record.message.method, "GET")
        }
    }

    /// Responses left open, three more blocks on each: sizes exact, values dropped.
    func testOpenResponsesKeepExactSizes() throws {
        let records = try records("bomb-open.pcap.gz")
        let responses = records.filter { $0.message.kind == .response }
        XCTAssertEqual(responses.count, 600)
        for response in responses {
            let first = response.message.protocolFacts.stream == 1
            XCTAssertEqual(
                response.wire.headers,
                9 + (first ? Self.firstResponseBlock : Self.responseBlock) + 3 * (9 + 259))
            XCTAssertEqual(response.message.protocolFacts.frames, 4)
            XCTAssertFalse(response.message.complete)
            XCTAssertEqual(response.message.protocolFacts.headerListSize, (7 + 3 + 32) + 4 * 259 * Self.fieldBytes)
            XCTAssertTrue(response.message.anomalies.contains(.headerValuesDropped))
        }
    }

    /// The capture begun mid-connection: every reference is to an entry it never saw
    /// (a placeholder), so those fields are unknown; the rest decode.
    func testMidConnectionBombIsUnknownWhereItMustBe() throws {
        let records = try records("bomb-midconn.pcap.gz")
        XCTAssertEqual(records.count, 1500)
        for record in records {
            XCTAssertEqual(record.wire.headers, 9 + Self.requestBlock)
            XCTAssertEqual(record.message.method, "GET")
            XCTAssertEqual(record.message.target, Array("http://bomb.test/".utf8))
            XCTAssertTrue(record.message.anomalies.contains(.hpackStateUnknown))
            XCTAssertEqual(record.message.protocolFacts.unknownHeadParts, [.fields])
            XCTAssertTrue(record.message.requestLineKnown)
            XCTAssertEqual(record.endpoint, "GET bomb.test /")
        }
    }
}
