import Analysis
import CostAccounting
import Foundation
import HTTP2
import MessageModel
@testable import Reports
import TLS
import XCTest

/// The section model that report.md, report.html and report.json render: one figure, one value.
final class ReportSectionsTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    /// ReportFixture's input with three TLS connections: one HTTP/1.x and one HTTP/2 decrypted,
    /// one without a key (connections.csv: two rows `yes`, one `no-key`).
    private var run: RunReport {
        var run = ReportFixture.run
        run.inputs[0].tls.connections = 3
        run.inputs[0].tls.decrypted = 2
        run.inputs[0].tls.h2 = 1
        return run
    }

    func testTLSNotDecryptedIsTheRowsNotDecrypted() {
        let tls = TLSSection(run.inputs)
        XCTAssertEqual(tls.undecrypted.total, 1, "the HTTP/2 connection was decrypted and is measured")
        XCTAssertEqual(tls.undecrypted.total, tls.reasons.values.reduce(0, +))
        XCTAssertEqual(tls.bytes.total, 5120)
    }

    func testMarkdownAndHTMLCountTheSameTLSConnections() {
        let markdown = MarkdownReport.render(run)
        XCTAssertTrue(
            markdown.contains(
                "- TLS connections (encrypted, not measured): 1, 5,120 B not decrypted (fixture.pcap 1);"),
            markdown)
        let html = HTMLReport.render(run)
        XCTAssertTrue(
            html.contains(
                "<tr><th scope=\"row\">TLS connections (encrypted, not measured)</th><td class=\"n\">1</td>"), html)
    }

    func testOverheadKindsHaveOneNameEverywhere() {
        let names = runOverheadKinds.isEmpty ? [] : OverheadKind.all.map(\.name)
        XCTAssertEqual(
            names, [
                "empty_packets", "quic_ack", "quic_control", "quic_handshake", "quic_padding", "tls_control", "h2_control",
                "h3_control", "unclaimed",
            ])
        for name in names {
            XCTAssertTrue(ConnectionsCSV.costColumns.contains("up_\(name)_ip"))
        }
        XCTAssertEqual(JSONReport.overheadKindsInKeyOrder().map(\.name), names.sorted())
        // diagnostics.json's keys are the same names.
        var cost = DirectionCost()
        cost[.h2Control] = LayerBytes(tls: 1, tcp: 2, ip: 3, frame: 4)
        let encoded = try! JSONSerialization.jsonObject(with: JSONEncoder().encode(cost)) as! [String: Any]
        XCTAssertEqual(Set(encoded.keys).intersection(names), Set(names))
        XCTAssertEqual(try! JSONDecoder().decode(DirectionCost.self, from: JSONEncoder().encode(cost)), cost)
    }
}
