import Estimation
import MessageModel
import XCTest

/// Each quirk of docs/METERING.md §4.1/§4.2 with a figure counted by hand in the comment beside it.
final class EstimatorTests: XCTestCase {
    private let documented = DocumentedEstimator()
    private let naive = NaiveEstimator()

    private func request(_ target: String, method: String = "GET", _ fields: [(String, String)] = []) -> HTTPMessage {
        var message = HTTPMessage(kind: .request, index: 0)
        message.method = method
        message.target = Array(target.utf8)
        message.startLine = Array("\(method) \(target) HTTP/1.1".utf8)
        message.fields = fields.map { HeaderField($0.0, $0.1) }
        return message
    }

    private func response(_ statusLine: String = "HTTP/1.1 200 OK", _ fields: [(String, String)] = []) -> HTTPMessage {
        var message = HTTPMessage(kind: .response, index: 0)
        message.startLine = Array(statusLine.utf8)
        message.status = Int(statusLine.split(separator: " ")[1])
        message.fields = fields.map { HeaderField($0.0, $0.1) }
        return message
    }

    private func body(_ length: Int, decoded: Int? = nil, gzipped: Int? = nil, gzippedRaw: Int? = nil) -> BodyFacts {
        BodyFacts(
            transferDecodedLength: length, decodedLength: decoded ?? length, decodedExactly: true,
            bytesMissing: false, gzippedTransferDecoded: gzippedRaw, gzippedDecoded: gzipped)
    }

    private func documentedEstimate(_ message: HTTPMessage, _ facts: BodyFacts) throws -> Estimate {
        try documented.estimate(message, body: facts).get()
    }

    // MARK: - documented, request line

    func testRequestLineWithQueryAndTrailingSlash() throws {
        // "example.com GET /a/b HTTP/1.1 x=1\n": 11 + 1 + 3 + 1 + 4 + 1 + 8 + 1 + 3 + 1 = 34
        let message = request("/a/b/?x=1", [("Host", "example.com:8080")])
        XCTAssertEqual(try documentedEstimate(message, body(0)).line, 34)
    }

    func testMissingQueryIsTheNullText() throws {
        // "h GET / HTTP/1.1 (null)\n": 1 + 1 + 3 + 1 + 1 + 1 + 8 + 1 + 6 + 1 = 24 (root keeps its slash)
        XCTAssertEqual(try documentedEstimate(request("/", [("Host", "h")]), body(0)).line, 24)
    }

    func testEmptyQueryIsEmpty() throws {
        // "h GET /p HTTP/1.1 \n": 1 + 1 + 3 + 1 + 2 + 1 + 8 + 1 + 0 + 1 = 19
        XCTAssertEqual(try documentedEstimate(request("/p?", [("Host", "h")]), body(0)).line, 19)
    }

    func testPathIsPercentDecodedAndQueryIsNot() throws {
        // path "/café" = 6 UTF-8 bytes; query "q=%C3%A9" stays 8: 1+1+3+1+6+1+8+1+8+1 = 31
        XCTAssertEqual(try documentedEstimate(request("/caf%C3%A9/?q=%C3%A9", [("Host", "h")]), body(0)).line, 31)
    }

    func testUndecodablePathIsNull() throws {
        // "(null)" for both a bad escape and bytes that are not UTF-8: 1+1+3+1+6+1+8+1+6+1 = 29
        XCTAssertEqual(try documentedEstimate(request("/a%zz", [("Host", "h")]), body(0)).line, 29)
        XCTAssertEqual(try documentedEstimate(request("/a%FF", [("Host", "h")]), body(0)).line, 29)
    }

    func testParamsStayInThePath() throws {
        // path "/a;v=1" = 6: 1+1+3+1+6+1+8+1+6+1 = 29
        XCTAssertEqual(try documentedEstimate(request("/a;v=1", [("Host", "h")]), body(0)).line, 29)
    }

    func testHostWithoutPortUserinfoOrBrackets() throws {
        // IPv6 "[::1]:8080" → "::1" = 3: 3+1+3+1+1+1+8+1+6+1 = 26
        XCTAssertEqual(try documentedEstimate(request("/", [("Host", "[::1]:8080")]), body(0)).line, 26)
        // absolute-form "http://user@Example.com:81/x/?q": host "Example.com" 11, path "/x", query "q":
        // 11+1+3+1+2+1+8+1+1+1 = 30
        XCTAssertEqual(try documentedEstimate(request("http://user@Example.com:81/x/?q"), body(0)).line, 30)
        // no Host at all: "" → 0+1+3+1+1+1+8+1+6+1 = 23
        XCTAssertEqual(try documentedEstimate(request("/"), body(0)).line, 23)
    }

    func testAbsoluteFormWithoutPathHasEmptyPath() throws {
        // "h GET  HTTP/1.1 (null)\n": 1+1+3+1+0+1+8+1+6+1 = 23
        XCTAssertEqual(try documentedEstimate(request("http://h"), body(0)).line, 23)
    }

    // MARK: - documented, request headers and body

    func testStackAddedFieldsAreLeftOutAndCookieIsKept() throws {
        let message = request(
            "/",
            [
                ("Host", "h"), ("User-Agent", "x"), ("Accept", "*/*"), ("Accept-Encoding", "gzip"),
                ("Accept-Language", "en"), ("Connection", "keep-alive"), ("Content-Length", "3"),
                ("Cookie", "a=1"), ("X-Token", "abc"),
            ])
        // Cookie: 6+2+3+2 = 13; X-Token: 7+2+3+2 = 14; final CRLF 2 → 29
        XCTAssertEqual(try documentedEstimate(message, body(3)).headers, 29)
        XCTAssertEqual(try documentedEstimate(message, body(3)).body, 3)
    }

    func testCustomProfile() throws {
        let estimator = DocumentedEstimator(profile: ClientProfile(name: "custom", stackAddedFields: ["x-token"]))
        let message = request("/", [("Host", "h"), ("X-Token", "abc")])
        // Host: 4+2+1+2 = 9, + 2 = 11
        XCTAssertEqual(try estimator.estimate(message, body: body(0)).get().headers, 11)
    }

    func testStackAddedNamesInAnyCaseAndAlphabet() throws {
        // A non-ASCII name in the profile: names are then compared as Strings, not bytes.
        let estimator = DocumentedEstimator(
            profile: ClientProfile(name: "custom", stackAddedFields: ["X-Tökén", "x-id"]))
        let message = request("/", [("x-tökén", "1"), ("X-ID", "2"), ("Keep", "3")])
        // x-tökén and X-ID are stack-added; Keep: 4+2+1+2 = 9, + 2 = 11
        XCTAssertEqual(try estimator.estimate(message, body: body(0)).get().headers, 11)
        // The URLSession profile (ASCII names, compared as bytes): HOST and accept are its own.
        let ascii = request("/", [("HOST", "h"), ("accept", "*/*"), ("X-A", "1")])
        // X-A: 3+2+1+2 = 8, + 2 = 10
        XCTAssertEqual(try documentedEstimate(ascii, body(0)).headers, 10)
    }

    func testManyFieldsTakeTheGeneralPath() throws {
        // 70 distinct names F0…F69 with value "v": F0–F9 2+2+1+2 = 7 each (70), F10–F69
        // 3+2+1+2 = 8 each (480), + 2 = 552; with F5 sent twice more (value "w"), merged into
        // "v,w,w": + 4 → 556 (the general path, over 64 fields, merges the same way).
        var fields = (0..<70).map { ("F\($0)", "v") }
        XCTAssertEqual(try documentedEstimate(request("/", fields), body(0)).headers, 552)
        fields += [("f5", "w"), ("F5", "w")]
        XCTAssertEqual(try documentedEstimate(request("/", fields), body(0)).headers, 556)
    }

    func testRepeatsAmongStackAddedFieldsDoNotMergeTheAppsFields() throws {
        // Accept twice (the stack's, left out), the app's X-A and X-B once each: no merging.
        // X-A: 3+2+1+2 = 8; X-B: 8; final CRLF 2 → 18
        let apart = request("/", [("Accept", "a"), ("X-A", "1"), ("accept", "b"), ("X-B", "2")])
        XCTAssertEqual(try documentedEstimate(apart, body(0)).headers, 18)
        // The app's X-A twice around the stack's Host: merged, "X-A: 1,22": 3+2+4+2 = 11, + 2 = 13
        let merged = request("/", [("X-A", "1"), ("Host", "h"), ("x-a", "22")])
        XCTAssertEqual(try documentedEstimate(merged, body(0)).headers, 13)
    }

    func testSixtyFourFieldsTakeTheWordPath() throws {
        // 64 distinct names F0…F63 with value "v": F0–F9 2+2+1+2 = 7 each (70), F10–F63
        // 3+2+1+2 = 8 each (432), + 2 = 504; with Host among them (stack-added, 4+2+1+2 = 9
        // not counted) still 504; F7 sent again as f7 "w" (65 fields, the general path): "v,w" + 2 → 506.
        var fields = (0..<64).map { ("F\($0)", "v") }
        XCTAssertEqual(try documentedEstimate(request("/", fields), body(0)).headers, 504)
        fields[20] = ("Host", "h")
        // F20 (8) replaced by Host: 504 - 8 = 496
        XCTAssertEqual(try documentedEstimate(request("/", fields), body(0)).headers, 496)
        fields.append(("f7", "w"))
        XCTAssertEqual(try documentedEstimate(request("/", fields), body(0)).headers, 498)
    }

    func testNonASCIINameCanonicallyEqualToAStackAddedName() throws {
        // U+037E GREEK QUESTION MARK is canonically ";": Strings (what the profile's names are
        // compared as) take "x\u{037E}y" (4 bytes) for "x;y" (3), so a length apart is no
        // proof that the names differ. Keep: 4+2+1+2 = 9, + 2 = 11.
        let estimator = DocumentedEstimator(profile: ClientProfile(name: "custom", stackAddedFields: ["x;y"]))
        let message = request("/", [("x\u{037E}y", "1"), ("Keep", "3")])
        XCTAssertEqual(try estimator.estimate(message, body: body(0)).get().headers, 11)
    }

    func testRepeatedRequestFieldsJoinWithAComma() throws {
        let message = request("/", [("X-A", "1"), ("x-a", "22")])
        // "X-A: 1,22": 3+2+4+2 = 11, + 2 = 13
        XCTAssertEqual(try documentedEstimate(message, body(0)).headers, 13)
    }

    func testLatin1BytesCountTwice() throws {
        var message = request("/")
        message.fields = [HeaderField(name: Array("X".utf8), value: [0x61, 0xE9])]
        // "a" + 0xE9 read as ISO-8859-1 → "aé" = 3 UTF-8 bytes: 1+2+3+2 = 8, + 2 = 10
        XCTAssertEqual(try documentedEstimate(message, body(0)).headers, 10)
    }

    func testRequestWithContentEncodingIsRecompressedWhateverItIs() throws {
        let message = request("/", method: "POST", [("Content-Encoding", "br")])
        XCTAssertEqual(documented.bodyNeeds(for: message), .gzipTransferDecoded)
        XCTAssertEqual(try documentedEstimate(message, body(100, gzippedRaw: 57)).body, 57)
        XCTAssertEqual(documented.bodyNeeds(for: request("/")), [])
    }

    // MARK: - documented, response

    func testStatusLineWithoutItsCRLF() throws {
        XCTAssertEqual(try documentedEstimate(response("HTTP/1.1 200 OK"), body(0)).line, 15)
        XCTAssertEqual(try documentedEstimate(response("HTTP/1.0 404 Not Found"), body(0)).line, 22)
    }

    func testSetCookieFieldsMergeWithCommaSpace() throws {
        let message = response(
            "HTTP/1.1 200 OK", [("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=22")])
        // "Set-Cookie: a=1, b=22": 10+2+9+2 = 23; Content-Type: 12+2+10+2 = 26; + 2 → 51
        XCTAssertEqual(try documentedEstimate(message, body(0)).headers, 51)
    }

    func testGzipComparisonIsCaseSensitiveOnTheMergedValue() throws {
        let gzip = response("HTTP/1.1 200 OK", [("Content-Encoding", "gzip")])
        XCTAssertEqual(documented.bodyNeeds(for: gzip), .gzipDecoded)
        XCTAssertEqual(try documentedEstimate(gzip, body(40, decoded: 100, gzipped: 42)).body, 42)
        let upper = response("HTTP/1.1 200 OK", [("Content-Encoding", "Gzip")])
        XCTAssertEqual(documented.bodyNeeds(for: upper), [])
        XCTAssertEqual(try documentedEstimate(upper, body(40, decoded: 100)).body, 100)
        let twice = response("HTTP/1.1 200 OK", [("Content-Encoding", "gzip"), ("Content-Encoding", "gzip")])
        XCTAssertEqual(documented.bodyNeeds(for: twice), [])
        XCTAssertEqual(try documentedEstimate(twice, body(40, decoded: 100)).body, 100)
    }

    func testGzipResponseThatCouldNotBeDecodedHasNoEstimate() {
        let gzip = response("HTTP/1.1 200 OK", [("Content-Encoding", "gzip")])
        var facts = body(40, decoded: 40)
        facts.decodedExactly = false
        XCTAssertEqual(documented.estimate(gzip, body: facts), .failure(.bodyNotDecoded))
        facts.bytesMissing = true
        XCTAssertEqual(documented.estimate(gzip, body: facts), .failure(.bodyBytesMissing))
    }

    /// An HTTP/2 head decoded against HPACK state the capture never saw: its fields are empty
    /// because nobody saw them, not because there are none (docs/METERING.md §4.5).
    func testUnknownHTTP2FieldsGiveNoEstimateThatNeedsThem() throws {
        var request = HTTPMessage(kind: .request, index: 0)
        request.version = "HTTP/2"
        request.protocolFacts = ProtocolFacts(.h2, stream: 3, frames: 0, startLineInHeaderBlock: true)
        request.protocolFacts.headFieldsKnown = false
        var response = HTTPMessage(kind: .response, index: 0)
        response.version = "HTTP/2"
        response.protocolFacts = ProtocolFacts(.h2, stream: 3, frames: 0, startLineInHeaderBlock: true)
        response.protocolFacts.headFieldsKnown = false
        XCTAssertEqual(documented.estimate(request, body: body(96)), .failure(.fieldsUnknown))
        XCTAssertEqual(documented.estimate(response, body: body(20)), .failure(.fieldsUnknown))
        // Whether a Content-Length was sent is unknown; the request's DATA bytes are not.
        XCTAssertEqual(naive.estimate(response, body: body(20)), .failure(.fieldsUnknown))
        XCTAssertEqual(try naive.estimate(request, body: body(96)).get(), Estimate(line: 0, headers: 0, body: 96))
        // Known fields are estimated: "HTTP/2 204" is 10, an empty header block's final CRLF 2.
        response.protocolFacts.headFieldsKnown = true
        response.status = 204
        XCTAssertEqual(try documentedEstimate(response, body(0)), Estimate(line: 10, headers: 2, body: 0))
    }

    /// The HTTP/2 status line the app reads back is `HTTP/2 {status}` as `String(status)` writes
    /// it: 7 bytes of "HTTP/2 ", then the digits and a minus sign, counted by hand.
    func testHTTP2StatusLineLengthCountsTheStatusDigits() throws {
        var response = HTTPMessage(kind: .response, index: 0)
        response.version = "HTTP/2" // as the HTTP/2 reader writes it
        response.protocolFacts = ProtocolFacts(.h2, stream: 1, frames: 0, startLineInHeaderBlock: true)
        // (status, line): "HTTP/2 0" 8, "HTTP/2 9" 8, "HTTP/2 10" 9, "HTTP/2 200" 10, "HTTP/2 1000" 11,
        // "HTTP/2 -5" 9, Int.max's 19 digits 26, Int.min's minus and 19 digits 27; none sent: "HTTP/2 0".
        let cases: [(Int?, Int)] = [
            (0, 8), (9, 8), (10, 9), (200, 10), (1000, 11), (-5, 9), (Int.max, 26), (Int.min, 27), (nil, 8),
        ]
        for (status, line) in cases {
            response.status = status
            XCTAssertEqual(try documentedEstimate(response, body(0)).line, line, "status \(String(describing: status))")
        }
    }

    // MARK: - naive

    func testNaiveRequestIsTheBody() throws {
        XCTAssertEqual(
            try naive.estimate(request("/", method: "POST"), body: body(123)).get(),
            Estimate(line: 0, headers: 0, body: 123))
    }

    func testNaiveResponseTakesContentLengthAsItIs() throws {
        // A HEAD or 304 response's Content-Length counts, though no body followed.
        XCTAssertEqual(
            try naive.estimate(response("HTTP/1.1 304 Not Modified", [("Content-Length", "100")]), body: body(0)).get()
                .total, 100)
        XCTAssertEqual(
            try naive.estimate(response("HTTP/1.1 200 OK", [("Content-Length", "5, 5")]), body: body(5)).get().total, 5)
        // Not one number: absent, so the decoded body.
        XCTAssertEqual(
            try naive.estimate(response("HTTP/1.1 200 OK", [("Content-Length", "5, 6")]), body: body(9, decoded: 30))
                .get().total, 30)
        XCTAssertEqual(try naive.estimate(response("HTTP/1.1 200 OK"), body: body(40, decoded: 100)).get().total, 100)
    }

    func testStandardSetOrderAndNeeds() {
        let set = EstimatorSet.standard()
        XCTAssertEqual(set.names, ["naive", "documented"])
        XCTAssertEqual(set.bodyNeeds(for: response("HTTP/1.1 200 OK", [("Content-Encoding", "gzip")])), .gzipDecoded)
    }
}
