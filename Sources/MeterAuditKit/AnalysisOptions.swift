import Analysis
import Estimation
import TLS

/// How a run measures: its bounds, the client whose meter it audits, the gzip level the
/// estimators' re-compression uses, and how paths group into endpoints.
public struct AnalysisOptions: Sendable {
    public var limits = Limits()
    /// Which request fields the client's network stack adds (the app never sees them).
    public var profile = ClientProfile.urlSession {
        didSet { estimators = .standard(profile: profile) }
    }
    /// zlib level of the `gzippedData` emulation (the GZIP category uses Z_DEFAULT_COMPRESSION, 6).
    public var gzipLevel: Int32 = 6
    /// Groups paths into endpoints (default identifier rules plus the user's).
    public var normalizer = EndpointNormalizer()
    /// What the reports rank endpoints by (`--rank-by`): the error against HTTP or IP bytes.
    public var rankBy = RankLayer.http

    /// TLS secrets from the `--keylog` files (docs/METERING.md §2b); a capture's own
    /// Decryption Secrets Blocks add to them for that capture.
    public var keyLog = KeyLog()
    /// The protocols the router chooses from (`ProtocolRegistry.register` adds one).
    public var protocols = ProtocolRegistry.standard

    /// App meters' logs to join to the records (`--meter-log`, docs/METER-LOG.md).
    public var meterLogs: [MeterLogSource] = []
    /// The meters' clock offset (capture time − meter time) in seconds, when known
    /// (`--meter-clock-offset`); nil: estimated per meter.
    public var meterClockOffset: Double?
    /// How far apart in time an entry and its record may be, in seconds (`--meter-tolerance`).
    public var meterTolerance = 2.0

    public init() {}

    /// Reads NSS key log files into `keyLog`. Returns the lines that could not be used
    /// (`file:line: problem`), the rest being used; throws when a file cannot be read.
    @discardableResult
    public mutating func loadKeyLogs(_ paths: [String]) throws -> [String] {
        var issues: [String] = []
        for path in paths {
            let loaded = try KeyLog.load(path: path)
            issues += loaded.issues.map(\.description)
            keyLog.merge(loaded)
        }
        return issues
    }

    /// The lines of the `--keylog` files that could not be used.
    public var keyLogIssues: [String] { keyLog.issues.map(\.description) }

    /// Every estimator, for this profile: built when the profile is set, once per run, not per message.
    public private(set) var estimators = EstimatorSet.standard(profile: .urlSession)

    /// The settings a report shows, as (name, value).
    public var settings: [(String, String)] {
        var settings = [
            ("client profile", profile.name + ": " + profile.stackAddedFields.sorted().joined(separator: ", ")),
            ("gzip level", String(gzipLevel)),
        ]
        for rule in normalizer.rules { settings.append(("endpoint rule", "\(rule.pattern) → \(rule.template)")) }
        // Shown only when not the default, so a default run's reports stay as they were.
        if rankBy != .http { settings.append(("rank by", rankBy.rawValue)) }
        for source in meterLogs {
            // The file's name, as the inputs are named: the report does not depend on where it lies.
            let file = source.path.split(separator: "/").last.map(String.init) ?? source.path
            settings.append(("meter log", (source.name.map { $0 + "=" } ?? "") + file))
        }
        if !meterLogs.isEmpty {
            settings.append(("meter clock offset", meterClockOffset.map { "\($0) s (given)" } ?? "estimated"))
            settings.append(("meter tolerance", "\(meterTolerance) s"))
        }
        return settings
    }
}
