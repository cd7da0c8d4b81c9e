import Analysis
import CaptureIO
import MeterAuditKit
import PacketLayers
import TestSupport
import XCTest

/// UDP that no protocol reads is counted per input by port at every layer (diagnostics.json's
/// `udp`), the figures worked out by hand; TCP beside it is untouched.
final class UDPRunTests: XCTestCase {
    private func udpFrame(_ from: String, _ to: String, _ payload: [UInt8]) -> [UInt8] {
        let (a, b) = (PacketBuilder.endpoint(from), PacketBuilder.endpoint(to))
        let udp = PacketBuilder.be16(a.port) + PacketBuilder.be16(b.port) + PacketBuilder.be16(UInt16(8 + payload.count))
            + [0, 0] + payload
        return PacketBuilder.frame(PacketBuilder.ipv4(source: a.address, destination: b.address, protocolNumber: 17, payload: udp))
    }

    func testOtherUDPIsCountedByPort() throws {
        let frames = [
            // A DNS query (30 bytes) and its answer (46 bytes): port 53, one flow.
            udpFrame("10.0.0.1:50000", "10.0.0.53:53", [UInt8](repeating: 1, count: 30)),
            udpFrame("10.0.0.53:53", "10.0.0.1:50000", [UInt8](repeating: 2, count: 46)),
            // A STUN binding request (20 bytes): port 3478.
            udpFrame("10.0.0.1:50001", "10.0.0.9:3478", [UInt8](repeating: 0, count: 20)),
            PacketBuilder.tcp(from: "10.0.0.1:40000", to: "10.0.0.2:80", flags: [.syn]),
        ]
        let pcap = CaptureFileWriter.pcap(frames.enumerated().map { .init(timestamp: Int64($0.offset) * 1000, bytes: $0.element) })
        let path = try CaptureFileWriter.temporaryFile(named: "udp-other.pcap", containing: pcap)
        let diagnostics = InputAnalyzer().analyze(path: path) { _ in }
        let udp = try XCTUnwrap(diagnostics.udp)
        XCTAssertEqual(udp.datagrams, 3)
        XCTAssertEqual(udp.flows, 2)
        XCTAssertEqual(udp.readDatagrams, 0)
        let dns = try XCTUnwrap(udp.other["53"])
        XCTAssertEqual(dns.datagrams, 2)
        XCTAssertEqual(dns.flows, 1)
        XCTAssertEqual(dns.payloadBytes, 76)
        XCTAssertEqual(dns.udpBytes, 76 + 16)
        XCTAssertEqual(dns.ipBytes, 76 + 16 + 40)
        XCTAssertEqual(dns.frameBytes, 76 + 16 + 40 + 28)
        XCTAssertEqual(udp.other["3478"]?.frameBytes, 14 + 20 + 8 + 20)
        XCTAssertEqual(diagnostics.packets.tcp, 1)
        XCTAssertEqual(diagnostics.packets.skipped, [:])
        // A capture with no UDP writes no `udp` at all (outputs of TCP-only captures unchanged).
        let tcpOnly = try CaptureFileWriter.temporaryFile(
            named: "tcp-only.pcap", containing: CaptureFileWriter.pcap([.init(timestamp: 0, bytes: frames[3])]))
        XCTAssertNil(InputAnalyzer().analyze(path: tcpOnly) { _ in }.udp)
    }
}
