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
