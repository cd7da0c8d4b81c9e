import ArgumentParser
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

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        let run = AuditRun(inputs: inputs, outputDirectory: out)
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
