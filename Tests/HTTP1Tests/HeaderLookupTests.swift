import Foundation
import HTTP1
import MessageModel
import XCTest

/// `HTTPMessage.values(of:)` and `HeaderField.hasName`: names match whatever their case on
/// the wire, values come back in the order sent, and nothing comes back for an absent name.
final class HeaderLookupTests: XCTestCase {
    private func message(_ fields: [(String, String)]) -> HTTPMessage {
        var message = HTTPMessage(kind: .response, index: 0)
        message.fields = fields.map { HeaderField($0.0, $0.1) }
        return message
    }

    func testValuesMatchNamesCaseInsensitivelyInOrder() {
        let sent = message([
            ("Content-Encoding", "gzip"), ("Vary", "Accept"), ("CONTENT-ENCODING", "br"), ("content-encodings", "x"),
        ])
        // The 1st and 3rd fields: "content-encodings" is one byte longer and must not match.
        XCTAssertEqual(sent.values(of: "content-encoding"), [Array("gzip".utf8), Array("br".utf8)])
        XCTAssertEqual(sent.values(of: "vary"), [Array("Accept".utf8)])
        XCTAssertEqual(sent.values(of: "host"), [])
        XCTAssertEqual(sent.joinedValue(of: "content-encoding"), "gzip, br")
        XCTAssertNil(sent.joinedValue(of: "host"))
    }

    func testBridgedNameStringsMatchLikeNativeOnes() {
        // An NSString-backed String may have no contiguous UTF-8: the other comparison path.
        let bridged = NSString(string: "content-length") as String
        let sent = message([("Content-Length", "12"), ("Content-Type", "text/plain")])
        XCTAssertEqual(sent.values(of: bridged), [Array("12".utf8)])
        XCTAssertTrue(HeaderField("CONTENT-LENGTH", "1").hasName(bridged))
        XCTAssertFalse(HeaderField("Content-Type", "1").hasName(bridged))
    }

    func testContentCodingsSplitAtCommasTrimmedEmptiesDropped() {
        // Two fields in order; commas split, spaces and tabs trimmed, empty pieces (",,", " ",
        // a trailing comma) dropped: gzip, br, then x-custom from the second field.
        let sent = message([
            ("Content-Encoding", " gzip ,, \tbr\t, ,"), ("Vary", "a, b"), ("content-encoding", "x-custom"),
        ])
        XCTAssertEqual(sent.contentCodings, ["gzip", "br", "x-custom"])
        XCTAssertEqual(message([("Content-Encoding", ",")]).contentCodings, [])
        XCTAssertEqual(message([("Content-Encoding", "")]).contentCodings, [])
        XCTAssertEqual(message([("Vary", "gzip")]).contentCodings, [])
    }
    /// Content-Length read across every field of the name (RFC 9110 §8.6): one number, or a
    /// list of the same number in one or several fields; anything else is no length.
    func testDeclaredContentLengthAcrossFields() {
        let cases: [([String], Int64?)] = [
            ([], nil), (["12"], 12), (["5, 5"], 5), (["5", " 5 "], 5), (["5,5", "5"], 5), (["5, 6"], nil),
            (["5", "6"], nil), ([""], nil), (["5,"], nil), ([",5"], nil), (["x"], nil),
            (["123456789012345678"], 123_456_789_012_345_678), (["1234567890123456789"], nil), (["\t7\t"], 7),
        ]
        for (values, expected) in cases {
            let sent = message(values.map { ("Content-Length", $0) } + [("Content-Lengths", "1"), ("X", "2")])
            XCTAssertEqual(sent.declaredContentLength, expected, "\(values)")
            // The same reading as the values gathered first.
            XCTAssertEqual(
                Framing.parseContentLength(in: sent.fields),
                Framing.parseContentLength(sent.values(of: "content-length")), "\(values)")
        }
    }

    func testRequestHostIsTheFirstHostFieldElseTheAuthority() {
        var request = HTTPMessage(kind: .request, index: 0)
        request.target = Array("http://Proxy.Example:8080/p?q".utf8)
        XCTAssertEqual(request.requestHost, "Proxy.Example:8080")
        request.fields = [HeaderField("X-Host", "no"), HeaderField("HOST", "first"), HeaderField("Host", "second")]
        XCTAssertEqual(request.requestHost, "first")
    }

    /// A request-target's parts as docs/METERING.md §6 splits them.
    func testRequestTargetParts() {
        func parts(_ target: String) -> (String?, String, String?) {
            let split = RequestTarget(Array(target.utf8))
            return (split.authority, String(decoding: split.path, as: UTF8.self), split.query.map { String(decoding: $0, as: UTF8.self) })
        }
        let cases: [(String, String?, String, String?)] = [
            ("/a/b?x=1?y", nil, "/a/b", "x=1?y"), ("/", nil, "/", nil), ("", nil, "", nil), ("*", nil, "*", nil),
            ("http://h:1/p?q", "h:1", "/p", "q"), ("https://u@h?q", "u@h", "", "q"), ("http://h", "h", "", nil),
            ("h2c+x.y-z://a/", "a", "/", nil), ("example.com:443", nil, "example.com:443", nil),
            ("ht tp://h/", nil, "ht tp://h/", nil), ("http:/h", nil, "http:/h", nil), ("a://", "", "", nil),
        ]
        for (target, authority, path, query) in cases {
            let split = parts(target)
            XCTAssertEqual(split.0, authority, target)
            XCTAssertEqual(split.1, path, target)
            XCTAssertEqual(split.2, query, target)
        }
    }
}
