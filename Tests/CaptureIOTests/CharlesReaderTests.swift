import CaptureIO
import Foundation
import XCTest

/// The Charles readers and what they stand on: `XMLPullReader`, `JSONStreamReader`'s filtered
/// reading, format sniffing, and the decoder's rules for sizes, bodies and broken transactions.
final class CharlesReaderTests: XCTestCase {
    // MARK: XMLPullReader

    private func events(_ text: String, chunkSize: Int = 16) throws -> [XMLEvent] {
        let reader = try XMLPullReader(path: try harTemporaryFile(text), chunkSize: chunkSize)
        var out: [XMLEvent] = []
        while let event = try reader.next() { out.append(event) }
        return out
    }

    private func xmlError(_ text: String) -> XMLStreamError? {
        do {
            _ = try events(text)
            return nil
        } catch let error as XMLStreamError {
            return error
        } catch {
            return nil
        }
    }

    func testXMLEventsEntitiesCDATAAndLineEnds() throws {
        let text = "\u{FEFF}<?xml version=\"1.0\"?>\n<!DOCTYPE s SYSTEM \"x.dtd\" [<!ENTITY a \"b\">]>\n<!-- c -->"
            + "<s a='1 &amp; 2' b=\"x&#10;y\tz\"><t/>A&lt;&#x42;&#67;\r\nD<![CDATA[<e>&amp;\r]]></s>\n"
        for chunk in [16, 1 << 16] {
            XCTAssertEqual(
                try events(text, chunkSize: chunk),
                [
                    .start(name: "s", attributes: [("a", "1 & 2"), ("b", "x\ny z")]), .start(name: "t", attributes: []),
                    .end(name: "t"), .text("A<BC\nD"), .text("<e>&amp;\n"), .end(name: "s"),
                ], "chunk \(chunk)")
        }
    }

    func testXMLErrors() {
        XCTAssertNotNil(xmlError("<a><b></a></b>"))
        XCTAssertNotNil(xmlError("<a>"))
        XCTAssertNotNil(xmlError("<a></a><b></b>"))
        XCTAssertNotNil(xmlError("<a x=1></a>"))
        XCTAssertNotNil(xmlError("<a x='1' x='2'></a>"))
        XCTAssertNotNil(xmlError("<a>&nope;</a>"))
        XCTAssertNotNil(xmlError("<a>&#0;</a>"))
        XCTAssertNotNil(xmlError("text<a/>"))
        XCTAssertNotNil(xmlError(""))
        XCTAssertEqual(xmlError("<a>\n <b></c></a>"), .invalidXML(line: 2, column: 9, reason: "</c> closes <b>"))
    }

    // MARK: Filtered JSON

    func testFilteredReadingKeepsOnlyWhatItNames() throws {
        let text = #"{"a": 1, "skip": {"deep": ["x", {"y": "\u00e9"}]}, "b": {"c": "kept", "d": [1,2]}, "n": [{"q":1},2,"3"], "a": 2}"#
        for chunk in [16, 1 << 16] {
            let stream = try JSONStreamReader(path: try harTemporaryFile(text), chunkSize: chunk)
            let value = try stream.readValue(
                startingWith: try XCTUnwrap(stream.next()),
                keeping: JSONKeyFilter(["a": .all, "b": JSONKeyFilter(["c": .all]), "n": .count]))
            XCTAssertEqual(
                value,
                .object([
                    ("a", .number(JSONNumber(raw: "1"))), ("b", .object([("c", .string("kept"))])),
                    ("n", .array([.null, .null, .null])), ("a", .number(JSONNumber(raw: "2"))),
                ]))
            XCTAssertNil(try stream.next())
        }
    }

    // MARK: Sessions

    private func read(_ text: String, xml: Bool = false) throws -> [CharlesResult] {
        let path = try harTemporaryFile(text)
        let reader: CharlesSessionReader =
            xml ? try CharlesXMLReader(path: path, chunkSize: 16) : try CharlesJSONReader(path: path, chunkSize: 16)
        var out: [CharlesResult] = []
        while let result = try reader.next() { out.append(result) }
        return out
    }

    func testSniffing() throws {
        XCTAssertTrue(CharlesSession.looksLikeSession(path: try harTemporaryFile(" [ {\"status\": \"COMPLETE\"}]")))
        XCTAssertTrue(CharlesSession.looksLikeSession(path: try harTemporaryFile("<?xml version=\"1.0\"?><charles-session/>")))
        XCTAssertFalse(CharlesSession.looksLikeSession(path: try harTemporaryFile("[{\"log\": {}}]")))
        XCTAssertFalse(CharlesSession.looksLikeSession(path: try harTemporaryFile("[]")))
        XCTAssertFalse(CharlesSession.looksLikeSession(path: try harTemporaryFile("{\"log\": {}}")))
        XCTAssertFalse(CharlesSession.looksLikeSession(path: try harTemporaryFile("<html></html>")))
    }

    func testSizesBodiesAndBrokenTransactions() throws {
        let json = #"""
            [{"method": "POST", "host": "h", "actualPort": "x", "ssl": 3,
              "request": {"sizes": {"handshake": null, "headers": -1, "body": 12},
                          "header": {"firstLine": "POST / HTTP/1.1", "headers": [{"name": "A", "value": "b"}]},
                          "body": {"encoded": "aGk=", "decoded": false}},
              "response": {"status": 200, "sizes": {"headers": "17", "body": 2}, "body": {"text": "ok"}}},
             {"host": "h"},
             {"method": "GET", "response": {"status": "200"}},
             {"method": "GET", "request": {"body": {"encoded": "*"}}},
             {"method": "CONNECT", "tunnel": true, "request": {"sizes": {"handshake": 517}}, "response": {"sizes": {"body": 9}}}]
            """#
        let results = try read(json)
        XCTAssertEqual(results.count, 5)
        guard case let .transaction(first) = results[0] else { return XCTFail("\(results[0])") }
        XCTAssertNil(first.actualPort)
        XCTAssertEqual(first.unexpectedTypes, ["actualPort", "ssl"])
        XCTAssertNil(first.request.headersSize)
        XCTAssertEqual(first.request.bodySize, 12)
        XCTAssertEqual(first.request.body, Array("hi".utf8))
        XCTAssertTrue(first.request.bodyStillCoded)
        XCTAssertNil(first.response?.headersSize)
        XCTAssertEqual(first.response?.unexpectedTypes, ["response.sizes.headers"])
        XCTAssertEqual(first.response?.bodyStillCoded, false)
        XCTAssertEqual(results[1], .broken(index: 1, reason: "method is missing"))
        XCTAssertEqual(results[2], .broken(index: 2, reason: #"response.status is a string ("200"), not an integer"#))
        XCTAssertEqual(results[3], .broken(index: 3, reason: "request.body.encoded is not valid base64"))
        guard case let .transaction(tunnel) = results[4] else { return XCTFail("\(results[4])") }
        XCTAssertTrue(tunnel.tunnel)
        XCTAssertEqual(tunnel.request.handshakeSize, 517)
        XCTAssertEqual(tunnel.response?.bodySize, 9)
    }

    func testXMLGivesTheJSONTwinsTransactions() throws {
        let json = #"""
            [{"method": "GET", "protocolVersion": "HTTP/1.1", "scheme": "https", "host": "h", "actualPort": 8443,
              "path": "/p", "query": "q=1", "tunnel": false, "clientAddress": "/10.0.0.2", "clientPort": 5000,
              "remoteAddress": "h/1.2.3.4", "times": {"start": "2026-01-15T10:00:00.5+01:00"},
              "ssl": {"protocol": "TLSv1.3", "cipherSuite": "S"}, "alpn": {"protocol": "h2"},
              "request": {"sizes": {"handshake": 0, "headers": 40, "body": 0},
                          "header": {"firstLine": "GET /p?q=1 HTTP/1.1", "headers": [{"name": "Host", "value": "h:8443"}]}},
              "response": {"status": 200, "sizes": {"handshake": 0, "headers": 30, "body": 5},
                           "header": {"firstLine": "HTTP/1.1 200 OK", "headers": [{"name": "X", "value": "a\r\nb"}]},
                           "body": {"text": "<&>\r\n", "decoded": true}}}]
            """#
        let xml = """
            <?xml version="1.0"?><charles-session>
            <transaction method="GET" protocolVersion="HTTP/1.1" scheme="https" host="h" actualPort="8443" path="/p"
              query="q=1" tunnel="false" clientAddress="/10.0.0.2" clientPort="5000" remoteAddress="h/1.2.3.4">
              <times start="2026-01-15T10:00:00.5+01:00"/><ssl protocol="TLSv1.3" cipherSuite="S"/><alpn protocol="h2"/>
              <request><sizes handshake="0" headers="40" body="0"/>
                <headers><first-line>GET /p?q=1 HTTP/1.1</first-line><header><name>Host</name><value>h:8443</value></header></headers></request>
              <response status="200"><sizes handshake="0" headers="30" body="5"/>
                <headers><first-line>HTTP/1.1 200 OK</first-line><header><name>X</name><value>a&#13;\nb</value></header></headers>
                <body encoding="plain" decoded="true">&lt;&amp;&gt;&#13;\n</body></response>
            </transaction><comment>skipped</comment></charles-session>
            """
        let fromJSON = try read(json)
        let fromXML = try read(xml, xml: true)
        XCTAssertEqual(fromJSON, fromXML)
        guard case let .transaction(t) = fromJSON.first else { return XCTFail() }
        XCTAssertEqual(t.remoteAddress, "1.2.3.4")
        XCTAssertEqual(t.clientAddress, "10.0.0.2")
        XCTAssertEqual(t.alpn, "h2")
        XCTAssertEqual(t.response?.body, Array("<&>\r\n".utf8))
    }
}
