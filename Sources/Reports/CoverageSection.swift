import Analysis
import Foundation

/// "Coverage": what each app meter (`--meter-log`) saw of the wire and what it logged that the
/// wire never carried (docs/FIGURES.md, Coverage). Computed once; report.md, report.html,
/// report.json and the terminal summary render it. Absent without meters.
struct CoverageSection: @unchecked Sendable {
    struct Direction {
        var direction: RecordClass
        var wire: CoverageCounts
        var matched: CoverageCounts
    }

    struct Meter {
        var figures: MeterCoverage
        var entries: Int
        var unmatchedEntries: EntryCounts
        var records: CoverageCounts
        var matchedRecords: CoverageCounts
        var directions: [Direction]
        var hosts: [CoverageRow]
        var endpoints: [CoverageRow]
    }

    var meters: [Meter]

    init?(_ coverage: CoverageFigures?) {
        guard let coverage, !coverage.meters.isEmpty else { return nil }
        meters = coverage.meters.map { meter in
            var records = CoverageCounts()
            for counts in coverage.wire.values { records.add(counts) }
            var matched = CoverageCounts()
            for counts in meter.matchedRecords.values { matched.add(counts) }
            var unmatchedEntries = EntryCounts()
            for counts in meter.unmatchedEntries.values {
                unmatchedEntries.entries += counts.entries
                unmatchedEntries.bytes += counts.bytes
            }
            let directions = [RecordClass.request, .response].map { direction in
                let figures = coverage.direction(direction, meter: meter)
                return Direction(direction: direction, wire: figures.wire, matched: figures.matched)
            }
            // The hosts' rows summed from the endpoints' (sorted once).
            let endpoints = coverage.endpointRows(meter)
            return Meter(
                figures: meter, entries: meter.entries, unmatchedEntries: unmatchedEntries, records: records,
                matchedRecords: matched, directions: directions, hosts: CoverageFigures.hostRows(endpoints),
                endpoints: endpoints)
        }
    }

    /// Seconds with 3 decimals and a sign.
    static func seconds(_ nanoseconds: Int64) -> String {
        let text = TextFormat.fixed(Double(nanoseconds) / 1e9, decimals: 3)
        return nanoseconds >= 0 ? "+" + text : text
    }

    /// The meter's summary lines (report.md's bullets, report.html's paragraphs, the terminal).
    static func lines(_ meter: Meter) -> [String] {
        let offset = meter.figures.offset
        var lines = [
            "Entries: \(TextFormat.bytes(meter.entries)), \(TextFormat.bytes(meter.figures.matchedEntries.entries)) joined"
                + " to a record, \(TextFormat.bytes(meter.unmatchedEntries.entries)) metered but not on the wire"
                + " (\(TextFormat.bytes(meter.unmatchedEntries.bytes)) B by the meter's count).",
            "Records (requests and responses): \(TextFormat.bytes(meter.records.records)),"
                + " \(TextFormat.bytes(meter.matchedRecords.records)) metered,"
                + " \(TextFormat.bytes(meter.records.records - meter.matchedRecords.records)) on the wire but not metered.",
        ]
        for direction in meter.directions {
            lines.append(
                "\(direction.direction == .request ? "Up (requests)" : "Down (responses)"): the meter saw"
                    + " \(MarkdownReport.share(direction.matched.httpBytes, of: direction.wire.httpBytes)) of"
                    + " \(TextFormat.bytes(direction.wire.httpBytes)) HTTP B and"
                    + " \(MarkdownReport.share(direction.matched.ipBytes, of: direction.wire.ipBytes)) of"
                    + " \(TextFormat.bytes(direction.wire.ipBytes)) IP B.")
        }
        var clock =
            "Clock offset (capture − meter): \(seconds(offset.nanoseconds)) s, "
            + (offset.estimated ? "estimated" : "given")
        if meter.figures.matchedEntries.entries > 0 {
            clock +=
                "; spread (median absolute deviation) \(TextFormat.fixed(Double(offset.spread) / 1e9, decimals: 3)) s,"
                + " pairs from \(seconds(offset.lowest)) to \(seconds(offset.highest)) s"
        }
        lines.append(clock + "; tolerance \(TextFormat.fixed(Double(offset.tolerance) / 1e9, decimals: 3)) s.")
        let reported = meter.figures.diagnostics.values.reduce(0, +)
        if reported > 0 {
            lines.append(
                "Log lines reported: \(TextFormat.bytes(reported)) ("
                    + meter.figures.diagnostics.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                    .joined(separator: ", ") + "; diagnostics.json lists them).")
        }
        return lines
    }

    static let columns = [
        "direction", "records", "metered", "not metered", "not metered HTTP B", "not metered IP B",
        "entries not on the wire", "their meter B",
    ]

    static func cells(_ row: CoverageRow) -> [String] {
        let unmatched = row.unmatched
        return [
            row.key.direction.rawValue, TextFormat.bytes(row.wire.records), TextFormat.bytes(row.matched.records),
            TextFormat.bytes(unmatched.records), TextFormat.bytes(unmatched.httpBytes),
            TextFormat.bytes(unmatched.ipBytes), TextFormat.bytes(row.unmatchedEntries.entries),
            TextFormat.bytes(row.unmatchedEntries.bytes),
        ]
    }

    // MARK: report.md

    static func markdown(_ run: RunReport, rows: Int) -> [String] {
        guard let section = run.coverageSection else { return [] }
        var lines = ["## Coverage: what each meter saw", ""]
        lines.append("Each meter's log joined to the records (docs/METER-LOG.md): entries no record joined were")
        lines.append("metered but never on the wire (a cache, a cancelled task, a host outside the capture); records")
        lines.append("no entry joined were on the wire but not metered (another stack, a web view, the OS).")
        lines.append("")
        for meter in section.meters {
            lines.append("### \(MarkdownText.code(meter.figures.name))")
            lines.append("")
            lines += Self.lines(meter).map { "- " + $0 }
            lines.append("")
            lines += MarkdownText.header(["host"] + columns, right: Set(2...8))
            for row in meter.hosts {
                lines.append(MarkdownText.row([MarkdownText.code(row.key.host, inTable: true)] + cells(row)))
            }
            lines.append("")
            if meter.endpoints.count > rows {
                lines.append(
                    "The first \(TextFormat.bytes(rows)) of \(TextFormat.bytes(meter.endpoints.count)) endpoint rows;"
                        + " report.json holds them all.")
                lines.append("")
            }
            lines += MarkdownText.header(["endpoint"] + columns, right: Set(2...8))
            for row in meter.endpoints.prefix(rows) {
                lines.append(
                    MarkdownText.row(
                        [MarkdownText.code(EndpointText.shortened(row.key.endpoint, maxLength: 60), inTable: true)]
                            + cells(row)))
            }
            lines.append("")
        }
        return lines
    }

    // MARK: report.json

    static func writeJSON(_ run: RunReport, _ json: inout PrettyJSONWriter) {
        guard let section = run.coverageSection else { return }
        func counts(_ counts: CoverageCounts, _ json: inout PrettyJSONWriter) {
            json.beginObject()
            json.member("http_bytes", int: counts.httpBytes)
            json.member("ip_bytes", int: counts.ipBytes)
            json.member("records", int: counts.records)
            json.endObject()
        }
        func entries(_ counts: EntryCounts, _ json: inout PrettyJSONWriter) {
            json.beginObject()
            json.member("bytes", int: counts.bytes)
            json.member("entries", int: counts.entries)
            json.endObject()
        }
        func rows(_ rows: [CoverageRow], endpoints: Bool, _ json: inout PrettyJSONWriter) {
            json.beginArray()
            for row in rows {
                json.element()
                json.beginObject()
                json.key("direction")
                json.string(row.key.direction.rawValue)
                if endpoints {
                    json.key("endpoint")
                    json.string(row.key.endpoint)
                }
                json.key("entries_not_on_wire")
                entries(row.unmatchedEntries, &json)
                json.key("host")
                json.string(row.key.host)
                json.key("metered")
                counts(row.matched, &json)
                json.key("not_metered")
                counts(row.unmatched, &json)
                json.key("wire")
                counts(row.wire, &json)
                json.endObject()
            }
            json.endArray()
        }
        json.key("coverage")
        json.beginArray()
        for meter in section.meters {
            let offset = meter.figures.offset
            json.element()
            json.beginObject()
            json.key("clock_offset")
            json.beginObject()
            json.key("estimated")
            json.encoded(Data((offset.estimated ? "true" : "false").utf8))
            json.member("highest_ns", int: Int(offset.highest))
            json.member("lowest_ns", int: Int(offset.lowest))
            json.member("offset_ns", int: Int(offset.nanoseconds))
            json.member("spread_ns", int: Int(offset.spread))
            json.member("tolerance_ns", int: Int(offset.tolerance))
            json.endObject()
            json.key("diagnostics")
            json.beginObject()
            for (key, count) in meter.figures.diagnostics.sorted(by: { $0.key < $1.key }) {
                json.key(named: key)
                json.int(count)
            }
            json.endObject()
            json.key("directions")
            json.beginObject()
            for direction in meter.directions {
                json.key(named: direction.direction.rawValue)
                json.beginObject()
                json.key("metered")
                counts(direction.matched, &json)
                json.key("wire")
                counts(direction.wire, &json)
                json.endObject()
            }
            json.endObject()
            json.key("endpoints")
            rows(meter.endpoints, endpoints: true, &json)
            json.key("entries")
            json.beginObject()
            json.member("matched", int: meter.figures.matchedEntries.entries)
            json.member("matched_bytes", int: meter.figures.matchedEntries.bytes)
            json.member("total", int: meter.entries)
            json.member("unmatched", int: meter.unmatchedEntries.entries)
            json.member("unmatched_bytes", int: meter.unmatchedEntries.bytes)
            json.endObject()
            json.key("files")
            json.beginArray()
            for file in meter.figures.files {
                json.element()
                json.string(file)
            }
            json.endArray()
            json.key("hosts")
            rows(meter.hosts, endpoints: false, &json)
            json.key("meter")
            json.string(meter.figures.name)
            json.key("records")
            json.beginObject()
            json.key("matched")
            counts(meter.matchedRecords, &json)
            json.key("total")
            counts(meter.records, &json)
            json.key("unmatched")
            counts(meter.records.subtracting(meter.matchedRecords), &json)
            json.endObject()
            json.endObject()
        }
        json.endArray()
    }

    // MARK: terminal

    static func terminal(_ run: RunReport) -> [String] {
        guard let section = run.coverageSection else { return [] }
        var lines = ["Coverage:"]
        for meter in section.meters {
            let up = meter.directions[0]
            let down = meter.directions[1]
            lines.append(
                "  \(meter.figures.name): \(TextFormat.bytes(meter.figures.matchedEntries.entries)) of"
                    + " \(TextFormat.bytes(meter.entries)) entries joined"
                    + " (\(TextFormat.bytes(meter.unmatchedEntries.entries)) not on the wire),"
                    + " \(TextFormat.bytes(meter.records.records - meter.matchedRecords.records)) of"
                    + " \(TextFormat.bytes(meter.records.records)) records not metered; saw"
                    + " \(MarkdownReport.share(up.matched.httpBytes, of: up.wire.httpBytes)) of up,"
                    + " \(MarkdownReport.share(down.matched.httpBytes, of: down.wire.httpBytes)) of down HTTP bytes;"
                    + " clock offset \(seconds(meter.figures.offset.nanoseconds)) s"
                    + (meter.figures.offset.estimated ? "" : " (given)"))
        }
        return lines
    }
}

/// The coverage section made apart from its report (`RunReport.setCoverageTables`): sorting the
/// tables of a log of many endpoints is worth another core.
public struct CoverageTables: Sendable {
    let section: CoverageSection?

    public init(_ coverage: CoverageFigures?) { section = CoverageSection(coverage) }
}
