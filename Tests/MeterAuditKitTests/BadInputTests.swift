import Analysis
import CaptureIO
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// Bad input is reported with the file and the packet, and never costs the good records
/// around it. Sizes are hand-counted from the literal messages below.
final class BadInputTests: XCTestCase {
    // "GET /a?x=1 HTTP/1.1\r\n" = 21; "Host: example.test\r\n" + "\r\n" = 20 + 2 = 22.
    static let request = "GET /a?x=1 HTTP/1.1\r\nHost: example.test\r\n\r\n"
    // "HTTP/1.1 200 OK\r\n" = 17; "Content-Length: 5\r\n" + "\r\n" = 19 + 2 = 21; body 5.
    static let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

    private func exchange(times: Int = 1, client: String = "127.0.0.1:40000") -> Conversation {
        var conversation = Conversation(client: client)
        conversation.handshake()
        for _ in 0..<times {
            conversation.send(.client, Self.request)
            conversation.send(.server, Self.response)
        }
        conversation.close()
        return conversation
    }

    private func analyze(_ path: String) -> ([MessageRecord], InputDiagnostics) {
        var records: [MessageRecord] = []
        let diagnostics = InputAnalyzer().analyze(path: path) { records.append($0) }
        return (records, diagnostics)
    }

    private func assertExchange(
        _ records: [MessageRecord], index: Int, file: StaticString = #filePath, line: UInt = #line
    ) {
        let request = records.first { $0.message.kind == .request && $0.message.index == index }
        let response = records.first { $0.message.kind == .response && $0.message.index == index }
        XCTAssertEqual(
            request.map { [$0.wire.line, $0.wire.headers, $0.wire.body] }, [21, 22, 0], file: file, line: line)
        XCTAssertEqual(
            response.map { [$0.wire.line, $0.wire.headers, $0.wire.body] }, [17, 21, 5], file: file, line: line)
        XCTAssertEqual(request?.message.pair, index, file: file, line: line)
        XCTAssertEqual(response?.message.pair, index, file: file, line: line)
    }

    func testGoodCaptureGivesExactRecords() throws {
        let path = try CaptureFileWriter.temporaryFile(named: "good.pcap", containing: exchange(times: 2).pcap())
        let (records, diagnostics) = analyze(path)
        XCTAssertEqual(records.count, 4)
        assertExchange(records, index: 0)
        assertExchange(records, index: 1)
        XCTAssertNil(diagnostics.error)
        XCTAssertEqual(diagnostics.records.requests, 2)
        XCTAssertEqual(diagnostics.records.paired, 4)
        XCTAssertEqual(diagnostics.connections.http, 1)
    }

    func testNotACaptureIsUnreadableAndNamed() throws {
        let path = try CaptureFileWriter.temporaryFile(named: "notes.txt", containing: Array("just some text\n".utf8))
        let (records, diagnostics) = analyze(path)
        XCTAssertTrue(records.isEmpty)
        XCTAssertFalse(diagnostics.readable)
        let error = try XCTUnwrap(diagnostics.error)
        XCTAssertTrue(error.contains(path), error)
        XCTAssertTrue(error.contains("not a pcap or pcapng capture"), error)
    }

    func testMissingFileIsUnreadable() {
        let (_, diagnostics) = analyze("/nonexistent/capture.pcap")
        XCTAssertFalse(diagnostics.readable)
        XCTAssertTrue(diagnostics.error?.contains("/nonexistent/capture.pcap") ?? false)
    }

    func testTruncatedCaptureKeepsTheRecordsBeforeTheCut() throws {
        let conversation = exchange(times: 2)
        var bytes = conversation.pcap()
        // Cut inside the last frame (the final ACK): everything before it is whole.
        let lastFrameLength = conversation.frames.last!.bytes.count
        bytes.removeLast(lastFrameLength / 2)
        let path = try CaptureFileWriter.temporaryFile(named: "cut.pcap", containing: bytes)
        let (records, diagnostics) = analyze(path)
        XCTAssertTrue(diagnostics.readable)
        let error = try XCTUnwrap(diagnostics.error)
        XCTAssertTrue(error.contains(path), error)
        XCTAssertTrue(error.contains("packet \(conversation.frames.count)"), error)
        XCTAssertEqual(diagnostics.packets.read, conversation.frames.count - 1)
        XCTAssertEqual(records.count, 4)
        assertExchange(records, index: 0)
        assertExchange(records, index: 1)
    }

    func testTruncatedInsideAResponseKeepsItAsIncomplete() throws {
        var conversation = Conversation()
        conversation.handshake()
        conversation.send(.client, Self.request)
        conversation.send(.server, Self.response)
        conversation.send(.client, Self.request)
        conversation.send(.server, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
        let path = try CaptureFileWriter.temporaryFile(named: "open.pcap", containing: conversation.pcap())
        let (records, diagnostics) = analyze(path)
        XCTAssertNil(diagnostics.error)
        XCTAssertEqual(records.count, 4)
        let last = try XCTUnwrap(records.first { $0.message.kind == .response && $0.message.index == 1 })
        XCTAssertFalse(last.message.complete)
        XCTAssertFalse(last.measured)
        XCTAssertEqual(last.wire.body, 10)
        XCTAssertEqual(diagnostics.records.incomplete, 1)
    }

    func testCorruptPacketInsideAGoodFileIsSkipped() throws {
        var conversation = exchange()
        // An IPv4 header claiming a 4-byte header length (IHL 1) between good packets.
        var corrupt = conversation.frames[3]
        corrupt.bytes[14] = 0x41
        var frames = conversation.frames
        frames.insert(corrupt, at: 4)
        conversation = exchange()
        let bytes = CaptureFileWriter.pcap(frames)
        let path = try CaptureFileWriter.temporaryFile(named: "corrupt.pcap", containing: bytes)
        let (records, diagnostics) = analyze(path)
        XCTAssertNil(diagnostics.error)
        XCTAssertEqual(diagnostics.packets.skipped[.malformedIPv4], 1)
        XCTAssertEqual(records.count, 2)
        assertExchange(records, index: 0)
    }

    func testUnsupportedLinkTypeIsReportedOncePerInterfaceAndSkipped() throws {
        let good = exchange().frames
        var frames = good
        for i in 0..<3 {
            frames.append(
                CaptureFileWriter.Frame(
                    timestamp: 1_700_000_100_000_000_000 + Int64(i), interface: 1,
                    bytes: [1, 2, 3, 4, 5, 6, 7, 8]))
        }
        let interfaces = [CaptureFileWriter.Interface(), CaptureFileWriter.Interface(linkType: 147)]
        let path = try CaptureFileWriter.temporaryFile(
            named: "two-links.pcapng",
            containing: CaptureFileWriter.pcapng(frames, interfaces: interfaces))
        let (records, diagnostics) = analyze(path)
        XCTAssertEqual(diagnostics.unsupportedLinkTypes, [.init(interface: 1, linkType: 147)])
        XCTAssertEqual(diagnostics.packets.skipped[.unsupportedLinkType], 3)
        XCTAssertEqual(records.count, 2)
        assertExchange(records, index: 0)
    }

    func testRunWritesOutputsAndReportsUnreadableInputs() throws {
        let good = try CaptureFileWriter.temporaryFile(named: "run-good.pcap", containing: exchange().pcap())
        let bad = try CaptureFileWriter.temporaryFile(named: "run-bad.pcap", containing: Array("nope".utf8))
        let out = NSTemporaryDirectory() + "meteraudit-run-\(UUID().uuidString)"
        let result = try AuditRun(inputs: [bad, good], outputDirectory: out).run()
        XCTAssertTrue(result.someInputsUnreadable)
        let csv = try String(contentsOfFile: out + "/messages.csv", encoding: .utf8)
        let rows = csv.split(separator: "\r\n")
        XCTAssertEqual(rows.count, 3) // header + request + response of the good file
        XCTAssertTrue(
            rows[1].hasPrefix(
                "run-good.pcap,request,0,0,1700000000.003000,127.0.0.1:40000,127.0.0.1:8080,GET,example.test,/a,x=1,,GET example.test /a,0,true,true,21,22,0,43,0,,,"
            ), String(rows[1]))
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/diagnostics.json")))
            as? [String: Any]
        let inputs = try XCTUnwrap(json?["inputs"] as? [[String: Any]])
        XCTAssertEqual(inputs.count, 2)
        XCTAssertEqual(inputs[0]["readable"] as? Bool, false)
        XCTAssertEqual((inputs[1]["records"] as? [String: Any])?["requests"] as? Int, 1)
    }

    // MARK: HAR

    /// A HAR entry in one line: GET with headersSize 30 and bodySize 0; a 200 response with
    /// headersSize 40 and the 5-byte body "hello".
    private static func harEntry(_ path: String) -> String {
        #"{"request": {"method": "GET", "url": "http://127.0.0.1:8080\#(path)", "httpVersion": "HTTP/1.1", "headers": [], "headersSize": 30, "bodySize": 0},"#
            + #" "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "content": {"size": 5, "text": "hello"}, "headersSize": 40, "bodySize": 5}}"#
    }

    private func harFile(_ name: String, _ text: String) throws -> String {
        try CaptureFileWriter.temporaryFile(named: name, containing: Array(text.utf8))
    }

    func testInvalidJSONInAHARNamesFileLineAndColumnAndKeepsTheEntriesBefore() throws {
        // Line 3 lacks the comma after the second entry's method: column 30 is the `"` of "url".
        let text =
            "{\"log\": {\"version\": \"1.2\", \"entries\": [\n" + Self.harEntry("/a") + ",\n"
            + #"{"request": {"method": "GET" "url": "http://127.0.0.1:8080/b"}}"# + "\n]}}\n"
        let path = try harFile("invalid.har", text)
        let (records, diagnostics) = analyze(path)
        XCTAssertEqual(records.map(\.wire.total), [30, 45])
        XCTAssertTrue(diagnostics.readable)
        let error = try XCTUnwrap(diagnostics.error)
        XCTAssertTrue(error.hasPrefix(path + ": "), error)
        XCTAssertTrue(error.contains("invalid JSON at line 3, column 30"), error)
    }

    func testHARWithAWrongTopLevelShapeSaysWhatIsMissing() throws {
        for (text, says) in [
            (#"{"log": {"version": "1.2"}}"#, "log.entries is missing"),
            (#"{"entries": []}"#, "log is missing"),
            (#"[{"log": {}}]"#, "top level is not an object"),
            (#"{"log": {"entries": {}}}"#, "log.entries is not an array"),
        ] {
            let path = try harFile("shape.har", text)
            let (records, diagnostics) = analyze(path)
            XCTAssertTrue(records.isEmpty, text)
            let error = try XCTUnwrap(diagnostics.error, text)
            XCTAssertTrue(error.hasPrefix(path + ": ") && error.contains(says), "\(text): \(error)")
        }
    }

    func testBrokenHAREntryIsReportedByIndexAndTheOthersKept() throws {
        let text =
            "{\"log\": {\"entries\": [" + Self.harEntry("/a") + ", "
            + #"{"request": {"method": 7, "url": "http://127.0.0.1:8080/b"}}, "# + Self.harEntry("/c") + "]}}"
        let path = try harFile("broken.har", text)
        let (records, diagnostics) = analyze(path)
        XCTAssertNil(diagnostics.error)
        XCTAssertEqual(diagnostics.har?.brokenEntries.map(\.index), [1])
        XCTAssertEqual(diagnostics.har?.brokenEntries.first?.reason, "request.method is a number, not a string")
        XCTAssertEqual(records.map(\.message.index), [0, 0, 2, 2])
        XCTAssertEqual(records.map(\.wire.total), [30, 45, 30, 45])
        XCTAssertEqual(records.map(\.bodyDecoded), [0, 5, 0, 5])
        XCTAssertTrue(
            diagnostics.summaryLine.contains("entry 1 skipped: request.method is a number, not a string"),
            diagnostics.summaryLine)
    }
}
