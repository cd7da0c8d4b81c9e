import Analysis
import Flows
import HTTP1
import MessageModel
@testable import MeterAuditKit
import PacketLayers
import Records
import TCPReassembly
import TLS
import XCTest

/// `TLSRelay`'s cost accounting (docs/METERING.md §2b-§2c), driven by hand: real TLS record
/// bytes into the relay, `PacketCost`s into its connection's ledger. The connection has no
/// key: TLSConnection reads a TLS 1.2 ServerHello, cannot decrypt, and hands on the
/// application_data records sent before ChangeCipherSpec as they are, so each record's
/// plaintext is its fragment and its overhead is its 5-byte header. Packets have 40 B of IP
/// and TCP headers and 14 B of link layer.
final class TLSRelayTests: XCTestCase {
    // "GET /a HTTP/1.1\r\n" = 17, "Host: x\r\n" = 9, "\r\n" = 2: 28 B each.
    static let requestA = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    static let requestB = Array("GET /b HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    // "HTTP/1.1 200 OK\r\n" = 17, "Content-Length: 2\r\n" = 19, "\r\n" = 2, body 2: 40 B.
    static let responseA = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
    static let responseB = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno".utf8)

    static func record(_ type: UInt8, _ fragment: [UInt8]) -> [UInt8] {
        [type, 3, 3, UInt8(fragment.count >> 8), UInt8(fragment.count & 0xff)] + fragment
    }

    static func handshake(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        record(22, [type, 0, UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body)
    }

    /// Version, random, empty session id, one suite (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
    /// null compression, no extensions: 2 + 32 + 1 + 4 + 2 = 41 B; the record 5 + 4 + 41 = 50 B.
    static let clientHello = handshake(1, [3, 3] + [UInt8](repeating: 1, count: 32) + [0, 0, 2, 0xC0, 0x2F, 1, 0])
    /// Version, random, empty session id, the suite, null compression: 2 + 32 + 1 + 2 + 1 = 38 B;
    /// the record 5 + 4 + 38 = 47 B.
    static let serverHello = handshake(2, [3, 3] + [UInt8](repeating: 2, count: 32) + [0, 0xC0, 0x2F, 0])

    static func application(_ plaintext: [UInt8]) -> [UInt8] { record(23, plaintext) }

    /// One relay over a ledger the test sees, with the records its sink emitted and the row.
    final class Harness {
        let info = ConnectionInfo(
            number: 0, initiator: TransportEndpoint(address: IPAddress(ipv4: 0x7f00_0001), port: 40000),
            responder: TransportEndpoint(address: IPAddress(ipv4: 0x7f00_0001), port: 443), sawHandshake: true,
            firstPacketTime: 1_700_000_000_000_000_000)
        let costs = ConnectionCostLedger(limits: Limits())
        let sink: RecordSink
        let relay: TLSRelay
        var records: [MessageRecord] = []
        var row: ConnectionRow?
        private var sent: [Int64] = [0, 0]
        private var time: Int64 = 1_700_000_000_000_000_000

        init() {
            let options = AnalysisOptions()
            var emitted: [MessageRecord] = []
            var closedRow: ConnectionRow?
            sink = RecordSink(
                builder: RecordBuilder(input: "t", estimators: options.estimators, normalizer: options.normalizer),
                diagnostics: DiagnosticsCollector(InputDiagnostics(source: "t", path: "t")),
                worker: BodyWorker(level: 6, limits: options.limits.decoding), maxWaiting: 4096,
                emit: { emitted.append($0) })
            let context = ConnectionContext(
                sink: sink, limits: HTTPLimits(), keys: KeyStore(KeyLog()), input: "t", costLimits: Limits(),
                closed: { row, _ in closedRow = row })
            relay = TLSRelay(info: info, context: context, firstBytes: nil, costs: costs)
            finishRun = { [unowned self] in
                self.records = emitted
                self.row = closedRow
            }
        }

        private var finishRun: () -> Void = {}

        /// Stream bytes from `side`, in order.
        func send(_ side: Direction, _ bytes: [UInt8]) {
            time += 1_000_000
            let position = StreamPosition(time: time, offset: sent[side.rawValue], peerAcknowledged: nil)
            bytes.withUnsafeBytes { relay.receive($0, from: side, at: position) }
            sent[side.rawValue] += Int64(bytes.count)
        }

        /// A packet of `side` carrying `range` of its stream.
        func packet(_ side: Direction, _ range: Range<Int64>) {
            costs.add(
                PacketCost(
                    time: time, offset: range.lowerBound, payloadLength: Int(range.count), headerBytes: 40,
                    linkBytes: 14),
                from: side)
        }

        func close() {
            relay.close(ConnectionAccounting(info: info))
            sink.finish()
            finishRun()
        }

        /// The TCP runs of `side`: range and owner, messages named by their order of first claim.
        func runs(_ side: Direction) -> [String] {
            var slots: [LayerSlot] = []
            return costs[side].claims.runs.map { run in
                let owner: String
                switch run.owner {
                case let .message(slot):
                    if !slots.contains(where: { $0 === slot }) { slots.append(slot) }
                    owner = "m\(slots.firstIndex { $0 === slot }! + 1)"
                case .tlsControl: owner = "tls"
                case .http2Control: owner = "h2"
                case .unclaimed: owner = "none"
                }
                return "\(run.start)..<\(run.end) \(owner)"
            }
        }

        /// The message slots of `side`'s TCP runs, in order.
        func slots(_ side: Direction) -> [LayerSlot] {
            var result: [LayerSlot] = []
            for run in costs[side].claims.runs {
                if case let .message(slot) = run.owner, !result.contains(where: { $0 === slot }) { result.append(slot) }
            }
            return result
        }

        func sentRecords(_ kind: MessageKind) -> [MessageRecord] { records.filter { $0.message.kind == kind } }
    }

    /// Two requests in one TLS record: the record's overhead (5 B) goes with the first
    /// request's plaintext, the second request gets its plaintext only. The TCP runs, the
    /// slots' TLS bytes, the records' wire_tls and their lower layers all follow.
    func testTwoMessagesInOneRecord() {
        let h = Harness()
        h.send(.up, Self.clientHello)  // TCP 0..<50
        h.send(.down, Self.serverHello)  // TCP 0..<47
        h.send(.up, Self.application(Self.requestA + Self.requestB))  // 5 + 56 = 61 B: TCP 50..<111
        h.send(.down, Self.application(Self.responseA))  // 45 B: TCP 47..<92
        h.send(.down, Self.application(Self.responseB))  // 45 B: TCP 92..<137
        // Before the packets: the record's TCP bytes are cut as overhead + request A's 28
        // plaintext bytes (50..<83, 33 B), then request B's 28 (83..<111).
        XCTAssertEqual(h.runs(.up), ["0..<50 tls", "50..<83 m1", "83..<111 m2"])
        XCTAssertEqual(h.runs(.down), ["0..<47 tls", "47..<92 m1", "92..<137 m2"])
        let requests = h.slots(.up)
        XCTAssertEqual(requests.map(\.tls), [33, 28])
        // Packet 0..<60 begins in the ClientHello: its headers are tls_control's, 10 B are A's.
        h.packet(.up, 0..<60)
        // Packet 60..<111 begins in A: A's 23 B and the headers, then B's 28 B.
        h.packet(.up, 60..<111)
        h.packet(.down, 0..<47)
        h.packet(.down, 47..<137)  // begins in response A: 45 B and the headers; B's 45 B
        h.close()

        let sentRequests = h.sentRecords(.request)
        XCTAssertEqual(sentRequests.map(\.wire.total), [28, 28])
        XCTAssertEqual(sentRequests.map(\.wire.tls), [33, 28])  // 28 + 5 overhead, 28 + 0
        // A: tcp 10 + 23 = 33, ip 33 + 40 = 73, frame 33 + 54 = 87, one packet begun.
        XCTAssertEqual(sentRequests[0].wire.lower, LowerLayers(tcp: 33, ip: 73, frame: 87, packets: 1))
        // B: its 28 B only.
        XCTAssertEqual(sentRequests[1].wire.lower, LowerLayers(tcp: 28, ip: 28, frame: 28, packets: 0))
        let responses = h.sentRecords(.response)
        XCTAssertEqual(responses.map(\.wire.tls), [45, 45])
        XCTAssertEqual(responses[0].wire.lower, LowerLayers(tcp: 45, ip: 85, frame: 99, packets: 1))
        XCTAssertEqual(responses[1].wire.lower, LowerLayers(tcp: 45, ip: 45, frame: 45, packets: 0))

        let row = try! XCTUnwrap(h.row)
        // Client: ClientHello 50 B (tls), its packet's headers: ip 90, frame 104. TLS total 50 + 61.
        XCTAssertEqual(row.clientCost.tlsControl, LayerBytes(tls: 50, tcp: 50, ip: 90, frame: 104))
        XCTAssertEqual(row.clientCost.unclaimed, LayerBytes())
        XCTAssertEqual(row.clientCost.total, LayerBytes(tls: 111, tcp: 111, ip: 191, frame: 219))
        XCTAssertEqual(row.serverCost.tlsControl, LayerBytes(tls: 47, tcp: 47, ip: 87, frame: 101))
        XCTAssertEqual(row.serverCost.total, LayerBytes(tls: 137, tcp: 137, ip: 217, frame: 245))
        XCTAssertEqual(row.clientTLSBytes, 111)
        XCTAssertEqual(row.clientTLSControlBytes, 50)
    }

    /// A response spanning two records, the second record also carrying the next response:
    /// the first response owns both records' overhead (each begins in its plaintext), the
    /// second owns none.
    func testMessageSpanningTwoRecords() {
        let h = Harness()
        h.send(.up, Self.clientHello)  // TCP 0..<50
        h.send(.down, Self.serverHello)  // TCP 0..<47
        h.send(.up, Self.application(Self.requestA))  // 33 B: TCP 50..<83
        h.send(.up, Self.application(Self.requestB))  // 33 B: TCP 83..<116
        // Response A's first 25 B: 30 B at TCP 47..<77; its last 15 B and response B's 40 B:
        // 5 + 55 = 60 B at TCP 77..<137.
        h.send(.down, Self.application(Array(Self.responseA[0..<25])))
        h.send(.down, Self.application(Array(Self.responseA[25...]) + Self.responseB))
        // Response A: 47..<77 (5 + 25) and 77..<97 (5 + 15); response B: 97..<137 (40).
        XCTAssertEqual(h.runs(.down), ["0..<47 tls", "47..<97 m1", "97..<137 m2"])
        XCTAssertEqual(h.slots(.down).map(\.tls), [50, 40])
        XCTAssertEqual(h.runs(.up), ["0..<50 tls", "50..<83 m1", "83..<116 m2"])
        h.packet(.up, 0..<50)
        h.packet(.up, 50..<116)
        h.packet(.down, 0..<47)
        h.packet(.down, 47..<100)  // A's 50 B (and the headers), B's first 3
        h.packet(.down, 100..<137)  // B's last 37 B and the headers
        h.close()

        let responses = h.sentRecords(.response)
        XCTAssertEqual(responses.map(\.wire.total), [40, 40])
        XCTAssertEqual(responses.map(\.wire.tls), [50, 40])  // 40 + 5 + 5, 40 + 0
        XCTAssertEqual(responses[0].wire.lower, LowerLayers(tcp: 50, ip: 90, frame: 104, packets: 1))
        // B: 3 + 37 = 40; ip 40 + 40 = 80; frame 40 + 54 = 94.
        XCTAssertEqual(responses[1].wire.lower, LowerLayers(tcp: 40, ip: 80, frame: 94, packets: 1))
        let requests = h.sentRecords(.request)
        XCTAssertEqual(requests.map(\.wire.tls), [33, 33])
        XCTAssertEqual(requests[0].wire.lower, LowerLayers(tcp: 33, ip: 73, frame: 87, packets: 1))
        XCTAssertEqual(requests[1].wire.lower, LowerLayers(tcp: 33, ip: 33, frame: 33, packets: 0))
        let row = try! XCTUnwrap(h.row)
        XCTAssertEqual(row.serverCost.total, LayerBytes(tls: 137, tcp: 137, ip: 257, frame: 299))
        XCTAssertEqual(row.serverCost.overhead, LayerBytes(tls: 47, tcp: 47, ip: 87, frame: 101))
    }

    /// Plaintext no message claims (bytes before the first message: not HTTP) is nobody's, and
    /// a record beginning in it gives its overhead to nobody, not to the message after it.
    func testRecordBeginningInUnclaimedPlaintextGivesItsOverheadToNobody() {
        let h = Harness()
        h.send(.up, Self.clientHello)  // TCP 0..<50
        h.send(.down, Self.serverHello)  // TCP 0..<47
        // "\r\n" before the request (RFC 9112 §2.2: skipped, no message's): 5 + 2 + 28 = 35 B.
        h.send(.up, Self.application(Array("\r\n".utf8) + Self.requestA))
        h.send(.down, Self.application(Self.responseA))
        // TCP 50..<57: overhead 5 + the 2 skipped bytes, nobody's; 57..<85 request A.
        XCTAssertEqual(h.runs(.up), ["0..<50 tls", "50..<57 none", "57..<85 m1"])
        XCTAssertEqual(h.slots(.up).map(\.tls), [28])
        h.packet(.up, 0..<50)
        h.packet(.up, 50..<85)  // begins in the nobody's bytes: its headers are unclaimed
        h.close()
        let requests = h.sentRecords(.request)
        XCTAssertEqual(requests.map(\.wire.total), [28])
        XCTAssertEqual(requests.map(\.wire.tls), [28])  // the record began 2 B before it: no overhead
        XCTAssertEqual(requests[0].wire.lower, LowerLayers(tcp: 28, ip: 28, frame: 28, packets: 0))
        let row = try! XCTUnwrap(h.row)
        XCTAssertEqual(row.clientCost.unclaimed, LayerBytes(tls: 7, tcp: 7, ip: 47, frame: 61))
    }
}
