import Analysis
import CaptureIO
import Foundation
import MessageModel
import MeterAuditKit
import PacketLayers
import Records
import TestSupport
import XCTest

/// The cost layers of docs/METERING.md §2c on captures built packet by packet. Every frame
/// below is Ethernet (14 B) + IPv4 (20 B) + TCP (20 B, no options) + payload: a packet's
/// headers are 40 B of IP and TCP and 14 B of link. Byte counts are worked out beside each
/// assertion from the literal messages.
final class CostLayerTests: XCTestCase {
    static let client = "127.0.0.1:40000"
    static let server = "127.0.0.1:8080"
    /// Sequence numbers of each side's first payload byte (ISN + 1).
    static let clientData: UInt32 = 1001
    static let serverData: UInt32 = 5001

    // "GET /a HTTP/1.1\r\n" = 17, "Host: x\r\n" = 9, "\r\n" = 2: 28 B each.
    static let requestA = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    static let requestB = Array("GET /b HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    // "HTTP/1.1 200 OK\r\n" = 17, "Content-Length: 2\r\n" = 19, "\r\n" = 2, body 2: 40 B.
    static let responseA = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
    static let responseB = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno".utf8)

    /// Builds frames 1 ms apart.
    struct Script {
        var frames: [CaptureFileWriter.Frame] = []
        var time: Int64 = 1_700_000_000_000_000_000

        mutating func add(
            _ from: String, _ to: String, seq: UInt32, ack: UInt32, flags: TCPFlags = [.ack], payload: [UInt8] = [],
            capturedPayload: Int? = nil
        ) {
            let bytes = PacketBuilder.tcp(from: from, to: to, seq: seq, ack: ack, flags: flags, payload: payload)
            let kept = capturedPayload.map { bytes.count - payload.count + $0 } ?? bytes.count
            frames.append(
                CaptureFileWriter.Frame(timestamp: time, originalLength: bytes.count, bytes: Array(bytes.prefix(kept))))
            time += 1_000_000
        }

        mutating func client(_ offset: Int, ack: Int, _ payload: [UInt8] = [], flags: TCPFlags = [.ack]) {
            add(
                CostLayerTests.client, CostLayerTests.server, seq: CostLayerTests.clientData &+ UInt32(offset),
                ack: CostLayerTests.serverData &+ UInt32(ack), flags: flags, payload: payload)
        }

        mutating func server(
            _ offset: Int, ack: Int, _ payload: [UInt8] = [], flags: TCPFlags = [.ack], capturedPayload: Int? = nil
        ) {
            add(
                CostLayerTests.server, CostLayerTests.client, seq: CostLayerTests.serverData &+ UInt32(offset),
                ack: CostLayerTests.clientData &+ UInt32(ack), flags: flags, payload: payload,
                capturedPayload: capturedPayload)
        }

        /// SYN, SYN/ACK, ACK: three empty packets of 54 B (40 B IP).
        mutating func handshake() {
            add(CostLayerTests.client, CostLayerTests.server, seq: 1000, ack: 0, flags: [.syn])
            add(CostLayerTests.server, CostLayerTests.client, seq: 5000, ack: 1001, flags: [.syn, .ack])
            client(0, ack: 0)
        }

        /// FIN from each side and the last ACK, after `clientSent` and `serverSent` bytes.
        mutating func close(clientSent: Int, serverSent: Int) {
            client(clientSent, ack: serverSent, flags: [.fin, .ack])
            server(serverSent, ack: clientSent + 1, flags: [.fin, .ack])
            client(clientSent + 1, ack: serverSent + 1)
        }
    }

    private func analyze(
        _ script: Script, name: String, options: AnalysisOptions = AnalysisOptions()
    ) throws -> (records: [MessageRecord], rows: [ConnectionRow]) {
        let path = try CaptureFileWriter.temporaryFile(
            named: name, containing: CaptureFileWriter.pcap(script.frames))
        var records: [MessageRecord] = []
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(path: path, connection: { rows.append($0) }) {
            records.append($0)
        }
        XCTAssertNil(diagnostics.error)
        return (records, rows)
    }

    private func layers(_ records: [MessageRecord], _ kind: MessageKind, _ index: Int) -> LowerLayers? {
        records.first { $0.message.kind == kind && $0.message.index == index }?.wire.lower
    }

    /// Two requests in one packet; the first response's last bytes and the whole second one
    /// in another: headers go to the message owning the packet's first payload byte.
    func testPipelinedMessagesShareTheirPacketsByFirstByte() throws {
        var script = Script()
        script.handshake()
        script.client(0, ack: 0, Self.requestA + Self.requestB) // 56 B payload
        script.server(0, ack: 56)
        script.server(0, ack: 56, Array(Self.responseA[0..<30]))
        script.server(30, ack: 56, Array(Self.responseA[30...]) + Self.responseB) // 10 + 40 B
        script.client(56, ack: 80)
        script.close(clientSent: 56, serverSent: 80)
        let (records, rows) = try analyze(script, name: "cost-pipelined.pcap")
        XCTAssertEqual(records.count, 4)
        // Request A: 28 B and the packet's headers (first byte): ip 28 + 40, frame 68 + 14.
        XCTAssertEqual(layers(records, .request, 0), LowerLayers(tcp: 28, ip: 68, frame: 82, packets: 1))
        // Request B: its 28 B only.
        XCTAssertEqual(layers(records, .request, 1), LowerLayers(tcp: 28, ip: 28, frame: 28, packets: 0))
        // Response A: 30 + 10 B and both packets' headers (each begins with its bytes):
        // ip 40 + 2 × 40 = 120, frame 120 + 2 × 14 = 148.
        XCTAssertEqual(layers(records, .response, 0), LowerLayers(tcp: 40, ip: 120, frame: 148, packets: 2))
        // Response B: its 40 B only.
        XCTAssertEqual(layers(records, .response, 1), LowerLayers(tcp: 40, ip: 40, frame: 40, packets: 0))
        XCTAssertEqual(records.map(\.wire.tls), records.map(\.wire.total), "cleartext: wire_tls = wire_total")
        let row = try XCTUnwrap(rows.first)
        // Client: SYN, ACK, ACK, FIN, ACK empty (5 × 54 B) and 56 B of payload in one packet.
        XCTAssertEqual(row.clientCost.total, LayerBytes(tls: 0, tcp: 56, ip: 56 + 6 * 40, frame: 56 + 6 * 54))
        XCTAssertEqual(row.clientCost.emptyPackets, LayerBytes(tls: 0, tcp: 0, ip: 5 * 40, frame: 5 * 54))
        XCTAssertEqual(row.clientCost.emptyPacketCount, 5)
        XCTAssertEqual(row.clientCost.overhead, row.clientCost.emptyPackets)
        // Server: SYN/ACK, ACK, FIN empty (3 × 54 B); 80 B of payload in two packets.
        XCTAssertEqual(row.serverCost.total, LayerBytes(tls: 0, tcp: 80, ip: 80 + 5 * 40, frame: 80 + 5 * 54))
        XCTAssertEqual(row.serverCost.overhead, LayerBytes(tls: 0, tcp: 0, ip: 3 * 40, frame: 3 * 54))
    }

    /// A copy of the response sent again after it was read and before the client's ACK
    /// (tcpdump on the sender's side sees both): charged again to the response.
    func testRetransmissionBeforeTheAckIsChargedToItsMessage() throws {
        var script = Script()
        script.handshake()
        script.client(0, ack: 0, Self.requestA)
        script.server(0, ack: 28)
        script.server(0, ack: 28, Self.responseA)
        script.server(0, ack: 28, Self.responseA) // the retransmission
        script.client(28, ack: 40)
        script.close(clientSent: 28, serverSent: 40)
        let (records, rows) = try analyze(script, name: "cost-retransmission.pcap")
        // Response: 2 × 40 B payload, 2 × 40 B headers, 2 × 14 B link; 40 B sent again.
        XCTAssertEqual(
            layers(records, .response, 0),
            LowerLayers(tcp: 80, ip: 160, frame: 188, retransmitted: 40, packets: 2))
        XCTAssertEqual(layers(records, .request, 0), LowerLayers(tcp: 28, ip: 68, frame: 82, packets: 1))
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.serverCost.retransmittedSegments, 1)
        XCTAssertEqual(row.serverCost.retransmittedBytes, 40)
        XCTAssertEqual(row.serverCost.lateCopies, 0)
        XCTAssertEqual(row.serverCost.unclaimed, LayerBytes())
    }

    /// A copy that comes after the peer acknowledged the message: the record has taken its
    /// figures, so the copy is the connection's (unclaimed), counted as a late copy.
    func testCopyAfterTheAckGoesToTheConnection() throws {
        var script = Script()
        script.handshake()
        script.client(0, ack: 0, Self.requestA)
        script.server(0, ack: 28, Self.responseA)
        script.client(28, ack: 40)
        // A second request makes the first response's record leave before the late copy.
        script.client(28, ack: 40, Self.requestB)
        script.server(40, ack: 56, Self.responseB)
        script.client(56, ack: 80)
        script.server(0, ack: 56, Self.responseA) // spurious copy, long acknowledged
        script.close(clientSent: 56, serverSent: 80)
        let (records, rows) = try analyze(script, name: "cost-late-copy.pcap")
        let row = try XCTUnwrap(rows.first)
        let response = try XCTUnwrap(layers(records, .response, 0))
        XCTAssertEqual(response.tcp, 40)
        XCTAssertEqual(row.serverCost.lateCopies, 1)
        // The copy's 40 B with its 40 B headers and 14 B link.
        XCTAssertEqual(row.serverCost.unclaimed, LayerBytes(tls: 0, tcp: 40, ip: 80, frame: 94))
        XCTAssertEqual(row.serverCost.retransmittedBytes, 40)
    }

    /// With room for one record waiting on its ACK (`maxWaitingRecords` 1), a response makes
    /// its request take its layers before the server's ACK: they are flagged lower bounds.
    /// A copy of request A the client sends after that ACK is the connection's late copy, as
    /// with the default room. When a record takes its layers depends on the capture alone,
    /// never on how fast its body is measured: bodies measured as they stream on the parsing
    /// thread (always ready at once) and on the worker threads give the same figures.
    func testRecordsTakenBeforeTheirAckAreLowerBoundsWhateverTheBodyTiming() throws {
        var script = Script()
        script.handshake()
        script.client(0, ack: 0, Self.requestA)
        script.server(0, ack: 28, Self.responseA)
        script.client(0, ack: 40, Self.requestA) // sent again, after the server's ACK
        script.client(28, ack: 40, Self.requestB)
        script.server(40, ack: 56, Self.responseB)
        script.client(56, ack: 80)
        script.close(clientSent: 56, serverSent: 80)
        // Each message: its bytes in a packet of its own, 40 B headers, 14 B link.
        let request = LowerLayers(tcp: 28, ip: 68, frame: 82, packets: 1)
        let response = LowerLayers(tcp: 40, ip: 80, frame: 94, packets: 1)
        var forced = request
        forced.lowerBound = true
        var results: [[LowerLayers?]] = []
        for inline in [true, false] {
            var options = AnalysisOptions()
            options.limits.maxWaitingRecords = 1
            if inline { options.limits.bodyWork.maxCollectedBody = 0 }
            let (records, rows) = try analyze(script, name: "cost-forced-\(inline).pcap", options: options)
            // Each request is handed on with its response, which makes it leave before the ACK.
            XCTAssertEqual(layers(records, .request, 0), forced)
            XCTAssertEqual(layers(records, .request, 1), forced)
            XCTAssertEqual(layers(records, .response, 0), response)
            XCTAssertEqual(layers(records, .response, 1), response)
            let row = try XCTUnwrap(rows.first)
            XCTAssertEqual(row.clientCost.lateCopies, 1)
            XCTAssertEqual(row.clientCost.unclaimed, LayerBytes(tls: 0, tcp: 28, ip: 68, frame: 82))
            results.append(records.map(\.wire.lower))
        }
        XCTAssertEqual(results[0], results[1])
        // With the default room, the requests wait for the server's ACK: exact figures, and
        // the copy after the ACK is still the connection's.
        let (records, rows) = try analyze(script, name: "cost-unforced.pcap")
        XCTAssertEqual(layers(records, .request, 0), request)
        XCTAssertEqual(layers(records, .request, 1), request)
        XCTAssertEqual(try XCTUnwrap(rows.first).clientCost.lateCopies, 1)
    }

    /// The request's second half arrives first: both packets are the request's.
    func testOutOfOrderSegmentBelongsToItsMessage() throws {
        var script = Script()
        script.handshake()
        script.client(14, ack: 0, Array(Self.requestA[14...]))
        script.client(0, ack: 0, Array(Self.requestA[0..<14]))
        script.server(0, ack: 28, Self.responseA)
        script.client(28, ack: 40)
        script.close(clientSent: 28, serverSent: 40)
        let (records, _) = try analyze(script, name: "cost-out-of-order.pcap")
        // 14 + 14 B, two packets' headers: ip 28 + 80, frame 108 + 28.
        XCTAssertEqual(layers(records, .request, 0), LowerLayers(tcp: 28, ip: 108, frame: 136, packets: 2))
        XCTAssertEqual(layers(records, .response, 0), LowerLayers(tcp: 40, ip: 80, frame: 94, packets: 1))
    }

    /// "HTTP/1.1 200 OK\r\n" 17 + "Content-Length: 1000\r\n" 22 + "\r\n" 2 = 41 B of head, 1000 B body.
    static let longResponse =
        Array("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".utf8) + Array(repeating: 97, count: 1000)

    /// Snaplen kept 100 B of the payload: the packet still cost its original length, and the
    /// layers are exact (the bytes were sent, only not captured).
    func testSnaplenCutPacketCountsItsOriginalLength() throws {
        var script = Script()
        script.handshake()
        script.client(0, ack: 0, Self.requestA)
        script.server(0, ack: 28, Self.longResponse, capturedPayload: 100)
        script.client(28, ack: 1041)
        script.close(clientSent: 28, serverSent: 1041)
        let (records, _) = try analyze(script, name: "cost-snaplen.pcap")
        let response = try XCTUnwrap(records.first { $0.message.kind == .response })
        XCTAssertGreaterThan(response.message.missingBytes, 0)
        // 1041 B payload, ip 1081, frame 1095; not a lower bound.
        XCTAssertEqual(response.wire.lower, LowerLayers(tcp: 1041, ip: 1081, frame: 1095, packets: 1))
    }

    /// The response's second packet was never captured (the client's ACK covers it): the
    /// layers count what was seen and say they are lower bounds.
    func testGapLeavesLowerBounds() throws {
        var script = Script()
        script.handshake()
        script.client(0, ack: 0, Self.requestA)
        script.server(0, ack: 28, Array(Self.longResponse[0..<541]))
        // bytes 541..<1041 lost before the capture point
        script.client(28, ack: 1041)
        script.close(clientSent: 28, serverSent: 1041)
        let (records, rows) = try analyze(script, name: "cost-gap.pcap")
        let response = try XCTUnwrap(records.first { $0.message.kind == .response })
        XCTAssertEqual(response.message.missingBytes, 500)
        // 541 B seen, ip 581, frame 595.
        XCTAssertEqual(response.wire.lower, LowerLayers(tcp: 541, ip: 581, frame: 595, packets: 1, lowerBound: true))
        XCTAssertEqual(rows.first?.serverCost.total.tcp, 541)
    }

    /// h2c with prior knowledge: control frames and the preface are the connection's, and a
    /// packet whose first byte is a control frame gives its headers to the connection.
    func testHTTP2ControlFramesInterleavedWithData() throws {
        func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
            let length = payload.count
            return [UInt8(length >> 16), UInt8((length >> 8) & 0xff), UInt8(length & 0xff), type, flags]
                + [
                    UInt8(stream >> 24), UInt8((stream >> 16) & 0xff), UInt8((stream >> 8) & 0xff),
                    UInt8(stream & 0xff),
                ]
                + payload
        }
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) // 24 B
        let settings = frame(4, 0, 0, []) // 9 B
        // :method GET, :path /, :scheme http (indexed), :authority x (literal, indexed name 1): 6 B.
        let requestHeaders = frame(1, 0x5, 1, [0x82, 0x84, 0x86, 0x41, 0x01, 0x78]) // 15 B
        let responseHeaders = frame(1, 0x4, 1, [0x88]) // :status 200: 10 B
        let hello = frame(0, 0, 1, Array("hello".utf8)) // 14 B
        let ping = frame(6, 0, 0, Array(repeating: 0, count: 8)) // 17 B
        let world = frame(0, 0x1, 1, Array("world".utf8)) // 14 B
        var script = Script()
        script.handshake()
        let clientBytes = preface + settings + requestHeaders // 48 B
        script.client(0, ack: 0, clientBytes)
        script.server(0, ack: 48, settings + responseHeaders) // 19 B
        script.server(19, ack: 48, hello + ping) // 31 B
        script.server(50, ack: 48, world) // 14 B
        script.client(48, ack: 64)
        script.close(clientSent: 48, serverSent: 64)
        let (records, rows) = try analyze(script, name: "cost-h2c.pcap")
        XCTAssertEqual(records.count, 2)
        // The request's 15 B; its packet begins with the preface, so the headers are the connection's.
        XCTAssertEqual(layers(records, .request, 0), LowerLayers(tcp: 15, ip: 15, frame: 15, packets: 0))
        // The response: 10 + 14 + 14 B; the packets starting with DATA give it their headers (2).
        XCTAssertEqual(layers(records, .response, 0), LowerLayers(tcp: 38, ip: 118, frame: 146, packets: 2))
        let row = try XCTUnwrap(rows.first)
        // Client control: preface 24 + SETTINGS 9 = 33 B, with its packet's 40 + 14 B.
        XCTAssertEqual(row.clientCost.http2Control, LayerBytes(tls: 0, tcp: 33, ip: 73, frame: 87))
        // Server control: SETTINGS 9 + PING 17 = 26 B and the first packet's headers.
        XCTAssertEqual(row.serverCost.http2Control, LayerBytes(tls: 0, tcp: 26, ip: 66, frame: 80))
        XCTAssertEqual(row.serverCost.unclaimed, LayerBytes())
    }
}
