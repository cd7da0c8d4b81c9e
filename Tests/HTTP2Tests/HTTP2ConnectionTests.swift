import Flows
import MessageModel
@testable import HTTP2
import PacketLayers
import TCPReassembly
import XCTest

/// Drives an `HTTP2Connection` with hand-built frames. Header blocks use HPACK's static table
/// and literals only (RFC 7541 Appendix A), written out byte by byte, so the expected fields
/// and sizes do not come from the decoder under test.
final class HTTP2ConnectionTests: XCTestCase {
    final class Body: BodyObserver {
        var bytes: [UInt8] = []
        var gaps = 0
        func bodyBytes(_ bytes: UnsafeRawBufferPointer) { self.bytes += bytes }
        func bodyGap(_ length: Int) { gaps += length }
    }

    final class Sink: MessageSink {
        var records: [CapturedMessage] = []
        var bodies: [[UInt8]?] = []
        var bodyGaps: [Int?] = []
        var summaries: [HTTPConnectionSummary] = []
        func bodyObserver(for message: HTTPMessage) -> Body? { Body() }
        func record(_ message: CapturedMessage, body: Body?) {
            records.append(message)
            bodies.append(body?.bytes)
            bodyGaps.append(body?.gaps)
        }
        func connectionClosed(_ summary: HTTPConnectionSummary) { summaries.append(summary) }
    }

    static func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let n = payload.count
        return [UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff), type, flags]
            + [UInt8(stream >> 24), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)]
            + payload
    }

    /// A literal field without indexing, new name (RFC 7541 §6.2.2), lengths under 127.
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    /// `:method GET` (index 2), `:scheme http` (6), `:path /` (4), then `:authority
    /// example.com` as a literal with incremental indexing of name index 1 (it enters the
    /// dynamic table as entry 62).
    static let getBlock: [UInt8] = [0x82, 0x86, 0x84, 0x41, 11] + Array("example.com".utf8)
    /// The same request again, its authority now dynamic-table entry 62 (0xbe).
    static let repeatedGetBlock: [UInt8] = [0x82, 0x86, 0x84, 0xbe]
    /// `:status 200` (index 8).
    static let okBlock: [UInt8] = [0x88]

    static let settings = frame(4, 0, 0, [])
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    enum Cut { case whole, byteByByte }

    func run(
        client: [[UInt8]], server: [[UInt8]], cut: Cut = .whole, startsAtBeginning: Bool = true,
        gaps: [(Direction, afterChunk: Int, length: Int)] = []
    ) -> (Sink, HTTP2ConnectionSummary) {
        let sink = Sink()
        let info = ConnectionInfo(
            number: 0,
            initiator: TransportEndpoint(address: IPAddress(high: 0, low: 0x7f00_0001, isIPv6: false), port: 50000),
            responder: TransportEndpoint(address: IPAddress(high: 0, low: 0x7f00_0001, isIPv6: false), port: 80),
            sawHandshake: true,
            firstPacketTime: 0)
        let connection = HTTP2Connection(info: info, sink: sink, startsAtBeginning: startsAtBeginning)
        var offsets: [Int64] = [0, 0]
        func send(_ bytes: [UInt8], _ side: Direction) {
            let pieces: [[UInt8]] = cut == .whole ? [bytes] : bytes.map { [$0] }
            for piece in pieces {
                piece.withUnsafeBytes {
                    connection.receive(
                        $0, from: side,
                        at: StreamPosition(time: 0, offset: offsets[side.rawValue], peerAcknowledged: nil))
                }
                offsets[side.rawValue] += Int64(piece.count)
            }
        }
        for (index, chunk) in client.enumerated() {
            send(chunk, .up)
            for gap in gaps where gap.0 == .up && gap.afterChunk == index {
                connection.gap(
                    gap.length, from: .up,
                    at: StreamPosition(time: 0, offset: offsets[0], peerAcknowledged: nil))
                offsets[0] += Int64(gap.length)
            }
        }
        for chunk in server { send(chunk, .down) }
        connection.close(ConnectionAccounting(info: info))
        return (sink, connection.summary)
    }

    func testPaddingPriorityContinuationTrailersAndBodyAreSizedFrameByFrame() {
        // Request on stream 1: HEADERS (PADDED|PRIORITY, no END_HEADERS): pad length 1 +
        // priority 5 + first 3 block bytes + 2 padding = 11 → 20 on the wire; CONTINUATION
        // (END_HEADERS) with the remaining 13 block bytes → 22; DATA (PADDED) "hello" with
        // pad length byte + 3 padding = 9 → 18; trailers HEADERS (END_STREAM|END_HEADERS)
        // literal x-t: 1 = 2 + 3 + 1 + 1 = 7 → 16.
        let block = Self.getBlock
        let headers = Self.frame(1, 0x08 | 0x20, 1, [2] + [0, 0, 0, 0, 15] + block.prefix(3) + [0, 0])
        let continuation = Self.frame(9, 0x04, 1, Array(block.dropFirst(3)))
        let data = Self.frame(0, 0x08, 1, [3] + Array("hello".utf8) + [0, 0, 0])
        let trailers = Self.frame(1, 0x05, 1, Self.literal("x-t", "1"))
        // Response: HEADERS (END_HEADERS) 1 byte → 10; DATA (END_STREAM) "ok" → 11.
        let response = Self.frame(1, 0x04, 1, Self.okBlock)
        let responseData = Self.frame(0, 0x01, 1, Array("ok".utf8))
        for cut in [Cut.whole, .byteByByte] {
            let (sink, summary) = run(
                client: [Self.preface, Self.settings, headers, continuation, data, trailers],
                server: [Self.settings, response, responseData], cut: cut)
            XCTAssertEqual(sink.records.count, 2, "\(cut)")
            guard sink.records.count == 2 else { continue }
            // The request waits for its pairing (the response head), so it comes first.
            let request = sink.records[0]
            let response = sink.records[1]
            XCTAssertEqual(request.kind, .request)
            XCTAssertEqual(request.method, "GET")
            XCTAssertEqual(request.target, Array("http://example.com/".utf8))
            XCTAssertEqual(request.requestHost, "example.com")
            XCTAssertEqual(request.wireLine, 0)
            XCTAssertEqual(request.wireHeaders, 20 + 22 + 16)
            XCTAssertEqual(request.wireBody, 18)
            XCTAssertEqual(request.bodyLength, 5)
            XCTAssertEqual(request.trailers, [HeaderField("x-t", "1")])
            XCTAssertTrue(request.complete)
            XCTAssertEqual(request.protocolFacts.stream, 1)
            XCTAssertEqual(request.protocolFacts.frames, 4)
            // (7+3+32) + (7+4+32) + (5+1+32) + (10+11+32) + trailers (3+1+32) = 42+43+38+53+36
            XCTAssertEqual(request.protocolFacts.headerListSize, 212)
            XCTAssertEqual(request.pair, 0)
            XCTAssertEqual(sink.bodies[0], Array("hello".utf8))
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.wireHeaders, 10)
            XCTAssertEqual(response.wireBody, 11)
            XCTAssertEqual(response.pair, 0)
            XCTAssertEqual(response.protocolFacts.headerListSize, 7 + 3 + 32)
            XCTAssertEqual(sink.bodies[1], Array("ok".utf8))
            XCTAssertEqual(summary.client.prefaceBytes, 24)
            XCTAssertEqual(summary.client[.settings], FrameCount(frames: 1, bytes: 9))
            XCTAssertEqual(summary.client.connectionOverheadBytes, 24 + 9)
            XCTAssertEqual(summary.client.protocolErrors + summary.client.frameSizeErrors, 0)
        }
    }

    func testRepeatedRequestUsesTheDynamicTable() {
        let (sink, _) = run(
            client: [
                Self.preface, Self.frame(1, 0x05, 1, Self.getBlock), Self.frame(1, 0x05, 3, Self.repeatedGetBlock),
            ], server: [])
        let requests = sink.records.filter { $0.kind == .request }.sorted { $0.index < $1.index }
        XCTAssertEqual(requests.map(\.wireHeaders), [9 + 16, 9 + 4])
        XCTAssertEqual(requests.map(\.requestHost), ["example.com", "example.com"])
        XCTAssertEqual(requests.map { $0.anomalies.contains(.unpaired) }, [true, true])
    }

    func testUnknownFramesAreCountedAndSkippedAndOversizedFramesReadOn() {
        // Type 0x20 with 4 payload bytes → 13; a DATA frame of 16,385 bytes is over the default
        // SETTINGS_MAX_FRAME_SIZE (16,384): a frame-size error, its bytes still the body's.
        let unknown = Self.frame(0x20, 0, 0, [1, 2, 3, 4])
        let big = Self.frame(0, 0x01, 1, [UInt8](repeating: 7, count: 16385))
        let (sink, summary) = run(
            client: [Self.preface, unknown, Self.frame(1, 0x04, 1, Self.getBlock), big], server: [])
        XCTAssertEqual(summary.client.unknown, FrameCount(frames: 1, bytes: 13))
        XCTAssertEqual(summary.client.frameSizeErrors, 1)
        XCTAssertEqual(sink.records.first?.wireBody, 16394)
        XCTAssertEqual(sink.records.first?.bodyLength, 16385)
        XCTAssertEqual(sink.records.first?.complete, true)
    }

    func testResetLeavesTheOpenMessageIncomplete() {
        let reset = Self.frame(3, 0, 1, [0, 0, 0, 8]) // CANCEL
        let (sink, summary) = run(
            client: [Self.preface, Self.frame(1, 0x05, 1, Self.getBlock)],
            server: [Self.frame(1, 0x04, 1, Self.okBlock), Self.frame(0, 0, 1, [1, 2, 3]), reset])
        let response = sink.records.first { $0.kind == .response }
        XCTAssertEqual(response?.complete, false)
        XCTAssertEqual(response?.anomalies.contains(.streamReset), true)
        XCTAssertEqual(response?.wireBody, 12)
        XCTAssertEqual(summary.server[.rstStream], FrameCount(frames: 1, bytes: 13))
        XCTAssertEqual(sink.records.first { $0.kind == .request }?.complete, true)
    }

    func testStreamsOpenAtTheEndAreIncomplete() {
        let (sink, _) = run(client: [Self.preface, Self.frame(1, 0x04, 1, Self.getBlock)], server: [])
        XCTAssertEqual(sink.records.map(\.complete), [false])
    }

    func testMidConnectionStartFindsFramesAndLeavesHeaderFieldsUnknown() {
        // 5 bytes of a frame cut off by the start, then HEADERS (its block refers to a table
        // the capture never saw), DATA, DATA with END_STREAM.
        let cutOff: [UInt8] = [0x6f, 0x6b, 0x21, 0x0a, 0x00]
        let headers = Self.frame(1, 0x04, 3, Self.repeatedGetBlock)
        let (sink, summary) = run(
            client: [cutOff + headers + Self.frame(0, 0, 3, [1, 2]) + Self.frame(0, 0x01, 3, [3])], server: [],
            startsAtBeginning: false)
        XCTAssertEqual(summary.client.lostBytes, 5)
        XCTAssertEqual(sink.records.count, 1)
        let request = sink.records.first
        // Method, scheme and path are static-table fields: known (§2a partial decoding); the
        // authority refers to an entry inserted before the capture: unknown, and so the head.
        XCTAssertEqual(request?.anomalies.contains(.hpackStateUnknown), true)
        XCTAssertEqual(request?.method, "GET")
        XCTAssertEqual(request?.target, Array("/".utf8))
        XCTAssertEqual(request?.protocolFacts.unknownHeadParts, [.authority, .fields])
        XCTAssertEqual(request?.message.requestLineKnown, false)
        XCTAssertNil(request?.protocolFacts.headerListSize)
        XCTAssertEqual(request?.wireHeaders, 13)
        XCTAssertEqual(request?.wireBody, 11 + 10)
        XCTAssertEqual(request?.complete, true)
    }

    func testGapInsideDataIsMissingBodyAndReadingGoesOn() {
        // DATA of 10 bytes sent as 4, a 3-byte gap, 3; then the stream ends.
        let data = Self.frame(0, 0x01, 1, Array(0..<10))
        let (sink, _) = run(
            client: [
                Self.preface, Self.frame(1, 0x04, 1, Self.getBlock), Array(data.prefix(13)), Array(data.suffix(3)),
            ],
            server: [], gaps: [(.up, afterChunk: 2, length: 3)])
        let request = sink.records.first
        XCTAssertEqual(request?.missingBytes, 3)
        XCTAssertEqual(request?.bodyLength, 10)
        XCTAssertEqual(request?.wireBody, 19)
        XCTAssertEqual(request?.complete, true)
        XCTAssertEqual(request?.anomalies.contains(.bytesMissing), true)
    }

    /// Frames of message types that no message can take still count, as the side's unowned
    /// overhead, so every byte it sent is somewhere (FuzzHTTP2 found the client's PUSH_PROMISE).
    func testFramesNoMessageTakesAreUnownedOverhead() {
        // PUSH_PROMISE from the client (only servers push): promised stream 4 bytes + the
        // 16-byte GET block = 20 → 29 on the wire; DATA "abc" on stream 0 → 12; HEADERS on
        // stream 3 without END_HEADERS, 3 block bytes → 12, cut short by a PING → 17.
        let push = Self.frame(5, 0x04, 1, [0, 0, 0, 2] + Self.getBlock)
        let stray = Self.frame(0, 0, 0, Array("abc".utf8))
        let cutBlock = Self.frame(1, 0, 3, Array(Self.getBlock.prefix(3)))
        let ping = Self.frame(6, 0, 0, [UInt8](repeating: 0, count: 8))
        for cut in [Cut.whole, .byteByByte] {
            let (sink, summary) = run(client: [Self.preface, push, stray, cutBlock, ping], server: [], cut: cut)
            XCTAssertEqual(sink.records.count, 0, "\(cut)")
            XCTAssertEqual(summary.client.unowned, FrameCount(frames: 3, bytes: 29 + 12 + 12), "\(cut)")
            XCTAssertEqual(summary.client.protocolErrors, 3, "\(cut)")
            XCTAssertEqual(summary.client[.ping], FrameCount(frames: 1, bytes: 17), "\(cut)")
            // 24 + 29 + 12 + 12 + 17 = 94: everything the client sent.
            XCTAssertEqual(summary.client.connectionOverheadBytes, 94, "\(cut)")
            XCTAssertEqual(summary.client.lostBytes, 0, "\(cut)")
        }
    }

    /// DATA on a stream whose request already ended is a second request of unknown head; the
    /// first, still waiting for a response, is kept (FuzzHTTP2 found it replaced and lost).
    func testASecondRequestOnAStreamKeepsTheFirst() {
        // Two empty DATA frames on stream 1, the first with END_STREAM: 9 bytes each.
        let (sink, summary) = run(
            client: [Self.preface, Self.frame(0, 0x01, 1, []), Self.frame(0, 0, 1, [])], server: [])
        XCTAssertEqual(sink.records.map(\.index), [0, 1])
        XCTAssertEqual(sink.records.map(\.wireBody), [9, 9])
        XCTAssertEqual(sink.records.map(\.complete), [true, false])
        XCTAssertEqual(sink.records.map { $0.anomalies.contains(.hpackStateUnknown) }, [true, true])
        XCTAssertEqual(summary.client.connectionOverheadBytes + summary.client.lostBytes, 24)
    }

    /// A gap in a frame header, and a frame cut by the end of the capture, are lost bytes.
    func testBytesHeldWhenAGapOrTheEndComesAreLost() {
        // The client: preface, then 4 of a HEADERS frame's 9 header bytes, a 10-byte gap;
        // frames are then searched for in the 7 bytes that follow and never found.
        let headers = Self.frame(1, 0x05, 1, Self.getBlock)
        let (_, summary) = run(
            client: [Self.preface, Array(headers.prefix(4)), Array(repeating: 0xff, count: 7)], server: [],
            gaps: [(.up, afterChunk: 1, length: 10)])
        // 4 held header bytes + the 10-byte gap + 7 searched bytes = 21.
        XCTAssertEqual(summary.client.lostBytes, 21)
        XCTAssertEqual(summary.client.connectionOverheadBytes, 24)
    }

    func testInterimResponseIsItsOwnRecord() {
        // `:status 103` as a literal of static name index 8 without indexing: 0x08, len 3.
        let early = Self.frame(1, 0x04, 1, [0x08, 3] + Array("103".utf8))
        let (sink, _) = run(
            client: [Self.preface, Self.frame(1, 0x05, 1, Self.getBlock)],
            server: [early, Self.frame(1, 0x05, 1, Self.okBlock)])
        // The 103 as it comes; the request once the final head pairs it; then the 200.
        XCTAssertEqual(sink.records.map(\.status), [103, nil, 200])
        XCTAssertEqual(sink.records.map(\.wireHeaders), [14, 25, 10])
        XCTAssertEqual(sink.records.map(\.index), [0, 0, 1])
        XCTAssertEqual(sink.records.map(\.pair), [nil, 1, 0])
    }

    /// A gap that takes a padded frame's pad-length byte leaves its padding unknown: the rest
    /// of the frame is skipped by its length, never a later byte read as the pad length.
    func testGapOverThePadLengthSkipsTheFrameByItsLength() {
        // Padded DATA with END_STREAM (flags 0x09): pad length 2, then "3bcde", then 2 zero
        // pad bytes: payload 1 + 5 + 2 = 8, 17 on the wire. The gap takes the pad-length byte;
        // the next byte, "3" (51), must not be read as the pad length. All 7 bytes after it are the
        // body's, missing (data and padding cannot be told apart).
        let data = Self.frame(0, 0x09, 1, [2] + Array("3bcde".utf8) + [0, 0])
        // Padded HEADERS with END_STREAM and END_HEADERS (0x0d): pad length 1, the 16-byte
        // GET block, 1 pad byte: payload 18, 27 on the wire; its pad-length byte in the gap.
        let headers = Self.frame(1, 0x0d, 3, [1] + Self.getBlock + [0])
        // Then a request on stream 5: 9 + 4 = 13 bytes, its fields unknown (HPACK state lost).
        let next = Self.frame(1, 0x05, 5, Self.repeatedGetBlock)
        for cut in [Cut.whole, .byteByByte] {
            let (sink, summary) = run(
                client: [
                    Self.preface, Self.frame(1, 0x04, 1, Self.getBlock), Array(data.prefix(9)),
                    Array(data.suffix(7)), Array(headers.prefix(9)), Array(headers.suffix(17)) + next,
                ],
                server: [],
                gaps: [(.up, afterChunk: 2, length: 1), (.up, afterChunk: 4, length: 1)])
            XCTAssertEqual(sink.records.map { $0.protocolFacts.stream }, [1, 3, 5], "\(cut)")
            XCTAssertEqual(sink.records.map(\.bodyLength), [7, 0, 0], "\(cut)")
            XCTAssertEqual(sink.records.map(\.missingBytes), [7, 0, 0], "\(cut)")
            XCTAssertEqual(sink.bodies.first ?? nil, [], "\(cut)")
            XCTAssertEqual(sink.bodyGaps.first ?? nil, 7, "\(cut)")
            // GET block 9 + 16 = 25 and DATA 17; HEADERS 27; 13.
            XCTAssertEqual(sink.records.map(\.wireHeaders), [25, 27, 13], "\(cut)")
            XCTAssertEqual(sink.records.map(\.wireBody), [17, 0, 0], "\(cut)")
            XCTAssertEqual(sink.records.map(\.complete), [true, true, true], "\(cut)")
            XCTAssertEqual(
                sink.records.map { $0.anomalies.contains(.hpackStateUnknown) }, [false, true, true], "\(cut)")
            XCTAssertEqual(sink.records.first?.anomalies.contains(.bytesMissing), true, "\(cut)")
            XCTAssertEqual(summary.client.protocolErrors, 0, "\(cut)")
            XCTAssertEqual(summary.client.lostBytes, 0, "\(cut)")
            XCTAssertEqual(summary.client[.data], FrameCount(frames: 1, bytes: 17), "\(cut)")
            XCTAssertEqual(summary.client[.headers], FrameCount(frames: 3, bytes: 25 + 27 + 13), "\(cut)")
            // Only the 24-byte preface is overhead: 24 + 25 + 17 + 27 + 13 = 106 = 104 fed + 2 in gaps.
            XCTAssertEqual(summary.client.connectionOverheadBytes, 24, "\(cut)")
        }
    }

    /// A CONTINUATION of another stream than the pending block's is a protocol error (RFC 9113
    /// §6.10): the pending block ends unread, and a later CONTINUATION of its stream finds
    /// nothing awaiting it.
    func testContinuationOfAnotherStreamEndsThePendingBlock() {
        // HEADERS on stream 1 without END_HEADERS, the GET block's first 3 bytes: 12 on the
        // wire; CONTINUATION (END_HEADERS) on stream 3 with the other 13: 22; the same
        // CONTINUATION on stream 1: 22; then a whole GET on stream 5: 9 + 16 = 25.
        let start = Self.frame(1, 0x01, 1, Array(Self.getBlock.prefix(3)))
        let stray = Self.frame(9, 0x04, 3, Array(Self.getBlock.suffix(13)))
        let late = Self.frame(9, 0x04, 1, Array(Self.getBlock.suffix(13)))
        let next = Self.frame(1, 0x05, 5, Self.getBlock)
        for cut in [Cut.whole, .byteByByte] {
            let (sink, summary) = run(client: [Self.preface, start, stray, late, next], server: [], cut: cut)
            // Stream 1's block never became a message. The broken block left the HPACK state
            // unknown, but stream 5's block refers to none of it (static fields and a literal):
            // decoded whole against placeholders (§2a partial decoding).
            XCTAssertEqual(sink.records.map { $0.protocolFacts.stream }, [5], "\(cut)")
            XCTAssertEqual(sink.records.first?.wireHeaders, 25, "\(cut)")
            XCTAssertEqual(sink.records.first?.anomalies.contains(.hpackStateUnknown), false, "\(cut)")
            XCTAssertEqual(sink.records.first?.method, "GET", "\(cut)")
            XCTAssertEqual(sink.records.first?.target, Array("http://example.com/".utf8), "\(cut)")
            // One error for the stray CONTINUATION, one for stream 1's that nothing awaited.
            XCTAssertEqual(summary.client.protocolErrors, 2, "\(cut)")
            XCTAssertEqual(summary.client.unowned, FrameCount(frames: 3, bytes: 12 + 22 + 22), "\(cut)")
            // 24 + 56 = 80, plus stream 5's 25: all 105 bytes the client sent.
            XCTAssertEqual(summary.client.connectionOverheadBytes, 80, "\(cut)")
            XCTAssertEqual(summary.client.lostBytes, 0, "\(cut)")
        }
    }
}
