import Analysis
import Foundation

/// `report.json`: the figures of report.md for programs (schema: docs/REPORT-JSON.md).
/// Deterministic: keys sorted, arrays in a fixed order, every fraction rounded to 6 decimals.
public enum JSONReport: RunReporter {
    public static let name = "json"
    public static let fileName = "report.json"
    /// Bumped when a key changes meaning or goes away (new keys do not bump it).
    public static let schemaVersion = 1

    public static func render(_ run: RunReport) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Every value is a plain string, number, bool, array or object: encoding cannot fail.
        let data = try! encoder.encode(document(run))
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func document(_ run: RunReport) -> Document {
        let names = run.aggregation.estimatorNames
        return Document(
            schema: "meteraudit-report", schemaVersion: schemaVersion,
            estimators: names,
            rankingEstimator: run.rankingEstimator.map { names[$0] },
            settings: run.settings.map { Setting(name: $0.0, value: $0.1) },
            inputs: run.inputs.map(Input.init),
            totals: Dictionary(uniqueKeysWithValues: run.totals.map { ($0.direction.rawValue, Group($0.figures, names: names)) }),
            endpoints: run.rankedEndpoints().map { endpoint in
                Endpoint(rank: endpoint.rank, endpoint: endpoint.endpoint, rankAbsError: endpoint.absoluteError,
                         directions: Dictionary(uniqueKeysWithValues: endpoint.directions.map {
                             ($0.direction.rawValue, Group($0.figures, names: names))
                         }))
            })
    }

    /// A fraction rounded to 6 decimals (never `-0`), so that the text is fixed.
    static func rounded(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        let result = (value * 1_000_000).rounded(.toNearestOrAwayFromZero) / 1_000_000
        return result == 0 ? 0 : result
    }

    struct Document: Encodable {
        var schema: String
        var schemaVersion: Int
        var estimators: [String]
        var rankingEstimator: String?
        var settings: [Setting]
        var inputs: [Input]
        var totals: [String: Group]
        var endpoints: [Endpoint]

        enum CodingKeys: String, CodingKey {
            case schema, estimators, settings, inputs, totals, endpoints
            case schemaVersion = "schema_version", rankingEstimator = "ranking_estimator"
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(schema, forKey: .schema)
            try container.encode(schemaVersion, forKey: .schemaVersion)
            try container.encode(estimators, forKey: .estimators)
            try container.encode(rankingEstimator, forKey: .rankingEstimator)
            try container.encode(settings, forKey: .settings)
            try container.encode(inputs, forKey: .inputs)
            try container.encode(totals, forKey: .totals)
            try container.encode(endpoints, forKey: .endpoints)
        }
    }

    struct Setting: Encodable {
        var name: String
        var value: String
    }

    struct Endpoint: Encodable {
        var rank: Int
        var endpoint: String
        var rankAbsError: Int
        var directions: [String: Group]

        enum CodingKeys: String, CodingKey {
            case rank, endpoint, directions
            case rankAbsError = "rank_abs_error"
        }
    }

    struct Group: Encodable {
        var records: Int
        var unpaired: Int
        var incomplete: Int
        var unmeasured: Int
        var wireBytes: Int
        var estimators: [String: Estimator]

        enum CodingKeys: String, CodingKey {
            case records, unpaired, incomplete, unmeasured, estimators
            case wireBytes = "wire_bytes"
        }

        init(_ figures: GroupFigures, names: [String]) {
            records = figures.records
            unpaired = figures.unpaired
            incomplete = figures.incomplete
            unmeasured = figures.unmeasured
            wireBytes = figures.wireBytes
            estimators = Dictionary(zip(names, figures.estimators.map(Estimator.init)), uniquingKeysWith: { first, _ in first })
        }
    }

    struct Estimator: Encodable {
        var count: Int
        var unestimated: Int
        var wire: Int?
        var estimated: Int?
        var error: Int?
        var errorPct: Double?
        var meanAbsRel: Double?
        var medianAbsRel: Double?
        var p95AbsRel: Double?
        var maxAbsRel: Double?
        var lineError: Int?
        var headersError: Int?
        var bodyError: Int?
        var causes: [Cause]

        enum CodingKeys: String, CodingKey {
            case count, unestimated, wire, estimated, error, causes
            case errorPct = "error_pct", meanAbsRel = "mean_abs_rel", medianAbsRel = "median_abs_rel"
            case p95AbsRel = "p95_abs_rel", maxAbsRel = "max_abs_rel"
            case lineError = "line_error", headersError = "headers_error", bodyError = "body_error"
        }

        init(_ figures: EstimatorFigures) {
            let counted = figures.count > 0
            count = figures.count
            unestimated = figures.unestimated
            // Nothing counted: sums and errors are undefined, not zero (as in endpoints.csv).
            wire = counted ? figures.wire : nil
            estimated = counted ? figures.estimated : nil
            error = counted ? figures.error : nil
            errorPct = JSONReport.rounded(figures.errorPercent)
            meanAbsRel = JSONReport.rounded(figures.meanAbsoluteRelativeError)
            medianAbsRel = JSONReport.rounded(figures.absoluteRelativeError(quantile: 0.5))
            p95AbsRel = JSONReport.rounded(figures.absoluteRelativeError(quantile: 0.95))
            maxAbsRel = JSONReport.rounded(figures.maxAbsoluteRelativeError)
            let split = figures.splitCount > 0
            lineError = split ? figures.lineError : nil
            headersError = split ? figures.headersError : nil
            bodyError = split ? figures.bodyError : nil
            causes = figures.sortedCauses.map {
                Cause(name: $0.name, bytes: $0.tally.bytes, records: $0.tally.records,
                      bytesPerRecord: $0.tally.records > 0
                          ? JSONReport.rounded(Double($0.tally.bytes) / Double($0.tally.records)) ?? 0 : 0)
            }
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(count, forKey: .count)
            try container.encode(unestimated, forKey: .unestimated)
            try container.encode(wire, forKey: .wire)
            try container.encode(estimated, forKey: .estimated)
            try container.encode(error, forKey: .error)
            try container.encode(errorPct, forKey: .errorPct)
            try container.encode(meanAbsRel, forKey: .meanAbsRel)
            try container.encode(medianAbsRel, forKey: .medianAbsRel)
            try container.encode(p95AbsRel, forKey: .p95AbsRel)
            try container.encode(maxAbsRel, forKey: .maxAbsRel)
            try container.encode(lineError, forKey: .lineError)
            try container.encode(headersError, forKey: .headersError)
            try container.encode(bodyError, forKey: .bodyError)
            try container.encode(causes, forKey: .causes)
        }
    }

    struct Cause: Encodable {
        var name: String
        var bytes: Int
        var records: Int
        var bytesPerRecord: Double

        enum CodingKeys: String, CodingKey {
            case name, bytes, records
            case bytesPerRecord = "bytes_per_record"
        }
    }

    /// One input's diagnostics, as diagnostics.json writes them.
    struct Input: Encodable {
        var diagnostics: InputDiagnostics

        init(_ diagnostics: InputDiagnostics) { self.diagnostics = diagnostics }

        func encode(to encoder: Encoder) throws {
            try diagnostics.encode(to: encoder)
        }
    }
}
