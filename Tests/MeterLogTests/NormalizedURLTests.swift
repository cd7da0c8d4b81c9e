@testable import MeterLog
import XCTest

final class NormalizedURLTests: XCTestCase {
    func testSpellingsOfOneURLAreEqual() {
        let spellings = [
            "https://api.example.com/v1/~items?page=2",
            "HTTPS://API.Example.COM:443/v1/%7eitems?page=2#top",
            "https://user:secret@api.example.com/v1/%7Eitems?page=2",
            "https://api.example.com:443/%76%31/~items?page=2",
        ]
        let urls = spellings.map { NormalizedURL($0) }
        for url in urls { XCTAssertEqual(url, urls[0]) }
        XCTAssertEqual(urls[0]?.pathKey, "https://api.example.com/v1/~items")
        XCTAssertEqual(urls[0]?.query, "page=2")
    }

    func testWhatStaysApart() {
        XCTAssertNotEqual(NormalizedURL("http://a.example/x"), NormalizedURL("https://a.example/x"))
        XCTAssertNotEqual(NormalizedURL("http://a.example:8080/x"), NormalizedURL("http://a.example/x"))
        XCTAssertNotEqual(NormalizedURL("http://a.example/X"), NormalizedURL("http://a.example/x"))
        // Reserved characters keep their escapes (hex in upper case).
        XCTAssertEqual(NormalizedURL("http://a.example/a%2fb%3f")?.pathKey, "http://a.example/a%2Fb%3F")
        XCTAssertEqual(NormalizedURL("http://a.example/100%")?.pathKey, "http://a.example/100%")
    }

    func testEmptyPathAndQuery() {
        XCTAssertEqual(NormalizedURL("http://a.example")?.pathKey, "http://a.example/")
        XCTAssertEqual(NormalizedURL("http://a.example?q=1")?.description, "http://a.example/?q=1")
        XCTAssertNil(NormalizedURL("http://a.example/x?")?.query)
        XCTAssertEqual(NormalizedURL("http://[::1]:80/x")?.pathKey, "http://[::1]/x")
        XCTAssertEqual(NormalizedURL("http://[::1]:8080/x")?.pathKey, "http://[::1]:8080/x")
    }

    func testNotAbsolute() {
        for text in [
            "/v1/items", "api.example.com/x", "https:///x", "http://a.example:99999/", "http://a.example:x/", "",
            "1http://a/",
        ] {
            XCTAssertNil(NormalizedURL(text), text)
        }
    }

    func testWireRecordURL() {
        XCTAssertEqual(
            NormalizedURL(scheme: "HTTPS", host: "API.example.com:443", target: "/v1/%7Eitems?page=2"),
            NormalizedURL("https://api.example.com/v1/~items?page=2"))
        XCTAssertEqual(NormalizedURL(scheme: "http", host: "a.example", target: "")?.pathKey, "http://a.example/")
        XCTAssertNil(NormalizedURL(scheme: "http", host: "", target: "/"))
    }
}
