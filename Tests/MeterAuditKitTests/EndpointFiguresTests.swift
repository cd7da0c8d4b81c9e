import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// endpoints.csv of a whole run over Samples/ (captures and HARs) against the figures that `scripts/endpoint-figures`
/// computes on its own (Python, exact fractions) from the run's messages.csv, following
/// docs/FIGURES.md literally: Tests/Fixtures/endpoints/samples.endpoints.csv, computed from
/// Tests/Fixtures/endpoints/samples.messages.csv.
///
/// When the samples or the messages.csv format change, regenerate the pair with the
/// one-line recipe at the top of scripts/endpoint-figures.
final class EndpointFiguresTests: XCTestCase {
    static let regenerate =
        "regenerate Tests/Fixtures/endpoints/ with the recipe at the top of scripts/endpoint-figures"

    func testEndpointsCSVMatchesTheIndependentFigures() throws {
        let inputs = try Fixtures.sampleInputs()
        XCTAssertGreaterThanOrEqual(inputs.count, 20, "Samples/ should hold the sample captures and HARs")
        let out = FileManager.default.temporaryDirectory
            .appendingPathComponent("endpoint-figures-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try AuditRun(inputs: inputs, outputDirectory: out, options: try .withSampleKeysAndMeters()).run()
        XCTAssertFalse(result.someInputsUnreadable, "every sample should be readable")

        // Same inputs in the same order: the records must be exactly those the fixture was computed from.
        let messages = try Data(contentsOf: URL(fileURLWithPath: out + "/messages.csv"))
        let expectedMessages = try Data(
            contentsOf: URL(fileURLWithPath: Fixtures.path("endpoints/samples.messages.csv")))
        guard messages == expectedMessages else {
            let got = Self.parseCSV(messages)
            let want = Self.parseCSV(expectedMessages)
            let firstDifference =
                zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }
                .map { "first different row \($0.offset + 1):\n  run:     \($0.element.0)\n  fixture: \($0.element.1)" }
                ?? "rows: run \(got.count), fixture \(want.count)"
            return XCTFail(
                "messages.csv of the run differs from samples.messages.csv (\(firstDifference)); "
                    + "if the captures or the columns changed on purpose, \(Self.regenerate)")
        }

        let produced = try Self.endpointsCSV(in: out)
        let expected = Self.parseCSV(
            try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("endpoints/samples.endpoints.csv"))))
        Self.assertSameCells(produced, expected)
    }

    // MARK: helpers

    /// The rows of DIR/endpoints.csv; throws (failing the test) when the run did not write it.
    static func endpointsCSV(in directory: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> [[String]]
    {
        let path = directory + "/endpoints.csv"
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail("the run wrote no \(path)", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return parseCSV(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Header first; each cell reported by row key (endpoint, direction) and column name.
    static func assertSameCells(
        _ produced: [[String]], _ expected: [[String]], file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let header = expected.first, let producedHeader = produced.first else {
            return XCTFail(
                "empty endpoints.csv (produced \(produced.count) rows, expected \(expected.count))", file: file,
                line: line)
        }
        XCTAssertEqual(producedHeader, header, "endpoints.csv columns", file: file, line: line)
        guard producedHeader == header else { return }
        XCTAssertEqual(
            produced.map { $0.prefix(2).joined(separator: " | ") },
            expected.map { $0.prefix(2).joined(separator: " | ") },
            "endpoints.csv rows (endpoint | direction), in order", file: file, line: line)
        for (producedRow, expectedRow) in zip(produced.dropFirst(), expected.dropFirst()) {
            let key = expectedRow.prefix(2).joined(separator: " | ")
            guard producedRow.count == header.count, expectedRow.count == header.count else {
                XCTFail(
                    "\(key): \(producedRow.count) cells produced, \(expectedRow.count) expected, \(header.count) columns",
                    file: file, line: line)
                continue
            }
            for (column, name) in header.enumerated() where producedRow[column] != expectedRow[column] {
                XCTFail(
                    "\(key) \(name): produced \"\(producedRow[column])\", expected \"\(expectedRow[column])\"",
                    file: file, line: line)
            }
        }
    }

    /// RFC 4180: fields split at commas, quoted fields may hold commas, CR, LF and doubled
    /// quotes; rows end with CRLF (a bare LF is accepted too).
    static func parseCSV(_ data: Data) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var atFieldStart = true
        let bytes = [UInt8](data)
        var i = 0
        func endField() {
            row.append(String(decoding: field, as: UTF8.self))
            field.removeAll()
            atFieldStart = true
        }
        while i < bytes.count {
            let byte = bytes[i]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        i += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") && atFieldStart {
                quoted = true
                atFieldStart = false
            } else if byte == UInt8(ascii: ",") {
                endField()
            } else if byte == 13 && i + 1 < bytes.count && bytes[i + 1] == 10 {
                endField()
                rows.append(row)
                row = []
                i += 1
            } else if byte == 10 {
                endField()
                rows.append(row)
                row = []
            } else {
                field.append(byte)
                atFieldStart = false
            }
            i += 1
        }
        if !field.isEmpty || !row.isEmpty || !atFieldStart {
            endField()
            rows.append(row)
        }
        return rows
    }
}
