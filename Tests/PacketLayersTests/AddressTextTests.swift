import PacketLayers
import XCTest

final class AddressTextTests: XCTestCase {
    func testIPv4() {
        XCTAssertEqual(IPAddress(ipv4: 0x0A00_0001).description, "10.0.0.1")
        XCTAssertEqual(IPAddress(ipv4: 0xFFFF_FFFF).description, "255.255.255.255")
        XCTAssertEqual(IPAddress(ipv4: 0).description, "0.0.0.0")
        XCTAssertEqual(IPAddress("192.0.2.1"), IPAddress(ipv4: 0xC000_0201))
        XCTAssertEqual(IPAddress("192.0.2.1")?.ipv4Value, 0xC000_0201)
        XCTAssertEqual(IPAddress("192.0.2.1")?.bytes, [192, 0, 2, 1])
        for bad in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "a.b.c.d", "1..2.3", "1.2.3.4 ", "01234.1.1.1"] {
            XCTAssertNil(IPAddress(bad), bad)
        }
    }

    func testIPv6CanonicalText() {
        let cases: [(String, String)] = [
            ("::1", "::1"),
            ("::", "::"),
            ("2001:db8::1", "2001:db8::1"),
            ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
            ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),
            ("::ffff:c000:0201", "::ffff:192.0.2.1"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), // first of two equal runs
            ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"), // a single zero group stays
            ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"), // the longest run wins
            ("fe80::", "fe80::"),
            ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
            ("0:0:0:0:0:0:0:0", "::"),
            ("1::", "1::"),
            ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"), // never :: for one group
            ("::192.0.2.1", "::c000:201"), // IPv4-compatible: plain hex
            ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"),
        ]
        for (input, canonical) in cases {
            guard let address = IPAddress(input) else {
                XCTFail("cannot parse \(input)")
                continue
            }
            XCTAssertTrue(address.isIPv6, input)
            XCTAssertEqual(address.description, canonical, input)
            XCTAssertEqual(IPAddress(canonical), address, "round trip of \(canonical)")
        }
    }

    func testIPv6Bytes() {
        let bytes: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]
        XCTAssertEqual(IPAddress(ipv6Bytes: bytes)?.description, "2001:db8::1")
        XCTAssertEqual(IPAddress(ipv6Bytes: bytes)?.bytes, bytes)
        XCTAssertNil(IPAddress(ipv6Bytes: [UInt8](repeating: 0, count: 15)))
        XCTAssertNil(IPAddress("2001:db8::1")?.ipv4Value)
    }

    func testBadIPv6Text() {
        for bad in [
            ":", ":::", "1:::2", "1::2::3", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "12345::", "g::",
            "1:2:3:4:5:6:7::8", "::1.2.3", "1.2.3.4::", "::ffff:1.2.3.4:5", ":1::", "1::2:",
        ] {
            XCTAssertNil(IPAddress(bad), bad)
        }
    }

    func testEndpoints() {
        XCTAssertEqual(TransportEndpoint(address: IPAddress(ipv4: 0x0102_0304), port: 80).description, "1.2.3.4:80")
        XCTAssertEqual(TransportEndpoint(address: IPAddress("::1")!, port: 8080).description, "[::1]:8080")
        XCTAssertEqual(TransportEndpoint("[2001:db8::1]:443")?.address, IPAddress("2001:db8::1"))
        XCTAssertEqual(TransportEndpoint("[2001:db8::1]:443")?.port, 443)
        XCTAssertEqual(TransportEndpoint("10.0.0.1:65535")?.port, 65535)
        for bad in [
            "10.0.0.1", "10.0.0.1:", "10.0.0.1:65536", "::1:80", "[::1]", "[::1]80", "[::1:80", "x:1", "1.2.3.4:-1",
        ] {
            XCTAssertNil(TransportEndpoint(bad), bad)
        }
    }

    func testOrderingPutsIPv4First() {
        XCTAssertLessThan(IPAddress("255.255.255.255")!, IPAddress("::")!)
        XCTAssertLessThan(IPAddress("10.0.0.1")!, IPAddress("10.0.0.2")!)
    }
}
