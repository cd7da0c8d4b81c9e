import Analysis
import Foundation
import MeterAuditKit
import TestSupport
import XCTest

/// HTTP/3 through the whole run (UDP, QUIC decryption, stream ordering, the HTTP/3 reader):
/// every record of each keyed HTTP/3 sample against the peers' own qlog, as
/// scripts/h3-truth wrote it (Tests/Fixtures/h3/NAME.truth.json): per message, its stream,
/// HEADERS and DATA frame bytes, frames, header list size, decoded body and completeness.
final class HTTP3RunTests: XCTestCase {
    struct Key: Hashable, CustomStringConvertible {
        var stream: Int, kind: String, interim: Bool, pushed: Bool
        var description: String { "stream \(stream) \(pushed ? "pushed " : "")\(kind)\(interim ? " (interim)" : "")" }
    }
    struct Figures: Equatable {
        var wireHeaders: Int, wireBody: Int, frames: Int, headerList: Int?, bodyDecoded: Int?, complete: Bool
    }

    private func truth(_ name: String) throws -> [Key: Figures] {
        let url = URL(fileURLWithPath: Fixtures.path("h3/\(name).truth.json"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var result: [Key: Figures] = [:]
        for connection in json["connections"] as! [[String: Any]] {
            for message in connection["messages"] as! [[String: Any]] {
                let key = Key(
                    stream: message["stream"] as! Int, kind: message["kind"] as! String,
                    interim: message["interim"] as! Bool, pushed: message["pushed"] as! Bool)
                XCTAssertNil(result[key], "\(name): two messages at \(key)")
                result[key] = Figures(
                    wireHeaders: message["wire_headers"] as! Int, wireBody: message["wire_body"] as! Int,
                    frames: message["frames"] as! Int, headerList: message["header_list"] as? Int,
                    bodyDecoded: message["body_decoded"] as? Int, complete: message["complete"] as! Bool)
            }
        }
        return result
    }

    private func records(_ name: String) throws -> [Key: Figures] {
        guard let pcap = [".pcap", ".pcap.gz"].map({ Fixtures.sample(name + $0) })
            .first(where: FileManager.default.fileExists(atPath:))
        else { throw XCTSkip("Samples/\(name).pcap is missing") }
        var options = AnalysisOptions()
        try options.loadKeyLogs([Fixtures.sample(name + ".keys")])
        var result: [Key: Figures] = [:]
        _ = InputAnalyzer(options: options).analyze(path: pcap) { record in
            let facts = record.message.protocolFacts
            XCTAssertEqual(facts.wireProtocol, .h3)
            let key = Key(
                stream: Int(facts.stream ?? UInt64.max), kind: record.message.kind == .request ? "request" : "response",
                interim: record.message.isInterim, pushed: record.message.anomalies.contains(.pushed))
            XCTAssertNil(result[key], "\(name): two records at \(key)")
            result[key] = Figures(
                wireHeaders: record.wire.headers ?? -1, wireBody: record.wire.body ?? -1, frames: facts.frames ?? -1,
                headerList: facts.headFieldsKnown ? facts.headerListSize : nil,
                bodyDecoded: record.bodyDecoded, complete: record.message.complete)
        }
        return result
    }

    func testEveryKeyedSampleEqualsThePeersLogs() throws {
        for name in ["h3-mixed", "h3-v2", "h3-loss", "h3-download"] {
            let expected = try truth(name)
            let actual = try records(name)
            XCTAssertFalse(expected.isEmpty, name)
            XCTAssertEqual(Set(actual.keys), Set(expected.keys), name)
            for (key, figures) in expected {
                guard var got = actual[key] else { continue }
                // The truth has a decoded size only where the peers logged one.
                if figures.bodyDecoded == nil { got.bodyDecoded = nil }
                if figures.headerList == nil { got.headerList = nil }
                XCTAssertEqual(got, figures, "\(name) \(key)")
            }
        }
    }
}
