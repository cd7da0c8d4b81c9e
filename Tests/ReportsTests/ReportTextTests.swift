import XCTest
@testable import Reports

final class EndpointTextTests: XCTestCase {
    func testShortEndpointsStay() {
        XCTAssertEqual(EndpointText.shortened("GET api.test /users/{id}"), "GET api.test /users/{id}")
        let sixty = "GET h /" + String(repeating: "a", count: 53)
        XCTAssertEqual(sixty.count, 60)
        XCTAssertEqual(EndpointText.shortened(sixty), sixty)
    }

    func testMiddleSegmentsGiveWay() {
        // 83 characters; keeping 4 leading segments gives 55, 5 would give 63.
        let endpoint = "GET api.test /v1/organizations/acme/projects/website/repositories/frontend/settings"
        XCTAssertEqual(endpoint.count, 83)
        XCTAssertEqual(EndpointText.shortened(endpoint), "GET api.test /v1/organizations/acme/projects/…/settings")
        XCTAssertEqual(EndpointText.shortened(endpoint, maxLength: 30), "GET api.test /v1/…/settings")
        XCTAssertEqual(EndpointText.shortened(endpoint, maxLength: 26), "GET api.test /…/settings")
    }

    func testTrailingSlashStaysWithTheLastSegment() {
        let endpoint = "DELETE example.com /alpha/beta/gamma/delta/epsilon/zeta/eta/theta/"
        XCTAssertEqual(EndpointText.shortened(endpoint, maxLength: 50), "DELETE example.com /alpha/beta/gamma/…/theta/")
    }

    func testResultNeverExceedsTheLimit() {
        let endpoints = [
            "GET api.test /v1/organizations/acme/projects/website/repositories/frontend/settings",
            "GET a-very-long-host-name.example.internal.corp:8443 /x/" + String(repeating: "y", count: 40),
            "? [2001:db8::1]:8080 ?" + String(repeating: "z", count: 60),
            "POST h /" + String(repeating: "a/", count: 60) + "end",
            "GET h " + String(repeating: "é", count: 100),
        ]
        for endpoint in endpoints {
            for limit in [10, 20, 40, 60] {
                let short = EndpointText.shortened(endpoint, maxLength: limit)
                XCTAssertLessThanOrEqual(short.count, limit, "\(endpoint) at \(limit)")
                XCTAssertTrue(short.contains("…"))
            }
        }
    }

    func testTooLongHostCutsTheMiddleOfEverything() {
        let endpoint = "GET a-very-long-host-name.example.internal.corp:8443 /x/" + String(repeating: "y", count: 40)
        let short = EndpointText.shortened(endpoint, maxLength: 40)
        // Even "GET host /…/yyy…" is too long: 20 characters, "…", the last 19.
        XCTAssertEqual(short, "GET a-very-long-host…" + String(repeating: "y", count: 19))
    }
}

final class TextFormatTests: XCTestCase {
    func testBytes() {
        XCTAssertEqual(TextFormat.bytes(0), "0")
        XCTAssertEqual(TextFormat.bytes(999), "999")
        XCTAssertEqual(TextFormat.bytes(1000), "1,000")
        XCTAssertEqual(TextFormat.bytes(1_234_567), "1,234,567")
        XCTAssertEqual(TextFormat.bytes(-9167), "-9,167")
        XCTAssertEqual(TextFormat.bytes(-100), "-100")
        // The extremes: 19 digits, 6 commas (Int.min's magnitude is not an Int).
        XCTAssertEqual(TextFormat.bytes(Int.max), "9,223,372,036,854,775,807")
        XCTAssertEqual(TextFormat.bytes(Int.min), "-9,223,372,036,854,775,808")
        XCTAssertEqual(TextFormat.signedBytes(7728), "+7,728")
        XCTAssertEqual(TextFormat.signedBytes(-134), "-134")
        XCTAssertEqual(TextFormat.signedBytes(0), "0")
    }

    func testPercents() {
        XCTAssertEqual(TextFormat.signedPercent(5.42), "+5.42%")
        XCTAssertEqual(TextFormat.signedPercent(-16.844), "-16.84%")
        XCTAssertEqual(TextFormat.signedPercent(-0.001), "0.00%")
        XCTAssertEqual(TextFormat.signedPercent(0.001), "0.00%")
        XCTAssertEqual(TextFormat.signedPercent(1137.113), "+1,137.11%")
        XCTAssertEqual(TextFormat.signedPercent(nil), "n/a")
        XCTAssertEqual(TextFormat.ratioPercent(0.012579), "1.26%")
        XCTAssertEqual(TextFormat.ratioPercent(11.371134), "1,137.11%")
        XCTAssertEqual(TextFormat.ratioPercent(nil), "n/a")
    }

    func testPerRecord() {
        XCTAssertEqual(TextFormat.perRecord(bytes: -8400, records: 120), "-70 B")
        XCTAssertEqual(TextFormat.perRecord(bytes: -141, records: 2), "-70.50 B")
        XCTAssertEqual(TextFormat.perRecord(bytes: 7, records: 2), "+3.50 B")
        XCTAssertEqual(TextFormat.perRecord(bytes: -228, records: 115), "-1.98 B")
        XCTAssertEqual(TextFormat.perRecord(bytes: 1, records: 0), "n/a")
    }
}

final class MarkdownTextTests: XCTestCase {
    func testInlineEscapes() {
        XCTAssertEqual(MarkdownText.inline("merged Set-Cookie fields"), "merged Set-Cookie fields")
        XCTAssertEqual(MarkdownText.inline("a*b <c> [d] e|f"), "a\\*b \\<c\\> \\[d\\] e\\|f")
        XCTAssertEqual(MarkdownText.inline("my_file.pcap _x_"), "my_file.pcap \\_x\\_")
        // A backslash is escaped only where it would start an escape.
        XCTAssertEqual(MarkdownText.inline("query\\n\""), "query\\n\"")
        XCTAssertEqual(MarkdownText.inline("a\\*"), "a\\\\\\*")
        XCTAssertEqual(MarkdownText.inline("line\nbreak\t"), "line\\x0Abreak\\x09")
    }

    func testCodeSpans() {
        XCTAssertEqual(MarkdownText.code("GET h /a"), "`GET h /a`")
        XCTAssertEqual(MarkdownText.code("GET h /a|b", inTable: true), "`GET h /a\\|b`")
        XCTAssertEqual(MarkdownText.code("GET h /a`b"), "``GET h /a`b``")
        XCTAssertEqual(MarkdownText.code("`x"), "`` `x ``")
    }
}

/// messages.csv's `time`: epoch seconds with six decimals, for every Int64 (readers clamp to
/// 0 ... Int64.max, but the function must not trap on anything).
final class FormatTimeTests: XCTestCase {
    func testTimes() {
        XCTAssertEqual(MessagesCSV.formatTime(1_700_000_000_123_456_789), "1700000000.123456")
        XCTAssertEqual(MessagesCSV.formatTime(0), "0.000000")
        // 9223372036854775807 ns = 9223372036 s + 854775 µs (+ 807 ns cut off).
        XCTAssertEqual(MessagesCSV.formatTime(.max), "9223372036.854775")
        // -1.5 ms; -999 ns is less than a microsecond: no sign on zero.
        XCTAssertEqual(MessagesCSV.formatTime(-1_500_000), "-0.001500")
        XCTAssertEqual(MessagesCSV.formatTime(-999), "0.000000")
        // What libpcap made of ts_sec 0x80000000 + 123456 µs: -2147483648 s + 0.123456 s.
        XCTAssertEqual(MessagesCSV.formatTime(-2_147_483_647_876_544_000), "-2147483647.876544")
        // -9223372036854775808 ns → -9223372036854775 µs (toward zero).
        XCTAssertEqual(MessagesCSV.formatTime(.min), "-9223372036.854775")
    }
}
