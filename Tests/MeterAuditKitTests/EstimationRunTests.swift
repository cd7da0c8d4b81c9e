import Analysis
import Estimation
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// Estimates through the whole pipeline: options reach the estimators, a bomb costs only
/// its own record's figures. Expected values are hand-counted or come from Python's zlib
/// (Tests/Fixtures/contentcoding/manifest.json).
final class EstimationRunTests: XCTestCase {
    private func analyze(_ conversation: Conversation, options: AnalysisOptions = AnalysisOptions()) throws
        -> ([MessageRecord], InputDiagnostics)
    {
        let path = try CaptureFileWriter.temporaryFile(named: "estimates.pcap", containing: conversation.pcap())
        var records: [MessageRecord] = []
        let diagnostics = InputAnalyzer(options: options).analyze(path: path) { records.append($0) }
        return (records, diagnostics)
    }

    private func gzipResponse(_ body: [UInt8]) -> [UInt8] {
        Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
    }

    func testGzipBombIsStoppedAndTheOtherRecordsStayExact() throws {
        let bomb = try Fixtures.bytes("contentcoding/bomb.gzip") // 65,250 B → 64 MiB of zeros
        var conversation = Conversation()
        conversation.handshake()
        conversation.send(.client, BadInputTests.request)
        conversation.send(.server, gzipResponse(bomb))
        conversation.send(.client, BadInputTests.request)
        conversation.send(.server, BadInputTests.response)
        conversation.close()
        let (records, diagnostics) = try analyze(conversation)
        XCTAssertEqual(records.count, 4)
        let bombRecord = try XCTUnwrap(records.first { $0.message.kind == .response && $0.message.index == 0 })
        // "HTTP/1.1 200 OK\r\n" 17; "Content-Encoding: gzip\r\n" 24 + "Content-Length: 65250\r\n" 23 + "\r\n" 2 = 49
        XCTAssertEqual([bombRecord.wire.line, bombRecord.wire.headers, bombRecord.wire.body], [17, 49, 65250])
        XCTAssertEqual(bombRecord.decoding, .overLimit)
        XCTAssertEqual(bombRecord.bodyDecoded, 65250, "an undecodable body counts its de-chunked size")
        XCTAssertEqual(try bombRecord.estimates[0].get().total, 65250, "naive takes Content-Length")
        XCTAssertEqual(bombRecord.estimates[1], .failure(.bodyNotDecoded))
        XCTAssertEqual(diagnostics.notes[.bodyDecodingOverLimit], 1)
        XCTAssertEqual(diagnostics.unestimated["documented"], [.bodyNotDecoded: 1])
        let after = try XCTUnwrap(records.first { $0.message.kind == .response && $0.message.index == 1 })
        XCTAssertEqual([after.wire.line, after.wire.headers, after.wire.body], [17, 21, 5])
        XCTAssertEqual(after.message.pair, 1)
    }

    func testGzipLevelReachesTheRecompression() throws {
        let gzipped = try Fixtures.bytes("contentcoding/body.gzip") // plain.txt, 107,636 B decoded
        var conversation = Conversation()
        conversation.handshake()
        conversation.send(.client, BadInputTests.request)
        conversation.send(.server, gzipResponse(gzipped))
        conversation.close()
        // zlib.compressobj(level, DEFLATED, 31) lengths of plain.txt, from manifest.json.
        for (level, expected) in [(1, 19055), (6, 13437), (9, 12546)] {
            var options = AnalysisOptions()
            options.gzipLevel = Int32(level)
            let (records, _) = try analyze(conversation, options: options)
            let response = try XCTUnwrap(records.first { $0.message.kind == .response })
            XCTAssertEqual(response.bodyDecoded, 107_636)
            XCTAssertEqual(try response.estimates[1].get().body, expected, "level \(level)")
        }
    }

    func testClientProfileDecidesTheVisibleRequestFields() throws {
        var conversation = Conversation()
        conversation.handshake()
        conversation.send(.client, BadInputTests.request) // only field: "Host: example.test"
        conversation.send(.server, BadInputTests.response)
        conversation.close()
        // "example.test GET /a HTTP/1.1 x=1\n": 12+1+3+1+2+1+8+1+3+1 = 33
        let (standard, _) = try analyze(conversation)
        let request = try XCTUnwrap(standard.first { $0.message.kind == .request })
        XCTAssertEqual(try request.estimates[1].get(), Estimate(line: 33, headers: 2, body: 0))
        var options = AnalysisOptions()
        options.profile = ClientProfile(name: "custom", stackAddedFields: ["Accept"])
        let (custom, _) = try analyze(conversation, options: options)
        let visible = try XCTUnwrap(custom.first { $0.message.kind == .request })
        // "Host: example.test\r\n" = 4+2+12+2 = 20, + 2 = 22
        XCTAssertEqual(try visible.estimates[1].get().headers, 22)
    }

    func testRepeatedBodiesAreCompressedOnce() throws {
        let gzipped = try Fixtures.bytes("contentcoding/body.gzip")
        var conversation = Conversation()
        conversation.handshake()
        for _ in 0..<5 {
            conversation.send(.client, BadInputTests.request)
            conversation.send(.server, gzipResponse(gzipped))
        }
        conversation.close()
        let path = try CaptureFileWriter.temporaryFile(named: "repeated.pcap", containing: conversation.pcap())
        var records: [MessageRecord] = []
        let analyzer = InputAnalyzer()
        _ = analyzer.analyze(path: path) { records.append($0) }
        let bodies = records.filter { $0.message.kind == .response }.map { try? $0.estimates[1].get().body }
        XCTAssertEqual(bodies, Array(repeating: 13437, count: 5))
        // The five identical gzip bodies are measured once.
        let statistics = analyzer.bodyMeasurements
        XCTAssertEqual(statistics.measured, 1)
        XCTAssertEqual(statistics.reused, 4)
    }
}
