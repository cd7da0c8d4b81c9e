import Analysis
import Flows
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

    /// The document, keys in byte order: endpoints, estimators, http2_headers, inputs, protocols,
    /// ranking_estimator, schema, schema_version, settings, totals.
    static func write(_ run: RunReport, with json: inout PrettyJSONWriter) {
        let names = run.aggregation.estimatorNames
        let keys = EstimatorKeys(names)
        json.beginObject()
        json.key("endpoints")
        json.beginArray()
        for endpoint in run.endpointRanking() {
            json.element()
            json.beginObject()
            json.key("directions")
            json.beginObject()
            for (direction, figures) in inKeyOrder(run.figures(of: endpoint)) {
                json.key(named: direction.rawValue)
                group(figures, keys: keys, &json)
            }
            json.endObject()
            json.key("endpoint")
            json.string(endpoint.endpoint)
            json.member("rank", int: endpoint.rank)
            json.member("rank_abs_error", int: endpoint.absoluteError)
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
            group(figures, keys: keys, &json)
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

    static func group(_ figures: GroupFigures, keys: EstimatorKeys, _ json: inout PrettyJSONWriter) {
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
        for side in Direction.allCases.sorted(by: { $0.name < $1.name }) {
            guard let figures = aggregation.network[side] else { continue }
            let cost = figures.cost
            json.key(named: side.name)
            json.beginObject()
            json.member("connections", int: figures.connections)
            json.member("frame_total", int: figures.frameTotal)
            json.member("http_only_records", int: figures.httpOnlyRecords)
            json.member("lower_bound_records", int: figures.lowerBoundRecords)
            json.key("overhead")
            json.beginObject()
            for (name, layer) in [
                ("empty_packets", cost.emptyPackets), ("http2_control", cost.http2Control),
                ("tls_control", cost.tlsControl), ("unclaimed", cost.unclaimed),
            ] {
                json.key(named: name)
                layerBytes(layer, &json)
            }
            json.endObject()
            json.key("parts")
            json.beginArray()
            for part in figures.parts {
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

    private static func layerBytes(_ layer: LayerBytes, _ json: inout PrettyJSONWriter) {
        json.beginObject()
        json.member("frame", int: layer.frame)
        json.member("ip", int: layer.ip)
        json.member("tcp", int: layer.tcp)
        json.member("tls", int: layer.tls)
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
/// order. Text goes to `sink` in pieces of about 64 KiB, lent for the call (no copy is made).
///
/// A struct used through `inout`, writing into a fixed raw buffer: as a class, or through an
/// Array's appends, every byte paid exclusivity and capacity checks, most of report.json's time
/// (an 11 MB file on the benchmark capture).
struct PrettyJSONWriter {
    /// Owns the buffer (a struct has no deinit); `bytes` points into it.
    private final class Storage {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: PrettyJSONWriter.capacity)
        deinit { bytes.deallocate() }
    }

    private static let capacity = 1 << 16
    private let storage = Storage()
    private let bytes: UnsafeMutablePointer<UInt8>
    private var count = 0
    private let sink: (UnsafeRawBufferPointer) -> Void
    /// How many containers are open: the indentation of their members.
    private var depth = 0
    /// Whether the innermost open container has a member yet (a comma goes before the next).
    /// A closed container is a member of its parent, so no stack of these is needed.
    private var hasMembers = false

    init(sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.sink = sink
        bytes = storage.bytes
    }

    mutating func flush() {
        guard count > 0 else { return }
        sink(UnsafeRawBufferPointer(start: bytes, count: count))
        count = 0
    }

    /// Room for `needed` more bytes (flushing first when the buffer would overflow).
    @inline(__always)
    private mutating func reserve(_ needed: Int) {
        if count + needed > Self.capacity { flush() }
    }

    @inline(__always)
    private mutating func put(byte: UInt8) {
        reserve(1)
        bytes[count] = byte
        count += 1
    }

    private mutating func put(_ raw: UnsafeBufferPointer<UInt8>) {
        guard let start = raw.baseAddress, !raw.isEmpty else { return }
        guard raw.count <= Self.capacity else {
            // Longer than the buffer: handed on as it is, after what is buffered.
            flush()
            sink(UnsafeRawBufferPointer(raw))
            return
        }
        reserve(raw.count)
        (bytes + count).update(from: start, count: raw.count)
        count += raw.count
    }

    private mutating func put(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    private mutating func put(_ text: StaticString) {
        text.withUTF8Buffer { put($0) }
    }

    private mutating func indent(_ depth: Int) {
        let spaces = 2 * depth
        if spaces > Self.capacity {
            for _ in 0..<spaces { put(byte: 32) }
            return
        }
        reserve(spaces)
        (bytes + count).initialize(repeating: 32, count: spaces)
        count += spaces
    }

    /// Starts the next member: a comma after the previous one, a new line, the indentation.
    private mutating func nextMember() {
        if hasMembers { put(byte: UInt8(ascii: ",")) }
        hasMembers = true
        put(byte: 10)
        indent(depth)
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        put(byte: bracket)
        depth += 1
        hasMembers = false
    }

    private mutating func close(_ bracket: UInt8) {
        if !hasMembers { put(byte: 10) }
        put(byte: 10)
        depth -= 1
        indent(depth)
        put(byte: bracket)
        hasMembers = true
    }

    /// An object's next key; its value follows.
    mutating func key(named name: String) {
        nextMember()
        quoted(name)
        put(" : " as StaticString)
    }

    /// A key of the schema (ASCII, nothing to escape), written from its bytes.
    mutating func key(_ name: StaticString) {
        let needed = keyRoom(name)
        guard needed <= Self.capacity else {
            nextMember()
            put(byte: UInt8(ascii: "\""))
            put(name)
            put("\" : " as StaticString)
            return
        }
        reserve(needed)
        writeKey(name)
    }

    /// A key of the schema and its whole number (or null): the report's most frequent member,
    /// written after a single check for room.
    mutating func member(_ name: StaticString, int value: Int?) {
        let needed = keyRoom(name) + Self.intRoom
        guard needed <= Self.capacity else {
            key(name)
            return int(value)
        }
        reserve(needed)
        writeKey(name)
        writeInt(value)
    }

    /// A key of the schema and its fraction (or null).
    mutating func member(_ name: StaticString, double value: Double?) {
        key(name)
        double(value)
    }

    /// Bytes a key takes at most: comma, line end, indentation, quotes, name and ` : `.
    @inline(__always)
    private func keyRoom(_ name: StaticString) -> Int { 2 + 2 * depth + 1 + name.utf8CodeUnitCount + 4 }

    /// The comma, line, indentation, key and separator, where `reserve` made room for them.
    @inline(__always)
    private mutating func writeKey(_ name: StaticString) {
        let spaces = 2 * depth
        let length = name.utf8CodeUnitCount
        var end = bytes + count
        if hasMembers {
            end.pointee = UInt8(ascii: ",")
            end += 1
        }
        hasMembers = true
        end.pointee = 10
        end += 1
        end.initialize(repeating: 32, count: spaces)
        end += spaces
        end.pointee = UInt8(ascii: "\"")
        end += 1
        end.update(from: name.utf8Start, count: length)
        end += length
        end.pointee = UInt8(ascii: "\"")
        end[1] = 32
        end[2] = UInt8(ascii: ":")
        end[3] = 32
        end += 4
        count = end - bytes
    }

    /// An array's next element; its value follows.
    mutating func element() { nextMember() }

    mutating func newline() { put(byte: 10) }

    mutating func int(_ value: Int?) {
        reserve(Self.intRoom)
        writeInt(value)
    }

    /// Bytes a whole number takes at most (`FixedDecimal.write`'s room, more than Int.min's 19
    /// digits and sign).
    private static var intRoom: Int { FixedDecimal.maximumLength(decimals: 0) }

    /// A whole number or null, where `reserve` made room for it.
    @inline(__always)
    private mutating func writeInt(_ value: Int?) {
        guard let value else {
            (bytes + count).update(from: ("null" as StaticString).utf8Start, count: 4)
            count += 4
            return
        }
        count += FixedDecimal.write(UInt64(value.magnitude), decimals: 0, negative: value < 0, at: bytes + count)
    }

    /// As JSONEncoder writes a Double: Swift's shortest round-trip text, without a trailing `.0`.
    mutating func double(_ value: Double?) {
        guard let value else { return put("null" as StaticString) }
        if let millionths = Self.millionths(value) { return decimal(millionths) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        put(text)
    }

    /// `value` as a whole number of millionths, when its shortest round-trip text is that
    /// number with the point six places from the right (trailing zeros dropped), as for the
    /// report's fractions, rounded to 6 decimals: `value` is the double nearest to
    /// millionths / 10^6, a decimal of at most 15 significant digits, and doubles tell all
    /// such decimals apart, so no other decimal as short or shorter gives `value` back.
    /// Nil where Swift writes an exponent (under 10^-4, 2^53 and over) or the value is not
    /// such a decimal.
    static func millionths(_ value: Double) -> Int? {
        let magnitude = value.magnitude
        if magnitude == 0 { return value.sign == .plus ? 0 : nil } // -0 is written "-0"
        guard magnitude >= 1e-4, magnitude < 1e9 else { return nil }
        let scaled = (value * 1_000_000).rounded()
        guard scaled / 1_000_000 == value else { return nil }
        return Int(scaled)
    }

    /// millionths / 10^6 in decimal: the whole part, then a point and the decimals without
    /// trailing zeros, if any are left.
    private mutating func decimal(_ millionths: Int) {
        var fraction = millionths.magnitude % 1_000_000
        var places = fraction == 0 ? 0 : 6
        while places > 0 && fraction % 10 == 0 {
            fraction /= 10
            places -= 1
        }
        // |millionths| < 10^15 (`millionths`' bound): the scaled value fits in 64 bits.
        var scaled = UInt64(millionths.magnitude / 1_000_000)
        for _ in 0..<places { scaled *= 10 }
        scaled += UInt64(fraction)
        reserve(FixedDecimal.maximumLength(decimals: places))
        count += FixedDecimal.write(scaled, decimals: places, negative: millionths < 0, at: bytes + count)
    }

    mutating func string(_ value: String?) {
        guard let value else { return put("null" as StaticString) }
        quoted(value)
    }

    /// JSONEncoder's escapes: quote, backslash, and control characters (`\b \f \n \r \t`
    /// by name, others as `\u00XX`); slashes and everything else as UTF-8.
    private mutating func quoted(_ value: String) {
        var value = value
        value.withUTF8 { text in
            put(byte: UInt8(ascii: "\""))
            if !Self.needsEscape(text) {
                // Nothing to escape, the usual case: one copy.
                put(text)
            } else {
                for byte in text {
                    switch byte {
                    case UInt8(ascii: "\""): put("\\\"" as StaticString)
                    case 92: put("\\\\" as StaticString)
                    case 8: put("\\b" as StaticString)
                    case 12: put("\\f" as StaticString)
                    case 10: put("\\n" as StaticString)
                    case 13: put("\\r" as StaticString)
                    case 9: put("\\t" as StaticString)
                    case 0..<0x20:
                        let hex: StaticString = "0123456789abcdef"
                        put("\\u00" as StaticString)
                        put(byte: hex.utf8Start[Int(byte >> 4)])
                        put(byte: hex.utf8Start[Int(byte & 0xF)])
                    default: put(byte: byte)
                    }
                }
            }
            put(byte: UInt8(ascii: "\""))
        }
    }

    /// Whether `text` holds a byte JSON escapes (a control character, `"` or `\`). Looked at
    /// eight bytes at a time: endpoint names are most of report.json's strings.
    static func needsEscape(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = text.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // A byte of `word` is 0 exactly when `(word - ones) & ~word & highs` has its high bit.
        func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        var offset = 0
        while offset + 8 <= text.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(start + offset).loadUnaligned(as: UInt64.self))
            // A byte under 0x20 (the same borrow test, exact as a yes or no for limits up to
            // 0x80), then a `"` or a `\`.
            let control = (word &- 0x20 &* ones) & ~word & highs != 0
            if control || hasZeroByte(word ^ (0x22 &* ones)) || hasZeroByte(word ^ (0x5C &* ones)) { return true }
            offset += 8
        }
        while offset < text.count {
            let byte = text[offset]
            if byte < 0x20 || byte == 34 || byte == 92 { return true }
            offset += 1
        }
        return false
    }

    /// A value JSONEncoder already wrote (pretty-printed, from depth 0), indented to where it goes.
    mutating func encoded(_ text: Data) {
        var previous: UInt8 = 0
        for byte in text {
            // Blank lines (inside an empty container) stay without indentation.
            if previous == 10 && byte != 10 { indent(depth) }
            put(byte: byte)
            previous = byte
        }
    }
}
