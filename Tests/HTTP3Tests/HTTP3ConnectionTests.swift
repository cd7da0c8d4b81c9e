import CostAccounting
import Flows
import MessageModel
import PacketLayers
import XCTest

@testable import HTTP3

/// Keeps every record, what its body observer saw, the claims, and the summary.
final class RecordingSink: MessageSink {
    final class Observer: BodyObserver {
        var bytes = 0
        var gaps = 0
        /// The body itself, when the sink keeps bodies.
        var body: [UInt8]?
        func bodyBytes(_ bytes: UnsafeRawBufferPointer) {
            self.bytes += bytes.count
            body?.append(contentsOf: bytes)
        }
        func bodyGap(_ length: Int) { gaps += length }
    }

    struct Claim: Equatable {
        var range: Range<Int64>
        var side: Direction
        var stream: UInt64
        var owner: StreamOwner
    }

    var records: [CapturedMessage] = []
    var observed: [Int?] = []
    /// Each record's body bytes (when `keepsBodies`).
    var bodies: [[UInt8]?] = []
    var keepsBodies = false
    var claims: [Claim] = []
    var closed: HTTPConnectionSummary?

    func bodyObserver(for message: HTTPMessage) -> Observer? {
        let observer = Observer()
        if keepsBodies { observer.body = [] }
        return observer
    }
    func record(_ message: CapturedMessage, body: Observer?) {
        records.append(message)
        observed.append(body?.bytes)
        bodies.append(body?.body)
    }
    func connectionClosed(_ summary: HTTPConnectionSummary) { closed = summary }
    func claim(_ range: Range<Int64>, of side: Direction, stream: UInt64, by owner: StreamOwner) {
        claims.append(Claim(range: range, side: side, stream: stream, owner: owner))
    }
}

/// Builds HTTP/3 bytes by hand (RFC 9114 frames, RFC 9204 field sections).
enum H3 {
    static func varint(_ value: UInt64) -> [UInt8] {
        switch value {
        case ..<64: return [UInt8(value)]
        case ..<16384: return [UInt8(0x40 | value >> 8), UInt8(value & 0xff)]
        default:
            return [UInt8(0x80 | value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        }
    }

    static func frame(_ type: UInt64, _ payload: [UInt8]) -> [UInt8] {
        varint(type) + varint(UInt64(payload.count)) + payload
    }

    // Field sections, static table only (RFC 9204 Appendix A), Required Insert Count 0, Base 0.
    /// GET https://example.com/index.html: `:method GET` (static 17: 0xc0|17), `:scheme https`
    /// (23), `:authority` literal with static name 0 (0x50, 7-bit length 11), `:path` literal
    /// with static name 1 (0x51, length 11). 30 bytes; header list 42 + 44 + 53 + 48 = 187.
    static let getSection: [UInt8] =
        [0x00, 0x00, 0xd1, 0xd7, 0x50, 0x0b] + Array("example.com".utf8) + [0x51, 0x0b] + Array("/index.html".utf8)
    /// `:status 200` (static 25) and `content-length: 5` (static name 4, literal value): 6 bytes;
    /// header list (7 + 3 + 32) + (14 + 1 + 32) = 89.
    static let okSection: [UInt8] = [0x00, 0x00, 0xd9, 0x54, 0x01, 0x35]
    /// `:status 103` (static 24): 3 bytes; header list 42.
    static let earlyHintsSection: [UInt8] = [0x00, 0x00, 0xd8]
    /// Trailers `x-checksum: abc` as a literal name (0x20 | 7, then 3: a 3-bit prefix) and
    /// value: 18 bytes; header list 10 + 3 + 32 = 45.
    static let trailerSection: [UInt8] = [0x00, 0x00, 0x27, 0x03] + Array("x-checksum".utf8) + [0x03] + Array("abc".utf8)

    /// A control stream: type 0x00 and SETTINGS (QPACK_MAX_TABLE_CAPACITY `capacity`,
    /// QPACK_BLOCKED_STREAMS 10).
    static func controlStream(capacity: UInt64) -> [UInt8] {
        [0x00] + frame(0x04, [0x01] + varint(capacity) + [0x07, 0x0a])
    }
}

final class HTTP3ConnectionTests: XCTestCase {
    let info = ConnectionInfo(
        number: 0, initiator: TransportEndpoint(address: IPAddress(ipv4: 0x7f00_0001), port: 50000),
        responder: TransportEndpoint(address: IPAddress(ipv4: 0x7f00_0001), port: 443), sawHandshake: true,
        firstPacketTime: 0, transport: .udp)

    func feed(_ connection: HTTP3Connection<RecordingSink>, _ bytes: [UInt8], stream: UInt64, _ side: Direction,
              at offset: Int64 = 0, fin: Bool = false)
    {
        bytes.withUnsafeBytes {
            connection.receive($0, stream: stream, from: side, at: StreamPosition(time: 1, offset: offset, peerAcknowledged: nil))
        }
        if fin { connection.end(stream: stream, of: side, reason: .fin, time: 1) }
    }

    func close(_ connection: HTTP3Connection<RecordingSink>) {
        connection.close(ConnectionAccounting(info: info))
    }

    func testRequestInterimResponseTrailers() {
        let sink = RecordingSink()
        let connection = HTTP3Connection(info: info, sink: sink)
        let request = H3.frame(0x01, H3.getSection)
        XCTAssertEqual(request.count, 32)
        feed(connection, request, stream: 0, .up, fin: true)
        let interim = H3.frame(0x01, H3.earlyHintsSection)
        let head = H3.frame(0x01, H3.okSection)
        let data = H3.frame(0x00, Array("hello".utf8))
        let trailers = H3.frame(0x01, H3.trailerSection)
        // An unknown (reserved) frame type 0x21 is ignored but counted.
        let grease = H3.frame(0x21, [0xaa, 0xbb, 0xcc])
        let response = interim + head + grease + data + trailers
        // Byte by byte: frame boundaries within varints and payloads.
        for (i, byte) in response.enumerated() { feed(connection, [byte], stream: 0, .down, at: Int64(i)) }
        connection.end(stream: 0, of: .down, reason: .fin, time: 2)
        // Both sides ended, every message out: the stream is forgotten (memory follows open streams).
        XCTAssertNil(connection.exchanges[0])
        XCTAssertTrue(connection.readers.isEmpty)
        close(connection)

        // The interim record goes first: the request waits for the final response's pairing.
        XCTAssertEqual(sink.records.map(\.status), [103, nil, 200])
        let (hint, req, resp) = (sink.records[0], sink.records[1], sink.records[2])
        XCTAssertEqual(req.kind, .request)
        XCTAssertEqual(req.method, "GET")
        XCTAssertEqual(String(decoding: req.target, as: UTF8.self), "https://example.com/index.html")
        XCTAssertEqual(req.wireHeaders, 32)
        XCTAssertEqual(req.wireBody, 0)
        XCTAssertEqual(req.message.protocolFacts.headerListSize, 187)
        XCTAssertEqual(req.message.protocolFacts.frames, 1)
        XCTAssertEqual(req.message.protocolFacts.wireProtocol, .h3)
        XCTAssertEqual(req.message.protocolFacts.stream, 0)
        XCTAssertEqual(req.pair, 1)
        XCTAssertTrue(req.complete)

        XCTAssertEqual(hint.status, 103)
        XCTAssertEqual(hint.wireHeaders, 5)
        XCTAssertEqual(hint.message.protocolFacts.headerListSize, 42)

        XCTAssertEqual(resp.status, 200)
        XCTAssertEqual(resp.wireHeaders, 8 + 20)
        XCTAssertEqual(resp.wireBody, 7)
        XCTAssertEqual(resp.bodyLength, 5)
        XCTAssertEqual(sink.observed[2], 5)
        XCTAssertEqual(resp.message.protocolFacts.frames, 3)
        XCTAssertEqual(resp.message.protocolFacts.headerListSize, 89 + 45)
        XCTAssertEqual(resp.trailers, [HeaderField("x-checksum", "abc")])
        XCTAssertEqual(resp.fields, [HeaderField("content-length", "5")])
        XCTAssertEqual(resp.pair, 0)
        XCTAssertTrue(resp.complete)

        let server = connection.summary.server
        XCTAssertEqual(server.requestStreamOtherBytes, 5)
        XCTAssertEqual(server.unknownFrames, H3FrameCount(frames: 1, bytes: 5))
        XCTAssertEqual(server[.headers], H3FrameCount(frames: 3, bytes: 5 + 8 + 20))
        // Every byte of the server's stream 0 is claimed once, in order.
        let down = sink.claims.filter { $0.side == .down && $0.stream == 0 }
        XCTAssertEqual(down.map(\.range.count).reduce(0, +), response.count)
        XCTAssertEqual(down.first?.owner, .message(startingAt: 0))
        XCTAssertEqual(down[1].owner, .message(startingAt: 5))
        XCTAssertEqual(down[2].owner, .overhead(.h3Control))
        XCTAssertEqual(down[4].owner, .message(startingAt: 5))
    }

    func testControlAndUnknownStreamsAreCounted() {
        let sink = RecordingSink()
        let connection = HTTP3Connection(info: info, sink: sink)
        let control = H3.controlStream(capacity: 220)  // 00 04 05 01 40dc 07 0a
        XCTAssertEqual(control.count, 8)
        feed(connection, control, stream: 2, .up)
        feed(connection, [0x02], stream: 6, .up)  // QPACK encoder stream, nothing inserted
        feed(connection, [0x03, 0x00], stream: 10, .up)  // decoder stream, an Insert Count Increment
        feed(connection, [0x21, 1, 2, 3, 4], stream: 14, .up)  // unknown (grease) stream type 0x21
        close(connection)
        let client = connection.summary.client
        XCTAssertEqual(client.controlStreamBytes, 8)
        XCTAssertEqual(client.encoderStreamBytes, 1)
        XCTAssertEqual(client.decoderStreamBytes, 2)
        XCTAssertEqual(client.unknownStreamBytes, 5)
        XCTAssertEqual(client[.settings], H3FrameCount(frames: 1, bytes: 7))
        XCTAssertEqual(client.qpackMaxTableCapacity, 220)
        XCTAssertEqual(client.qpackBlockedStreams, 10)
        XCTAssertEqual(client.connectionOverheadBytes, 16)
        XCTAssertTrue(sink.records.isEmpty)
    }

    /// Dynamic table: the client's encoder stream inserts `x-token: secret`; its request refers
    /// to it. Required Insert Count 1 is encoded as 1 mod (2 × ⌊220 / 32⌋) + 1 = 2 (RFC 9204
    /// §4.5.1.1), Base 1 (delta 0), then the dynamic entry at relative index 0 (0x80).
    static let encoderStream: [UInt8] = [0x02, 0x3f, 0xbd, 0x01, 0x47] + Array("x-token".utf8) + [0x06] + Array("secret".utf8)
    static let dynamicSection: [UInt8] = [0x02, 0x00, 0x80, 0xd1, 0xd7, 0x50, 0x0b] + Array("example.com".utf8) + [0xc1]

    func testBlockedSectionResolvesWhenInsertsArrive() {
        let sink = RecordingSink()
        let connection = HTTP3Connection(info: info, sink: sink)
        feed(connection, H3.controlStream(capacity: 220), stream: 3, .down)  // the server's SETTINGS
        let request = H3.frame(0x01, Self.dynamicSection)
        feed(connection, request, stream: 0, .up, fin: true)  // before the inserts it needs: blocked
        feed(connection, H3.frame(0x01, H3.okSection) + H3.frame(0x00, Array("hello".utf8)), stream: 0, .down, fin: true)
        XCTAssertTrue(sink.records.filter { $0.kind == .request }.isEmpty, "blocked until the insert arrives")
        feed(connection, Self.encoderStream, stream: 2, .up)
        close(connection)
        let req = sink.records.first { $0.kind == .request }!
        XCTAssertTrue(req.message.protocolFacts.headFieldsKnown)
        XCTAssertEqual(req.fields, [HeaderField("x-token", "secret")])
        XCTAssertEqual(String(decoding: req.target, as: UTF8.self), "https://example.com/")
        // (7 + 6 + 32) + 42 + 44 + (10 + 11 + 32) + (5 + 1 + 32)
        XCTAssertEqual(req.message.protocolFacts.headerListSize, 45 + 42 + 44 + 53 + 38)
        XCTAssertEqual(req.wireHeaders, request.count)
        XCTAssertEqual(connection.summary.client.encoderStreamBytes, Self.encoderStream.count)
    }

    func testSectionNeedingUnseenInsertsIsUnknown() {
        let sink = RecordingSink()
        let connection = HTTP3Connection(info: info, sink: sink)
        feed(connection, H3.controlStream(capacity: 220), stream: 3, .down)
        let request = H3.frame(0x01, Self.dynamicSection)
        feed(connection, request, stream: 0, .up, fin: true)
        // The encoder stream began before the capture: its bytes come from offset 5 on.
        feed(connection, Array(Self.encoderStream[5...]), stream: 2, .up, at: 5)
        close(connection)
        XCTAssertEqual(sink.records.count, 1)
        let req = sink.records[0]
        XCTAssertFalse(req.message.protocolFacts.headFieldsKnown)
        XCTAssertNil(req.method)
        XCTAssertNil(req.message.protocolFacts.headerListSize)
        XCTAssertTrue(req.anomalies.contains(.qpackStateUnknown))
        XCTAssertEqual(req.wireHeaders, request.count)
        XCTAssertEqual(connection.summary.client.qpackUnknownSections, 1)
        XCTAssertEqual(connection.summary.client.lostBytes, 5 + Self.encoderStream.count - 5)
    }

    func testResetAndPush() {
        let sink = RecordingSink()
        let connection = HTTP3Connection(info: info, sink: sink)
        feed(connection, H3.frame(0x01, H3.getSection), stream: 0, .up, fin: true)
        // PUSH_PROMISE push id 0 with the same request section, then a response cut by a reset.
        let promise = H3.frame(0x05, [0x00] + H3.getSection)
        let head = H3.frame(0x01, H3.okSection)
        let partial = H3.frame(0x00, Array("hello".utf8))
        feed(connection, promise + head + partial, stream: 0, .down)
        connection.end(stream: 0, of: .down, reason: .reset, time: 3)
        // The push stream: type 0x01, push id 0, a response.
        let pushResponse = H3.frame(0x01, H3.okSection) + H3.frame(0x00, Array("hello".utf8))
        feed(connection, [0x01, 0x00] + pushResponse, stream: 15, .down, fin: true)
        close(connection)
        XCTAssertEqual(sink.records.count, 4)
        let pushed = sink.records.first { $0.anomalies.contains(.pushed) }!
        XCTAssertEqual(pushed.kind, .request)
        XCTAssertEqual(pushed.wireHeaders, promise.count)
        XCTAssertEqual(pushed.message.protocolFacts.stream, 0)
        let reset = sink.records.first { $0.kind == .response && $0.message.protocolFacts.stream == 0 }!
        XCTAssertFalse(reset.complete)
        XCTAssertTrue(reset.anomalies.contains(.streamReset))
        XCTAssertEqual(reset.wireBody, 7)
        let pushResp = sink.records.first { $0.message.protocolFacts.stream == 15 }!
        XCTAssertEqual(pushResp.pair, pushed.index)
        XCTAssertEqual(pushResp.wireHeaders + pushResp.wireBody, pushResponse.count)
        XCTAssertEqual(connection.summary.server.pushStreamPreambleBytes, 2)
    }

    func testGapInsideDataKeepsFramesAndGapElsewhereLosesTheRest() {
        let sink = RecordingSink()
        let connection = HTTP3Connection(info: info, sink: sink)
        feed(connection, H3.frame(0x01, H3.getSection), stream: 0, .up, fin: true)
        let head = H3.frame(0x01, H3.okSection)
        let data = H3.frame(0x00, [UInt8](repeating: 0x61, count: 100))
        let stream = head + data + head
        feed(connection, Array(stream[..<(head.count + 10)]), stream: 0, .down)
        connection.gap(50, stream: 0, from: .down, at: StreamPosition(time: 1, offset: Int64(head.count + 10), peerAcknowledged: nil))
        feed(connection, Array(stream[(head.count + 60)..<(head.count + data.count)]), stream: 0, .down, at: Int64(head.count + 60))
        // A gap in the next frame header: the rest of the stream is lost.
        connection.gap(3, stream: 0, from: .down, at: StreamPosition(time: 1, offset: Int64(head.count + data.count), peerAcknowledged: nil))
        feed(connection, Array(stream[(head.count + data.count + 3)...]), stream: 0, .down, at: Int64(head.count + data.count + 3))
        close(connection)
        let resp = sink.records.first { $0.kind == .response }!
        XCTAssertEqual(resp.wireBody, data.count)
        XCTAssertEqual(resp.bodyLength, 100)
        XCTAssertEqual(resp.missingBytes, 50)
        XCTAssertFalse(resp.complete)
        XCTAssertEqual(connection.summary.server.lostBytes, head.count)
    }
}
