import Analysis
import CostAccounting
import Flows
import Foundation
import MessageModel

/// `report.json`: the figures of report.md for programs (schema: docs/REPORT-JSON.md).
/// Deterministic: keys sorted, arrays in a fixed order, every fraction rounded to 6 decimals.
///
/// Written by `PrettyJSONWriter` one value at a time straight to the file, so memory does
/// not grow with the number of endpoints; the text is the layout of `JSONEncoder` with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]`, byte for byte
/// (ReportsTests check it against JSONEncoder).
public enum JSONReport: RunReporter {
    public static let name = "json"
    public static let fileName = "report.json"
    /// Bumped when a key changes meaning or goes away (new keys do not bump it).
    public static let schemaVersion = 1

    public static func render(_ run: RunReport) -> String {
        var text: [UInt8] = []
        var writer = PrettyJSONWriter { text.append(contentsOf: $0) }
        write(run, with: &writer)
        return String(decoding: text, as: UTF8.self)
    }

    public static func write(_ run: RunReport, to path: String) throws {
        let file = try OutputFile(path: path)
        var writer = PrettyJSONWriter { file.write($0) }
        write(run, with: &writer)
        try file.commit()
    }

    /// The document, keys in byte order: costs, endpoints, estimators, http2_headers, http3_headers
    /// (with HTTP/3 records only), inputs, network,
    /// protocols, rank_by, ranking_estimator, schema, schema_version, settings, totals.
    static func write(_ run: RunReport, with json: inout PrettyJSONWriter) {
        let names = run.aggregation.estimatorNames
        let keys = EstimatorKeys(names)
        let wholes = EndpointsCSV.Wholes(run.aggregation)
        json.beginObject()
        json.key("costs")
        costs(run.costs(), &json)
        // Only with app meters (`--meter-log`): without, the document is as before.
        CoverageSection.writeJSON(run, &json)
        json.key("endpoints")
        json.beginArray()
        for endpoint in run.endpointRanking() {
            json.element()
            json.beginObject()
            json.key("directions")
            json.beginObject()
            let directions = run.figures(of: endpoint)
            for (direction, figures) in inKeyOrder(directions) {
                json.key(named: direction.rawValue)
                group(figures, keys: keys, wholes: wholes, &json)
            }
            json.endObject()
            json.key("endpoint")
            json.string(endpoint.endpoint)
            let requests = directions.first { $0.direction == .request }?.figures.requestTimes
            let rate = requests.map { RateFigures($0, endpoint: endpoint.endpoint) } ?? RateFigures()
            findings(rate.findings, &json)
            json.member("rank", int: endpoint.rank)
            json.member("rank_abs_error", int: endpoint.absoluteError)
            json.key("rate")
            self.rate(rate, &json)
            json.endObject()
        }
        json.endArray()
        json.key("estimators")
        json.beginArray()
        for name in names {
            json.element()
            json.string(name)
        }
        json.endArray()
        json.key("http2_headers")
        writeHTTP2Headers(run, names: names, &json)
        // Only with HTTP/3 records: without, the document is as before.
        if !run.aggregation.qpackCompressionTotals.isEmpty {
            json.key("http3_headers")
            writeHeaderCompression(run, .qpack, names: names, &json)
        }
        json.key("inputs")
        json.beginArray()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        for input in run.inputs {
            json.element()
            // Diagnostics are few and small (one per input): JSONEncoder gives their text.
            // Every value is a plain string, number, bool, array or object: encoding cannot fail.
            json.encoded(try! encoder.encode(input))
        }
        json.endArray()
        network(run.aggregation, &json)
        json.key("protocols")
        writeProtocols(run, names: names, &json)
        json.key("rank_by")
        json.string(run.rankBy.rawValue)
        json.key("ranking_estimator")
        json.string(run.rankingEstimator.map { names[$0] })
        json.key("schema")
        json.string("meteraudit-report")
        json.member("schema_version", int: schemaVersion)
        json.key("settings")
        json.beginArray()
        for (name, value) in run.settings {
            json.element()
            json.beginObject()
            json.key("name")
            json.string(name)
            json.key("value")
            json.string(value)
            json.endObject()
        }
        json.endArray()
        json.key("totals")
        json.beginObject()
        for (direction, figures) in inKeyOrder(run.totals) {
            json.key(named: direction.rawValue)
            group(figures, keys: keys, wholes: wholes, &json)
        }
        json.endObject()
        json.endObject()
        json.newline()
        json.flush()
    }

    /// A dictionary's entries as JSONEncoder's sortedKeys orders them (by UTF-8 bytes); the
    /// first of equal keys wins, as when the dictionary was built.
    static func sortedByKey<Value>(_ pairs: [(String, Value)]) -> [(String, Value)] {
        // A handful of pairs (directions, estimators): a scan finds duplicates faster than a Set.
        var unique: [(String, Value)] = []
        unique.reserveCapacity(pairs.count)
        for pair in pairs where !unique.contains(where: { $0.0 == pair.0 }) { unique.append(pair) }
        return unique.sorted { $0.0.utf8Compare($1.0) < 0 }
    }

    /// Directions as objects keyed by them order them: by their names' bytes (interim,
    /// request, response), sorted once rather than once per object.
    static let directionsInKeyOrder = RecordClass.allCases.sorted { $0.rawValue.utf8Compare($1.rawValue) < 0 }

    /// Figures by direction in key order, the first of a repeated direction kept (as `sortedByKey`).
    static func inKeyOrder<Figures>(
        _ pairs: [(direction: RecordClass, figures: Figures)]
    ) -> [(direction: RecordClass, figures: Figures)] {
        directionsInKeyOrder.compactMap { direction in pairs.first { $0.direction == direction } }
    }

    /// The estimators' names in key order, each with its index: the same for every group, so
    /// sorted once per report rather than once per group.
    struct EstimatorKeys {
        let sorted: [(name: String, index: Int)]

        init(_ names: [String]) {
            sorted = sortedByKey(names.enumerated().map { ($0.element, $0.offset) }).map { (name: $0.0, index: $0.1) }
        }
    }

    /// `sharesOverhead`: the group holds its share of the connections' overhead (not so the
    /// protocol split), so that its `share_ip_pct` is defined.
    static func group(
        _ figures: GroupFigures, keys: EstimatorKeys, wholes: EndpointsCSV.Wholes, sharesOverhead: Bool = true,
        _ json: inout PrettyJSONWriter
    ) {
        json.beginObject()
        json.key("estimators")
        json.beginObject()
        for (name, index) in keys.sorted where index < figures.estimators.count {
            json.key(named: name)
            estimator(figures.estimators[index], &json)
        }
        json.endObject()
        json.member("incomplete", int: figures.incomplete)
        layers(figures.layers, &json)
        json.key("protocols")
        writeProtocolCounts(figures.protocols, &json)
        json.member("records", int: figures.records)
        json.member(
            "share_ip_pct",
            double: sharesOverhead && figures.layers.lowerRecords > 0
                ? rounded(EndpointsCSV.Wholes.percent(figures.layers.ipShare, of: wholes.ip)) : nil)
        json.member("share_wire_pct", double: rounded(EndpointsCSV.Wholes.percent(figures.wireBytes, of: wholes.wire)))
        json.member("unmeasured", int: figures.unmeasured)
        json.member("unpaired", int: figures.unpaired)
        json.member("wire_bytes", int: figures.wireBytes)
        json.endObject()
    }

    private static func estimator(_ figures: EstimatorFigures, _ json: inout PrettyJSONWriter) {
        // Nothing counted: sums and errors are undefined, not zero (as in endpoints.csv);
        // no record split into components: their errors are unknown.
        let counted = figures.count > 0
        let split = figures.splitCount > 0
        json.beginObject()
        json.member("body_error", int: split ? figures.bodyError : nil)
        json.key("causes")
        json.beginArray()
        for (name, tally) in figures.sortedCauses {
            json.element()
            json.beginObject()
            json.member("bytes", int: tally.bytes)
            json.member(
                "bytes_per_record",
                double: tally.records > 0 ? rounded(Double(tally.bytes) / Double(tally.records)) ?? 0 : 0)
            json.key("name")
            json.string(name)
            json.member("records", int: tally.records)
            json.endObject()
        }
        json.endArray()
        json.member("count", int: figures.count)
        json.member("error", int: counted ? figures.error : nil)
        json.member("error_pct", double: rounded(figures.errorPercent))
        json.member("estimated", int: counted ? figures.estimated : nil)
        json.member("headers_error", int: split ? figures.headersError : nil)
        layerErrors(figures.layers, &json)
        json.member("line_error", int: split ? figures.lineError : nil)
        json.member("max_abs_rel", double: rounded(figures.maxAbsoluteRelativeError))
        json.member("mean_abs_rel", double: rounded(figures.meanAbsoluteRelativeError))
        json.member("median_abs_rel", double: rounded(figures.absoluteRelativeError(quantile: 0.5)))
        json.member("p95_abs_rel", double: rounded(figures.absoluteRelativeError(quantile: 0.95)))
        json.member("unestimated", int: figures.unestimated)
        json.member("wire", int: counted ? figures.wire : nil)
        json.endObject()
    }

    /// `layers`: each cost layer's sum and the records it covers (docs/REPORT-JSON.md).
    private static func layers(_ layers: LayerFigures, _ json: inout PrettyJSONWriter) {
        let lower = layers.lowerRecords > 0
        json.key("layers")
        json.beginObject()
        func layer(_ name: String, _ bytes: Int, records: Int) {
            json.key(named: name)
            json.beginObject()
            json.member("bytes", int: records > 0 ? bytes : nil)
            json.member("records", int: records)
            json.endObject()
        }
        // Keys in byte order.
        layer("frame", layers.frame, records: layers.lowerRecords)
        layer("ip", layers.ip, records: layers.lowerRecords)
        layer("ip_share", layers.ipShare, records: layers.lowerRecords)
        json.member("lower_bound_records", int: layers.lowerBoundRecords)
        json.member("retransmitted", int: lower ? layers.retransmitted : nil)
        layer("tcp", layers.tcp, records: layers.lowerRecords)
        layer("tls", layers.tls, records: layers.tlsRecords)
        json.endObject()
    }

    /// The layers of `layer_errors`, in key order.
    private static let layerOrder: [(CostLayer, StaticString)] = [
        (.frame, "frame"), (.ip, "ip"), (.ipShare, "ip_share"), (.tcp, "tcp"), (.tls, "tls"),
    ]

    /// `layer_errors`: an estimator's error against each cost layer.
    private static func layerErrors(_ errors: LayerErrors, _ json: inout PrettyJSONWriter) {
        json.key("layer_errors")
        json.beginObject()
        for (layer, name) in layerOrder {
            json.key(name)
            json.beginObject()
            json.member("count", int: errors.count(layer))
            json.member("error", int: errors.error(layer))
            json.member("error_pct", double: rounded(errors.errorPercent(layer)))
            json.member("layer", int: errors.count(layer) > 0 ? errors.bytes(layer) : nil)
            json.endObject()
        }
        json.endObject()
    }

    /// `network`: what the network carried each way (report.md's "What the network carried").
    private static func network(_ aggregation: Aggregation, _ json: inout PrettyJSONWriter) {
        json.key("network")
        json.beginObject()
        // Keyed by direction: `down` before `up`.
        for entry in NetworkSection(aggregation).sides.sorted(by: { $0.side.name < $1.side.name }) {
            let (figures, cost) = (entry.figures, entry.figures.cost)
            json.key(named: entry.side.name)
            json.beginObject()
            json.member("connections", int: figures.connections)
            json.member("frame_total", int: entry.frameTotal)
            json.member("http_only_records", int: figures.httpOnlyRecords)
            json.member("lower_bound_records", int: figures.lowerBoundRecords)
            json.key("overhead")
            json.beginObject()
            for kind in overheadKindsInKeyOrder() {
                json.key(named: kind.name)
                layerBytes(cost[kind], &json)
            }
            json.endObject()
            json.key("parts")
            json.beginArray()
            for part in entry.parts {
                json.element()
                json.beginObject()
                json.member("bytes", int: part.bytes)
                json.key("name")
                json.string(part.name)
                json.endObject()
            }
            json.endArray()
            json.member("records", int: figures.records)
            json.member("retransmitted_bytes", int: cost.retransmittedBytes)
            json.member("retransmitted_segments", int: cost.retransmittedSegments)
            json.key("total")
            layerBytes(cost.total, &json)
            json.member("unshared_ip", int: figures.unsharedIP)
            json.endObject()
        }
        json.endObject()
    }

    /// `OverheadKind.all` as an object keyed by their names orders them.
    static func overheadKindsInKeyOrder() -> [OverheadKind] {
        OverheadKind.all.sorted { $0.name.utf8Compare($1.name) < 0 }
    }

    private static func layerBytes(_ layer: LayerBytes, _ json: inout PrettyJSONWriter) {
        json.beginObject()
        json.member("frame", int: layer.frame)
        json.member("ip", int: layer.ip)
        json.member("tcp", int: layer.tcp)
        json.member("tls", int: layer.tls)
        json.endObject()
    }

    // MARK: - Cost, rate and findings

    /// Microseconds as seconds (exact: the double nearest a 6-decimal number is written as it).
    private static func seconds(_ microseconds: Int64?) -> Double? {
        microseconds.map { Double($0) / 1_000_000 }
    }

    /// `rate`: an endpoint's rate figures (docs/REPORT-JSON.md, rate).
    static func rate(_ rate: RateFigures, _ json: inout PrettyJSONWriter) {
        let timed = rate.requests > 0
        json.beginObject()
        json.member("first_third", int: rate.thirds?.first)
        json.member("growth", double: rounded(rate.growth))
        json.member("interval_median_s", double: seconds(rate.medianInterval))
        json.member("interval_min_s", double: seconds(rate.minimumInterval))
        json.member("last_third", int: rate.thirds?.last)
        json.member("middle_third", int: rate.thirds?.middle)
        json.member("peak_per_min", int: timed ? rate.peakPerMinute : nil)
        json.member("peak_per_s", int: timed ? rate.peakPerSecond : nil)
        json.member("requests_per_min", double: rounded(rate.perMinute))
        json.member("span_s", double: seconds(rate.span))
        json.member("timed_requests", int: rate.requests)
        json.member("untimed_requests", int: rate.untimed)
        json.endObject()
    }

    /// `findings`: worst first, each with every key (null where its kind has no such figure).
    static func findings(_ findings: [Finding], _ json: inout PrettyJSONWriter) {
        json.key("findings")
        json.beginArray()
        for finding in findings {
            json.element()
            findingObject(finding, &json)
        }
        json.endArray()
    }

    /// One finding: every key, null where its kind has no such figure.
    static func findingObject(_ finding: Finding, _ json: inout PrettyJSONWriter) {
        json.beginObject()
        var growth: Double?
        var firstThird: Int?
        var lastThird: Int?
        var perSecond: Int?
        var period: Int64?
        switch finding {
        case let .runaway(value, first, last): (growth, firstThird, lastThird) = (value, first, last)
        case let .burst(value): perSecond = value
        case let .polling(value): period = value
        }
        json.member("first_third", int: firstThird)
        json.member("growth", double: rounded(growth))
        json.member("last_third", int: lastThird)
        json.key("name")
        json.string(finding.name)
        json.member("per_s", int: perSecond)
        json.member("period_s", double: seconds(period))
        json.endObject()
    }

    /// `costs`: "What costs the user" (docs/REPORT-JSON.md, costs).
    static func costs(_ section: CostSection, _ json: inout PrettyJSONWriter) {
        json.beginObject()
        json.member("endpoint_count", int: section.endpoints)
        json.key("endpoints")
        json.beginArray()
        for row in section.rows {
            json.element()
            json.beginObject()
            json.key("endpoint")
            json.string(row.cost.endpoint)
            findings(row.rate.findings, &json)
            json.member("ip_bytes", int: row.cost.ipBytes)
            if !row.seen.isEmpty {
                json.key("meter_logs")
                json.beginArray()
                for seen in row.seen {
                    json.element()
                    json.beginObject()
                    json.key("layer")
                    json.string(seen.ip ? "ip" : "http")
                    json.key("meter")
                    json.string(seen.name)
                    json.member("metered_bytes", int: seen.metered)
                    json.member("share_pct", double: rounded(seen.percent))
                    json.member("wire_bytes", int: seen.wire)
                    json.endObject()
                }
                json.endArray()
            }
            json.key("meters")
            json.beginObject()
            for meter in sortedByKey(row.meters.map { ($0.name, $0) }).map(\.1) {
                json.key(named: meter.name)
                json.beginObject()
                json.member("error", int: meter.error)
                json.member("error_pct", double: rounded(meter.errorPercent))
                json.member("ip_error", int: meter.ipError)
                json.member("ip_error_pct", double: rounded(meter.ipErrorPercent))
                json.endObject()
            }
            json.endObject()
            json.member("place", int: row.place)
            json.key("rate")
            rate(row.rate, &json)
            json.member("requests", int: row.cost.requests)
            json.member("share_ip_pct", double: rounded(row.shareIP))
            json.member("share_wire_pct", double: rounded(row.shareWire))
            json.member("wire_bytes", int: row.cost.wireBytes)
            json.endObject()
        }
        json.endArray()
        json.key("findings")
        json.beginObject()
        for (name, count) in sortedByKey(section.findingCounts.map { ($0.name, $0.endpoints) }) {
            json.key(named: name)
            json.int(count)
        }
        json.endObject()
        json.member("ip_bytes", int: section.wholes.ip)
        json.member("untimed_requests", int: section.untimedRequests)
        json.member("wire_bytes", int: section.wholes.wire)
        json.key("worst_finding")
        if let worst = section.worst {
            json.beginObject()
            json.key("endpoint")
            json.string(worst.endpoint)
            json.key("finding")
            findingObject(worst.finding, &json)
            json.endObject()
        } else {
            json.string(nil)
        }
        json.endObject()
    }

    /// A fraction rounded to 6 decimals (never `-0`), so that the text is fixed.
    static func rounded(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        let result = (value * 1_000_000).rounded(.toNearestOrAwayFromZero) / 1_000_000
        return result == 0 ? 0 : result
    }
}
