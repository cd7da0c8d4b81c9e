import CaptureIO
import Foundation
import XCTest

/// A large HAR (~50 MB of base64 bodies) is read one entry at a time, in bounded memory.
final class HARStreamingTests: XCTestCase {
    func testLargeFileIsStreamedOneEntryAtATime() throws {
        let entryCount = 100
        let bodySize = 384 * 1024
        let path = NSTemporaryDirectory() + "meteraudit-har-large-\(UUID().uuidString).har"
        defer { try? FileManager.default.removeItem(atPath: path) }

        // Write the file, remembering where each entry ends.
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var offset = 0
        var entryEnds: [Int] = []
        var largestEntry = 0
        func write(_ text: String) {
            let data = Data(text.utf8)
            handle.write(data)
            offset += data.count
        }
        write(#"{"log": {"version": "1.2", "creator": {"name": "Generator", "version": "1"}, "entries": ["#)
        let pattern = (0..<bodySize + entryCount).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        for index in 0..<entryCount {
            var body = Array(pattern.prefix(bodySize + index))
            body[0] = UInt8(truncatingIfNeeded: index)
            let entry = """
                {"startedDateTime": "2024-03-01T00:00:00Z", "request": {"method": "GET", "url": "https://example.com/\(index)", \
                "httpVersion": "HTTP/1.1", "headers": [], "headersSize": 100, "bodySize": 0}, "response": {"status": 200, \
                "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "headersSize": 80, "bodySize": \(body.count), \
                "content": {"size": \(body.count), "mimeType": "application/octet-stream", "encoding": "base64", \
                "text": "\(Data(body).base64EncodedString())"}}}
                """
            let start = offset
            write(index == 0 ? entry : ",\n" + entry)
            largestEntry = max(largestEntry, offset - start)
            entryEnds.append(offset)
        }
        write("]}}\n")
        handle.closeFile()
        XCTAssertGreaterThan(offset, 50_000_000)

        let readStart = Date()
        defer { print("HAR streaming: read in \(Date().timeIntervalSince(readStart)) s") }
        resetPeakRSS()
        let baseline = residentKiB(peak: false)
        let reader = try HARReader(path: path)
        var seen = 0
        var maxAhead = 0
        var maxRSS = baseline
        while let result = try reader.next() {
            guard let entry = result.entry else { return XCTFail("\(result)") }
            XCTAssertEqual(entry.index, seen)
            let body = try XCTUnwrap(entry.response?.content.text)
            XCTAssertEqual(body.count, bodySize + seen)
            XCTAssertEqual(body.first, UInt8(truncatingIfNeeded: seen))
            XCTAssertTrue(Data(body.dropFirst()) == Data(pattern[1..<body.count]), "entry \(seen) body")
            // Never more than one chunk beyond the end of the entry just returned.
            maxAhead = max(maxAhead, reader.bytesRead - entryEnds[seen])
            XCTAssertLessThanOrEqual(reader.bytesBuffered, JSONStreamReader.defaultChunkSize)
            maxRSS = max(maxRSS, residentKiB(peak: false))
            seen += 1
        }
        XCTAssertEqual(seen, entryCount)
        XCTAssertEqual(reader.bytesRead, offset)
        XCTAssertLessThanOrEqual(maxAhead, JSONStreamReader.defaultChunkSize)
        XCTAssertEqual(reader.creatorName, "Generator")

        let peak = max(maxRSS, residentKiB(peak: true))
        let growth = (peak - baseline) * 1024
        let bound = 3 * largestEntry + 32 * 1024 * 1024
        print(
            "HAR streaming: file \(offset) B, largest entry \(largestEntry) B, RSS growth \(growth) B (bound \(bound)), read ahead at most \(maxAhead) B"
        )
        XCTAssertGreaterThan(baseline, 0, "no /proc/self/status: the memory bound is not checked")
        XCTAssertLessThan(
            growth, bound, "RSS grew by \(growth) bytes reading a \(offset)-byte file; largest entry \(largestEntry)")
        XCTAssertLessThan(bound, offset, "the bound must be well below the file size to mean anything")
    }

    /// VmRSS, or VmHWM (peak since the last reset) in KiB; 0 when /proc is not there.
    private func residentKiB(peak: Bool) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        let key = peak ? "VmHWM:" : "VmRSS:"
        for line in status.split(separator: "\n") where line.hasPrefix(key) {
            return Int(line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
        }
        return 0
    }

    /// Linux: writing 5 to clear_refs resets VmHWM to the current RSS.
    private func resetPeakRSS() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}
