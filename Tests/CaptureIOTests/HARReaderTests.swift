import CaptureIO
import Foundation
import TestSupport
import XCTest

/// HAR files as real exporters write them, and the shapes that are not HAR.
final class HARReaderTests: XCTestCase {
    // MARK: Exporters

    func testChromeDevTools() throws {
        let (reader, entries) = try read("chrome-devtools.har")
        XCTAssertEqual(reader.creatorName, "WebInspector")
        XCTAssertEqual(reader.creatorVersion, "537.36")
        XCTAssertEqual(reader.harVersion, "1.2")
        XCTAssertEqual(entries.count, 4)

        let page = entries[0]
        XCTAssertEqual(page.index, 0)
        XCTAssertEqual(page.startedDateTime, "2024-03-01T10:00:00.000Z")
        XCTAssertEqual(page.connection, "443")
        XCTAssertEqual(page.serverIPAddress, "93.184.216.34")
        XCTAssertEqual(page.request.method, "GET")
        XCTAssertEqual(page.request.httpVersion, "http/2.0")
        XCTAssertEqual(page.request.headers.count, 6)
        XCTAssertEqual(
            page.request.headers.filter(\.isPseudoHeader).map(\.name), [":authority", ":method", ":path", ":scheme"])
        XCTAssertEqual(
            page.request.headers.withoutPseudoHeaders,
            [
                HARHeader(name: "accept", value: "text/html"), HARHeader(name: "user-agent", value: "Mozilla/5.0"),
            ])
        XCTAssertEqual(page.request.cookieCount, 1)
        XCTAssertNil(page.request.headersSize)
        XCTAssertEqual(page.request.bodySize, 0)
        XCTAssertNil(page.request.postData)
        let response = try XCTUnwrap(page.response)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.statusText, "")
        XCTAssertNil(response.headersSize)
        XCTAssertNil(response.bodySize)
        XCTAssertEqual(response.transferSize, 412)
        XCTAssertEqual(response.content.text, Array("<p>héllo</p>".utf8))
        XCTAssertEqual(response.content.size, 13)
        XCTAssertEqual(response.content.compression, 0)
        XCTAssertFalse(page.fromCache)
        XCTAssertEqual(page.webSocketMessageCount, 0)

        let image = entries[1]
        XCTAssertTrue(image.fromCache)
        XCTAssertEqual(image.response?.content.text, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertEqual(image.response?.content.encoding, "base64")
        XCTAssertEqual(image.response?.transferSize, 0)

        let socket = entries[2]
        XCTAssertEqual(socket.webSocketMessageCount, 3)
        XCTAssertEqual(socket.response?.status, 101)
        XCTAssertEqual(socket.request.headersSize, 218)
        XCTAssertEqual(socket.response?.headersSize, 129)
        XCTAssertEqual(socket.connection, "5511")

        let blocked = entries[3]
        XCTAssertNil(blocked.response)
        XCTAssertEqual(blocked.responseStatus, 0)
        XCTAssertEqual(blocked.responseError, "net::ERR_BLOCKED_BY_CLIENT")
        XCTAssertEqual(blocked.request.postData?.text, Array(#"{"a":"\ud83d\ude00"}"#.utf8))
        XCTAssertEqual(blocked.request.postData?.mimeType, "application/json")
        XCTAssertEqual(blocked.request.postData?.hasParams, false)
        XCTAssertEqual(blocked.request.bodySize, 20)
    }

    func testFirefox() throws {
        let (reader, entries) = try read("firefox.har")
        XCTAssertEqual(reader.creatorName, "Firefox")
        XCTAssertEqual(entries.map(\.index), [0, 1])
        XCTAssertEqual(entries[0].request.headersSize, 233)
        XCTAssertEqual(entries[0].request.httpVersion, "HTTP/1.1")
        XCTAssertEqual(entries[0].response?.headersSize, 154)
        XCTAssertNil(entries[0].response?.bodySize)
        XCTAssertNil(entries[0].response?.transferSize)
        XCTAssertEqual(entries[0].response?.statusText, "OK")
        XCTAssertEqual(entries[0].connection, "80")
        let post = try XCTUnwrap(entries[1].request.postData)
        XCTAssertTrue(post.hasParams)
        XCTAssertEqual(post.text, Array("q=a&r=bc&x=".utf8))
        XCTAssertEqual(entries[1].response?.content.text, [])
        XCTAssertEqual(entries[1].response?.status, 204)
    }

    func testCharles() throws {
        let (reader, entries) = try read("charles.har")
        XCTAssertEqual(reader.creatorName, "Charles Proxy")
        XCTAssertEqual(reader.creatorVersion, "4.6.6")
        XCTAssertEqual(entries.count, 2)
        XCTAssertEqual(entries[0].request.postData?.text, [0, 1, 2, 3])
        XCTAssertEqual(entries[0].request.postData?.encoding, "base64")
        XCTAssertEqual(entries[0].request.bodySize, 4)
        XCTAssertEqual(entries[0].response?.content.text, Array(#"{"id":1234}"#.utf8))
        XCTAssertEqual(entries[0].response?.headersSize, 85)
        XCTAssertNil(entries[0].connection)
        XCTAssertEqual(entries[1].request.method, "CONNECT")
        XCTAssertNil(entries[1].response?.content.mimeType)
        XCTAssertNil(entries[1].response?.content.text)
    }

    func testMitmproxy() throws {
        let (reader, entries) = try read("mitmproxy.har")
        XCTAssertEqual(reader.creatorName, "mitmproxy exporthar")
        XCTAssertEqual(reader.creatorVersion, "0.1")
        XCTAssertEqual(entries.count, 2)
        // mitmproxy's headersSize is len(str(headers)): an integer, kept as given.
        XCTAssertEqual(entries[0].request.headersSize, 68)
        XCTAssertEqual(entries[0].response?.headersSize, 105)
        XCTAssertEqual(entries[0].request.httpVersion, "HTTP/2.0")
        XCTAssertFalse(entries[0].request.headers.contains(where: \.isPseudoHeader))
        XCTAssertEqual(entries[0].response?.content.text, [0, 255, 0, 255, 0])
        XCTAssertEqual(entries[0].startedDateTime, "2024-03-01T12:30:00.123456+00:00")
        // A flow without a response: status 0, _error.
        XCTAssertNil(entries[1].response)
        XCTAssertEqual(entries[1].responseStatus, 0)
        XCTAssertEqual(entries[1].responseError, "Connection killed.")
        XCTAssertNil(entries[1].serverIPAddress)
        XCTAssertEqual(entries[1].request.postData?.hasParams, true)
        XCTAssertEqual(entries[1].request.postData?.text, Array("a=1".utf8))
    }

    func testFiddler() throws {
        let (reader, entries) = try read("fiddler.har")
        XCTAssertEqual(reader.creatorName, "Fiddler")
        XCTAssertEqual(entries.count, 2)
        XCTAssertEqual(entries[0].request.headersSize, 187)
        XCTAssertEqual(entries[0].response?.bodySize, 33)
        XCTAssertEqual(entries[0].response?.content.compression, 20)
        XCTAssertEqual(entries[0].connection, "52814")
        XCTAssertEqual(entries[1].response?.status, 404)
        XCTAssertEqual(entries[1].response?.content.text, Array("nope".utf8))
    }

    func testSafari() throws {
        let (reader, entries) = try read("safari.har")
        XCTAssertEqual(reader.creatorName, "WebKit Web Inspector")
        XCTAssertEqual(entries.count, 2)
        for entry in entries {
            XCTAssertNil(entry.request.headersSize)
            XCTAssertNil(entry.response?.headersSize)
            XCTAssertNil(entry.response?.bodySize)
            XCTAssertNil(entry.response?.content.compression)
            XCTAssertEqual(entry.response?.httpVersion, "h2")
        }
        XCTAssertEqual(entries[0].request.bodySize, 0)
        XCTAssertNil(entries[1].request.bodySize)
        XCTAssertEqual(entries[0].serverIPAddress, "2606:2800:220:1:248:1893:25c8:1946")
        XCTAssertNil(entries[1].response?.content.text)
        XCTAssertEqual(entries[1].response?.content.size, 0)
    }

    func testInsomnia() throws {
        let (reader, entries) = try read("insomnia.har")
        XCTAssertEqual(reader.creatorName, "Insomnia")
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries[0].request.method, "PUT")
        XCTAssertNil(entries[0].request.headersSize)
        XCTAssertNil(entries[0].request.bodySize)
        XCTAssertEqual(entries[0].request.postData?.text, Array(#"{"k": "v"}"#.utf8))
        XCTAssertEqual(entries[0].request.postData?.hasParams, false)
        XCTAssertEqual(entries[0].response?.content.text, Array("{}".utf8))
    }

    func testPollyJS() throws {
        let (reader, entries) = try read("pollyjs.har")
        XCTAssertEqual(reader.creatorName, "Polly.JS")
        XCTAssertEqual(reader.creatorVersion, "6.0.6")
        XCTAssertEqual(reader.harVersion, "1.2") // after entries: known once read through
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries[0].request.headersSize, 156)
        XCTAssertEqual(entries[0].request.bodySize, 13)
        XCTAssertEqual(entries[0].request.postData?.text, Array(#"{"page":1}"#.utf8))
        XCTAssertEqual(entries[0].response?.content.text, [1, 2, 3])
        XCTAssertEqual(entries[0].response?.bodySize, 24)
    }

    func testPcap2har() throws {
        let (reader, entries) = try read("pcap2har.har")
        XCTAssertEqual(reader.creatorName, "pcap2har")
        XCTAssertEqual(reader.harVersion, "1.1")
        XCTAssertEqual(entries.count, 2)
        XCTAssertEqual(entries[0].response?.content.text, Array("GIF89a".utf8))
        XCTAssertEqual(entries[0].response?.headersSize, 79)
        XCTAssertEqual(entries[0].response?.bodySize, 6)
        // An entry with no response object at all.
        XCTAssertNil(entries[1].response)
        XCTAssertNil(entries[1].responseStatus)
        XCTAssertEqual(entries[1].request.url, "http://example.com/never")
    }

    // MARK: Edge cases

    func testBOM() throws {
        let (reader, entries) = try read("bom.har")
        XCTAssertEqual(try Fixtures.bytes("har/bom.har").prefix(3), [0xEF, 0xBB, 0xBF])
        XCTAssertEqual(reader.creatorName, "BOM Writer")
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries[0].request.headersSize, 20)
        XCTAssertEqual(entries[0].response?.headersSize, 19)
    }

    func testUnknownSizesAndCreatorAfterEntries() throws {
        let reader = try HARReader(path: Fixtures.path("har/sizes.har"))
        XCTAssertNil(reader.creatorName, "creator comes after entries")
        let entries = try reader.readAll().map { try XCTUnwrap($0.entry) }
        XCTAssertEqual(reader.creatorName, "Late Creator")
        XCTAssertEqual(reader.creatorVersion, "9.9")
        XCTAssertEqual(entries.count, 3)
        // null, -1
        XCTAssertNil(entries[0].request.headersSize)
        XCTAssertEqual(entries[0].request.bodySize, 0)
        XCTAssertNil(entries[0].response?.headersSize)
        XCTAssertNil(entries[0].response?.bodySize)
        XCTAssertNil(entries[0].response?.content.size)
        XCTAssertNil(entries[0].response?.transferSize)
        // missing, fractional, string, exponent
        XCTAssertNil(entries[1].request.headersSize)
        XCTAssertNil(entries[1].request.bodySize)
        XCTAssertEqual(entries[1].request.headers, [])
        XCTAssertNil(entries[1].response?.headersSize)
        XCTAssertNil(entries[1].response?.bodySize)
        XCTAssertNil(entries[1].response?.transferSize)
        XCTAssertEqual(entries[1].response?.content, HARContent())
        // negative, overflowing; a 304 with zero sizes; a cache hit recorded in `cache`
        XCTAssertNil(entries[2].request.headersSize)
        XCTAssertNil(entries[2].request.bodySize)
        XCTAssertEqual(entries[2].response?.headersSize, 0)
        XCTAssertEqual(entries[2].response?.bodySize, 0)
        XCTAssertEqual(entries[2].response?.transferSize, 0)
        XCTAssertTrue(entries[2].fromCache)
        XCTAssertFalse(entries[0].fromCache)
    }

    func testBrokenEntriesAreReportedByIndexAndSkipped() throws {
        let reader = try HARReader(path: Fixtures.path("har/broken-entry.har"))
        let results = try reader.readAll()
        XCTAssertEqual(results.count, 6)
        XCTAssertEqual(results.compactMap(\.entry).map(\.index), [0, 4])
        XCTAssertEqual(results.compactMap(\.entry).map(\.request.url), ["http://a/1", "http://a/5"])
        XCTAssertEqual(results[1], .broken(index: 1, reason: "request is a string, not an object"))
        XCTAssertEqual(results[2], .broken(index: 2, reason: "response.status is a string (\"200\"), not an integer"))
        XCTAssertEqual(results[3], .broken(index: 3, reason: "response.content.text is not valid base64"))
        XCTAssertEqual(results[5], .broken(index: 5, reason: "the entry is a number, not an object"))
        XCTAssertEqual(reader.entryCount, 6)
        XCTAssertNil(try reader.next())
    }

    func testAFieldOfAnUnexpectedTypeThatNoSizeNeedsIsANote() throws {
        // chrome-har writes a param's value as an object: the entry and its sizes are kept.
        let reader = try HARReader(path: Fixtures.path("crashers/har-params-object-value.har"))
        let results = try reader.readAll()
        XCTAssertEqual(results.count, 2)
        let form = try XCTUnwrap(results[0].entry)
        XCTAssertEqual(form.request.headersSize, 120)
        XCTAssertEqual(form.request.bodySize, 7)
        XCTAssertEqual(form.request.unexpectedTypes, ["request.postData.params.value"])
        XCTAssertEqual(form.request.postData?.params, [], "a form rebuilt without one param would be wrong")
        XCTAssertEqual(form.request.postData?.mimeType, "application/x-www-form-urlencoded")
        XCTAssertEqual(form.response?.status, 304)
        XCTAssertEqual(form.response?.headersSize, 60)
        XCTAssertEqual(form.response?.unexpectedTypes, [])
        XCTAssertEqual(results[1].entry?.request.url, "http://example.com/next")
        XCTAssertEqual(results[1].entry?.request.unexpectedTypes, [])
    }

    func testInvalidJSONIsFatalWithPosition() throws {
        let reader = try HARReader(path: Fixtures.path("har/invalid.har"))
        let expected = HARError.invalidJSON(line: 5, column: 36, reason: "expected ',' or '}', found '\"'")
        XCTAssertEqual(try reader.next()?.entry?.request.url, "http://a/")
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual($0 as? HARError, expected) }
        // The same error again, not a resynchronised guess.
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual($0 as? HARError, expected) }
        XCTAssertTrue(expected.description.contains("line 5, column 36"), expected.description)
    }

    func testNotHAR() {
        XCTAssertEqual(openError("top-empty.har"), .missingKey("log"))
        XCTAssertEqual(openError("log-empty.har"), .missingKey("log.entries"))
        XCTAssertEqual(openError("log-not-object.har"), .notAnObject("log"))
        XCTAssertEqual(openError("top-array.har"), .notAnObject("top level"))
        XCTAssertEqual(openError("entries-not-array.har"), .notAnArray("log.entries"))
        XCTAssertEqual(HARError.missingKey("log.entries").description, "not a HAR file: log.entries is missing")
        guard case .cannotOpen? = openError("no-such-file.har") else { return XCTFail("expected cannotOpen") }
    }

    func testTrailingDataAfterTheLogIsAnError() throws {
        let reader = try HARReader(path: Fixtures.path("har/trailing-data.har"))
        XCTAssertThrowsError(try reader.next()) {
            XCTAssertEqual(
                $0 as? HARError, .invalidJSON(line: 1, column: 27, reason: "unexpected '{' after the top-level value"))
        }
    }

    func testDirectoryIsAReadError() {
        guard case .readFailed? = openError("") else { return XCTFail("expected readFailed for a directory") }
    }

    // MARK: Helpers

    private func read(_ name: String) throws -> (HARReader, [HAREntry]) {
        let reader = try HARReader(path: Fixtures.path("har/\(name)"))
        var entries: [HAREntry] = []
        while let result = try reader.next() {
            guard let entry = result.entry else {
                XCTFail("\(name): \(result)")
                continue
            }
            entries.append(entry)
        }
        return (reader, entries)
    }

    private func openError(_ name: String) -> HARError? {
        do {
            _ = try HARReader(path: Fixtures.path("har/\(name)"))
            return nil
        } catch {
            return error as? HARError
        }
    }
}
