import Analysis
import Foundation

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
        let writer = PrettyJSONWriter { text.append(contentsOf: $0) }
        write(run, with: writer)
        return String(decoding: text, as: UTF8.self)
    }

    public static func write(_ run: RunReport, to path: String) throws {
        let file = try OutputFile(path: path)
        write(run, with: PrettyJSONWriter { file.write($0) })
        try file.commit()
    }

    /// The document, keys in byte order: endpoints, estimators, http2_headers, inputs, protocols,
    /// ranking_estimator, schema, schema_version, settings, totals.
    static func write(_ run: RunReport, with json: PrettyJSONWriter) {
        let names = run.aggregation.estimatorNames
        json.beginObject()
        json.key("endpoints")
        json.beginArray()
        for endpoint in run.endpointRanking() {
            json.element()
            json.beginObject()
            json.key("directions")
            json.beginObject()
            for (direction, figures) in sortedByKey(
                run.figures(of: endpoint).map { ($0.direction.rawValue, $0.figures) })
            {
                json.key(direction)
                group(figures, names: names, json)
            }
            json.endObject()
            json.key("endpoint")
            json.string(endpoint.endpoint)
            json.key("rank")
            json.int(endpoint.rank)
            json.key("rank_abs_error")
            json.int(endpoint.absoluteError)
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
        writeHTTP2Headers(run, names: names, json)
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
        network(run.aggregation, json)
        json.key("protocols")
        writeProtocols(run, names: names, json)
        json.key("rank_by")
        json.string(run.rankBy.rawValue)
        json.key("ranking_estimator")
        json.string(run.rankingEstimator.map { names[$0] })
        json.key("schema")
        json.string("meteraudit-report")
        json.key("schema_version")
        json.int(schemaVersion)
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
        for (direction, figures) in sortedByKey(run.totals.map { ($0.direction.rawValue, $0.figures) }) {
            json.key(direction)
            group(figures, names: names, json)
        }
        json.endObject()
        json.endObject()
        json.newline()
        json.flush()
    }

    /// A dictionary's entries as JSONEncoder's sortedKeys orders them (by UTF-8 bytes); the
    /// first of equal keys wins, as when the dictionary was built.
    static func sortedByKey<Value>(_ pairs: [(String, Value)]) -> [(String, Value)] {
        var seen = Set<String>()
        return pairs.filter { seen.insert($0.0).inserted }
            .sorted { Array($0.0.utf8).lexicographicallyPrecedes($1.0.utf8) }
    }

    static func group(_ figures: GroupFigures, names: [String], _ json: PrettyJSONWriter) {
        json.beginObject()
        json.key("estimators")
        json.beginObject()
        for (name, figures) in sortedByKey(Array(zip(names, figures.estimators))) {
            json.key(name)
            estimator(figures, json)
        }
        json.endObject()
        json.key("incomplete")
        json.int(figures.incomplete)
        layers(figures.layers, json)
        json.key("protocols")
        writeProtocolCounts(figures.protocols, json)
        json.key("records")
        json.int(figures.records)
        json.key("unmeasured")
        json.int(figures.unmeasured)
        json.key("unpaired")
        json.int(figures.unpaired)
        json.key("wire_bytes")
        json.int(figures.wireBytes)
        json.endObject()
    }

    private static func estimator(_ figures: EstimatorFigures, _ json: PrettyJSONWriter) {
        // Nothing counted: sums and errors are undefined, not zero (as in endpoints.csv);
        // no record split into components: their errors are unknown.
        let counted = figures.count > 0
        let split = figures.splitCount > 0
        json.beginObject()
        json.key("body_error")
        json.int(split ? figures.bodyError : nil)
        json.key("causes")
        json.beginArray()
        for (name, tally) in figures.sortedCauses {
            json.element()
            json.beginObject()
            json.key("bytes")
            json.int(tally.bytes)
            json.key("bytes_per_record")
            json.double(tally.records > 0 ? rounded(Double(tally.bytes) / Double(tally.records)) ?? 0 : 0)
            json.key("name")
            json.string(name)
            json.key("records")
            json.int(tally.records)
            json.endObject()
        }
        json.endArray()
        json.key("count")
        json.int(figures.count)
        json.key("error")
        json.int(counted ? figures.error : nil)
        json.key("error_pct")
        json.double(rounded(figures.errorPercent))
        json.key("estimated")
        json.int(counted ? figures.estimated : nil)
        json.key("headers_error")
        json.int(split ? figures.headersError : nil)
        layerErrors(figures.layers, json)
        json.key("line_error")
        json.int(split ? figures.lineError : nil)
        json.key("max_abs_rel")
        json.double(rounded(figures.maxAbsoluteRelativeError))
        json.key("mean_abs_rel")
        json.double(rounded(figures.meanAbsoluteRelativeError))
        json.key("median_abs_rel")
        json.double(rounded(figures.absoluteRelativeError(quantile: 0.5)))
        json.key("p95_abs_rel")
        json.double(rounded(figures.absoluteRelativeError(quantile: 0.95)))
        json.key("unestimated")
        json.int(figures.unestimated)
        json.key("wire")
        json.int(counted ? figures.wire : nil)
        json.endObject()
    }

    /// `layers`: each cost layer's sum and the records it covers (docs/REPORT-JSON.md).
    private static func layers(_ layers: LayerFigures, _ json: PrettyJSONWriter) {
        let lower = layers.lowerRecords > 0
        json.key("layers")
        json.beginObject()
        func layer(_ name: String, _ bytes: Int, records: Int) {
            json.key(name)
            json.beginObject()
            json.key("bytes")
            json.int(records > 0 ? bytes : nil)
            json.key("records")
            json.int(records)
            json.endObject()
        }
        // Keys in byte order.
        layer("frame", layers.frame, records: layers.lowerRecords)
        layer("ip", layers.ip, records: layers.lowerRecords)
        layer("ip_share", layers.ipShare, records: layers.lowerRecords)
        json.key("lower_bound_records")
        json.int(layers.lowerBoundRecords)
        json.key("retransmitted")
        json.int(lower ? layers.retransmitted : nil)
        layer("tcp", layers.tcp, records: layers.lowerRecords)
        layer("tls", layers.tls, records: layers.tlsRecords)
        json.endObject()
    }

    /// `layer_errors`: an estimator's error against each cost layer.
    private static func layerErrors(_ errors: LayerErrors, _ json: PrettyJSONWriter) {
        json.key("layer_errors")
        json.beginObject()
        for layer in [CostLayer.frame, .ip, .ipShare, .tcp, .tls] {
            json.key(layer.rawValue)
            json.beginObject()
            json.key("count")
            json.int(errors.count(layer))
            json.key("error")
            json.int(errors.error(layer))
            json.key("error_pct")
            json.double(rounded(errors.errorPercent(layer)))
            json.key("layer")
            json.int(errors.count(layer) > 0 ? errors.bytes(layer) : nil)
            json.endObject()
        }
        json.endObject()
    }

    /// `network`: what the network carried each way (report.md's "What the network carried").
    private static func network(_ aggregation: Aggregation, _ json: PrettyJSONWriter) {
        json.key("network")
        json.beginObject()
        for side in NetworkSide.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let figures = aggregation.network[side] else { continue }
            let cost = figures.cost
            json.key(side.rawValue)
            json.beginObject()
            json.key("connections")
            json.int(figures.connections)
            json.key("frame_total")
            json.int(figures.frameTotal)
            json.key("http_only_records")
            json.int(figures.httpOnlyRecords)
            json.key("lower_bound_records")
            json.int(figures.lowerBoundRecords)
            json.key("overhead")
            json.beginObject()
            for (name, layer) in [
                ("empty_packets", cost.emptyPackets), ("http2_control", cost.http2Control),
                ("tls_control", cost.tlsControl), ("unclaimed", cost.unclaimed),
            ] {
                json.key(name)
                layerBytes(layer, json)
            }
            json.endObject()
            json.key("parts")
            json.beginArray()
            for part in figures.parts {
                json.element()
                json.beginObject()
                json.key("bytes")
                json.int(part.bytes)
                json.key("name")
                json.string(part.name)
                json.endObject()
            }
            json.endArray()
            json.key("records")
            json.int(figures.records)
            json.key("retransmitted_bytes")
            json.int(cost.retransmittedBytes)
            json.key("retransmitted_segments")
            json.int(cost.retransmittedSegments)
            json.key("total")
            layerBytes(cost.total, json)
            json.key("unshared_ip")
            json.int(figures.unsharedIP)
            json.endObject()
        }
        json.endObject()
    }

    private static func layerBytes(_ layer: LayerBytes, _ json: PrettyJSONWriter) {
        json.beginObject()
        json.key("frame")
        json.int(layer.frame)
        json.key("ip")
        json.int(layer.ip)
        json.key("tcp")
        json.int(layer.tcp)
        json.key("tls")
        json.int(layer.tls)
        json.endObject()
    }

    /// A fraction rounded to 6 decimals (never `-0`), so that the text is fixed.
    static func rounded(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        let result = (value * 1_000_000).rounded(.toNearestOrAwayFromZero) / 1_000_000
        return result == 0 ? 0 : result
    }
}

/// JSON text in the layout of JSONEncoder's `[.prettyPrinted, .sortedKeys,
/// .withoutEscapingSlashes]`, written as it is produced: two-space indentation, `"key" : value`,
/// an empty container as its brackets around a blank line. The caller writes keys in sorted
/// order. Text goes to `sink` in pieces of about 64 KiB.
final class PrettyJSONWriter {
    private var buffer: [UInt8] = []
    private let sink: ([UInt8]) -> Void
    /// Per open container: whether it is still empty.
    private var empty: [Bool] = []

    init(sink: @escaping ([UInt8]) -> Void) {
        self.sink = sink
        buffer.reserveCapacity(1 << 16)
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func put(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    private func indent(_ depth: Int) {
        buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }

    /// Starts the next member: a comma after the previous one, a new line, the indentation.
    private func nextMember() {
        if empty.last == false { buffer.append(UInt8(ascii: ",")) }
        if !empty.isEmpty { empty[empty.count - 1] = false }
        buffer.append(10)
        indent(empty.count)
    }

    func beginObject() {
        put("{")
        empty.append(true)
    }
    func beginArray() {
        put("[")
        empty.append(true)
    }
    func endObject() { close("}") }
    func endArray() { close("]") }

    private func close(_ bracket: String) {
        let wasEmpty = empty.removeLast()
        if wasEmpty { buffer.append(10) }
        buffer.append(10)
        indent(empty.count)
        put(bracket)
    }

    /// An object's next key; its value follows.
    func key(_ name: String) {
        nextMember()
        quoted(name)
        put(" : ")
    }

    /// An array's next element; its value follows.
    func element() { nextMember() }

    func newline() { put("\n") }

    func int(_ value: Int?) { put(value.map(String.init) ?? "null") }

    /// As JSONEncoder writes a Double: Swift's shortest round-trip text, without a trailing `.0`.
    func double(_ value: Double?) {
        guard let value else { return put("null") }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        put(text)
    }

    func string(_ value: String?) {
        guard let value else { return put("null") }
        quoted(value)
    }

    /// JSONEncoder's escapes: quote, backslash, and control characters (`\b \f \n \r \t`
    /// by name, others as `\u00XX`); slashes and everything else as UTF-8.
    private func quoted(_ value: String) {
        buffer.append(UInt8(ascii: "\""))
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == 34 || $0 == 92 }) {
            // Nothing to escape, the usual case: one append.
            buffer.append(contentsOf: value.utf8)
            buffer.append(UInt8(ascii: "\""))
            if buffer.count >= 1 << 16 { flush() }
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [92, 34])
            case 92: buffer.append(contentsOf: [92, 92])
            case 8: buffer.append(contentsOf: [92, UInt8(ascii: "b")])
            case 12: buffer.append(contentsOf: [92, UInt8(ascii: "f")])
            case 10: buffer.append(contentsOf: [92, UInt8(ascii: "n")])
            case 13: buffer.append(contentsOf: [92, UInt8(ascii: "r")])
            case 9: buffer.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                buffer.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
        if buffer.count >= 1 << 16 { flush() }
    }

    /// A value JSONEncoder already wrote (pretty-printed, from depth 0), indented to where it goes.
    func encoded(_ text: Data) {
        var previous: UInt8 = 0
        for byte in text {
            // Blank lines (inside an empty container) stay without indentation.
            if previous == 10 && byte != 10 { indent(empty.count) }
            buffer.append(byte)
            previous = byte
        }
        if buffer.count >= 1 << 16 { flush() }
    }
}
