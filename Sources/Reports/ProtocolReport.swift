import Analysis

// The protocol split (HTTP/1.x, HTTP/2, ...) and the HTTP/2 headers figures (each meter's
// headers against HPACK's bytes) for report.md, report.json and report.html, kept in one file
// apart from the other sections (docs/FIGURES.md, Protocols and HTTP/2 headers).

extension RunReport {
    /// The totals by protocol and direction, with order-free figures.
    public var protocolTotals: [(key: ProtocolKey, figures: GroupFigures)] {
        aggregation.sortedProtocolTotals.map { (key: $0.key, figures: $0.figures.orderFree) }
    }

    /// The HTTP/2 headers figures in total, by direction.
    public var headerCompressionTotals: [(direction: RecordClass, figures: HeaderCompressionFigures)] {
        headerCompressionTotals(.hpack)
    }

    /// `coder`'s headers figures in total (HTTP/2's against HPACK, HTTP/3's against QPACK), by direction.
    public func headerCompressionTotals(
        _ coder: HeaderCoder
    ) -> [(direction: RecordClass, figures: HeaderCompressionFigures)] {
        aggregation.headerCompressionTotals(coder).sorted { $0.key < $1.key }
            .map { (direction: $0.key, figures: $0.value) }
    }

    /// The endpoints with HTTP/2 records, in the report's ranking order, each with its
    /// directions' HTTP/2 headers figures.
    public func headerCompressionEndpoints() -> [HeaderCompressionEndpoint] {
        headerCompressionEndpoints(.hpack)
    }

    /// The endpoints with records of `coder`'s protocol, in the report's ranking order, each
    /// with its directions' headers figures.
    public func headerCompressionEndpoints(_ coder: HeaderCoder) -> [HeaderCompressionEndpoint] {
        if coder == .hpack, let headerCompressionRanking { return headerCompressionRanking }
        if coder == .qpack, let qpackCompressionRanking { return qpackCompressionRanking }
        let byGroup = aggregation.headerCompression(coder)
        guard !byGroup.isEmpty else { return [] }
        return endpointRanking().compactMap { place in
            let directions = place.directions.compactMap { direction in
                byGroup[GroupKey(endpoint: place.endpoint, direction: direction)]
                    .map { (direction: direction, figures: $0) }
            }
            return directions.isEmpty
                ? nil : HeaderCompressionEndpoint(rank: place.rank, endpoint: place.endpoint, directions: directions)
        }
    }
}

/// One endpoint's HTTP/2 (or HTTP/3) headers figures, per direction.
public struct HeaderCompressionEndpoint: Sendable {
    /// The endpoint's rank in the report (all protocols).
    public var rank: Int
    public var endpoint: String
    public var directions: [(direction: RecordClass, figures: HeaderCompressionFigures)]
}

/// Ratios as multiples: `5.26x`, `n/a` when undefined.
enum RatioText {
    static func multiple(_ value: Double?) -> String {
        value.map { TextFormat.fixed($0, decimals: 2) + "x" } ?? "n/a"
    }
}

// MARK: - report.md

extension MarkdownReport {
    /// The totals per protocol and direction, each estimator on its own row.
    static func protocols(_ run: RunReport) -> [String] {
        let split = run.protocolTotals
        guard !split.isEmpty else { return [] }
        var lines = ["## Protocols", ""]
        lines.append("The totals split by the HTTP each record travelled as: HTTP/1.x or HTTP/2 in a capture,")
        lines.append("a HAR entry's `httpVersion` (unknown when it names none); error = estimate - wire.")
        lines.append("")
        lines += MarkdownText.header(
            [
                "protocol", "direction", "records", "incomplete", "wire B", "estimator", "estimate B", "error B",
                "error %",
            ],
            right: [2, 3, 4, 6, 7, 8])
        for row in protocolRows(run) { lines.append(MarkdownText.row(row.map(\.text))) }
        lines.append("")
        return lines
    }

    /// The cells of the protocol split's rows (report.md and report.html).
    static func protocolRows(_ run: RunReport) -> [[(text: String, numeric: Bool)]] {
        let names = run.aggregation.estimatorNames
        var rows: [[(text: String, numeric: Bool)]] = []
        for (key, figures) in run.protocolTotals {
            let order = run.estimatorOrder.isEmpty ? [nil] : run.estimatorOrder.map { Optional($0) }
            for (position, index) in order.enumerated() {
                let first = position == 0
                var row: [(text: String, numeric: Bool)] = [
                    (first ? key.wireProtocol.label : "", false), (first ? key.direction.rawValue : "", false),
                    (first ? TextFormat.bytes(figures.records) : "", true),
                    (first ? TextFormat.bytes(figures.incomplete) : "", true),
                    (first ? TextFormat.bytes(figures.wireBytes) : "", true),
                ]
                if let index {
                    let estimator = figures.estimators[index]
                    let counted = estimator.count > 0
                    row += [
                        (names[index], false), (counted ? TextFormat.bytes(estimator.estimated) : "n/a", true),
                        (counted ? TextFormat.signedBytes(estimator.error) : "n/a", true),
                        (TextFormat.signedPercent(estimator.errorPercent), true),
                    ]
                } else {
                    row += [("", false), ("n/a", true), ("n/a", true), ("n/a", true)]
                }
                rows.append(row)
            }
        }
        return rows
    }

    /// The headline of HTTP/2: what the ranking meter counts for headers against HPACK's bytes,
    /// in total and per endpoint; nothing without HTTP/2 records.
    static func http2Headers(_ run: RunReport, rows: Int) -> [String] {
        headerCompression(run, .hpack, rows: rows)
    }

    /// The section's explanation, as report.md wraps it (report.html joins the lines).
    static func headerCompressionIntro(_ coder: HeaderCoder) -> [String] {
        switch coder {
        case .hpack:
            return [
                "HTTP/2 sends header fields HPACK-compressed (a repeated field costs a byte or two);",
                "an app-layer meter counts them as text. Over the HTTP/2 records of captures (a HAR tells",
                "no frame sizes) that are measured, have their fields decoded and have every estimate:",
                "wire headers are the HEADERS, CONTINUATION and PUSH_PROMISE frames with their 9-byte",
                "headers (`wire_headers`); the header list counts len(name) + len(value) + 32 per",
                "decoded field (`header_list`).",
            ]
        case .qpack:
            return [
                "HTTP/3 sends header fields QPACK-compressed (a field in the dynamic table costs a byte or",
                "two; its insert travels once on the QPACK encoder stream, counted as `h3_control`); an",
                "app-layer meter counts them as text. Over the decrypted HTTP/3 records that are measured,",
                "have their fields decoded and have every estimate: wire headers are the HEADERS and",
                "PUSH_PROMISE frames with their type and length varints (`wire_headers`); the header list",
                "counts len(name) + len(value) + 32 per decoded field (`header_list`).",
            ]
        }
    }

    /// What the ranking meter counts for headers against `coder`'s bytes (HPACK for HTTP/2,
    /// QPACK for HTTP/3), in total and per endpoint; nothing without records of its protocol.
    static func headerCompression(_ run: RunReport, _ coder: HeaderCoder, rows: Int) -> [String] {
        let totals = run.headerCompressionTotals(coder)
        guard !totals.isEmpty else { return [] }
        var lines = ["## \(coder.protocolLabel) headers: the meter against \(coder.name)", ""]
        lines += headerCompressionIntro(coder)
        let name = run.rankingEstimator.map { run.aggregation.estimatorNames[$0] }
        if let name, let index = run.rankingEstimator {
            lines.append("")
            for (direction, figures) in totals where figures.records > 0 {
                // Two lines per direction (Markdown joins them), so that lines stay short.
                lines.append(
                    "- \(direction.plural.capitalizedFirst): the \(name) meter counts"
                        + " \(TextFormat.bytes(figures.estimatedHeaders[index])) B of headers,"
                        + " \(RatioText.multiple(figures.estimateToWire(index))) the")
                lines.append(
                    "  \(TextFormat.bytes(figures.wireHeaders)) B of \(coder.name) frames on the wire and"
                        + " \(RatioText.multiple(figures.estimateToHeaderList(index))) the"
                        + " \(TextFormat.bytes(figures.headerList)) B header list.")
            }
        }
        let leftOut = totals.reduce(0) { $0 + $1.figures.leftOut }
        if leftOut > 0 {
            lines.append("")
            lines.append(
                "\(TextFormat.count(leftOut, "\(coder.protocolLabel) record"))"
                    + " left out (unmeasured, fields unknown or not estimated).")
        }
        lines.append("")
        let endpoints = run.headerCompressionEndpoints(coder)
        var header = ["#", "endpoint", "direction", "records", "wire headers B", "header list B", "wire / list"]
        if let name { header += ["\(name) headers B", "\(name) / wire", "\(name) / list"] }
        if endpoints.count > rows {
            lines.append(
                "The first \(TextFormat.bytes(rows)) of \(TextFormat.bytes(endpoints.count)) endpoints, in the"
                    + " report's order; report.json holds them all.")
            lines.append("")
        }
        lines += MarkdownText.header(header, right: Set([0] + Array(3..<header.count)))
        for endpoint in endpoints.prefix(rows) {
            for (position, (direction, figures)) in endpoint.directions.enumerated() {
                let cells = http2HeaderCells(run, figures)
                lines.append(
                    MarkdownText.row(
                        [
                            position == 0 ? String(endpoint.rank) : "",
                            position == 0
                                ? MarkdownText.code(
                                    EndpointText.shortened(endpoint.endpoint, maxLength: endpointWidth), inTable: true)
                                : "",
                            direction.rawValue,
                        ] + cells))
            }
        }
        for (direction, figures) in totals {
            lines.append(MarkdownText.row(["", "all", direction.rawValue] + http2HeaderCells(run, figures)))
        }
        lines.append("")
        return lines
    }

    /// records, wire headers, header list, wire / list, then the ranking estimator's headers and
    /// its two ratios (report.md and report.html).
    static func http2HeaderCells(_ run: RunReport, _ figures: HeaderCompressionFigures) -> [String] {
        var cells = [
            TextFormat.bytes(figures.records), TextFormat.bytes(figures.wireHeaders),
            TextFormat.bytes(figures.headerList), RatioText.multiple(figures.wireToHeaderList),
        ]
        if let index = run.rankingEstimator {
            cells += [
                TextFormat.bytes(figures.estimatedHeaders[index]), RatioText.multiple(figures.estimateToWire(index)),
                RatioText.multiple(figures.estimateToHeaderList(index)),
            ]
        }
        return cells
    }
}

// MARK: - report.json

extension JSONReport {
    /// `http2_headers`: the totals by direction and the endpoints with HTTP/2 records, in rank
    /// order (docs/REPORT-JSON.md).
    static func writeHTTP2Headers(_ run: RunReport, names: [String], _ json: inout PrettyJSONWriter) {
        writeHeaderCompression(run, .hpack, names: names, &json)
    }

    /// `http2_headers`'s shape for `coder`'s records: `http3_headers` holds HTTP/3's against QPACK.
    static func writeHeaderCompression(
        _ run: RunReport, _ coder: HeaderCoder, names: [String], _ json: inout PrettyJSONWriter
    ) {
        let keys = EstimatorKeys(names)
        json.beginObject()
        json.key("endpoints")
        json.beginArray()
        for endpoint in run.headerCompressionEndpoints(coder) {
            json.element()
            json.beginObject()
            json.key("directions")
            json.beginObject()
            for (direction, figures) in inKeyOrder(endpoint.directions) {
                json.key(named: direction.rawValue)
                headerCompression(figures, keys: keys, &json)
            }
            json.endObject()
            json.key("endpoint")
            json.string(endpoint.endpoint)
            json.member("rank", int: endpoint.rank)
            json.endObject()
        }
        json.endArray()
        json.key("totals")
        json.beginObject()
        for (direction, figures) in inKeyOrder(run.headerCompressionTotals(coder)) {
            json.key(named: direction.rawValue)
            headerCompression(figures, keys: keys, &json)
        }
        json.endObject()
        json.endObject()
    }

    private static func headerCompression(
        _ figures: HeaderCompressionFigures, keys: EstimatorKeys, _ json: inout PrettyJSONWriter
    ) {
        json.beginObject()
        json.key("estimators")
        json.beginObject()
        // The models only: an app meter's estimates are joined after these figures are summed.
        for (name, index) in keys.sorted where index < figures.estimatedHeaders.count {
            json.key(named: name)
            json.beginObject()
            json.member("headers", int: figures.estimatedHeaders[index])
            json.member("headers_to_header_list", double: rounded(figures.estimateToHeaderList(index)))
            json.member("headers_to_wire", double: rounded(figures.estimateToWire(index)))
            json.endObject()
        }
        json.endObject()
        json.member("header_list", int: figures.headerList)
        json.member("left_out", int: figures.leftOut)
        json.member("records", int: figures.records)
        json.member("wire_headers", int: figures.wireHeaders)
        json.member("wire_to_header_list", double: rounded(figures.wireToHeaderList))
        json.endObject()
    }

    /// `protocols`: protocol → direction → group, the totals split by protocol.
    static func writeProtocols(_ run: RunReport, names: [String], _ json: inout PrettyJSONWriter) {
        var byProtocol: [String: [(String, GroupFigures)]] = [:]
        for (key, figures) in run.protocolTotals {
            byProtocol[key.wireProtocol.rawValue, default: []].append((key.direction.rawValue, figures))
        }
        let keys = EstimatorKeys(names)
        let wholes = EndpointsCSV.Wholes(run.aggregation)
        json.beginObject()
        for (name, directions) in sortedByKey(Array(byProtocol)) {
            json.key(named: name)
            json.beginObject()
            for (direction, figures) in sortedByKey(directions) {
                json.key(named: direction)
                group(figures, keys: keys, wholes: wholes, sharesOverhead: false, &json)
            }
            json.endObject()
        }
        json.endObject()
    }

    /// A group's `protocols`: protocol → records, the protocols present.
    /// Every protocol in key order (its name's bytes), sorted once rather than per group.
    private static let protocolsByName = HTTPProtocol.allCases.sorted { $0.rawValue.utf8Order($1.rawValue).value < 0 }

    static func writeProtocolCounts(_ counts: ProtocolCounts, _ json: inout PrettyJSONWriter) {
        json.beginObject()
        for wireProtocol in protocolsByName where counts[wireProtocol] > 0 {
            json.key(named: wireProtocol.rawValue)
            json.int(counts[wireProtocol])
        }
        json.endObject()
    }
}
