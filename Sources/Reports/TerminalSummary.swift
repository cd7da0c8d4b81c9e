import Analysis

/// A few lines for stdout at the end of a run: the totals and the endpoints with the largest
/// error. Plain text, no Markdown.
public enum TerminalSummary {
    public static func render(_ run: RunReport, top: Int = 5) -> String {
        let totals = run.totals
        guard !totals.isEmpty else { return "No HTTP messages found.\n" }
        let names = run.aggregation.estimatorNames
        var lines = ["Wire bytes against the estimates (error = estimate - wire):"]
        let labels = totals.map { direction, figures -> String in
            let what = TextFormat.count(figures.records, direction.noun, direction.plural)
            switch direction {
            case .request: return "up (\(what))"
            case .response: return "down (\(what))"
            case .interim: return "interim (\(TextFormat.count(figures.records, "response")))"
            }
        }
        let labelWidth = labels.map(\.count).max() ?? 0
        let wires = totals.map { TextFormat.bytes($0.figures.wireBytes) + " B" }
        let wireWidth = wires.map(\.count).max() ?? 0
        for (position, (_, figures)) in totals.enumerated() {
            var line =
                "  " + pad(labels[position] + ":", labelWidth + 1) + " wire " + padLeft(wires[position], wireWidth)
            for index in run.estimatorOrder {
                let estimator = figures.estimators[index]
                line += ", \(names[index]) "
                guard estimator.count > 0 else {
                    line += "n/a"
                    continue
                }
                line +=
                    "\(TextFormat.bytes(estimator.estimated)) B (\(TextFormat.signedPercent(estimator.errorPercent))"
                if estimator.wire != figures.wireBytes {
                    line += " of \(TextFormat.bytes(estimator.wire)) B estimable"
                }
                line += ")"
            }
            lines.append(line)
        }
        if let index = run.rankingEstimator, top > 0 {
            // The figures of the first few only (rankedEndpoints() would sort every endpoint's).
            let ranked = run.endpointRanking().prefix(top).filter { $0.absoluteError > 0 }.map { place in
                RankedEndpoint(
                    rank: place.rank, endpoint: place.endpoint, directions: run.figures(of: place),
                    absoluteError: place.absoluteError)
            }
            if !ranked.isEmpty {
                lines.append("Largest \(names[index]) errors:")
                let rankWidth = String(ranked.count).count
                for endpoint in ranked {
                    let parts = endpoint.directions.compactMap { direction, figures -> String? in
                        let estimator = figures.estimators[index]
                        guard estimator.count > 0 else { return nil }
                        return "\(direction.rawValue) \(TextFormat.signedBytes(estimator.error)) B"
                            + " (\(TextFormat.signedPercent(estimator.errorPercent)))"
                    }
                    lines.append(
                        "  " + padLeft("\(endpoint.rank).", rankWidth + 1) + " "
                            + MarkdownText.printable(EndpointText.shortened(endpoint.endpoint))
                            + ": " + parts.joined(separator: ", "))
                }
            }
        }
        lines.append(worstFinding(run.costs()))
        lines += CoverageSection.terminal(run)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The run's worst finding (docs/FIGURES.md, Rate and findings), with the endpoint's rate.
    static func worstFinding(_ costs: CostSection) -> String {
        guard let worst = costs.worst else { return "Findings: no endpoint is polling, runaway or bursting." }
        var line =
            "Worst finding: \(MarkdownText.printable(EndpointText.shortened(worst.endpoint))):"
            + " \(RateText.finding(worst.finding))"
        if let perMinute = worst.rate.perMinute { line += ", \(RateText.perMinute(perMinute)) requests/min" }
        line += ", \(TextFormat.count(worst.rate.requests, "request"))"
        let others = costs.findingCounts.reduce(0) { $0 + $1.endpoints } - 1
        if others > 0 { line += " (\(TextFormat.count(others, "more finding")) in report.md)" }
        return line + "."
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
