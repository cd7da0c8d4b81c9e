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
    /// time as CSV bytes, so writing the file holds one row, not the whole table. `body` ends
    /// the row and empties it for the next (`CSVWriter.writeRow` does both).
    static func forEachRow(_ aggregation: Aggregation, _ body: (inout CSVRowBytes) -> Void) {
        var row = CSVRowBytes()
        for column in columns(estimators: aggregation.estimatorNames) { row.append(column) }
        body(&row)
        for (key, figures) in aggregation.sortedGroups {
            cells(endpoint: key.endpoint, direction: key.direction, figures, into: &row)
            body(&row)
        }
        for (direction, figures) in aggregation.sortedTotals {
            cells(endpoint: "*", direction: direction, figures, into: &row)
            body(&row)
        }
    }

    public static func render(_ aggregation: Aggregation) -> String {
        var text: [UInt8] = []
        forEachRow(aggregation) { row in
            row.endRow()
            text += row.bytes
            row.removeAll()
        }
        return String(decoding: text, as: UTF8.self)
    }

    public static func write(_ aggregation: Aggregation, to path: String) throws {
        let writer = try CSVWriter(path: path)
        forEachRow(aggregation) { writer.writeRow(&$0) }
        try writer.close()
    }

    /// The cells of one row as text (report.html's endpoint table shows them).
    static func row(endpoint: String, direction: RecordClass, _ figures: GroupFigures) -> [String] {
        var row = CSVTextCells(
            capacity: countColumns.count + figures.estimators.count * (figureColumns.count + layerErrorColumns.count)
                + layerColumns.count)
        cells(endpoint: endpoint, direction: direction, figures, into: &row)
        return row.cells
    }

    /// The one definition of a row's cells, for every form of the table: handed to `sink` one
    /// by one, whole numbers as numbers (the file writes their digits without a String between).
    /// An undefined number (nil) is an empty cell; fractions have fixed decimals (percentages 2,
    /// ratios 6).
    static func cells(endpoint: String, direction: RecordClass, _ figures: GroupFigures, into sink: inout some CSVCells) {
        sink.append(endpoint)
        sink.append(direction.rawValue)
        sink.append(HTTPProtocol.joined(figures.protocols))
        sink.append(figures.records)
        sink.append(figures.unpaired)
        sink.append(figures.incomplete)
        sink.append(figures.unmeasured)
        sink.append(figures.wireBytes)
        // Sorted values: means then do not depend on the order records arrived in.
        for estimator in figures.orderFree.estimators {
            sink.append(estimator.count)
            sink.append(estimator.unestimated)
            guard estimator.count > 0 else {
                // Nothing counted: sums and errors are undefined, not zero.
                for _ in 2..<figureColumns.count { sink.append("") }
                continue
            }
            sink.append(estimator.wire)
            sink.append(estimator.estimated)
            sink.append(estimator.error)
            sink.append(estimator.errorPercent, decimals: 2)
            sink.append(estimator.meanAbsoluteRelativeError, decimals: 6)
            sink.append(estimator.absoluteRelativeError(quantile: 0.5), decimals: 6)
            sink.append(estimator.absoluteRelativeError(quantile: 0.95), decimals: 6)
            sink.append(estimator.maxAbsoluteRelativeError, decimals: 6)
            // No record split into components: their errors are unknown, not zero.
            let split = estimator.splitCount > 0
            sink.append(split ? estimator.lineError : nil)
            sink.append(split ? estimator.headersError : nil)
            sink.append(split ? estimator.bodyError : nil)
        }
        layerCells(figures.layers, into: &sink)
        for estimator in figures.estimators { layerErrorCells(estimator.layers, into: &sink) }
    }

    /// `layerColumns`: a sum over no record is empty, not 0.
    static func layerCells(_ layers: LayerFigures, into sink: inout some CSVCells) {
        let tls = layers.tlsRecords > 0
        let lower = layers.lowerRecords > 0
        sink.append(tls ? layers.tls : nil)
        sink.append(layers.tlsRecords)
        sink.append(lower ? layers.tcp : nil)
        sink.append(lower ? layers.ip : nil)
        sink.append(lower ? layers.frame : nil)
        sink.append(layers.lowerRecords)
        sink.append(layers.lowerBoundRecords)
        sink.append(lower ? layers.ipShare : nil)
    }

    /// `layerErrorColumns` of one estimator.
    static func layerErrorCells(_ errors: LayerErrors, into sink: inout some CSVCells) {
        func pair(_ layer: CostLayer) {
            sink.append(errors.error(layer))
            sink.append(errors.errorPercent(layer), decimals: 2)
        }
        sink.append(errors.tlsCount)
        pair(.tls)
        sink.append(errors.lowerCount)
        pair(.tcp)
        pair(.ip)
        pair(.frame)
        pair(.ipShare)
    }
}
