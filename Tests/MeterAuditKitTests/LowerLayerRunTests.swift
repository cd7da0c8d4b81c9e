import Analysis
import CaptureIO
import Foundation
import MeterAuditKit
import PacketLayers
import TestSupport
import XCTest

/// Whole runs over captures built for the lower layers: a forged RST, PPPoE and MPLS framing.
/// Sizes are hand-counted from the literal messages below.
final class LowerLayerRunTests: XCTestCase {
    // "GET /a?x=1 HTTP/1.1\r\n" = 21; "Host: example.test\r\n" + "\r\n" = 20 + 2 = 22.
    static let request = "GET /a?x=1 HTTP/1.1\r\nHost: example.test\r\n\r\n"
    // "HTTP/1.1 200 OK\r\n" = 17; "Content-Length: 5\r\n" + "\r\n" = 19 + 2 = 21; body 5.
    static let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

    private func analyze(_ frames: [CaptureFileWriter.Frame], name: String) throws -> (
        [MessageRecord], InputDiagnostics
    ) {
        let path = try CaptureFileWriter.temporaryFile(named: name, containing: CaptureFileWriter.pcap(frames))
        var records: [MessageRecord] = []
        let diagnostics = InputAnalyzer().analyze(path: path) { records.append($0) }
        return (records, diagnostics)
    }

    private func sizes(_ records: [MessageRecord]) -> [[Int?]] {
        records.sorted { $0.message.kind == .request && $1.message.kind != .request }
            .map { [$0.wire.line, $0.wire.headers, $0.wire.body] }
    }

    /// Request, a RST forged "from the server" 100 bytes into its window, then the real
    /// response: tshark reads on, and so must we. Both records keep their exact sizes.
    func testForgedResetKeepsBothRecords() throws {
        var conversation = Conversation()
        conversation.handshake()
        conversation.send(.client, Self.request)
        conversation.forgedReset(from: .server, advance: 100)
        conversation.send(.server, Self.response)
        conversation.close()
        let (records, diagnostics) = try analyze(conversation.frames, name: "forged-rst.pcap")
        XCTAssertEqual(sizes(records), [[21, 22, 0], [17, 21, 5]])
        XCTAssertEqual(records.map(\.message.complete), [true, true])
        XCTAssertEqual(records.map(\.message.pair), [0, 0])
        XCTAssertEqual(diagnostics.packets.ignoredResets, 1)
        XCTAssertEqual(diagnostics.connections.unterminated, 0)
    }

    func testExchangeOverPPPoEAndMPLS() throws {
        for link in [PacketBuilder.Link.pppoe(tags: [.init(id: 42)], session: 0x0101), .mpls(labels: [16, 17])] {
            var conversation = Conversation(link: link)
            conversation.handshake()
            conversation.send(.client, Self.request)
            conversation.send(.server, Self.response)
            conversation.close()
            // Plus one PPPoE discovery frame (PADI), skipped by name.
            let padi = PacketBuilder.destinationMAC + PacketBuilder.sourceMAC + [0x88, 0x63, 0x11, 0x09, 0, 0, 0, 0]
            let frames =
                conversation.frames + [CaptureFileWriter.Frame(timestamp: 1_800_000_000_000_000_000, bytes: padi)]
            let (records, diagnostics) = try analyze(frames, name: "encapsulated.pcap")
            XCTAssertEqual(sizes(records), [[21, 22, 0], [17, 21, 5]], "\(link)")
            // 3 handshake + 2 × (data + ACK) + 3 teardown = 10 TCP packets.
            XCTAssertEqual(diagnostics.packets.tcp, 10, "\(link)")
            XCTAssertEqual(diagnostics.packets.skipped, [.pppoeDiscovery: 1], "\(link)")
        }
    }
}
