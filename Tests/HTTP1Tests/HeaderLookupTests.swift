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
}
