import Analysis
import Foundation

/// Everything a run's reports are made from: a plain value, so that one run renders the same
/// text whoever renders it, and tests can build one by hand.
public struct RunReport: Sendable {
    /// Each input's diagnostics, in the order the inputs were given.
    public var inputs: [InputDiagnostics]
    public var aggregation: Aggregation {
        didSet {
            forgetRanking()
            sampleCharts = nil // drawn in the estimator order the aggregation gives
        }
    }
    /// What the run was told (client profile, gzip level, endpoint rules…), shown as given,
    /// in this order.
    public var settings: [(String, String)]
    /// What report.html's per-record charts drew from the records as they streamed by
    /// (bounded samples and bins); empty when nobody collected them.
    public var charts: ChartSamples {
        didSet { sampleCharts = nil }
    }
    /// report.html's charts of `charts`, when drawn ahead (`SampleCharts`); the page draws
    /// them itself otherwise. Forgotten when the samples or the estimator order change.
    public var sampleCharts: SampleCharts?
    /// The app meters' coverage (`--meter-log`); nil without meters, and no report shows it.
    public var coverage: CoverageFigures? {
        get { coverageFigures }
        set {
            coverageFigures = newValue
            coverageSection = CoverageSection(newValue)
        }
    }
    private var coverageFigures: CoverageFigures?
    /// `coverage` sorted into the tables every report shows, made once.
    private(set) var coverageSection: CoverageSection?

    /// Sets `coverage` without making its section: a run makes that on another core meanwhile
    /// (`CoverageTables(coverage)`) and gives it with `setCoverageTables` before any report.
    public mutating func setCoverageFigures(_ coverage: CoverageFigures?) {
        coverageFigures = coverage
        coverageSection = nil
    }

    public mutating func setCoverageTables(_ tables: CoverageTables) { coverageSection = tables.section }
    /// The layer the ranking estimator's error is taken against to rank endpoints (`--rank-by`).
    public var rankBy: RankLayer {
        didSet { forgetRanking() }
    }
    /// `endpointRanking()`'s answer once `rankEndpoints()` kept it: every report ranks the same
    /// endpoints, and sorting them is most of a small report's time.
    private var ranking: [EndpointPlace]?
    /// `headerCompressionEndpoints()`'s answer, kept with the ranking it follows (three reports ask it).
    var headerCompressionRanking: [HeaderCompressionEndpoint]?
    /// The same for HTTP/3's headers against QPACK.
    var qpackCompressionRanking: [HeaderCompressionEndpoint]?
    /// `costs()`'s answer, kept with the ranking (report.md, report.html, report.json and the
    /// terminal summary ask it).
    var costSection: CostSection?

    private mutating func forgetRanking() {
        ranking = nil
        headerCompressionRanking = nil
        qpackCompressionRanking = nil
        costSection = nil
    }

    /// "What costs the user": the costliest endpoints with their rate and findings.
    func costs() -> CostSection { costSection ?? CostSection(self) }

    public init(
        inputs: [InputDiagnostics], aggregation: Aggregation, settings: [(String, String)] = [],
        charts: ChartSamples? = nil, rankBy: RankLayer = .http
    ) {
        self.inputs = inputs
        self.aggregation = aggregation
        self.settings = settings
        self.charts = charts ?? ChartSamples(estimatorNames: aggregation.estimatorNames)
        self.rankBy = rankBy
    }

    /// The estimator whose error ranks endpoints, as the run's `EstimatorSet` declares it;
    /// nil without estimators.
    public var rankingEstimator: Int? { aggregation.rankingEstimator }

    /// Estimator indices in report order: the ranking estimator first, then the others in
    /// the run's order.
    public var estimatorOrder: [Int] {
        Self.estimatorOrder(count: aggregation.estimatorNames.count, ranking: rankingEstimator)
    }

    /// `estimatorOrder` of `count` estimators ranked by `ranking`'s.
    public static func estimatorOrder(count: Int, ranking: Int?) -> [Int] {
        let all = Array(0..<count)
        guard let first = ranking else { return all }
        return [first] + all.filter { $0 != first }
    }

    /// Every endpoint, largest `Σ |error|` of the ranking estimator over its directions
    /// first (against `rankBy`'s layer), ties by endpoint in byte order (docs/FIGURES.md, Order).
    public func rankedEndpoints() -> [RankedEndpoint] {
        endpointRanking().map { place in
            RankedEndpoint(
                rank: place.rank, endpoint: place.endpoint, directions: figures(of: place),
                absoluteError: place.absoluteError)
        }
    }

    /// The order of `rankedEndpoints()` without the figures, which stay in the aggregation
    /// until `figures(of:)` asks for one endpoint's: a writer going through every endpoint
    /// then holds one endpoint's sorted figures at a time, not all of them.
    public func endpointRanking() -> [EndpointPlace] {
        ranking ?? rankedPlaces()
    }

    /// Ranks the endpoints now, for every report to come (until the figures or `rankBy` change).
    public mutating func rankEndpoints() {
        forgetRanking()
        ranking = rankedPlaces()
        headerCompressionRanking = headerCompressionEndpoints(.hpack)
        qpackCompressionRanking = headerCompressionEndpoints(.qpack)
        costSection = CostSection(self)
    }

    private func rankedPlaces() -> [EndpointPlace] {
        let ranking = rankingEstimator
        let layer = rankBy
        var byEndpoint: [String: EndpointPlace] = [:]
        for (key, figures) in aggregation.groups {
            let error =
                ranking.map { $0 < figures.estimators.count ? abs(layer.error(figures.estimators[$0])) : 0 } ?? 0
            byEndpoint[
                key.endpoint, default: EndpointPlace(rank: 0, endpoint: key.endpoint, directions: [], absoluteError: 0)
            ]
            .add(key.direction, absoluteError: error)
        }
        var places = Array(byEndpoint.values)
        places.sort {
            $0.absoluteError != $1.absoluteError
                ? $0.absoluteError > $1.absoluteError
                : $0.endpoint.utf8Compare($1.endpoint) < 0
        }
        for index in places.indices {
            places[index].rank = index + 1
            places[index].directions.sort()
        }
        return places
    }

    /// One endpoint's directions with their order-free figures, in direction order.
    public func figures(of place: EndpointPlace) -> [(direction: RecordClass, figures: GroupFigures)] {
        place.directions.compactMap { direction in
            aggregation.groups[GroupKey(endpoint: place.endpoint, direction: direction)]
                .map { (direction: direction, figures: $0.orderFree) }
        }
    }

    /// The totals in direction order, with order-free figures.
    var totals: [(direction: RecordClass, figures: GroupFigures)] {
        aggregation.sortedTotals.map { (direction: $0.direction, figures: $0.figures.orderFree) }
    }
}

/// One endpoint's place in the ranking: its directions and `Σ |error|`, without figures.
public struct EndpointPlace: Sendable {
    /// 1-based position in the ranking.
    public var rank: Int
    public var endpoint: String
    /// The directions present, in direction order.
    public var directions: [RecordClass]
    /// `Σ |error|` of the ranking estimator over the directions (bytes).
    public var absoluteError: Int

    mutating func add(_ direction: RecordClass, absoluteError error: Int) {
        directions.append(direction)
        absoluteError += error
    }
}

/// One endpoint with its directions, as the reports rank them.
public struct RankedEndpoint: Sendable {
    /// 1-based position in the ranking.
    public var rank: Int
    public var endpoint: String
    /// Request, response, interim: those present, in that order.
    public var directions: [(direction: RecordClass, figures: GroupFigures)]
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
    public static let all: [any RunReporter.Type] = [
        EndpointsReporter.self, MarkdownReport.self, JSONReport.self, HTMLReport.self,
    ]

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

/// Writing a report's text, through a temporary file renamed into place (`OutputFile`).
public enum ReportFile {
    public typealias Error = OutputFile.Error

    public static func write(_ text: String, to path: String) throws {
        try OutputFile.write(text, to: path)
    }
}
