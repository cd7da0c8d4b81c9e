import CaptureIO
import XCTest

/// Header values and body texts are read as bytes, without making a String of them: the bytes
/// must be what a String of them holds. The oracle is the standard library's own decoding
/// (`String(decoding:as:)`, which repairs ill-formed UTF-8 with U+FFFD), applied to the raw bytes
/// the test wrote; the file is read with the default chunk (in-buffer fast paths) and with 16-byte
/// chunks (the token path), with and without escapes in the strings.
final class JSONTextBytesTests: XCTestCase {
    /// Well-formed and ill-formed UTF-8 as it may sit between the quotes of a JSON string.
    private let samples: [[UInt8]] = [
        Array("plain ascii".utf8),
        Array("caf\u{E9} \u{1F600} \u{4E2D}".utf8),  // 2-, 4- and 3-byte characters
        [0x61, 0xC3, 0x28, 0x62],  // a lead byte without its continuation
        [0x61, 0xE2, 0x82],  // a 3-byte character cut short at the end
        [0xED, 0xA0, 0x80, 0x41],  // an encoded surrogate
        [0xC0, 0xAF],  // an overlong '/'
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0x80, 0x41, 0xBF],  // lone continuation bytes
        [0xF0, 0x9F, 0x98],  // a 4-byte character cut short
        [0xE0, 0x9F, 0x80],  // an overlong 3-byte form
    ]

    private func repaired(_ bytes: [UInt8]) -> [UInt8] { Array(String(decoding: bytes, as: UTF8.self).utf8) }

    /// `bytes` with a JSON escape before them when `escaped` (the string then leaves the fast path).
    private func jsonString(_ bytes: [UInt8], escaped: Bool) -> [UInt8] {
        [0x22] + (escaped ? Array("\\t".utf8) : []) + bytes + [0x22]
    }

    func testHeaderValuesAndBodiesAreTheBytesAStringHolds() throws {
        for escaped in [false, true] {
            var file = Array(#"{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": ["#.utf8)
            for (index, sample) in samples.enumerated() {
                if index > 0 { file += Array(",".utf8) }
                file += Array(#"{"request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "x-s", "value": "#.utf8)
                file += jsonString(sample, escaped: escaped)
                file += Array(#"}]}, "response": {"status": 200, "headers": [], "content": {"size": 1, "text": "#.utf8)
                file += jsonString(sample, escaped: escaped)
                file += Array("}}}".utf8)
            }
            file += Array("]}}".utf8)
            let path = try harTemporaryFile(bytes: file)
            defer { try? FileManager.default.removeItem(atPath: path) }
            for chunk in [JSONStreamReader.defaultChunkSize, 16] {
                let entries = try HARReader(path: path, chunkSize: chunk).readAll().map(\.entry)
                XCTAssertEqual(entries.count, samples.count)
                for (sample, entry) in zip(samples, entries) {
                    let expected = repaired((escaped ? [0x09] : []) + sample)
                    XCTAssertEqual(entry?.request.headers.first?.valueBytes, expected, "chunk \(chunk), \(sample)")
                    XCTAssertEqual(entry?.request.headers.first?.value, String(decoding: expected, as: UTF8.self))
                    XCTAssertEqual(entry?.response?.content.text, expected, "chunk \(chunk), \(sample)")
                }
            }
        }
    }

    func testCharlesBodyTextIsTheBytesAStringHolds() throws {
        var file = Array("[".utf8)
        for (index, sample) in samples.enumerated() {
            if index > 0 { file += Array(",".utf8) }
            file += Array(#"{"method": "POST", "host": "a.test", "path": "/", "request": {"body": {"text": "#.utf8)
            file += jsonString(sample, escaped: index % 2 == 1)
            file += Array("}}}".utf8)
        }
        file += Array("]".utf8)
        let path = try harTemporaryFile(bytes: file)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for chunk in [JSONStreamReader.defaultChunkSize, 16] {
            let reader = try CharlesJSONReader(path: path, chunkSize: chunk)
            var bodies: [[UInt8]?] = []
            while let result = try reader.next() {
                guard case let .transaction(transaction) = result else { return XCTFail("\(result)") }
                bodies.append(transaction.request.body)
            }
            XCTAssertEqual(
                bodies, samples.enumerated().map { repaired(($0.offset % 2 == 1 ? [0x09] : []) + $0.element) },
                "chunk \(chunk)")
        }
    }
}
