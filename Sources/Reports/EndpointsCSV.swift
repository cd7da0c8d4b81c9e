import Analysis
import Foundation

/// `endpoints.csv`: one row per endpoint and direction, then the `*` totals, with the
/// figures of docs/FIGURES.md for every estimator.
public enum EndpointsCSV {
    public static let figureColumns = [
        "count", "unestimated", "wire", "estimated", "error", "error_pct", "mean_abs_rel", "median_abs_rel",
        "p95_abs_rel", "max_abs_rel", "line_error", "headers_error", "body_error",
    ]

    /// The cost layers of a group (docs/FIGURES.md, Cost layers), after every estimator's figures.
    public static let layerColumns = [
        "tls_bytes", "tls_records", "tcp_bytes", "ip_bytes", "frame_bytes", "lower_records", "lower_bound_records",
        "ip_share",
    ]

    /// Each estimator's error against each cost layer, after `layerColumns`.
    public static let layerErrorColumns = [
        "tls_count", "tls_error", "tls_error_pct", "lower_count", "tcp_error", "tcp_error_pct", "ip_error",
        "ip_error_pct", "frame_error", "frame_error_pct", "ip_share_error", "ip_share_error_pct",
    ]

    static let countColumns = [
        "endpoint", "direction", "protocol", "records", "unpaired", "incomplete", "unmeasured", "wire_bytes",
    ]

    public static func columns(estimators: [String]) -> [String] {
        countColumns
            + estimators.flatMap { name in figureColumns.map { "\(name)_\($0)" } }
            + layerColumns
            + estimators.flatMap { name in layerErrorColumns.map { "\(name)_\($0)" } }
    }

    /// The columns in groups, for a table's header: the counts, each estimator's figures, the
    /// cost layers, each estimator against the layers (name, number of columns).
    public static func columnGroups(estimators: [String]) -> [(name: String, span: Int)] {
        [("", countColumns.count)] + estimators.map { ($0, figureColumns.count) }
            + [("cost layers", layerColumns.count)]
            + estimators.map { ("\($0) against the layers", layerErrorColumns.count) }
    }

    /// Hands on the header, a row per endpoint and direction, then the `*` totals, one row at a
    /// time, so writing the file holds one row, not the whole table.
    public static func forEachRow(_ aggregation: Aggregation, _ body: ([String]) -> Void) {
        body(columns(estimators: aggregation.estimatorNames))
        for (key, figures) in aggregation.sortedGroups {
            body(row(endpoint: key.endpoint, direction: key.direction, figures))
        }
        for (direction, figures) in aggregation.sortedTotals {
            body(row(endpoint: "*", direction: direction, figures))
        }
    }

    public static func render(_ aggregation: Aggregation) -> String {
        var rows: [[String]] = []
        forEachRow(aggregation) { rows.append($0) }
        return CSVWriter.text(rows)
    }

    public static func write(_ aggregation: Aggregation, to path: String) throws {
        let writer = try CSVWriter(path: path)
        forEachRow(aggregation) { writer.writeRow($0) }
        try writer.close()
    }

    /// The cells of one row. Appended one by one into a row sized once: built from small
    /// arrays joined together, the cells' copies cost more than their text.
    static func row(endpoint: String, direction: Direction, _ figures: GroupFigures) -> [String] {
        var row: [String] = []
        row.reserveCapacity(
            countColumns.count + figures.estimators.count * (figureColumns.count + layerErrorColumns.count)
                + layerColumns.count)
        row.append(endpoint)
        row.append(direction.rawValue)
        row.append(HTTPProtocol.joined(figures.protocols))
        row.append(String(figures.records))
        row.append(String(figures.unpaired))
        row.append(String(figures.incomplete))
        row.append(String(figures.unmeasured))
        row.append(String(figures.wireBytes))
        // Sorted values: means then do not depend on the order records arrived in.
        for estimator in figures.orderFree.estimators {
            row.append(String(estimator.count))
            row.append(String(estimator.unestimated))
            guard estimator.count > 0 else {
                // Nothing counted: sums and errors are undefined, not zero.
                for _ in 2..<figureColumns.count { row.append("") }
                continue
            }
            row.append(String(estimator.wire))
            row.append(String(estimator.estimated))
            row.append(String(estimator.error))
            row.append(Format.percent(estimator.errorPercent))
            row.append(Format.ratio(estimator.meanAbsoluteRelativeError))
            row.append(Format.ratio(estimator.absoluteRelativeError(quantile: 0.5)))
            row.append(Format.ratio(estimator.absoluteRelativeError(quantile: 0.95)))
            row.append(Format.ratio(estimator.maxAbsoluteRelativeError))
            // No record split into components: their errors are unknown, not zero.
            let split = estimator.splitCount > 0
            row.append(split ? String(estimator.lineError) : "")
            row.append(split ? String(estimator.headersError) : "")
            row.append(split ? String(estimator.bodyError) : "")
        }
        appendLayerCells(figures.layers, to: &row)
        for estimator in figures.estimators { appendLayerErrorCells(estimator.layers, to: &row) }
        return row
    }

    /// `layerColumns`: a sum over no record is empty, not 0.
    static func appendLayerCells(_ layers: LayerFigures, to row: inout [String]) {
        let tls = layers.tlsRecords > 0
        let lower = layers.lowerRecords > 0
        row.append(tls ? String(layers.tls) : "")
        row.append(String(layers.tlsRecords))
        row.append(lower ? String(layers.tcp) : "")
        row.append(lower ? String(layers.ip) : "")
        row.append(lower ? String(layers.frame) : "")
        row.append(String(layers.lowerRecords))
        row.append(String(layers.lowerBoundRecords))
        row.append(lower ? String(layers.ipShare) : "")
    }

    /// `layerErrorColumns` of one estimator.
    static func appendLayerErrorCells(_ errors: LayerErrors, to row: inout [String]) {
        func pair(_ layer: CostLayer) {
            row.append(errors.error(layer).map { String($0) } ?? "")
            row.append(Format.percent(errors.errorPercent(layer)))
        }
        row.append(String(errors.tlsCount))
        pair(.tls)
        row.append(String(errors.lowerCount))
        pair(.tcp)
        pair(.ip)
        pair(.frame)
        pair(.ipShare)
    }
}

/// Fixed number formats, so outputs diff cleanly.
public enum Format {
    /// Six decimals; empty when undefined.
    public static func ratio(_ value: Double?) -> String {
        value.map { FixedDecimal.format($0, decimals: 6) } ?? ""
    }

    /// Two decimals; empty when undefined.
    public static func percent(_ value: Double?) -> String {
        value.map { FixedDecimal.format($0, decimals: 2) } ?? ""
    }
}
