import Analysis
import Foundation
import Reports

/// A whole run: every input through the pipeline, outputs written to one directory.
public struct AuditRun {
    public var inputs: [String]
    public var outputDirectory: String
    public var options: AnalysisOptions

    public init(inputs: [String], outputDirectory: String, options: AnalysisOptions = AnalysisOptions()) {
        self.inputs = inputs
        self.outputDirectory = outputDirectory
        self.options = options
    }

    /// What a run produced.
    public struct Result: Sendable {
        public var inputs: [InputDiagnostics]
        public var aggregation: Aggregation
        public var messagesPath: String
        public var diagnosticsPath: String
        /// True when some input could not be read at all.
        public var someInputsUnreadable: Bool { inputs.contains { !$0.readable } }
    }

    public enum Error: Swift.Error, CustomStringConvertible {
        case cannotCreateOutput(String, String)

        public var description: String {
            switch self {
            case let .cannotCreateOutput(path, reason): return "\(path): cannot create output: \(reason)"
            }
        }
    }

    /// Runs every input in order; `progress` hears of each input as it starts.
    public func run(progress: (String) -> Void = { _ in }) throws -> Result {
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw Error.cannotCreateOutput(outputDirectory, error.localizedDescription)
        }
        let messagesPath = outputDirectory + "/messages.csv"
        let diagnosticsPath = outputDirectory + "/diagnostics.json"
        let messages = try MessagesCSV(path: messagesPath, estimators: options.estimators.names)
        let analyzer = CaptureAnalyzer(options: options)
        var aggregation = Aggregation(estimatorNames: options.estimators.names)
        var diagnostics: [InputDiagnostics] = []
        for input in inputs {
            progress(input)
            diagnostics.append(analyzer.analyze(path: input) { record in
                messages.write(record)
                aggregation.add(record)
            })
        }
        try messages.close()
        try EndpointsCSV.write(aggregation, to: outputDirectory + "/endpoints.csv")
        try DiagnosticsFile(inputs: diagnostics).write(to: diagnosticsPath)
        return Result(inputs: diagnostics, aggregation: aggregation, messagesPath: messagesPath,
                      diagnosticsPath: diagnosticsPath)
    }
}

/// `diagnostics.json`: every input's diagnostics and their totals.
struct DiagnosticsFile: Encodable {
    var inputs: [InputDiagnostics]

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try encoder.encode(self).write(to: URL(fileURLWithPath: path))
        } catch {
            throw AuditRun.Error.cannotCreateOutput(path, error.localizedDescription)
        }
    }
}

extension InputDiagnostics {
    /// One line for the terminal.
    public var summaryLine: String {
        guard readable else { return "\(source): unreadable: \(error ?? "unknown error")" }
        var line = "\(source): \(packets.read) packets, \(connections.total) connections"
            + " (\(connections.http) http, \(connections.tls) tls, \(connections.other) other),"
            + " \(records.requests) requests, \(records.responses) responses"
            + " (\(records.incomplete) incomplete, \(records.unpaired) unpaired)"
        if gaps.count > 0 { line += ", \(gaps.count) gaps (\(gaps.bytes) B)" }
        let skippedTotal = packets.skipped.values.reduce(0, +)
        if skippedTotal > 0 { line += ", \(skippedTotal) packets skipped" }
        if let error { line += "\n  error: \(error)" }
        for unsupported in unsupportedLinkTypes {
            line += "\n  note: link type \(unsupported.linkType) on interface \(unsupported.interface) is not decoded; its packets were skipped"
        }
        return line
    }
}
