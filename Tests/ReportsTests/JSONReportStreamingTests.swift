import Analysis
import CostAccounting
import Foundation
import HTTP2
import HTTP3
import QUIC
@testable import Reports
import TLS
import XCTest

/// report.json is written by a streaming writer; these tests hold it to the text JSONEncoder
/// gives for the same document (the encoder wrote report.json before, and is the oracle of
/// the layout: key order, spacing, number and string forms).
final class JSONReportStreamingTests: XCTestCase {
    override class func setUp() { _ = runOverheadKinds }

    func testFixtureRunMatchesJSONEncoder() {
        XCTAssertEqual(JSONReport.render(ReportFixture.run), JSONReportOracle.render(ReportFixture.run))
    }

    func testHTTP2RunMatchesJSONEncoder() {
        XCTAssertEqual(JSONReport.render(ProtocolReportTests.run), JSONReportOracle.render(ProtocolReportTests.run))
    }

    func testEmptyRunMatchesJSONEncoder() {
        let run = RunReport(inputs: [], aggregation: Aggregation(estimatorNames: [], rankingEstimator: nil))
        XCTAssertEqual(JSONReport.render(run), JSONReportOracle.render(run))
        let named = RunReport(
            inputs: [], aggregation: Aggregation(estimatorNames: ["naive", "documented"], rankingEstimator: 1))
        XCTAssertEqual(JSONReport.render(named), JSONReportOracle.render(named))
    }

    func testEscapesAndNumbersMatchJSONEncoder() {
        var run = ReportFixture.run
        // Every control character, quotes, backslashes, slashes, non-ASCII and U+2028.
        let awkward = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self) + "\"\\/é\u{2028}\u{7f}"
        run.settings = [("endpoint rule", awkward), ("gzip level", "6")]
        run.inputs[0].error = awkward
        XCTAssertEqual(JSONReport.render(run), JSONReportOracle.render(run))
        // Fractions in every magnitude JSONEncoder writes differently: 1e-06, 0.000123, 1e+20.
        let writer = { (values: [Double?]) -> String in
            var text: [UInt8] = []
            var json = PrettyJSONWriter { text.append(contentsOf: $0) }
            json.beginArray()
            for value in values {
                json.element()
                json.double(value)
            }
            json.endArray()
            json.flush()
            return String(decoding: text, as: UTF8.self)
        }
        let values: [Double?] = [
            0, 1, -1, 0.5, 1e-06, 0.000123, 123456.789012, 1e20, -2.5e-05, 12345678.5, nil, 4031.984848,
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        XCTAssertEqual(writer(values), String(decoding: try! encoder.encode(values), as: UTF8.self))
    }

    func testFractionsOfMillionthsAreWrittenAsSwiftDescribesThem() {
        // The writer spells a fraction rounded to 6 decimals from its digits; Swift's shortest
        // round-trip text (without ".0") is the oracle, over every magnitude it writes plainly
        // and the edges where it turns to exponents (under 1e-4) or the writer falls back.
        func written(_ value: Double) -> String {
            var text: [UInt8] = []
            var json = PrettyJSONWriter { text.append(contentsOf: $0) }
            json.double(value)
            json.flush()
            return String(decoding: text, as: UTF8.self)
        }
        func described(_ value: Double) -> String {
            let text = value.description
            return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
        }
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [
            0, -0.0, 0.0001, -0.0001, 0.000099, 0.00001, 1e-06, 0.000123, 0.1, 0.3, 1, 10, 100.5, 999_999_999.999999,
            1e9, 1e15, 12_345_678.123456, 4031.984848, -63.693851, 0.444444, 1.14, 2.5e-05, .infinity,
        ]
        for digits in 1...15 {
            var limit = 1
            for _ in 0..<digits { limit *= 10 }
            for _ in 0..<2_000 {
                let millionths = Int.random(in: -limit..<limit, using: &generator)
                values.append(Double(millionths) / 1_000_000)
                values.append(Double.random(in: -Double(limit)..<Double(limit), using: &generator) / 1_000_000)
            }
        }
        for value in values {
            XCTAssertEqual(written(value), described(value), "\(value)")
        }
    }

    func testEscapeCheckByWordsAgreesWithOneByteAtATime() {
        // Every byte value in every position of texts of 0 to 40 bytes (whole words and tails),
        // against the byte-wise rule: a control character, a quote or a backslash.
        func byteWise(_ bytes: [UInt8]) -> Bool { bytes.contains { $0 < 0x20 || $0 == 34 || $0 == 92 } }
        for length in 0...40 {
            let plain = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            XCTAssertFalse(plain.withUnsafeBufferPointer { PrettyJSONWriter.needsEscape($0) })
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = plain
                    bytes[position] = UInt8(value)
                    XCTAssertEqual(
                        bytes.withUnsafeBufferPointer { PrettyJSONWriter.needsEscape($0) }, byteWise(bytes),
                        "byte \(value) at \(position) of \(length)")
                }
            }
        }
        // Neighbours that borrow from each other: high bytes beside low ones.
        for pair in [[0xFF, 0x20], [0x20, 0xFF], [0x80, 0x21], [0x00, 0xFF], [0x21, 0x80], [0xA2, 0xDC]] {
            let bytes = [UInt8](repeating: 0x41, count: 6) + pair.map { UInt8($0) }
            XCTAssertEqual(
                bytes.withUnsafeBufferPointer { PrettyJSONWriter.needsEscape($0) }, byteWise(bytes), "\(pair)")
        }
    }

    func testLargeRunIsWrittenInPiecesWithTheSameBytes() throws {
        // Hundreds of endpoints: the writer hands the file many 64 KiB pieces.
        var records = ReportFixture.records
        for index in 0..<400 {
            var record = records[index % records.count]
            record.endpoint = "GET api.test /generated/\(index)"
            records.append(record)
        }
        let run = RunReport(inputs: ReportFixture.inputs, aggregation: ReportFixture.aggregation(records))
        let path = NSTemporaryDirectory() + "report-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try JSONReport.write(run, to: path)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertGreaterThan(written.utf8.count, 1 << 17)
        XCTAssertEqual(written, JSONReportOracle.render(run))
    }
}

/// report.json as JSONEncoder writes the whole document at once (the writer before streaming).
enum JSONReportOracle {
    static func render(_ run: RunReport) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try! encoder.encode(document(run))
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func document(_ run: RunReport) -> Document {
        let names = run.aggregation.estimatorNames
        let wholes = EndpointsCSV.Wholes(run.aggregation)
        return Document(
            costs: Costs(run.costs()),
            schema: "meteraudit-report", schemaVersion: JSONReport.schemaVersion,
            estimators: names,
            rankingEstimator: run.rankingEstimator.map { names[$0] }, rankBy: run.rankBy.rawValue,
            network: Dictionary(
                uniqueKeysWithValues: run.aggregation.network.map { ($0.key.name, Network($0.value)) }),
            settings: run.settings.map { Setting(name: $0.0, value: $0.1) },
            inputs: run.inputs.map(Input.init),
            totals: Dictionary(
                uniqueKeysWithValues: run.totals.map {
                    ($0.direction.rawValue, Group($0.figures, names: names, wholes: wholes))
                }),
            protocols: run.protocolTotals.reduce(into: [:]) { byProtocol, entry in
                byProtocol[entry.key.wireProtocol.rawValue, default: [:]][entry.key.direction.rawValue] = Group(
                    entry.figures, names: names, wholes: wholes, sharesOverhead: false)
            },
            http2Headers: HTTP2Headers(
                endpoints: run.headerCompressionEndpoints().map { endpoint in
                    HTTP2Endpoint(
                        rank: endpoint.rank, endpoint: endpoint.endpoint,
                        directions: Dictionary(
                            uniqueKeysWithValues: endpoint.directions.map {
                                ($0.direction.rawValue, HPACK($0.figures, names: names))
                            }))
                },
                totals: Dictionary(
                    uniqueKeysWithValues: run.headerCompressionTotals.map {
                        ($0.direction.rawValue, HPACK($0.figures, names: names))
                    })),
            endpoints: run.rankedEndpoints().map { endpoint in
                let rate = run.aggregation.rate(of: endpoint.endpoint)
                return Endpoint(
                    rank: endpoint.rank, endpoint: endpoint.endpoint, rankAbsError: endpoint.absoluteError,
                    directions: Dictionary(
                        uniqueKeysWithValues: endpoint.directions.map {
                            ($0.direction.rawValue, Group($0.figures, names: names, wholes: wholes))
                        }), rate: Rate(rate), findings: rate.findings.map(FindingObject.init))
            })
    }

    struct Rate: Encodable {
        var rate: RateFigures

        init(_ rate: RateFigures) { self.rate = rate }

        enum CodingKeys: String, CodingKey {
            case timedRequests = "timed_requests", untimedRequests = "untimed_requests", spanS = "span_s"
            case requestsPerMin = "requests_per_min", peakPerMin = "peak_per_min", peakPerS = "peak_per_s"
            case intervalMedianS = "interval_median_s", intervalMinS = "interval_min_s"
            case firstThird = "first_third", middleThird = "middle_third", lastThird = "last_third", growth
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let timed = rate.requests > 0
            try container.encode(rate.requests, forKey: .timedRequests)
            try container.encode(rate.untimed, forKey: .untimedRequests)
            try container.encode(rate.span.map { Double($0) / 1e6 }, forKey: .spanS)
            try container.encode(JSONReportOracle.rounded(rate.perMinute), forKey: .requestsPerMin)
            try container.encode(timed ? rate.peakPerMinute : nil, forKey: .peakPerMin)
            try container.encode(timed ? rate.peakPerSecond : nil, forKey: .peakPerS)
            try container.encode(rate.medianInterval.map { Double($0) / 1e6 }, forKey: .intervalMedianS)
            try container.encode(rate.minimumInterval.map { Double($0) / 1e6 }, forKey: .intervalMinS)
            try container.encode(rate.thirds?.first, forKey: .firstThird)
            try container.encode(rate.thirds?.middle, forKey: .middleThird)
            try container.encode(rate.thirds?.last, forKey: .lastThird)
            try container.encode(JSONReportOracle.rounded(rate.growth), forKey: .growth)
        }
    }

    struct FindingObject: Encodable {
        var finding: Finding

        init(_ finding: Finding) { self.finding = finding }

        enum CodingKeys: String, CodingKey {
            case name, growth, perS = "per_s", periodS = "period_s", firstThird = "first_third"
            case lastThird = "last_third"
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var (growth, first, last, perSecond, period): (Double?, Int?, Int?, Int?, Double?) = (
                nil, nil, nil, nil, nil
            )
            switch finding {
            case let .runaway(g, f, l): (growth, first, last) = (g, f, l)
            case let .burst(p): perSecond = p
            case let .polling(p): period = Double(p) / 1e6
            }
            try container.encode(finding.name, forKey: .name)
            try container.encode(JSONReportOracle.rounded(growth), forKey: .growth)
            try container.encode(first, forKey: .firstThird)
            try container.encode(last, forKey: .lastThird)
            try container.encode(perSecond, forKey: .perS)
            try container.encode(period, forKey: .periodS)
        }
    }

    struct Costs: Encodable {
        var section: CostSection

        init(_ section: CostSection) { self.section = section }

        enum CodingKeys: String, CodingKey {
            case endpoints, findings, endpointCount = "endpoint_count", ipBytes = "ip_bytes"
            case wireBytes = "wire_bytes", untimedRequests = "untimed_requests", worstFinding = "worst_finding"
        }

        struct Row: Encodable {
            var row: CostSection.Row
            enum CodingKeys: String, CodingKey {
                case endpoint, findings, meters, place, rate, requests, ipBytes = "ip_bytes"
                case shareIPPct = "share_ip_pct", shareWirePct = "share_wire_pct", wireBytes = "wire_bytes"
            }
            struct Meter: Encodable {
                var meter: CostSection.MeterError
                enum CodingKeys: String, CodingKey {
                    case error, errorPct = "error_pct", ipError = "ip_error", ipErrorPct = "ip_error_pct"
                }
                func encode(to encoder: Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(meter.error, forKey: .error)
                    try container.encode(JSONReportOracle.rounded(meter.errorPercent), forKey: .errorPct)
                    try container.encode(meter.ipError, forKey: .ipError)
                    try container.encode(JSONReportOracle.rounded(meter.ipErrorPercent), forKey: .ipErrorPct)
                }
            }
            func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(row.cost.endpoint, forKey: .endpoint)
                try container.encode(row.rate.findings.map(FindingObject.init), forKey: .findings)
                try container.encode(
                    Dictionary(uniqueKeysWithValues: row.meters.map { ($0.name, Meter(meter: $0)) }), forKey: .meters)
                try container.encode(row.place, forKey: .place)
                try container.encode(Rate(row.rate), forKey: .rate)
                try container.encode(row.cost.requests, forKey: .requests)
                try container.encode(row.cost.ipBytes, forKey: .ipBytes)
                try container.encode(JSONReportOracle.rounded(row.shareIP), forKey: .shareIPPct)
                try container.encode(JSONReportOracle.rounded(row.shareWire), forKey: .shareWirePct)
                try container.encode(row.cost.wireBytes, forKey: .wireBytes)
            }
        }

        struct Worst: Encodable {
            var endpoint: String
            var finding: FindingObject
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(section.rows.map { Row(row: $0) }, forKey: .endpoints)
            try container.encode(
                Dictionary(uniqueKeysWithValues: section.findingCounts.map { ($0.name, $0.endpoints) }),
                forKey: .findings)
            try container.encode(section.endpoints, forKey: .endpointCount)
            try container.encode(section.wholes.ip, forKey: .ipBytes)
            try container.encode(section.wholes.wire, forKey: .wireBytes)
            try container.encode(section.untimedRequests, forKey: .untimedRequests)
            try container.encode(
                section.worst.map { Worst(endpoint: $0.endpoint, finding: FindingObject($0.finding)) },
                forKey: .worstFinding)
        }
    }

    /// A fraction rounded to 6 decimals (never `-0`), so that the text is fixed.
    static func rounded(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        let result = (value * 1_000_000).rounded(.toNearestOrAwayFromZero) / 1_000_000
        return result == 0 ? 0 : result
    }

    struct Document: Encodable {
        var costs: Costs
        var schema: String
        var schemaVersion: Int
        var estimators: [String]
        var rankingEstimator: String?
        var rankBy: String
        var network: [String: Network]
        var settings: [Setting]
        var inputs: [Input]
        var totals: [String: Group]
        var protocols: [String: [String: Group]]
        var http2Headers: HTTP2Headers
        var endpoints: [Endpoint]

        enum CodingKeys: String, CodingKey {
            case schema, estimators, settings, inputs, totals, endpoints, protocols
            case schemaVersion = "schema_version", rankingEstimator = "ranking_estimator"
            case http2Headers = "http2_headers"
            case rankBy = "rank_by", network, costs
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(schema, forKey: .schema)
            try container.encode(schemaVersion, forKey: .schemaVersion)
            try container.encode(estimators, forKey: .estimators)
            try container.encode(rankingEstimator, forKey: .rankingEstimator)
            try container.encode(rankBy, forKey: .rankBy)
            try container.encode(network, forKey: .network)
            try container.encode(settings, forKey: .settings)
            try container.encode(inputs, forKey: .inputs)
            try container.encode(totals, forKey: .totals)
            try container.encode(protocols, forKey: .protocols)
            try container.encode(http2Headers, forKey: .http2Headers)
            try container.encode(endpoints, forKey: .endpoints)
            try container.encode(costs, forKey: .costs)
        }
    }

    struct HTTP2Headers: Encodable {
        var endpoints: [HTTP2Endpoint]
        var totals: [String: HPACK]
    }

    struct HTTP2Endpoint: Encodable {
        var rank: Int
        var endpoint: String
        var directions: [String: HPACK]
    }

    struct HPACK: Encodable {
        var records: Int
        var leftOut: Int
        var wireHeaders: Int
        var headerList: Int
        var wireToHeaderList: Double?
        var estimators: [String: HPACKEstimator]

        enum CodingKeys: String, CodingKey {
            case records, estimators
            case leftOut = "left_out", wireHeaders = "wire_headers", headerList = "header_list"
            case wireToHeaderList = "wire_to_header_list"
        }

        init(_ figures: HeaderCompressionFigures, names: [String]) {
            records = figures.records
            leftOut = figures.leftOut
            wireHeaders = figures.wireHeaders
            headerList = figures.headerList
            wireToHeaderList = JSONReportOracle.rounded(figures.wireToHeaderList)
            estimators = Dictionary(
                uniqueKeysWithValues: names.enumerated().map { index, name in
                    (
                        name,
                        HPACKEstimator(
                            headers: figures.estimatedHeaders[index],
                            headersToWire: JSONReportOracle.rounded(figures.estimateToWire(index)),
                            headersToHeaderList: JSONReportOracle.rounded(figures.estimateToHeaderList(index)))
                    )
                })
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(records, forKey: .records)
            try container.encode(leftOut, forKey: .leftOut)
            try container.encode(wireHeaders, forKey: .wireHeaders)
            try container.encode(headerList, forKey: .headerList)
            try container.encode(wireToHeaderList, forKey: .wireToHeaderList)
            try container.encode(estimators, forKey: .estimators)
        }
    }

    struct HPACKEstimator: Encodable {
        var headers: Int
        var headersToWire: Double?
        var headersToHeaderList: Double?

        enum CodingKeys: String, CodingKey {
            case headers
            case headersToWire = "headers_to_wire", headersToHeaderList = "headers_to_header_list"
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(headers, forKey: .headers)
            try container.encode(headersToWire, forKey: .headersToWire)
            try container.encode(headersToHeaderList, forKey: .headersToHeaderList)
        }
    }

    struct Setting: Encodable {
        var name: String
        var value: String
    }

    struct Endpoint: Encodable {
        var rank: Int
        var endpoint: String
        var rankAbsError: Int
        var directions: [String: Group]
        var rate: Rate
        var findings: [FindingObject]

        enum CodingKeys: String, CodingKey {
            case rank, endpoint, directions, rate, findings
            case rankAbsError = "rank_abs_error"
        }
    }

    struct Group: Encodable {
        var records: Int
        var unpaired: Int
        var incomplete: Int
        var unmeasured: Int
        var wireBytes: Int
        var protocols: [String: Int]
        var estimators: [String: Estimator]
        var layers: Layers
        var shareWirePct: Double?
        var shareIPPct: Double?

        enum CodingKeys: String, CodingKey {
            case records, unpaired, incomplete, unmeasured, estimators, layers, protocols
            case wireBytes = "wire_bytes", shareWirePct = "share_wire_pct", shareIPPct = "share_ip_pct"
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(records, forKey: .records)
            try container.encode(unpaired, forKey: .unpaired)
            try container.encode(incomplete, forKey: .incomplete)
            try container.encode(unmeasured, forKey: .unmeasured)
            try container.encode(wireBytes, forKey: .wireBytes)
            try container.encode(protocols, forKey: .protocols)
            try container.encode(estimators, forKey: .estimators)
            try container.encode(layers, forKey: .layers)
            try container.encode(shareWirePct, forKey: .shareWirePct)
            try container.encode(shareIPPct, forKey: .shareIPPct)
        }

        init(_ figures: GroupFigures, names: [String], wholes: EndpointsCSV.Wholes, sharesOverhead: Bool = true) {
            shareWirePct = JSONReportOracle.rounded(
                wholes.wire == 0 ? nil : 100 * Double(figures.wireBytes) / Double(wholes.wire))
            shareIPPct =
                sharesOverhead && figures.layers.lowerRecords > 0 && wholes.ip > 0
                ? JSONReportOracle.rounded(100 * Double(figures.layers.ipShare) / Double(wholes.ip)) : nil
            records = figures.records
            unpaired = figures.unpaired
            incomplete = figures.incomplete
            unmeasured = figures.unmeasured
            wireBytes = figures.wireBytes
            protocols = Dictionary(
                uniqueKeysWithValues: figures.protocols.present.map { ($0.wireProtocol.rawValue, $0.records) })
            layers = Layers(figures.layers)
            estimators = Dictionary(
                zip(names, figures.estimators.map(Estimator.init)), uniquingKeysWith: { first, _ in first })
        }
    }

    struct Estimator: Encodable {
        var count: Int
        var unestimated: Int
        var wire: Int?
        var estimated: Int?
        var error: Int?
        var errorPct: Double?
        var meanAbsRel: Double?
        var medianAbsRel: Double?
        var p95AbsRel: Double?
        var maxAbsRel: Double?
        var lineError: Int?
        var headersError: Int?
        var bodyError: Int?
        var causes: [Cause]
        var layerErrors: [String: [String: Double?]]

        enum CodingKeys: String, CodingKey {
            case count, unestimated, wire, estimated, error, causes
            case layerErrors = "layer_errors"
            case errorPct = "error_pct", meanAbsRel = "mean_abs_rel", medianAbsRel = "median_abs_rel"
            case p95AbsRel = "p95_abs_rel", maxAbsRel = "max_abs_rel"
            case lineError = "line_error", headersError = "headers_error", bodyError = "body_error"
        }

        init(_ figures: EstimatorFigures) {
            let counted = figures.count > 0
            count = figures.count
            unestimated = figures.unestimated
            // Nothing counted: sums and errors are undefined, not zero (as in endpoints.csv).
            wire = counted ? figures.wire : nil
            estimated = counted ? figures.estimated : nil
            error = counted ? figures.error : nil
            errorPct = JSONReportOracle.rounded(figures.errorPercent)
            meanAbsRel = JSONReportOracle.rounded(figures.meanAbsoluteRelativeError)
            medianAbsRel = JSONReportOracle.rounded(figures.absoluteRelativeError(quantile: 0.5))
            p95AbsRel = JSONReportOracle.rounded(figures.absoluteRelativeError(quantile: 0.95))
            maxAbsRel = JSONReportOracle.rounded(figures.maxAbsoluteRelativeError)
            let split = figures.splitCount > 0
            lineError = split ? figures.lineError : nil
            headersError = split ? figures.headersError : nil
            bodyError = split ? figures.bodyError : nil
            let layers = figures.layers
            layerErrors = Dictionary(
                uniqueKeysWithValues: CostLayer.allCases.map { layer in
                    let count = layers.count(layer)
                    return (
                        layer.rawValue,
                        [
                            "count": Double(count), "error": layers.error(layer).map(Double.init),
                            "error_pct": JSONReportOracle.rounded(layers.errorPercent(layer)),
                            "layer": count > 0 ? Double(layers.bytes(layer)) : nil,
                        ]
                    )
                })
            causes = figures.sortedCauses.map {
                Cause(
                    name: $0.name, bytes: $0.tally.bytes, records: $0.tally.records,
                    bytesPerRecord: $0.tally.records > 0
                        ? JSONReportOracle.rounded(Double($0.tally.bytes) / Double($0.tally.records)) ?? 0 : 0)
            }
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(count, forKey: .count)
            try container.encode(unestimated, forKey: .unestimated)
            try container.encode(wire, forKey: .wire)
            try container.encode(estimated, forKey: .estimated)
            try container.encode(error, forKey: .error)
            try container.encode(errorPct, forKey: .errorPct)
            try container.encode(meanAbsRel, forKey: .meanAbsRel)
            try container.encode(medianAbsRel, forKey: .medianAbsRel)
            try container.encode(p95AbsRel, forKey: .p95AbsRel)
            try container.encode(maxAbsRel, forKey: .maxAbsRel)
            try container.encode(lineError, forKey: .lineError)
            try container.encode(headersError, forKey: .headersError)
            try container.encode(bodyError, forKey: .bodyError)
            try container.encode(causes, forKey: .causes)
            try container.encode(layerErrors, forKey: .layerErrors)
        }
    }

    /// A group's `layers`: each layer's bytes (null over no record) and record count.
    struct Layers: Encodable {
        var figures: LayerFigures

        init(_ figures: LayerFigures) { self.figures = figures }

        enum CodingKeys: String, CodingKey {
            case tls, tcp, ip, frame, retransmitted
            case ipShare = "ip_share", lowerBoundRecords = "lower_bound_records"
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let lower = figures.lowerRecords > 0
            func layer(_ bytes: Int, _ records: Int) -> [String: Int?] {
                ["bytes": records > 0 ? bytes : nil, "records": records]
            }
            try container.encode(layer(figures.tls, figures.tlsRecords), forKey: .tls)
            try container.encode(layer(figures.tcp, figures.lowerRecords), forKey: .tcp)
            try container.encode(layer(figures.ip, figures.lowerRecords), forKey: .ip)
            try container.encode(layer(figures.frame, figures.lowerRecords), forKey: .frame)
            try container.encode(layer(figures.ipShare, figures.lowerRecords), forKey: .ipShare)
            try container.encode(figures.lowerBoundRecords, forKey: .lowerBoundRecords)
            try container.encode(lower ? figures.retransmitted : nil, forKey: .retransmitted)
        }
    }

    /// One side of `network`.
    struct Network: Encodable {
        var figures: NetworkFigures

        init(_ figures: NetworkFigures) { self.figures = figures }

        enum CodingKeys: String, CodingKey {
            case connections, overhead, parts, records, total
            case frameTotal = "frame_total", httpOnlyRecords = "http_only_records"
            case lowerBoundRecords = "lower_bound_records", retransmittedBytes = "retransmitted_bytes"
            case retransmittedSegments = "retransmitted_segments", unsharedIP = "unshared_ip"
        }

        struct Part: Encodable {
            var name: String
            var bytes: Int
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let cost = figures.cost
            try container.encode(figures.connections, forKey: .connections)
            try container.encode(figures.frameTotal, forKey: .frameTotal)
            try container.encode(figures.httpOnlyRecords, forKey: .httpOnlyRecords)
            try container.encode(figures.lowerBoundRecords, forKey: .lowerBoundRecords)
            try container.encode(
                [
                    "empty_packets": cost[.emptyPackets], "h2_control": cost[.h2Control],
                    "h3_control": cost[.h3Control], "quic_ack": cost[.quicAck], "quic_control": cost[.quicControl],
                    "quic_handshake": cost[.quicHandshake], "quic_padding": cost[.quicPadding],
                    "tls_control": cost[.tlsControl], "unclaimed": cost[.unclaimed],
                ], forKey: .overhead)
            try container.encode(figures.parts.map { Part(name: $0.name, bytes: $0.bytes) }, forKey: .parts)
            try container.encode(figures.records, forKey: .records)
            try container.encode(cost.retransmittedBytes, forKey: .retransmittedBytes)
            try container.encode(cost.retransmittedSegments, forKey: .retransmittedSegments)
            try container.encode(cost.total, forKey: .total)
            try container.encode(figures.unsharedIP, forKey: .unsharedIP)
        }
    }

    struct Cause: Encodable {
        var name: String
        var bytes: Int
        var records: Int
        var bytesPerRecord: Double

        enum CodingKeys: String, CodingKey {
            case name, bytes, records
            case bytesPerRecord = "bytes_per_record"
        }
    }

    /// One input's diagnostics, as diagnostics.json writes them.
    struct Input: Encodable {
        var diagnostics: InputDiagnostics

        init(_ diagnostics: InputDiagnostics) { self.diagnostics = diagnostics }

        func encode(to encoder: Encoder) throws {
            try diagnostics.encode(to: encoder)
        }
    }
}
