import MessageModel

@testable import HTTP1
import TCPReassembly
import XCTest

// CONNECT, 101 Switching Protocols and TLS. Sizes counted by hand from the literals.

final class TunnelTests: XCTestCase {
    // MARK: 8. CONNECT and 101

    func testConnectTunnel() {
        let outcome = verify([
            // "CONNECT example.com:443 HTTP/1.1\r\n" = 7+1+15+1+8+2 = 34; "Host: example.com:443\r\n" = 5+1+15+2 = 23; 2
            .client("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
            // "HTTP/1.1 200 Connection Established\r\n" = 8+1+3+1+22+2 = 37; 2; then 7 tunnel bytes
            .server("HTTP/1.1 200 Connection Established\r\n\r\nTUNNEL1"),
            .client("GET / HTTP/1.1\r\n\r\n"), // 18, inside the tunnel: no record
            .gap(.down, 100),
            .server("abcde"),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        XCTAssertEqual(outcome.records.count, 2)
        let connect = outcome.request(0)
        assertSizes(connect, line: 34, headers: 25, body: 0)
        XCTAssertEqual(connect?.method, "CONNECT")
        XCTAssertEqual(connect?.target.text, "example.com:443")
        XCTAssertEqual(connect?.pair, 0)
        let established = outcome.response(0)
        assertSizes(established, line: 37, headers: 2, body: 0)
        XCTAssertEqual(established?.framing, BodyFraming.none)
        XCTAssertEqual(established?.complete, true)
        XCTAssertEqual(established?.pair, 0)
        XCTAssertEqual(outcome.summary.clientTally.tunnelBytes, 18)
        XCTAssertEqual(outcome.summary.serverTally.tunnelBytes, 112) // 7 + 100 + 5
        XCTAssertEqual(outcome.summary.protocolKind, .http)
    }

    func testRefusedConnectIsNoTunnel() {
        let outcome = verify([
            .client("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), // 34; 25
            // "HTTP/1.1 407 Proxy Authentication Required\r\n" = 8+1+3+1+29+2 = 44; 19 + 2 = 21
            .server("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"),
            .client("GET http://example.com/ HTTP/1.1\r\n\r\n"), // 3+1+19+1+8+2 = 34; 2
            .server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        ])
        assertSizes(outcome.response(0), line: 44, headers: 21, body: 0)
        let proxied = outcome.request(1)
        assertSizes(proxied, line: 34, headers: 2, body: 0)
        XCTAssertEqual(proxied?.requestHost, "example.com")
        XCTAssertEqual(proxied?.pair, 1)
        assertSizes(outcome.response(1), line: 17, headers: 21, body: 2)
        XCTAssertEqual(outcome.tallies.map(\.tunnelBytes), [0, 0])
    }

    func testSwitchingProtocols() {
        let outcome = verify([
            // "GET /chat HTTP/1.1\r\n" = 3+1+5+1+8+2 = 20; "Host: h\r\n" 9; "Upgrade: websocket\r\n" = 8+1+9+2 = 20;
            // "Connection: Upgrade\r\n" = 11+1+7+2 = 21; 2 → 52. Then "abc" 3, sent too early: tunnel.
            .client("GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nabc"),
            // "HTTP/1.1 101 Switching Protocols\r\n" = 8+1+3+1+19+2 = 34; 20 + 21 + 2 = 43; then a 4-byte frame
            .send(
                .down,
                Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
                    + [0x81, 0x02, 0x68, 0x69], ack: .auto),
            .clientBytes([0x81, 0x82, 1, 2, 3, 4, 0x69, 0x6B]), // 8
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        XCTAssertEqual(outcome.records.count, 2)
        assertSizes(outcome.request(0), line: 20, headers: 52, body: 0)
        XCTAssertEqual(outcome.request(0)?.pair, 0)
        let switching = outcome.response(0)
        assertSizes(switching, line: 34, headers: 43, body: 0)
        XCTAssertEqual(switching?.status, 101)
        XCTAssertEqual(switching?.isInterim, false)
        XCTAssertEqual(switching?.pair, 0)
        XCTAssertEqual(outcome.summary.clientTally.tunnelBytes, 11) // 3 + 8
        XCTAssertEqual(outcome.summary.serverTally.tunnelBytes, 4)
    }

    // MARK: 15. TLS

    private func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    /// A ClientHello record with a supported_versions extension, then server_name.
    private func clientHello(serverName: String) -> [UInt8] {
        let name = Array(serverName.utf8)
        let supportedVersions: [UInt8] = [0x00, 0x2B, 0x00, 0x03, 0x02, 0x03, 0x04]
        // type 0, extension length, list length, name type 0 (host_name), name length, name
        let sni: [UInt8] =
            [0x00, 0x00] + be16(5 + name.count) + be16(3 + name.count) + [0x00] + be16(name.count) + name
        let extensions = supportedVersions + sni
        var body: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 0xAB, count: 32) // client version, random
        body += [32] + [UInt8](repeating: 0xCD, count: 32) // session id
        body += [0x00, 0x04, 0x13, 0x01, 0x13, 0x02] // two cipher suites
        body += [0x01, 0x00] // compression: null
        body += be16(extensions.count) + extensions
        let handshake: [UInt8] = [0x01, 0x00] + be16(body.count) + body // ClientHello, 24-bit length
        return [0x16, 0x03, 0x01] + be16(handshake.count) + handshake
    }

    func testClientHelloServerName() {
        let hello = clientHello(serverName: "api.example.com")
        // SNI 4+2+1+2+15 = 24; extensions 7 + 24 = 31; body 2+32+1+32+6+2+2+31 = 108;
        // handshake 4 + 108 = 112; record 5 + 112 = 117
        XCTAssertEqual(hello.count, 117)
        let serverHello: [UInt8] = [0x16, 0x03, 0x03, 0x00, 0x02, 0x02, 0x00] // 7
        let appData: [UInt8] = [0x17, 0x03, 0x03, 0x00, 0x03, 0x61, 0x62, 0x63] // 8
        let outcome = verify([
            .clientBytes(hello),
            .serverBytes(serverHello),
            .gap(.down, 10),
            .clientBytes(appData),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        XCTAssertEqual(outcome.summary.protocolKind, .tls)
        XCTAssertEqual(outcome.summary.serverName, "api.example.com")
        XCTAssertEqual(outcome.records.count, 0)
        XCTAssertEqual(outcome.summary.clientTally.tlsBytes, 125) // 117 + 8
        XCTAssertEqual(outcome.summary.serverTally.tlsBytes, 17) // 7 + 10
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 0)
    }

    func testClientHelloFromTheGuessedResponder() {
        // Joined mid-way, the first packet came from the server: the ClientHello tells the client.
        let outcome = verify(
            [
                .send(.up, [0x16, 0x03, 0x03, 0x00, 0x02, 0x02, 0x00], ack: .auto),
                .send(.down, clientHello(serverName: "a.b"), ack: .auto), // 117 - 12 = 105
            ], handshake: false)
        XCTAssertEqual(outcome.summary.protocolKind, .tls)
        XCTAssertEqual(outcome.summary.serverName, "a.b")
        XCTAssertEqual(outcome.summary.clientTally.tlsBytes, 105)
        XCTAssertEqual(outcome.summary.serverTally.tlsBytes, 7)
    }

    func testTruncatedTLSRecordDoesNotTrap() {
        // A record header announcing 0 bytes: nothing to read a handshake type from.
        let outcome = verify([
            .clientBytes([0x16, 0x03, 0x01, 0x00, 0x00]),
            .end(.up, .fin),
        ])
        XCTAssertEqual(outcome.summary.protocolKind, .tls)
        XCTAssertEqual(outcome.summary.serverName, nil)
        XCTAssertEqual(outcome.summary.clientTally.tlsBytes, 5)
        XCTAssertEqual(TLSHelloSniffer.parseServerName([0x16, 0x03, 0x01, 0x00, 0x00]), .needMore)
        XCTAssertEqual(TLSHelloSniffer.parseServerName([0x16, 0x03, 0x01, 0x00, 0x00, 0x02]), .absent)
    }

    func testTwoBytesThatLookLikeTLSThenHTTP() {
        // 0x16 0x03 could start a TLS record; the third byte says it does not.
        let outcome = verify([
            .clientBytes([0x16, 0x03]),
            .client("x\r\nGET / HTTP/1.1\r\n\r\n"), // [16 03] "x\r\n" skipped 5; 16; 2
        ])
        XCTAssertEqual(outcome.summary.protocolKind, .http)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 5)
        assertSizes(outcome.request(0), line: 16, headers: 2, body: 0)
        XCTAssertEqual(outcome.request(0)?.streamOffset, 5)
    }
}
