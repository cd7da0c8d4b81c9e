import Analysis
import CostAccounting
import MessageModel
import MeterAuditKit
import PacketLayers
import TestSupport
import XCTest

/// A protocol registered by this target alone (`LineProtocol`): its records get exact cost
/// layers, and the records' layers plus the connection's overhead are the capture's totals,
/// as CostLayerTests checks for HTTP. Frames are Ethernet (14 B) + IPv4 (20 B) + TCP (20 B)
/// + payload: each packet has 40 B of IP and TCP headers and 14 B of link.
final class LineProtocolTests: XCTestCase {
    static let clientAddress = "127.0.0.1:40000"
    static let serverAddress = "127.0.0.1:7070"
    static let clientISN: UInt32 = 1000
    static let serverISN: UInt32 = 5000

    private var frames: [CaptureFileWriter.Frame] = []
    private var time: Int64 = 1_700_000_000_000_000_000

    private func send(
        _ from: String, _ to: String, seq: UInt32, ack: UInt32, flags: TCPFlags = [.ack], _ payload: String = ""
    ) {
        let bytes = PacketBuilder.tcp(
            from: from, to: to, seq: seq, ack: ack, flags: flags, payload: Array(payload.utf8))
        frames.append(CaptureFileWriter.Frame(timestamp: time, bytes: bytes))
        time += 1_000_000
    }

    /// Client bytes from offset `offset`, acknowledging the server's stream up to `ack`.
    private func client(_ offset: Int, ack: Int, flags: TCPFlags = [.ack], _ payload: String = "") {
        send(
            Self.clientAddress, Self.serverAddress, seq: Self.clientISN + 1 + UInt32(offset),
            ack: Self.serverISN + 1 + UInt32(ack), flags: flags, payload)
    }

    private func server(_ offset: Int, ack: Int, flags: TCPFlags = [.ack], _ payload: String = "") {
        send(
            Self.serverAddress, Self.clientAddress, seq: Self.serverISN + 1 + UInt32(offset),
            ack: Self.clientISN + 1 + UInt32(ack), flags: flags, payload)
    }

    func testEveryLineIsAMessageWithExactCostLayers() throws {
        send(Self.clientAddress, Self.serverAddress, seq: Self.clientISN, ack: 0, flags: [.syn])
        send(Self.serverAddress, Self.clientAddress, seq: Self.serverISN, ack: Self.clientISN + 1, flags: [.syn, .ack])
        client(0, ack: 0)
        client(0, ack: 0, "HELLO\r\nPING\r\n") // 7 + 6 = 13 B in one packet
        server(0, ack: 13, "HI\r\nPO") // "HI\r\n" 4 B, then 2 B of the next line
        server(6, ack: 13, "NG\r\n") // the line's last 4 B: 6 B in all
        client(13, ack: 10)
        client(13, ack: 10, flags: [.fin, .ack])
        server(10, ack: 14, flags: [.fin, .ack])
        client(14, ack: 11)

        let path = try CaptureFileWriter.temporaryFile(
            named: "line-protocol.pcap", containing: CaptureFileWriter.pcap(frames))
        var options = AnalysisOptions()
        options.protocols.register(LineProtocol.registration(port: 7070))
        var records: [MessageRecord] = []
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(path: path, connection: { rows.append($0) }) {
            records.append($0)
        }
        XCTAssertNil(diagnostics.error)

        func lower(_ kind: MessageKind, _ index: Int) -> LowerLayers? {
            records.first { $0.message.kind == kind && $0.message.index == index }?.wire.lower
        }
        XCTAssertEqual(records.map(\.wire.total), [7, 6, 4, 6])
        // HELLO: its 7 B and the packet's headers (its first byte): ip 7 + 40, frame 47 + 14.
        XCTAssertEqual(lower(.request, 0), LowerLayers(tcp: 7, ip: 47, frame: 61, packets: 1))
        // PING: its 6 B only.
        XCTAssertEqual(lower(.request, 1), LowerLayers(tcp: 6, ip: 6, frame: 6, packets: 0))
        // HI: 4 B and the first packet's headers: ip 44, frame 58.
        XCTAssertEqual(lower(.response, 0), LowerLayers(tcp: 4, ip: 44, frame: 58, packets: 1))
        // PONG: 2 + 4 B and the second packet's headers (it begins there): ip 46, frame 60.
        XCTAssertEqual(lower(.response, 1), LowerLayers(tcp: 6, ip: 46, frame: 60, packets: 1))

        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.records, 4)
        // Client: SYN, ACK, ACK, FIN, ACK empty (5 × 54 B) and one packet of 13 B.
        XCTAssertEqual(row.clientCost.total, LayerBytes(tcp: 13, ip: 13 + 6 * 40, frame: 13 + 6 * 54))
        XCTAssertEqual(row.clientCost.overhead, LayerBytes(ip: 5 * 40, frame: 5 * 54))
        // Server: SYN/ACK, FIN empty (2 × 54 B) and two packets of 6 and 4 B.
        XCTAssertEqual(row.serverCost.total, LayerBytes(tcp: 10, ip: 10 + 4 * 40, frame: 10 + 4 * 54))
        XCTAssertEqual(row.serverCost.overhead, LayerBytes(ip: 2 * 40, frame: 2 * 54))
        // The records' layers plus the overhead are each direction's totals, at every layer.
        for (kind, cost) in [(MessageKind.request, row.clientCost), (.response, row.serverCost)] {
            let sent = records.filter { $0.message.kind == kind }.compactMap(\.wire.lower)
            XCTAssertEqual(sent.reduce(0) { $0 + $1.tcp } + cost.overhead.tcp, cost.total.tcp)
            XCTAssertEqual(sent.reduce(0) { $0 + $1.ip } + cost.overhead.ip, cost.total.ip)
            XCTAssertEqual(sent.reduce(0) { $0 + $1.frame } + cost.overhead.frame, cost.total.frame)
        }
    }

    /// Without the registration, the same port is HTTP/1.x's, which finds no message.
    func testUnregisteredTheLinesAreNoMessages() throws {
        send(Self.clientAddress, Self.serverAddress, seq: Self.clientISN, ack: 0, flags: [.syn])
        send(Self.serverAddress, Self.clientAddress, seq: Self.serverISN, ack: Self.clientISN + 1, flags: [.syn, .ack])
        client(0, ack: 0, "HELLO\r\n")
        let path = try CaptureFileWriter.temporaryFile(
            named: "line-unregistered.pcap", containing: CaptureFileWriter.pcap(frames))
        var records: [MessageRecord] = []
        _ = InputAnalyzer().analyze(path: path) { records.append($0) }
        XCTAssertEqual(records.count, 0)
    }
}
