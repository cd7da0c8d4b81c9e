import CaptureIO
import HARMessages
import MessageModel
import Records
import XCTest

/// docs/CHARLES.md, "Wire size" and "Bodies", one rule at a time.
final class CharlesMessageBuilderTests: XCTestCase {
    private func transaction(
        request: CharlesMessagePart, response: CharlesMessagePart? = nil, version: String = "HTTP/1.1"
    ) -> CharlesTransaction {
        var t = CharlesTransaction(index: 3, method: "GET", request: request)
        t.protocolVersion = version
        t.scheme = "https"
        t.host = "example.com"
        t.actualPort = 443
        t.path = "/a"
        t.query = "b=1"
        t.response = response
        t.remoteAddress = "93.184.216.34"
        t.startTime = "2026-01-15T10:00:00.250+01:00"
        return t
    }

    private let line = "GET /a?b=1 HTTP/1.1"  // 19 + CRLF = 21
    private let fields = [HARHeader(name: "Host", value: "example.com")]  // 4 + 11 + 4 = 19, + 2

    func testSizesAsGivenSplitAtTheFirstLine() {
        let built = CharlesMessageBuilder().messages(
            for: transaction(request: CharlesMessagePart(headersSize: 42, bodySize: 0, firstLine: line, headers: fields)))
        XCTAssertEqual(built.request.wire, WireSize(line: 21, headers: 21, body: 0, total: 42, source: .charles))
        XCTAssertNil(built.response)
        XCTAssertTrue(built.request.message.anomalies.contains(.unpaired))
        XCTAssertEqual(built.request.recordSource.server, "93.184.216.34:443")
        XCTAssertEqual(built.request.recordSource.transport, .tls)
        XCTAssertEqual(built.request.recordSource.time, 1_768_467_600_250_000_000)
        XCTAssertEqual(built.request.body, [])
    }

    func testAHeadShorterThanItsFirstLineIsRebuilt() {
        for size in [0, 20] {
            let built = CharlesMessageBuilder().messages(
                for: transaction(request: CharlesMessagePart(headersSize: size, bodySize: 0, firstLine: line, headers: fields)))
            XCTAssertEqual(built.request.wire, WireSize(line: 21, headers: 21, body: 0, total: 42, source: .charlesReconstructed))
            XCTAssertTrue(built.request.notes.contains(.sizeRebuilt("headers")))
        }
    }

    func testNullOrNegativeSizesAreUnknownNeverZero() {
        let built = CharlesMessageBuilder().messages(
            for: transaction(request: CharlesMessagePart(headersSize: nil, bodySize: 0, firstLine: line, headers: fields)))
        XCTAssertNil(built.request.wire.total)
        XCTAssertEqual(built.request.wire.source, .unknown)
    }

    func testBodiesDecodedOrNotAndABodySizeBelowTheCodedBody() {
        let coded: [UInt8] = Array(repeating: 7, count: 30)
        let gzipFields = [HARHeader(name: "Content-Encoding", value: "gzip"), HARHeader(name: "Content-Length", value: "30")]
        let raw = CharlesMessagePart(
            headersSize: 60, bodySize: 10, firstLine: "HTTP/1.1 200 OK", headers: gzipFields, body: coded,
            bodyDecoded: false, status: 200)
        let built = CharlesMessageBuilder().messages(
            for: transaction(request: CharlesMessagePart(headersSize: 42, bodySize: 0, firstLine: line, headers: fields), response: raw))
        let response = try! XCTUnwrap(built.response)
        XCTAssertEqual(response.bodyCodings, ["gzip"])
        XCTAssertEqual(response.wire.body, 30)
        XCTAssertEqual(response.wire.source, .charlesReconstructed)
        var decoded = raw
        decoded.bodyDecoded = true
        let again = CharlesMessageBuilder().messages(
            for: transaction(request: CharlesMessagePart(headersSize: 42, bodySize: 0, firstLine: line, headers: fields), response: decoded))
        XCTAssertEqual(again.response?.bodyCodings, [])
        XCTAssertEqual(again.response?.wire.body, 10)
        XCTAssertEqual(again.response?.wire.source, .charles)
    }

    func testHTTP2HasNoStartLineAndAZeroHeadBesideFieldsIsUnknown() {
        let part = CharlesMessagePart(
            headersSize: 37, bodySize: 0, firstLine: "GET /a?b=1 HTTP/2.0",
            headers: [HARHeader(name: ":method", value: "GET")] + fields)
        let built = CharlesMessageBuilder().messages(for: transaction(request: part, version: "HTTP/2.0"))
        XCTAssertEqual(built.request.wire, WireSize(line: 0, headers: 37, body: 0, total: 37, source: .charles))
        XCTAssertEqual(built.request.message.protocolFacts.wireProtocol, .h2)
        XCTAssertEqual(built.request.message.fields.map(\.name), [Array("Host".utf8)])
        var zero = part
        zero.headersSize = 0
        let unknown = CharlesMessageBuilder().messages(for: transaction(request: zero, version: "HTTP/2.0"))
        XCTAssertNil(unknown.request.wire.total)
    }
}
