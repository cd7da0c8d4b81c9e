import CaptureIO
import Foundation
import XCTest

/// The tokenizer under the HAR reader: grammar, escapes, positions, chunk boundaries.
final class HARJSONStreamTests: XCTestCase {
    func testTokens() throws {
        let tokens = try tokenize(#"{"a": [1, -2.5e3, true, false, null, "x"], "b": {}, "c": []}"#)
        XCTAssertEqual(
            tokens,
            [
                .beginObject, .key("a"), .beginArray, .number(JSONNumber(raw: "1")), .number(JSONNumber(raw: "-2.5e3")),
                .bool(true), .bool(false), .null, .string("x"), .endArray,
                .key("b"), .beginObject, .endObject, .key("c"), .beginArray, .endArray, .endObject,
            ])
        XCTAssertEqual(JSONNumber(raw: "1").intValue, 1)
        XCTAssertNil(JSONNumber(raw: "-2.5e3").intValue)
        XCTAssertNil(JSONNumber(raw: "1.0").intValue)
        XCTAssertNil(JSONNumber(raw: "99999999999999999999").intValue)
        XCTAssertEqual(JSONNumber(raw: "-0").intValue, 0)
    }

    func testEscapes() throws {
        let tokens = try tokenize(
            #"["\"\\\/\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "a\ud83db", "\udc00", "\ud83d\ud83d\ude00", "é€😀"]"#)
        XCTAssertEqual(
            tokens,
            [
                .beginArray, .string("\"\\/\u{8}\u{c}\n\r\t"), .string("é€"), .string("😀"),
                .string("a\u{FFFD}b"), .string("\u{FFFD}"), .string("\u{FFFD}😀"), .string("é€😀"), .endArray,
            ])
    }

    func testSmallChunksGiveTheSameTokens() throws {
        let text = #"{"long key with é": "\u00e9\ud83d\ude00 tail", "n": 123456789, "lit": [true, null, false]}"#
        let whole = try tokenize(text)
        for chunk in [16, 17, 19, 23] {
            XCTAssertEqual(try tokenize(text, chunkSize: chunk), whole, "chunk \(chunk)")
        }
    }

    func testReadValueAndSkip() throws {
        let path = try harTemporaryFile(
            #"{"skip": {"deep": [1, {"x": "y"}]}, "keep": {"a": [1, "two", null], "b": false}}"#)
        let stream = try JSONStreamReader(path: path)
        XCTAssertEqual(try stream.next(), .beginObject)
        XCTAssertEqual(try stream.next(), .key("skip"))
        try stream.skipValue()
        XCTAssertEqual(try stream.next(), .key("keep"))
        let value = try stream.readValue()
        XCTAssertEqual(
            value,
            .object([
                ("a", .array([.number(JSONNumber(raw: "1")), .string("two"), .null])), ("b", .bool(false)),
            ]))
        XCTAssertEqual(value["a"]?.arrayValue?.count, 3)
        XCTAssertEqual(try stream.next(), .endObject)
        XCTAssertNil(try stream.next())
        XCTAssertNil(try stream.next())
    }

    func testErrorPositions() throws {
        XCTAssertEqual(
            try error("{\"a\": 1,}"),
            .invalidJSON(line: 1, column: 9, reason: "expected a key in double quotes, found '}'"))
        XCTAssertEqual(
            try error("[1,\n 2\n  3]"), .invalidJSON(line: 3, column: 3, reason: "expected ',' or ']', found '3'"))
        XCTAssertEqual(
            try error("[tru]"), .invalidJSON(line: 1, column: 2, reason: "invalid literal (expected 'true')"))
        XCTAssertEqual(
            try error("[01]"), .invalidJSON(line: 1, column: 3, reason: "leading zeros are not allowed in numbers"))
        XCTAssertEqual(
            try error("[\"é\u{1}\"]"),
            .invalidJSON(line: 1, column: 4, reason: "unescaped control character byte 0x01 in a string"))
        XCTAssertEqual(
            try error("[\"\\x\"]"), .invalidJSON(line: 1, column: 4, reason: "invalid escape '\\' followed by 'x'"))
        XCTAssertEqual(
            try error("[\"\\u12g4\"]"),
            .invalidJSON(line: 1, column: 7, reason: "invalid \\u escape: 'g' is not a hex digit"))
        XCTAssertEqual(
            try error("{\"a\" 1}"), .invalidJSON(line: 1, column: 6, reason: "expected ':' after a key, found '1'"))
        XCTAssertEqual(try error("[\"abc"), .invalidJSON(line: 1, column: 6, reason: "unterminated string"))
        XCTAssertEqual(try error("{\"a\": [1, 2"), .invalidJSON(line: 1, column: 12, reason: "unexpected end of file"))
        XCTAssertEqual(
            try error("{} x"), .invalidJSON(line: 1, column: 4, reason: "unexpected 'x' after the top-level value"))
        XCTAssertEqual(try error("  \n "), .invalidJSON(line: 2, column: 2, reason: "the file holds no JSON value"))
        XCTAssertEqual(try error("[-]"), .invalidJSON(line: 1, column: 3, reason: "expected a digit, found ']'"))
        XCTAssertEqual(
            try error(String(repeating: "[", count: 600)),
            .invalidJSON(line: 1, column: JSONStreamReader.maximumDepth + 1, reason: "nesting deeper than 512 levels"))
    }

    func testBOMIsSkippedAndNotCounted() throws {
        let path = try harTemporaryFile(bytes: [0xEF, 0xBB, 0xBF] + Array("[x]".utf8))
        let stream = try JSONStreamReader(path: path)
        XCTAssertEqual(try stream.next(), .beginArray)
        XCTAssertThrowsError(try stream.next()) {
            XCTAssertEqual(
                $0 as? JSONStreamError, .invalidJSON(line: 1, column: 2, reason: "expected a value, found 'x'"))
        }
    }

    func testCannotOpen() {
        XCTAssertThrowsError(try JSONStreamReader(path: "/nonexistent/meteraudit.har")) {
            guard case .cannotOpen(let path, let reason)? = $0 as? JSONStreamError else { return XCTFail("\($0)") }
            XCTAssertEqual(path, "/nonexistent/meteraudit.har")
            XCTAssertTrue(reason.contains("No such file"), reason)
        }
    }

    func testBase64() {
        XCTAssertEqual(HARBase64.decode(""), [])
        XCTAssertEqual(HARBase64.decode("SGVsbG8="), Array("Hello".utf8))
        XCTAssertEqual(HARBase64.decode("SGVsbG8"), Array("Hello".utf8))
        XCTAssertEqual(HARBase64.decode("SGVs\r\nbG8h"), Array("Hell".utf8) + Array("o!".utf8))
        XCTAssertEqual(HARBase64.decode("AP8A/wA="), [0, 255, 0, 255, 0])
        XCTAssertEqual(HARBase64.decode("AP8A_wA"), [0, 255, 0, 255, 0])
        XCTAssertNil(HARBase64.decode("SGVsbG8=x"))
        XCTAssertNil(HARBase64.decode("S"))
        XCTAssertNil(HARBase64.decode("SGV*"))
        var bytes = [UInt8]()
        for i in 0..<1000 { bytes.append(UInt8(truncatingIfNeeded: i &* 37)) }
        for length in [0, 1, 2, 3, 4, 5, 999, 1000] {
            let slice = Array(bytes.prefix(length))
            XCTAssertEqual(HARBase64.decode(Data(slice).base64EncodedString()), slice)
        }
    }

    // MARK: Helpers

    private func tokenize(_ text: String, chunkSize: Int = JSONStreamReader.defaultChunkSize) throws -> [JSONToken] {
        let stream = try JSONStreamReader(path: try harTemporaryFile(text), chunkSize: chunkSize)
        var tokens: [JSONToken] = []
        while let token = try stream.next() { tokens.append(token) }
        return tokens
    }

    private func error(_ text: String) throws -> JSONStreamError? {
        let stream = try JSONStreamReader(path: try harTemporaryFile(text))
        do {
            while try stream.next() != nil {}
            return nil
        } catch let error as JSONStreamError {
            return error
        }
    }
}

func harTemporaryFile(_ text: String) throws -> String {
    try harTemporaryFile(bytes: Array(text.utf8))
}

func harTemporaryFile(bytes: [UInt8]) throws -> String {
    let path = NSTemporaryDirectory() + "meteraudit-har-\(UUID().uuidString).json"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}
