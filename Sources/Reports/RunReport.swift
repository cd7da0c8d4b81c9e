import Analysis
import Foundation

/// Everything a run's reports are made from: a plain value, so that one run renders the same
/// text whoever renders it, and tests can build one by hand.
public struct RunReport: Sendable {
    /// Each input's diagnostics, in the order the inputs were given.
    public var inputs: [InputDiagnostics]
    public var aggregation: Aggregation
    /// What the run was told (client profile, gzip level, endpoint rules…), shown as given,
    /// in this order.
    public var settings: [(String, String)]

    public init(inputs: [InputDiagnostics], aggregation: Aggregation, settings: [(String, String)] = []) {
        self.inputs = inputs
        self.aggregation = aggregation
        self.settings = settings
    }

    /// The estimator whose error ranks endpoints, as the run's `EstimatorSet` declares it;
    /// nil without estimators.
    public var rankingEstimator: Int? { aggregation.rankingEstimator }

    /// Estimator indices in report order: the ranking estimator first, then the others in
    /// the run's order.
    public var estimatorOrder: [Int] {
        let all = Array(aggregation.estimatorNames.indices)
        guard let first = rankingEstimator else { return all }
        return [first] + all.filter { $0 != first }
    }

    /// Every endpoint, largest `Σ |error|` of the ranking estimator over its directions
    /// first, ties by endpoint in byte order (docs/FIGURES.md, Order).
    public func rankedEndpoints() -> [RankedEndpoint] {
        var byEndpoint: [String: [(direction: Direction, figures: GroupFigures)]] = [:]
        for (key, figures) in aggregation.groups {
            byEndpoint[key.endpoint, default: []].append((direction: key.direction, figures: figures.orderFree))
        }
        let ranking = rankingEstimator
        var endpoints = byEndpoint.map { endpoint, directions -> RankedEndpoint in
            let sorted = directions.sorted { $0.direction < $1.direction }
            let absoluteError = ranking.map { index in
                sorted.reduce(0) { $0 + abs(index < $1.figures.estimators.count ? $1.figures.estimators[index].error : 0) }
            } ?? 0
            return RankedEndpoint(rank: 0, endpoint: endpoint, directions: sorted, absoluteError: absoluteError)
        }
        endpoints.sort {
            $0.absoluteError != $1.absoluteError ? $0.absoluteError > $1.absoluteError
                : Array($0.endpoint.utf8).lexicographicallyPrecedes($1.endpoint.utf8)
        }
        for index in endpoints.indices { endpoints[index].rank = index + 1 }
        return endpoints
    }

    /// The totals in direction order, with order-free figures.
    var totals: [(direction: Direction, figures: GroupFigures)] {
        aggregation.sortedTotals.map { (direction: $0.direction, figures: $0.figures.orderFree) }
    }
}

/// One endpoint with its directions, as the reports rank them.
public struct RankedEndpoint: Sendable {
    /// 1-based position in the ranking.
    public var rank: Int
    public var endpoint: String
    /// Request, response, interim: those present, in that order.
    public var directions: [(direction: Direction, figures: GroupFigures)]
    /// `Σ |error|` of the ranking estimator over the directions (bytes).
    public var absoluteError: Int
}

/// One output format: a name for `--format`, the file it goes to, and how to make it.
public protocol RunReporter {
    /// The name `--format` takes.
    static var name: String { get }
    /// The file's name in the output directory.
    static var fileName: String { get }
    /// The whole file's text.
    static func render(_ run: RunReport) -> String
    /// Writes the file at `path` (by default, `render`'s text).
    static func write(_ run: RunReport, to path: String) throws
}

extension RunReporter {
    public static func write(_ run: RunReport, to path: String) throws {
        try ReportFile.write(render(run), to: path)
    }
}

/// The registry of output formats (SwiftFormat's `Reporters`). `messages` (messages.csv) is
/// written while records stream and is not registered here.
public enum Reporters {
    public static let all: [any RunReporter.Type] = [EndpointsReporter.self, MarkdownReport.self, JSONReport.self]

    /// The reporter for a `--format` name, nil when there is none.
    public static func named(_ name: String) -> (any RunReporter.Type)? {
        all.first { $0.name == name }
    }

    /// Every registered name, in registry order.
    public static var names: [String] { all.map { $0.name } }

    /// Writes the reports named `names` (all of them when nil) into `directory`, in registry
    /// order; returns the paths written. Unknown names are ignored: check them with `named`.
    @discardableResult
    public static func write(_ run: RunReport, names: [String]? = nil, directory: String) throws -> [String] {
        var written: [String] = []
        for reporter in all where names?.contains(reporter.name) ?? true {
            let path = directory.hasSuffix("/") ? directory + reporter.fileName : directory + "/" + reporter.fileName
            try reporter.write(run, to: path)
            written.append(path)
        }
        return written
    }

    /// A few lines for stdout: the totals, and the `top` endpoints by error.
    public static func terminalSummary(_ run: RunReport, top: Int = 5) -> String {
        TerminalSummary.render(run, top: top)
    }
}

/// `endpoints.csv` through the registry: the file is written by `EndpointsCSV`.
public enum EndpointsReporter: RunReporter {
    public static let name = "endpoints"
    public static let fileName = "endpoints.csv"

    /// The text `EndpointsCSV.write` writes (RFC 4180, CRLF line ends).
    public static func render(_ run: RunReport) -> String {
        EndpointsCSV.render(run.aggregation)
    }

    public static func write(_ run: RunReport, to path: String) throws {
        try EndpointsCSV.write(run.aggregation, to: path)
    }
}

/// Writing a report's text.
public enum ReportFile {
    public enum Error: Swift.Error, CustomStringConvertible {
        case cannotWrite(path: String, reason: String)

        public var description: String {
            switch self {
            case let .cannotWrite(path, reason): return "\(path): cannot write: \(reason)"
            }
        }
    }

    public static func write(_ text: String, to path: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw Error.cannotWrite(path: path, reason: error.localizedDescription)
        }
    }
}
