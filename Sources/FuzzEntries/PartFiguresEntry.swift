import Analysis
import Reports

/// A part's figures (`part.figures` after its first line, docs/SCALE.md) as `meteraudit merge`
/// reads them: the aggregation, then report.html's samples. What decodes is merged with itself
/// (the bounds on every figure read keep the sums from overflowing), its scatter replayed over
/// at most 4,096 records, and rendered as report.md, report.json and the terminal summary.
enum PartFiguresEntry {
    static let magic = Array("meteraudit figures 1\n".utf8)

    static func run(_ input: UnsafeRawBufferPointer) {
        var bytes = Array(input)
        if bytes.starts(with: magic) { bytes.removeFirst(magic.count) }
        var decoder = StateDecoder(bytes: bytes)
        guard var aggregation = try? Aggregation(state: &decoder) else { return }
        var charts = (try? ChartSamples(summary: &decoder)) ?? ChartSamples(estimatorNames: aggregation.estimatorNames)
        guard charts.estimatorNames == aggregation.estimatorNames else { return }
        let copy = aggregation
        aggregation.merge(copy)
        charts.mergeSummary(charts)
        let replay = ReservoirReplay(measuredRecords: min(charts.measuredCount, 4096), capacity: charts.scatterCapacity)
        _ = replay.finish(into: &charts)
        aggregation.makeOrderFree()
        var report = RunReport(inputs: [], aggregation: aggregation, charts: charts)
        report.rankEndpoints()
        _ = MarkdownReport.render(report)
        _ = JSONReport.render(report)
        _ = Reporters.terminalSummary(report)
    }
}
