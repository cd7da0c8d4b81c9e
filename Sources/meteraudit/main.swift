import ArgumentParser
import Estimation
import Foundation
import MeterAuditKit

/// The command line: parses and validates arguments, then calls MeterAuditKit.
struct MeterAudit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meteraudit",
        abstract: "Measure the exact wire size of every HTTP message in a capture.",
        discussion: """
        Exit codes: 0 every input was read (a capture cut short still counts as read; its \
        error is reported); 1 some input could not be read at all; 64 usage error.
        """,
        subcommands: [Analyze.self])
}

struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reconstruct every HTTP/1.x message of pcap/pcapng captures and write messages.csv and diagnostics.json.")

    @Argument(help: "Capture files: pcap or pcapng, optionally gzip-compressed.")
    var inputs: [String]

    @Option(name: .long, help: "Directory for the output files (created when missing).")
    var out: String

    @Option(name: .long, help: "Client profile naming the request fields the network stack adds (\(ClientProfile.known.map(\.name).joined(separator: ", "))).")
    var profile = ClientProfile.urlSession.name

    @Option(name: .long, help: ArgumentHelp("Stack-added request fields, comma-separated; replaces the profile's list.", valueName: "NAME,..."))
    var stackHeaders: String?

    @Option(name: .long, help: "zlib level (1-9) of the gzippedData re-compression the estimators emulate.")
    var gzipLevel: Int32 = 6

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard (1...9).contains(gzipLevel) else { throw ValidationError("--gzip-level must be 1 to 9, not \(gzipLevel)") }
        guard ClientProfile.named(profile) != nil else {
            throw ValidationError("unknown --profile '\(profile)'; known: \(ClientProfile.known.map(\.name).joined(separator: ", "))")
        }
    }

    /// The client profile: the named one, or the user's own field list.
    var clientProfile: ClientProfile {
        if let stackHeaders {
            let names = stackHeaders.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return ClientProfile(name: "custom", stackAddedFields: names)
        }
        return ClientProfile.named(profile) ?? .urlSession
    }

    func run() throws {
        var options = AnalysisOptions()
        options.estimators = .standard(profile: clientProfile)
        options.gzipLevel = gzipLevel
        let run = AuditRun(inputs: inputs, outputDirectory: out, options: options)
        let result: AuditRun.Result
        do {
            result = try run.run()
        } catch {
            FileHandle.standardError.write(Data("meteraudit: \(error)\n".utf8))
            throw ExitCode(1)
        }
        for input in result.inputs where !quiet || input.error != nil {
            FileHandle.standardError.write(Data((input.summaryLine + "\n").utf8))
        }
        if !quiet {
            print("messages: \(result.messagesPath)")
            print("diagnostics: \(result.diagnosticsPath)")
        }
        if result.someInputsUnreadable { throw ExitCode(1) }
    }
}

MeterAudit.main()
