import Analysis
import Estimation
import MeterAuditKit
import Records
import TestSupport
import XCTest

/// The causes of every estimate of every record of every sample add up, component by
/// component, to the estimate minus the record's wire size: the sums here are taken from the
/// estimate and the wire size alone, not from how the estimators explain them.
final class CauseSumTests: XCTestCase {
    func testCausesSumToTheErrorOfEachComponent() throws {
        let inputs = try Fixtures.sampleInputs()
        XCTAssertGreaterThanOrEqual(inputs.count, 20, "Samples/ should hold the sample captures and HARs")
        let analyzer = InputAnalyzer(options: try .withSampleKeys())
        let names = analyzer.options.estimators.names
        var checked = (split: 0, totalOnly: 0)
        for input in inputs {
            let name = (input as NSString).lastPathComponent
            var records: [MessageRecord] = []
            let diagnostics = analyzer.analyze(path: input) { records.append($0) }
            // A capture whose TLS key is missing has no records to give.
            let onlyUndecrypted =
                diagnostics.tls.connections == diagnostics.connections.total && diagnostics.tls.decrypted == 0
            XCTAssertTrue(!records.isEmpty || onlyUndecrypted, "\(name): no records")
            for record in records {
                XCTAssertEqual(record.causes.count, record.estimates.count, "\(name): one cause list per estimate")
                for (index, (result, causes)) in zip(record.estimates, record.causes).enumerated() {
                    let context = "\(name) \(record.message.kind.rawValue) \(record.message.index) \(names[index])"
                    guard let estimate = try? result.get() else {
                        XCTAssertEqual(causes, [], "\(context): no estimate, no causes")
                        continue
                    }
                    func sum(_ component: WireComponent) -> Int {
                        causes.filter { $0.component == component }.reduce(0) { $0 + $1.bytes }
                    }
                    let wire = record.wire
                    if let line = wire.line, let headers = wire.headers, let body = wire.body {
                        XCTAssertEqual(sum(.line), estimate.line - line, "\(context): line")
                        XCTAssertEqual(sum(.headers), estimate.headers - headers, "\(context): headers")
                        XCTAssertEqual(sum(.body), estimate.body - body, "\(context): body")
                        XCTAssertEqual(sum(.total), 0, "\(context): a split wire size has no total-only cause")
                        checked.split += 1
                    } else if let total = wire.total {
                        XCTAssertEqual(sum(.total), estimate.total - total, "\(context): total")
                        XCTAssertEqual(causes.count, 1, "\(context): one cause for a total-only wire size")
                        checked.totalOnly += 1
                    } else {
                        XCTAssertEqual(causes, [], "\(context): no wire size, nothing to explain")
                    }
                }
            }
        }
        // Both kinds occur in the samples: captures and most HARs split, Chrome's _transferSize does not.
        XCTAssertGreaterThan(checked.split, 0)
        XCTAssertGreaterThan(checked.totalOnly, 0)
    }
}
