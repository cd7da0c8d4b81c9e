import Analysis
import Foundation
import Records
import Reports

/// A whole run: every input through the pipeline, outputs written to one directory.
public struct AuditRun {
    public var inputs: [String]
    public var outputDirectory: String
    public var options: AnalysisOptions
    /// Output formats to write (`messages` and the names in `Reporters`); nil writes all.
    /// `diagnostics.json` is always written.
    public var formats: [String]?

    public init(inputs: [String], outputDirectory: String, options: AnalysisOptions = AnalysisOptions(),
                formats: [String]? = nil) {
        self.inputs = inputs
        self.outputDirectory = outputDirectory
        self.options = options
        self.formats = formats
    }

    /// Every format name `--format` accepts.
    public static var formatNames: [String] { [MessagesCSV.formatName] + Reporters.names }

    /// What a run produced.
    public struct Result: Sendable {
        public var report: RunReport
        /// Every file written, diagnostics.json last.
        public var files: [String]
        /// True when some input could not be read at all.
        public var someInputsUnreadable: Bool { report.inputs.contains { !$0.readable } }
    }

    public enum Error: Swift.Error, CustomStringConvertible {
        case cannotCreateOutput(String, String)

        public var description: String {
            switch self {
            case let .cannotCreateOutput(path, reason): return "\(path): cannot create output: \(reason)"
            }
        }
    }

    /// Observes a run while it reads.
    public struct Progress {
        /// An input starts: its index (from 0) and path.
        public var input: (Int, String) -> Void = { _, _ in }
        /// Bytes read of the current input, and its size.
        public var bytes: ((Int, Int) -> Void)?

        public init() {}
    }

    /// Runs every input in order, then writes the reports.
    public func run(progress: Progress = Progress()) throws -> Result {
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw Error.cannotCreateOutput(outputDirectory, error.localizedDescription)
        }
        var files: [String] = []
        let writesMessages = formats?.contains(MessagesCSV.formatName) ?? true
        let messagesPath = outputDirectory + "/" + MessagesCSV.fileName
        let messages = writesMessages ? try MessagesCSV(path: messagesPath, estimators: options.estimators.names) : nil
        let analyzer = InputAnalyzer(options: options)
        var aggregation = Aggregation(estimators: options.estimators)
        var diagnostics: [InputDiagnostics] = []
        for (index, input) in inputs.enumerated() {
            progress.input(index, input)
            diagnostics.append(analyzer.analyze(path: input, progress: progress.bytes) { record in
                messages?.write(record)
                aggregation.add(record)
            })
        }
        if let messages {
            try messages.close()
            files.append(messagesPath)
        }
        let report = RunReport(inputs: diagnostics, aggregation: aggregation, settings: options.settings)
        files += try Reporters.write(report, names: formats, directory: outputDirectory)
        let diagnosticsPath = outputDirectory + "/diagnostics.json"
        try DiagnosticsFile(inputs: diagnostics).write(to: diagnosticsPath)
        files.append(diagnosticsPath)
        return Result(report: report, files: files)
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
        if let har { return harSummaryLine(har) }
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

    private func harSummaryLine(_ har: HARCounts) -> String {
        let creator = [har.creator, har.creatorVersion].compactMap { $0 }.joined(separator: " ")
        var line = "\(source): HAR\(har.version.map { " " + $0 } ?? "")\(creator.isEmpty ? "" : " by \(creator)"), \(har.entries) entries,"
            + " \(records.requests) requests, \(records.responses) responses"
            + " (\(har.wireSources[.unknown] ?? 0) of unknown wire size)"
        if har.webSocketMessages > 0 { line += ", \(har.webSocketMessages) WebSocket messages (not sized)" }
        if let error { line += "\n  error: \(error)" }
        for broken in har.brokenEntries {
            line += "\n  entry \(broken.index) skipped: \(broken.reason)"
        }
        return line
    }
}
