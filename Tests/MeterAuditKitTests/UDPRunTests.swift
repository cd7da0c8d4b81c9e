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

    /// Other UDP whose datagrams look like QUIC short headers (first byte 01xxxxxx), read with a
    /// key log of 1-RTT secrets: each such flow is tried against the secrets (docs/METERING.md
    /// §2d, "QUIC detection"), no tag verifies, and the flow stays other UDP with every count as
    /// without the key log. A flow whose next datagram cannot be a short header stops at once;
    /// the trials stay within the bounds in `Limits.midConnectionQUIC`.
    func testOtherUDPWithAKeyLogStaysOtherUDP() throws {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: seed >> 56)
        }
        func bytes(_ count: Int, first: UInt8) -> [UInt8] { [first] + (1..<count).map { _ in next() } }
        let frames = [
            // A query and its answer whose ID's first byte is 0x4a: both look like short headers.
            udpFrame("10.0.0.1:50000", "10.0.0.53:53", bytes(40, first: 0x4A)),
            udpFrame("10.0.0.53:53", "10.0.0.1:50000", bytes(120, first: 0x4A)),
            // A flow whose second datagram (0x81...) cannot be a short header: tried once.
            udpFrame("10.0.0.1:50001", "10.0.0.7:5000", bytes(300, first: 0x55)),
            udpFrame("10.0.0.7:5000", "10.0.0.1:50001", bytes(64, first: 0x81)),
            // STUN (0x00...): never tried.
            udpFrame("10.0.0.1:50002", "10.0.0.9:3478", [UInt8](repeating: 0, count: 20)),
        ]
        let pcap = CaptureFileWriter.pcap(frames.enumerated().map { .init(timestamp: Int64($0.offset) * 1000, bytes: $0.element) })
        let path = try CaptureFileWriter.temporaryFile(named: "udp-other-keylog.pcap", containing: pcap)
        // 100 entries of 32-byte 1-RTT secrets, more than the entries a flow tries.
        var log = ""
        for _ in 0..<100 {
            let random = (0..<32).map { _ in String(format: "%02x", next()) }.joined()
            for label in ["CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"] {
                log += label + " " + random + " " + (0..<32).map { _ in String(format: "%02x", next()) }.joined() + "\n"
            }
        }
        let keys = try CaptureFileWriter.temporaryFile(named: "udp-other.keys", containing: Array(log.utf8))
        let plain = try XCTUnwrap(InputAnalyzer().analyze(path: path) { _ in }.udp)
        XCTAssertNil(plain.midConnectionTrials)
        let limits = Limits().midConnectionQUIC
        // One entry (h3-midconn's, 48-byte secrets: AES-256-GCM, v1 and v2): every datagram that
        // looks like a short header is tried, 3 of them, within a flow's budget each.
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample("h3-midconn.keys")])
        var tried = try XCTUnwrap(InputAnalyzer(options: options).analyze(path: path) { _ in }.udp)
        var trials = try XCTUnwrap(tried.midConnectionTrials)
        tried.midConnectionTrials = nil
        XCTAssertEqual(tried, plain)
        XCTAssertEqual(tried.other["53"]?.datagrams, 2)
        XCTAssertEqual(tried.readFlows, 0)
        XCTAssertNil(tried.quic)
        XCTAssertEqual(trials.flows, 2)
        XCTAssertEqual(trials.datagrams, 3)
        XCTAssertEqual(trials.connections, 0)
        XCTAssertEqual(trials.untriedFlows, 0)
        // No second datagram from the same sender confirms a destination ID length: each is tried
        // with length 0 in the cheap pass only, 2 sides x 2 variants masks and at most one AEAD
        // open each.
        XCTAssertGreaterThan(trials.trials, 3 * 4)
        XCTAssertLessThanOrEqual(trials.trials, 3 * (4 + 4))
        print("UDPRunTests: \(trials.trials) trials on 3 datagrams of 2 flows, 1 key log entry")

        // 100 entries (64 tried, 4 variants each): the same, 64 x 2 x 4 masks a datagram.
        options = AnalysisOptions()
        try options.loadKeyLogs([keys])
        tried = try XCTUnwrap(InputAnalyzer(options: options).analyze(path: path) { _ in }.udp)
        trials = try XCTUnwrap(tried.midConnectionTrials)
        tried.midConnectionTrials = nil
        XCTAssertEqual(tried, plain)
        XCTAssertEqual([trials.flows, trials.datagrams, trials.connections, trials.untriedFlows], [2, 3, 0, 0])
        XCTAssertGreaterThan(trials.trials, 3 * 512)
        XCTAssertLessThanOrEqual(trials.trials, 3 * (512 + 512))
        XCTAssertLessThan(trials.trials, limits.maxTrialsPerFlow)

        // With a budget of one trial per input, the second flow is not tried at all.
        options.limits.midConnectionQUIC.maxTrialsPerInput = 1
        let capped = try XCTUnwrap(InputAnalyzer(options: options).analyze(path: path) { _ in }.udp)
        XCTAssertEqual(capped.midConnectionTrials, .init(flows: 1, datagrams: 1, trials: 1, connections: 0, untriedFlows: 1))
    }
}
