import Estimation
import MessageModel
import Records
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

    // MARK: - one pass over the fields

    /// Names are told apart by their first seven bytes and length first, then in full: names
    /// alike in those are merged only when the rest is equal too (ASCII case aside).
    func testNamesAlikeInTheirFirstBytesAreComparedInFull() throws {
        // X-Trace-Id-A and x-trace-id-b: 12+2+1+2 = 17 each, + 2 = 36 (not merged)
        let apart = response("HTTP/1.1 200 OK", [("X-Trace-Id-A", "1"), ("x-trace-id-b", "2")])
        XCTAssertEqual(try documentedEstimate(apart, body(0)).headers, 36)
        // X-Custom-Header and x-custom-HEADER merge: "X-Custom-Header: 1, 22": 15+2+1+2+2+2 = 24, + 2 = 26
        let merged = response("HTTP/1.1 200 OK", [("X-Custom-Header", "1"), ("x-custom-HEADER", "22")])
        XCTAssertEqual(try documentedEstimate(merged, body(0)).headers, 26)
        // Content-Encodinx is no content coding: nothing to re-compress, the decoded body counts.
        let notCoded = response("HTTP/1.1 200 OK", [("Content-Encodinx", "gzip")])
        XCTAssertEqual(documented.bodyNeeds(for: notCoded), [])
        XCTAssertEqual(try documentedEstimate(notCoded, body(40, decoded: 100)).body, 100)
        // CONTENT-ENCODING is one, in any case.
        let upper = response("HTTP/1.1 200 OK", [("CONTENT-ENCODING", "gzip")])
        XCTAssertEqual(documented.bodyNeeds(for: upper), .gzipDecoded)
        // HOST is the Host field: "a.test GET / HTTP/1.1 (null)\n": 6+1+3+1+1+1+8+1+6+1 = 29
        XCTAssertEqual(try documentedEstimate(request("/", [("X-A", "1"), ("HOST", "a.test:80")]), body(0)).line, 29)
    }

    func testLongStackAddedNamesAreComparedInFull() throws {
        // ACCEPT-LANGUAGE is stack-added; Accept-Languagx (same length and first bytes) is the app's:
        // 15+2+2+2 = 21, + 2 = 23
        let message = request("/", [("ACCEPT-LANGUAGE", "en"), ("Accept-Languagx", "fr")])
        XCTAssertEqual(try documentedEstimate(message, body(0)).headers, 23)
        // The stack-added bytes as sent: ACCEPT-LANGUAGE: en = 15+2+2+2 = 21; its cause is −21.
        let wire = ComponentSizes(line: 0, headers: 0, body: 0)
        let estimate = try documentedEstimate(message, body(0))
        let causes = documented.explain(message, wire: wire, body: body(0), estimate: estimate)
        XCTAssertEqual(causes.first { $0.known == .stackAddedFields }?.bytes, -21)
    }

    /// A value's bytes are checked eight at a time: a Latin-1 byte in the first word, in the
    /// last word, and in the bytes after the words each count twice.
    func testLatin1ByteAnywhereInALongValueCountsTwice() throws {
        for position in [0, 3, 7, 8, 13, 15, 16, 18] {
            var value = Array(repeating: UInt8(ascii: "a"), count: 19)
            value[position] = 0xE9
            var message = response("HTTP/1.1 200 OK")
            message.fields = [HeaderField(name: Array("X".utf8), value: value)]
            // X: 1+2+(18+2)+2 = 25, + 2 = 27
            XCTAssertEqual(try documentedEstimate(message, body(0)).headers, 27, "byte \(position)")
        }
        // A valid UTF-8 é (2 bytes) counts as sent: 1+2+(17+2)+2 = 24, + 2 = 26
        var message = response("HTTP/1.1 200 OK")
        message.fields = [HeaderField("X", String(repeating: "a", count: 17) + "é")]
        XCTAssertEqual(try documentedEstimate(message, body(0)).headers, 26)
    }

    /// Repeated response names become one cause each, in the order they were first sent, with
    /// the first spelling.
    func testRepeatedResponseNamesInTheOrderFirstSent() throws {
        let message = response(
            "HTTP/1.1 200 OK", [("Via", "1"), ("X-B", "2"), ("via", "3"), ("x-b", "4"), ("VIA", "5"), ("Date", "d")])
        // Merged: "Via: 1, 3, 5" 3+2+7+2 = 14; "X-B: 2, 4" 3+2+4+2 = 11; Date 4+2+1+2 = 9; + 2 = 36
        let estimate = try documentedEstimate(message, body(0))
        XCTAssertEqual(estimate.headers, 36)
        let wire = ComponentSizes(line: 17, headers: 60, body: 0)
        let causes = documented.explain(message, wire: wire, body: body(0), estimate: estimate)
        // Via sent 3 times saves 2 × (3 + 2) = 10; X-B twice saves 5.
        XCTAssertEqual(
            causes.filter { $0.name.hasPrefix("merged") }.map { "\($0.name) \($0.bytes)" },
            ["merged Via fields -10", "merged X-B fields -5"])
        // The header causes add up to the header error: 36 − 60 = −24.
        XCTAssertEqual(causes.filter { $0.component == .headers }.reduce(0) { $0 + $1.bytes }, -24)
    }

    /// `assess` is `estimate` then the set's `explain`, for every estimator and kind of wire size.
    func testAssessIsEstimateThenExplain() {
        let set = EstimatorSet.standard()
        let messages = [
            request("/a?b=1", method: "POST", [("Host", "h"), ("Content-Encoding", "gzip"), ("X-A", "1"), ("x-a", "2")]),
            response("HTTP/1.1 200 OK", [("Content-Length", "10"), ("Set-Cookie", "a"), ("set-cookie", "b")]),
            response("HTTP/1.1 304 Not Modified", [("Content-Length", "7, 7")]),
        ]
        let wires = [
            WireSize(line: 10, headers: 40, body: 10, source: .capture),
            WireSize(total: 70, source: .har),
            WireSize(source: .har),
        ]
        for message in messages {
            for wire in wires {
                let facts = body(10, decoded: 12, gzipped: 9, gzippedRaw: 8)
                let estimates = set.estimate(message, body: facts)
                let assessed = set.assess(message, wire: wire, body: facts)
                XCTAssertEqual(assessed.estimates, estimates)
                XCTAssertEqual(assessed.causes, set.explain(message, wire: wire, body: facts, estimates: estimates))
            }
        }
    }

    func testStandardSetOrderAndNeeds() {
        let set = EstimatorSet.standard()
        XCTAssertEqual(set.names, ["naive", "documented"])
        XCTAssertEqual(set.bodyNeeds(for: response("HTTP/1.1 200 OK", [("Content-Encoding", "gzip")])), .gzipDecoded)
    }
}
