import Analysis
import Estimation

/// How a run measures: its bounds, its estimators, and the gzip level the estimators'
/// re-compression uses.
public struct AnalysisOptions: Sendable {
    public var limits = Limits()
    public var estimators = EstimatorSet.standard()
    /// zlib level of the `gzippedData` emulation (the GZIP category uses Z_DEFAULT_COMPRESSION, 6).
    public var gzipLevel: Int32 = 6
    /// Groups paths into endpoints (default identifier rules plus the user's).
    public var normalizer = EndpointNormalizer()

    public init() {}
}
