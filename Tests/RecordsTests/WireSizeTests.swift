import MessageModel
import PacketLayers
import Records
import XCTest

final class WireSizeTests: XCTestCase {
    func testCapturedSizesAreCountedAndSplit() {
        var captured = CapturedMessage(
            HTTPMessage(kind: .request, index: 0), connection: 7,
            client: TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 40000),
            server: TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80),
            time: 5, streamOffset: 0)
        // "GET / HTTP/1.1\r\n" is 16 bytes, "Host: a\r\n\r\n" 11, a 3-byte body.
        (captured.wireLine, captured.wireHeaders, captured.wireBody) = (16, 11, 3)
        let wire = WireSize(captured: captured)
        XCTAssertEqual(wire, WireSize(line: 16, headers: 11, body: 3, total: 30, source: .capture, tls: 30))
        XCTAssertEqual(wire.split, ComponentSizes(line: 16, headers: 11, body: 3))
        XCTAssertTrue(wire.hasComponents)
    }

    func testATotalAloneHasNoSplit() {
        let wire = WireSize(total: 812, source: .harTransferSize)
        XCTAssertNil(wire.split)
        XCTAssertFalse(wire.hasComponents)
        XCTAssertEqual(wire.total, 812)
    }

    func testSourcesNameWhatTheyKnowAndNothingElse() {
        let client = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 40000)
        let server = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80)
        let capture = RecordSource.capture(CaptureFlow(connection: 3, client: client, server: server, time: 9))
        XCTAssertEqual(capture.connectionLabel, "3")
        XCTAssertEqual(capture.client, "10.0.0.1:40000")
        XCTAssertEqual(capture.server, "10.0.0.2:80")
        XCTAssertEqual(capture.time, 9)
        XCTAssertFalse(capture.isHAR)

        let har = RecordSource.har(
            HAREntrySource(entry: 4, rule: .reportedSizes, connection: nil, time: nil, server: ""))
        XCTAssertEqual(har.connectionLabel, "")
        XCTAssertEqual(har.client, "", "a HAR names no client address")
        XCTAssertNil(har.time)
        XCTAssertTrue(har.isHAR)
    }

    func testNotesAreWrittenAsTheOutputsName() {
        XCTAssertEqual(
            [RecordNote.fromCache, .webSocketMessages(12), .bodyFromParams, .bodyUnknown].map(\.description),
            ["from-cache", "websocket-messages:12", "body-from-params", "body-unknown"])
    }
}
