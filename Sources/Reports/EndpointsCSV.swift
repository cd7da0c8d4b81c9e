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

    static func row(endpoint: String, direction: Direction, _ figures: GroupFigures) -> [String] {
        var row = [
            endpoint, direction.rawValue, HTTPProtocol.joined(figures.protocols), String(figures.records),
            String(figures.unpaired),
            String(figures.incomplete), String(figures.unmeasured), String(figures.wireBytes),
        ]
        // Sorted values: means then do not depend on the order records arrived in.
        for estimator in figures.orderFree.estimators {
            row += [String(estimator.count), String(estimator.unestimated)]
            guard estimator.count > 0 else {
                // Nothing counted: sums and errors are undefined, not zero.
                row += Array(repeating: "", count: figureColumns.count - 2)
                continue
            }
            row += [
                String(estimator.wire), String(estimator.estimated), String(estimator.error),
                Format.percent(estimator.errorPercent),
                Format.ratio(estimator.meanAbsoluteRelativeError),
                Format.ratio(estimator.absoluteRelativeError(quantile: 0.5)),
                Format.ratio(estimator.absoluteRelativeError(quantile: 0.95)),
                Format.ratio(estimator.maxAbsoluteRelativeError),
            ]
            // No record split into components: their errors are unknown, not zero.
            row +=
                estimator.splitCount == 0
                ? ["", "", ""]
                : [String(estimator.lineError), String(estimator.headersError), String(estimator.bodyError)]
        }
        row += layerCells(figures.layers)
        for estimator in figures.estimators { row += layerErrorCells(estimator.layers) }
        return row
    }

    /// `layerColumns`: a sum over no record is empty, not 0.
    static func layerCells(_ layers: LayerFigures) -> [String] {
        let tls = layers.tlsRecords > 0
        let lower = layers.lowerRecords > 0
        return [
            tls ? String(layers.tls) : "", String(layers.tlsRecords), lower ? String(layers.tcp) : "",
            lower ? String(layers.ip) : "", lower ? String(layers.frame) : "", String(layers.lowerRecords),
            String(layers.lowerBoundRecords), lower ? String(layers.ipShare) : "",
        ]
    }

    /// `layerErrorColumns` of one estimator.
    static func layerErrorCells(_ errors: LayerErrors) -> [String] {
        func pair(_ layer: CostLayer) -> [String] {
            [errors.error(layer).map(String.init) ?? "", Format.percent(errors.errorPercent(layer))]
        }
        return [String(errors.tlsCount)] + pair(.tls) + [String(errors.lowerCount)] + pair(.tcp) + pair(.ip)
            + pair(.frame) + pair(.ipShare)
    }
}

/// Fixed number formats, so outputs diff cleanly.
public enum Format {
    /// Six decimals; empty when undefined.
    public static func ratio(_ value: Double?) -> String {
        value.map { String(format: "%.6f", $0) } ?? ""
    }

    /// Two decimals; empty when undefined.
    public static func percent(_ value: Double?) -> String {
        value.map { String(format: "%.2f", $0) } ?? ""
    }
}
