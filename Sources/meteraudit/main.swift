import Analysis
import ArgumentParser
import Estimation
import Foundation
import MeterAuditKit
import Reports

/// The command line: parses and validates arguments, then calls MeterAuditKit.
struct MeterAudit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meteraudit",
        abstract:
            "Measure the exact wire size of every HTTP message in a capture or HAR file, and how wrong in-app meters are.",
        discussion: ExitStatus.help,
        version: ToolVersion.current,
        subcommands: [Analyze.self, Merge.self])
}

/// Exit codes, documented in README.md and `--help`.
enum ExitStatus {
    static let someInputsUnreadable: Int32 = 1
    static let outputFailed: Int32 = 2
    static let usage: Int32 = 64 // ArgumentParser's validation failures, EX_USAGE
    static let partRefused: Int32 = 3
    static let help = """
        Exit codes: 0 every input was read (an input cut short, or changed while it was read, \
        still counts as read; its error is reported and the records before the cut are kept); \
        1 some input could not be read at all (the others are still analyzed); 2 an output file \
        could not be written (it is named, and no partial file is left; wins over 1); 3 (merge) a part \
        was refused (it is named; nothing is written); 64 usage error.
        """
}

struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Reconstruct every HTTP message of the inputs, estimate what app meters see, report the error per endpoint.",
        discussion: ExitStatus.help)

    @Argument(help: "Captures (pcap or pcapng, optionally gzip-compressed) and HAR files, told apart by content.")
    var inputs: [String]

    @Option(name: .long, help: "Directory for the output files (created when missing).")
    var out: String

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Files to write (repeat or comma-separate): \(AuditRun.formatNames.joined(separator: ", ")). Default: all. diagnostics.json is always written.",
            valueName: "NAME"))
    var format: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "NSS key log (SSLKEYLOGFILE) whose secrets decrypt TLS connections; repeatable. Keys in a pcapng's Decryption Secrets Blocks are used without it.",
            valueName: "FILE"))
    var keylog: [String] = []

    @Option(
        name: .long,
        help:
            "Client profile naming the request fields the network stack adds (\(ClientProfile.known.map(\.name).joined(separator: ", ")))."
    )
    var profile = ClientProfile.urlSession.name

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Stack-added request fields, comma-separated; replaces the profile's list.", valueName: "NAME,..."))
    var stackHeaders: String?

    @Option(name: .long, help: "zlib level (1-9) of the gzippedData re-compression the estimators emulate.")
    var gzipLevel: Int32 = 6

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Endpoint rewrite rule, applied to paths before the default {id} rules (repeatable).",
            valueName: "REGEX=TEMPLATE"))
    var endpointRule: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("File of endpoint rules, one REGEX=TEMPLATE per line (# comments).", valueName: "FILE"))
    var endpointRules: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Rank endpoints by the estimator's error against the HTTP bytes or the IP bytes (ip_share: connection overhead shared out).",
            valueName: "http|ip"))
    var rankBy = RankLayer.http.rawValue

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "An app meter's log (JSON Lines or CSV, docs/METER-LOG.md) to join to the records and audit as one more estimator; repeatable. NAME= names the file's meter (else its entries' `meter` field, else the file's stem).",
            valueName: "[NAME=]FILE"))
    var meterLog: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The meters' clock offset, capture time minus meter time (default: estimated per meter).",
            valueName: "SECONDS"))
    var meterClockOffset: Double?

    @Option(
        name: .long,
        help: ArgumentHelp("How far apart in time a meter entry and its record may be.", valueName: "SECONDS"))
    var meterTolerance: Double = 2

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    @Flag(name: .long, help: "Print report.json's content to stdout instead of the text summary.")
    var json = false

    /// For scripts/bench: the CPU time of the decoding and re-compression the documented
    /// estimator cannot avoid, and the floor it puts under the run's wall time.
    @Flag(name: .long, help: .hidden)
    var workTimings = false

    var formats: [String]? {
        let names = format.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        return names.isEmpty ? nil : names
    }

    func validate() throws {
        guard (1...9).contains(gzipLevel) else {
            throw ValidationError("--gzip-level must be 1 to 9, not \(gzipLevel)")
        }
        guard ClientProfile.named(profile) != nil else {
            throw ValidationError(
                "unknown --profile '\(profile)'; known: \(ClientProfile.known.map(\.name).joined(separator: ", "))")
        }
        for name in formats ?? [] where !AuditRun.formatNames.contains(name) {
            throw ValidationError("unknown --format '\(name)'; known: \(AuditRun.formatNames.joined(separator: ", "))")
        }
        guard RankLayer(rawValue: rankBy) != nil else {
            throw ValidationError("unknown --rank-by '\(rankBy)'; known: http, ip")
        }
        _ = try rules()
        guard meterTolerance.isFinite, meterTolerance > 0, meterTolerance <= 86_400 else {
            throw ValidationError("--meter-tolerance must be more than 0 and at most 86400 seconds")
        }
        if let offset = meterClockOffset, !offset.isFinite || abs(offset) > 9e9 {
            throw ValidationError("--meter-clock-offset must be a number of seconds")
        }
        if (meterClockOffset != nil || meterTolerance != 2) && meterLog.isEmpty {
            throw ValidationError("--meter-clock-offset and --meter-tolerance need --meter-log")
        }
        for source in meterSources where source.path.isEmpty || source.name?.isEmpty == true {
            throw ValidationError("--meter-log needs FILE or NAME=FILE")
        }
    }

    /// The `--meter-log` arguments.
    var meterSources: [MeterLogSource] { meterLog.map(MeterLogSource.init(parsing:)) }

    /// The user's endpoint rules: the file's first, then each --endpoint-rule.
    func rules() throws -> [EndpointNormalizer.Rule] {
        do {
            let fromFile = try endpointRules.map(EndpointNormalizer.rules(fromFile:)) ?? []
            return try fromFile + endpointRule.map(EndpointNormalizer.Rule.init(parsing:))
        } catch {
            throw ValidationError(String(describing: error))
        }
    }

    /// The client profile: the named one, or the user's own field list.
    var clientProfile: ClientProfile {
        if let stackHeaders {
            let names = stackHeaders.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            }
            return ClientProfile(name: "custom", stackAddedFields: names)
        }
        return ClientProfile.named(profile) ?? .urlSession
    }

    func run() throws {
        var options = AnalysisOptions()
        options.profile = clientProfile
        options.gzipLevel = gzipLevel
        options.rankBy = RankLayer(rawValue: rankBy) ?? .http
        options.normalizer = EndpointNormalizer(rules: try rules())
        options.meterLogs = meterSources
        options.meterClockOffset = meterClockOffset
        options.meterTolerance = meterTolerance
        do {
            // A malformed line is reported and the other lines are used.
            for issue in try options.loadKeyLogs(keylog) { printError("meteraudit: key log: \(issue)") }
        } catch {
            printError("meteraudit: --keylog \(error)")
            throw ExitCode.validationFailure
        }
        let run = AuditRun(inputs: inputs, outputDirectory: out, options: options, formats: formats)

        let bar = ProgressBar(enabled: !quiet && !json && isatty(STDERR_FILENO) == 1, inputs: inputs.count)
        let result: AuditRun.Result
        do {
            result = try run.run(progress: bar.progress)
        } catch let AuditRun.Error.meterLog(reason) {
            bar.clear()
            printError("meteraudit: \(reason)")
            throw ExitCode.validationFailure
        } catch {
            bar.clear()
            printError("meteraudit: \(error)")
            throw ExitCode(ExitStatus.outputFailed)
        }
        bar.clear()
        // A meter log's line that could not be used is reported; the rest of the log is used.
        for issue in result.meterLogDiagnostics { printError("meteraudit: meter log: \(issue)") }
        for input in result.report.inputs where !quiet || input.error != nil {
            printError(input.summaryLine)
        }
        for failure in result.outputErrors { printError("meteraudit: \(failure)") }
        if workTimings {
            printError(Self.workTimingsLine(result.bodyWork))
            printError(Self.reportTimingsLine(result))
        }
        if json {
            print(JSONReport.render(result.report), terminator: "")
        } else if !quiet {
            print(Reporters.terminalSummary(result.report), terminator: "")
            print("written: " + result.files.joined(separator: ", "))
        }
        let status =
            !result.outputErrors.isEmpty
            ? ExitStatus.outputFailed : result.someInputsUnreadable ? ExitStatus.someInputsUnreadable : 0
        // The process ends here, with the run's result still held: its memory goes back to the
        // system at once, where freeing its figures one by one took ~2 ms on one core. exit()
        // flushes stdout as a return would.
        endProcess(status)
    }

    /// `work-floor: …`, one line scripts/bench reads: decoding each distinct wire body and
    /// deflating each distinct decoded body, spread over the worker threads.
    static func workTimingsLine(_ work: BodyWorkStatistics) -> String {
        let cpu = work.decodeSeconds + work.deflateSeconds
        return
            "work-floor: decode \(work.measured) distinct bodies \(String(format: "%.3f", work.decodeSeconds)) s CPU,"
            + " deflate \(work.deflated) distinct contents \(String(format: "%.3f", work.deflateSeconds)) s CPU"
            + " (\(work.deflateReused) re-compressions and \(work.reused) bodies answered from memory);"
            + " floor \(String(format: "%.3f", cpu / Double(max(work.threads, 1)))) s on \(work.threads) threads"
    }
}

extension Analyze {
    /// `report-times: …`, the second line of `--work-timings` (scripts/bench reads it): the
    /// wall-clock seconds of reading the inputs, of writing the end-of-run files, and of each file.
    static func reportTimingsLine(_ result: AuditRun.Result) -> String {
        func seconds(_ value: Double) -> String { String(format: "%.3f", value) }
        let files = result.reportFileSeconds.map {
            "\(($0.file as NSString).lastPathComponent) \(seconds($0.seconds)) s"
        }
        return "report-times: read \(seconds(result.readSeconds)) s, reports \(seconds(result.reportSeconds)) s ("
            + files.joined(separator: ", ") + ")"
    }
}

struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Merge the output folders of earlier runs (parts) into what one analyze over all their inputs, in this order, would write.",
        discussion: "Each PART is the output folder of `meteraudit analyze` or `merge`, made by this version with the same options. docs/SCALE.md. "
            + ExitStatus.help)

    @Argument(help: "Output folders of earlier `analyze` or `merge` runs, in input order.")
    var parts: [String]

    @Option(name: .long, help: "Directory for the merged output files (created when missing).")
    var out: String

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        let result: PartMerge.Result
        do {
            result = try PartMerge(parts: parts, outputDirectory: out).run()
        } catch let error as PartMerge.Error {
            printError("meteraudit: merge: \(error)")
            if case .refused = error { endProcess(ExitStatus.partRefused) }
            endProcess(ExitStatus.outputFailed)
        }
        if !quiet {
            print(
                "merged \(parts.count) parts, \(result.report.inputs.count) inputs; written: "
                    + result.files.joined(separator: ", "))
        }
        endProcess(0)
    }
}

/// The C library's exit (ParsableCommand's own `exit(withError:)` shadows it inside commands).
func endProcess(_ status: Int32) -> Never { exit(status) }

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// One line on stderr, redrawn in place: which input, and how far into it. Only on a terminal.
final class ProgressBar {
    private let enabled: Bool
    private let inputs: Int
    private var current = ""

    init(enabled: Bool, inputs: Int) {
        self.enabled = enabled
        self.inputs = inputs
    }

    var progress: AuditRun.Progress {
        var progress = AuditRun.Progress()
        guard enabled else { return progress }
        progress.input = { [self] index, path in
            current = "[\(index + 1)/\(inputs)] \((path as NSString).lastPathComponent)"
            draw(fraction: nil)
        }
        progress.bytes = { [self] read, size in draw(fraction: size > 0 ? Double(read) / Double(size) : nil) }
        return progress
    }

    private func draw(fraction: Double?) {
        var line = current
        if let fraction {
            let width = 30
            let filled = Int((min(max(fraction, 0), 1) * Double(width)).rounded())
            line +=
                " [" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                + String(format: "%3.0f%%", fraction * 100)
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    }

    func clear() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

// A file size limit (ulimit -f) must fail the write, which is reported, not kill the process.
signal(SIGXFSZ, SIG_IGN)
MeterAudit.main()
