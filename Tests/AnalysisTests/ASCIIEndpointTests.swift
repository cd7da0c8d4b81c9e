@testable import Analysis
import XCTest

/// The bytewise endpoint of ASCII requests must be the text the general path writes:
/// `METHOD lowercased-host normalized-path`.
final class ASCIIEndpointTests: XCTestCase {
    private let normalizer = EndpointNormalizer()

    func testASCIIEndpointLowercasesTheHostAndNormalizesThePath() {
        XCTAssertEqual(
            normalizer.asciiEndpoint(
                method: "GET", host: "API.Example.COM:8080", path: ArraySlice("/users/12345/Orders".utf8)),
            "GET api.example.com:8080 /users/{id}/Orders")
        // An empty path is `/`, as `normalize(path:)` gives it.
        XCTAssertEqual(normalizer.asciiEndpoint(method: "POST", host: "h", path: []), "POST h /")
        XCTAssertEqual(normalizer.asciiEndpoint(method: "GET", host: "", path: ArraySlice("//a//".utf8)), "GET  //a//")
    }

    func testASCIIEndpointMatchesTheGeneralPath() {
        // Single digits grow fourfold ("7" → "{id}"): the most a path grows.
        let paths = [
            "/", "/a/123/b", "/o/123e4567-e89b-12d3-a456-426614174000/x", "/{id}/7", "/q%20r/99", "/a\r\nb/1",
            "7", "/1/2/3/", "1/2/3/4/5/6/7/8/9", "//", "/0123456789abcdef0123456789abcdef",
        ]
        for path in paths {
            let general = "PUT host.test \(normalizer.normalize(path: path))"
            XCTAssertEqual(
                normalizer.asciiEndpoint(method: "PUT", host: "Host.Test", path: ArraySlice(path.utf8)), general, path)
        }
    }

    func testNonASCIIOrRulesTakeTheGeneralPath() throws {
        XCTAssertNil(normalizer.asciiEndpoint(method: "GET", host: "bücher.test", path: ArraySlice("/a".utf8)))
        XCTAssertNil(normalizer.asciiEndpoint(method: "GET", host: "h", path: [0x2F, 0xC3, 0xA9]))
        let ruled = EndpointNormalizer(rules: [try .init(pattern: "v[0-9]+", template: "v")])
        XCTAssertNil(ruled.asciiEndpoint(method: "GET", host: "h", path: ArraySlice("/v2".utf8)))
    }
}
