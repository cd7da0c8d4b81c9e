import Analysis
import XCTest

final class EndpointNormalizerTests: XCTestCase {
    private let normalizer = EndpointNormalizer()

    func testIdentifierSegmentsBecomeId() {
        XCTAssertEqual(normalizer.normalize(path: "/users/12345/orders"), "/users/{id}/orders")
        XCTAssertEqual(normalizer.normalize(path: "/o/123e4567-e89b-12d3-a456-426614174000"), "/o/{id}")
        XCTAssertEqual(normalizer.normalize(path: "/blob/0123456789abcdef0123"), "/blob/{id}")
        XCTAssertEqual(normalizer.normalize(path: "/t/dGhpc2lzYXRva2VuMTIzNDU2"), "/t/{id}")
    }

    func testOrdinaryWordsAndFileNamesStay() {
        XCTAssertEqual(normalizer.normalize(path: "/static/site.css"), "/static/site.css")
        XCTAssertEqual(normalizer.normalize(path: "/api/v2/profile"), "/api/v2/profile")
        // Short hex and letters-only tokens are words, not ids.
        XCTAssertEqual(normalizer.normalize(path: "/cafe/beef"), "/cafe/beef")
        XCTAssertEqual(normalizer.normalize(path: "/abcdefghijklmnopqrstuvwxyz"), "/abcdefghijklmnopqrstuvwxyz")
        XCTAssertEqual(normalizer.normalize(path: ""), "/")
        XCTAssertEqual(normalizer.normalize(path: "/"), "/")
    }

    func testEmptySegmentsBracesAndNonASCIIPaths() {
        // Expected strings written by hand: empty segments stay, a segment holding a brace is
        // never an id, and non-ASCII paths are cut by characters like ASCII ones.
        XCTAssertEqual(normalizer.normalize(path: "//12//34/"), "//{id}//{id}/")
        XCTAssertEqual(normalizer.normalize(path: "/a{12}/12{"), "/a{12}/12{")
        XCTAssertEqual(normalizer.normalize(path: "12345"), "{id}")
        XCTAssertEqual(normalizer.normalize(path: "/café/12345/ü"), "/café/{id}/ü")
        // U+0338 combines with the slash before it into one character, which is then no
        // separator: "/12" + U+0338 + "34" stays one segment (not an id: it is not ASCII).
        XCTAssertEqual(normalizer.normalize(path: "/x/12/\u{338}34"), "/x/12/\u{338}34")
        XCTAssertEqual(normalizer.normalize(path: "/x/12\r\n/34"), "/x/12\r\n/{id}")
    }

    func testUserRulesRunFirstAndTheirBracesStay() throws {
        let rules = [
            try EndpointNormalizer.Rule(parsing: "^/u/[a-z]+/=/u/{user}/"),
            try EndpointNormalizer.Rule(parsing: "/v([0-9]+)/=/v$1-api/"),
        ]
        let custom = EndpointNormalizer(rules: rules)
        XCTAssertEqual(custom.normalize(path: "/u/alice/photos/42"), "/u/{user}/photos/{id}")
        XCTAssertEqual(custom.normalize(path: "/v3/items"), "/v3-api/items")
    }

    func testRuleSplitsAtTheLastEquals() throws {
        let rule = try EndpointNormalizer.Rule(parsing: "a=b=c")
        XCTAssertEqual(rule.pattern, "a=b")
        XCTAssertEqual(rule.template, "c")
    }

    func testBadRulesAreClearErrors() {
        XCTAssertThrowsError(try EndpointNormalizer.Rule(parsing: "no-equals")) { error in
            XCTAssertEqual(error as? EndpointNormalizer.RuleError, .missingEquals("no-equals"))
        }
        XCTAssertThrowsError(try EndpointNormalizer.Rule(parsing: "([a-z=x")) { error in
            guard case .invalidPattern = error as? EndpointNormalizer.RuleError else { return XCTFail("\(error)") }
        }
    }

    func testRulesFileSkipsCommentsAndNamesTheBadLine() throws {
        let path = NSTemporaryDirectory() + "rules-\(UUID().uuidString).txt"
        try "# comment\n\n^/a/=/A/\n/b/([0-9]+)=/b/{n}\n".write(toFile: path, atomically: true, encoding: .utf8)
        let rules = try EndpointNormalizer.rules(fromFile: path)
        XCTAssertEqual(rules.map(\.pattern), ["^/a/", "/b/([0-9]+)"])
        try "^/a/=/A/\nbroken\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try EndpointNormalizer.rules(fromFile: path)) { error in
            XCTAssertEqual(
                String(describing: error), "\(path):2: endpoint rule 'broken' has no '=': write REGEX=TEMPLATE")
        }
    }
}
