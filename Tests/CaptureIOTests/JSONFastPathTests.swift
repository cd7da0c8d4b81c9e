import CaptureIO
import Foundation
import TestSupport
import XCTest

/// The JSON reader's fast paths (a `{name, value}` element, a skipped container, a number, a
/// skipped string, each scanned in the buffer) must give what the token path gives: the same
/// entries, and for broken JSON the same error at the same line and column. With a 16-byte chunk
/// almost nothing fits in the buffer and the token path reads nearly everything; with the default
/// chunk the fast paths read most of it. Files: every HAR and Charles JSON sample and fixture,
/// and copies of them cut short or with bytes changed (a fixed pseudo-random choice).
final class JSONFastPathTests: XCTestCase {
    private enum Outcome: Equatable {
        case entries([HAREntryResult], HARError?)
        case transactions([CharlesResult], CharlesError?)
        case openFailed(String)
    }

    private func readHAR(_ path: String, chunk: Int) -> Outcome {
        let reader: HARReader
        do { reader = try HARReader(path: path, chunkSize: chunk) } catch { return .openFailed("\(error)") }
        var results: [HAREntryResult] = []
        do {
            while let result = try reader.next() { results.append(result) }
            return .entries(results, nil)
        } catch {
            return .entries(results, error as? HARError)
        }
    }

    private func readCharles(_ path: String, chunk: Int) -> Outcome {
        let reader: CharlesJSONReader
        do { reader = try CharlesJSONReader(path: path, chunkSize: chunk) } catch { return .openFailed("\(error)") }
        var results: [CharlesResult] = []
        do {
            while let result = try reader.next() { results.append(result) }
            return .transactions(results, nil)
        } catch {
            return .transactions(results, error as? CharlesError)
        }
    }

    private func inputs() throws -> [(name: String, bytes: [UInt8], charles: Bool)] {
        let samples = try Fixtures.sampleInputs().filter { $0.hasSuffix(".har") || $0.hasSuffix(".chlsj") }
        let fixtures = try FileManager.default.contentsOfDirectory(atPath: Fixtures.path("har")).sorted()
            .map { Fixtures.path("har/\($0)") }
        return try (samples + fixtures).map { path in
            (URL(fileURLWithPath: path).lastPathComponent, Array(try Data(contentsOf: URL(fileURLWithPath: path))),
             path.hasSuffix(".chlsj"))
        }
    }

    func testFastPathsReadAsTheTokenPathDoes() throws {
        var generator = SplitMix(seed: 23)
        var files = 0
        var errors = 0
        for input in try inputs() {
            var variants: [(String, [UInt8])] = [("as is", input.bytes)]
            for round in 0..<8 where !input.bytes.isEmpty {
                var bytes = input.bytes
                let at = Int(generator.next() % UInt64(bytes.count))
                switch round % 3 {
                case 0: bytes.removeSubrange(at...)
                case 1:
                    let choices = Array(#"x"\},]:0-.e{[ "#.utf8)
                    bytes[at] = choices[Int(generator.next() % UInt64(choices.count))]
                default: bytes.insert(contentsOf: [#"\u12"#, "00", "1e", "\u{1F}", "{}", #"\""#, "é"].map { Array($0.utf8) }[Int(generator.next() % 7)], at: at)
                }
                variants.append(("variant \(round) at \(at)", bytes))
            }
            for (variant, bytes) in variants {
                let path = try harTemporaryFile(bytes: bytes)
                defer { try? FileManager.default.removeItem(atPath: path) }
                let read = input.charles ? readCharles : readHAR
                let tokenPath = read(path, 16)
                XCTAssertEqual(read(path, 61), tokenPath, "\(input.name), \(variant), 61-byte chunks")
                XCTAssertEqual(read(path, JSONStreamReader.defaultChunkSize), tokenPath, "\(input.name), \(variant)")
                files += 1
                switch tokenPath {
                case .entries(_, _?), .transactions(_, _?), .openFailed: errors += 1
                default: break
                }
            }
        }
        // Both kinds of files were read: whole ones, and broken ones.
        XCTAssertGreaterThan(files, 200)
        XCTAssertGreaterThan(errors, 50)
        XCTAssertLessThan(errors, files)
    }

    /// An error after a container the fast path skipped is placed by counting characters by hand:
    /// `tru}` starts at column 92 of the line (é is one column, `\u00e9` six, `\"` two).
    func testErrorPositionAfterASkippedContainer() throws {
        let text = #"{"log": {"entries": [{"skip": {"k": ["é\u00e9\"\n", 1.5e3, true, null, {}], "n": -0}, "x": tru}]}}"#
        let path = try harTemporaryFile(text)
        for chunk in [16, JSONStreamReader.defaultChunkSize] {
            XCTAssertEqual(
                readHAR(path, chunk: chunk),
                .entries([], .invalidJSON(line: 1, column: 92, reason: "invalid literal (expected 'true')")))
        }
    }

    /// Header elements the fast path does not take (an escape, members in another order, a
    /// duplicate name, a number value) are read by the token path, first member winning.
    func testHeaderElementsOutsideTheFastPath() throws {
        let text = #"""
            {"log": {"entries": [{"request": {"method": "GET", "url": "http://a/", "headers": [
              {"name": "A", "value": "1"}, {"value": "2", "name": "B"}, {"name": "C\"", "value": "3"},
              {"name": "D", "name": "E", "value": "4"}, {"name": "F"}]}}]}}
            """#
        let path = try harTemporaryFile(text)
        for chunk in [16, JSONStreamReader.defaultChunkSize] {
            guard case let .entries(results, nil) = readHAR(path, chunk: chunk), let entry = results.first?.entry else {
                return XCTFail("no entry with \(chunk)-byte chunks")
            }
            XCTAssertEqual(
                entry.request.headers,
                [("A", "1"), ("B", "2"), ("C\"", "3"), ("D", "4"), ("F", "")].map { HARHeader(name: $0.0, value: $0.1) })
        }
        let broken = try harTemporaryFile(
            #"{"log": {"entries": [{"request": {"method": "GET", "url": "u", "headers": [{"name": "A", "value": "1"}, {"name": "B", "value": 2}]}}]}}"#)
        XCTAssertEqual(
            readHAR(broken, chunk: JSONStreamReader.defaultChunkSize),
            .entries([.broken(index: 0, reason: "request.headers[1].value is a number, not a string")], nil))
    }

    /// Header texts the reader shares between fields (a table of recent ones) come back exactly
    /// as written, whatever replaces what in the table: 3,000 distinct values of 0 to 299 bytes
    /// (over the table's 1,024 slots and its 256-byte bound), each header list read twice, in
    /// entries far apart, plus a non-ASCII value. The same text read twice in a row is one array.
    func testSharedHeaderTextsReadAsWritten() throws {
        var generator = SplitMix(seed: 2311)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ;=,/-_.:".utf8)
        func text(_ count: Int) -> String {
            String(decoding: (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }, as: UTF8.self)
        }
        var lists: [[(String, String)]] = []
        for list in 0..<300 {
            lists.append((0..<10).map { field in
                (field == 0 ? "x-list" : text(1 + Int(generator.next() % 24)), field == 0 ? "\(list)" : text(Int(generator.next() % 300)))
            })
        }
        lists[7][3] = ("accept-language", "fr-FR, é")
        let order = Array(0..<lists.count) + Array(0..<lists.count).reversed()
        let entries = order.map { index in
            let headers = lists[index].map { #"{"name": "\#($0.0)", "value": "\#($0.1)"}"# }.joined(separator: ", ")
            return #"{"request": {"method": "GET", "url": "http://a/", "headers": [\#(headers)]}}"#
        }
        let path = try harTemporaryFile(#"{"log": {"entries": ["# + entries.joined(separator: ",\n") + "]}}")
        guard case let .entries(results, nil) = readHAR(path, chunk: JSONStreamReader.defaultChunkSize) else {
            return XCTFail("the HAR did not read")
        }
        XCTAssertEqual(results.count, order.count)
        for (result, index) in zip(results, order) {
            XCTAssertEqual(result.entry?.request.headers, lists[index].map { HARHeader(name: $0.0, value: $0.1) })
        }
        // The middle two entries hold the same list, one after the other: a value of 1 to 256
        // bytes in it is one array in both.
        let middle = lists.count - 1
        let field = try XCTUnwrap(lists[middle].firstIndex { (1...256).contains($0.1.utf8.count) })
        let first = try XCTUnwrap(results[middle].entry?.request.headers[field].valueBytes)
        let second = try XCTUnwrap(results[middle + 1].entry?.request.headers[field].valueBytes)
        XCTAssertEqual(
            first.withUnsafeBufferPointer { $0.baseAddress }, second.withUnsafeBufferPointer { $0.baseAddress })
    }
}

/// A small deterministic generator (SplitMix64), so the changed bytes are the same on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
