import MeterAuditKit
import TestSupport

extension AnalysisOptions {
    /// Default options with every key log of Samples/, as `scripts/analyze-samples` runs.
    static func withSampleKeys() throws -> AnalysisOptions {
        var options = AnalysisOptions()
        try options.loadKeyLogs(Fixtures.sampleKeyLogs())
        return options
    }

    /// `withSampleKeys` plus every meter log of Samples/, as `scripts/analyze-samples` runs.
    static func withSampleKeysAndMeters() throws -> AnalysisOptions {
        var options = try withSampleKeys()
        options.meterLogs = try Fixtures.sampleMeterLogs().map { MeterLogSource(path: $0) }
        return options
    }
}
