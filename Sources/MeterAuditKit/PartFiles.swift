import Analysis
import CostAccounting
import Foundation
import Reports

/// The tool's version, which a part records and `merge` requires of every part: figures made
/// by another version may be counted differently (docs/SCALE.md).
public enum ToolVersion {
    public static let current = "0.1.0"
}

/// What makes an output folder a part that `meteraudit merge` can add to others
/// (docs/SCALE.md): `part.json`, the manifest (version, options, inputs, every file's size),
/// `part.figures`, the run's figures exactly (`StateEncoder`), and `part.points`, every
/// measured record's point for report.html's scatter (`ChartPoint`), streamed.
public enum PartFiles {
    public static let manifest = "part.json"
    public static let figures = "part.figures"
    public static let points = "part.points"
}

/// `part.json`.
public struct PartManifest: Codable, Equatable {
    public static let formatName = "meteraudit-part"
    public static let formatVersion = 1

    public var format = PartManifest.formatName
    public var formatVersion = PartManifest.formatVersion
    public var toolVersion = ToolVersion.current
    public var options: Options
    /// The inputs, as given, in order.
    public var inputs: [String]
    /// Why this folder cannot be merged (made with `--meter-log`); nil when it can.
    public var notMergeable: String?
    /// Every file of the folder the run wrote, with its size in bytes: a merge refuses a part
    /// whose file is missing or of another size.
    public var files: [String: Int]

    /// What the figures depend on: two parts merge only when these are equal.
    public struct Options: Codable, Equatable {
        /// The settings the reports show (client profile and its fields, gzip level, endpoint
        /// rules, rank-by, meter logs), as (name, value) pairs in order.
        public var settings: [[String]]
        public var rankBy: String
        /// The estimators, in the run's order.
        public var estimators: [String]
        /// The files written (`--format`), sorted; diagnostics.json always.
        public var formats: [String]

        enum CodingKeys: String, CodingKey {
            case settings
            case rankBy = "rank_by"
            case estimators, formats
        }
    }

    enum CodingKeys: String, CodingKey {
        case format
        case formatVersion = "format_version"
        case toolVersion = "tool_version"
        case options, inputs
        case notMergeable = "not_mergeable"
        case files
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let file = try OutputFile(path: path)
        file.write(try encoder.encode(self))
        file.write("\n")
        try file.commit()
    }
}

extension PartManifest.Options {
    init(options: AnalysisOptions, formats: [String]) {
        settings = options.settings.map { [$0.0, $0.1] }
        rankBy = options.rankBy.rawValue
        estimators = options.estimators.names
        self.formats = formats.sorted()
    }

    /// The first option that differs, named as a user would: "gzip level 9, not 6".
    func difference(from other: PartManifest.Options) -> String {
        if settings != other.settings {
            let mine = settings.map { $0.joined(separator: ": ") }
            let theirs = other.settings.map { $0.joined(separator: ": ") }
            let only = mine.filter { !theirs.contains($0) }
            let missing = theirs.filter { !mine.contains($0) }
            var parts: [String] = []
            if !only.isEmpty { parts.append("made with " + only.joined(separator: "; ")) }
            if !missing.isEmpty { parts.append("the first part with " + missing.joined(separator: "; ")) }
            return parts.isEmpty ? "settings in another order" : parts.joined(separator: ", ")
        }
        if rankBy != other.rankBy { return "made with --rank-by \(rankBy), the first part with \(other.rankBy)" }
        if estimators != other.estimators {
            return "estimators \(estimators.joined(separator: ", ")), the first part's \(other.estimators.joined(separator: ", "))"
        }
        return "written formats \(formats.joined(separator: ", ")), the first part's \(other.formats.joined(separator: ", "))"
    }
}

/// Writes `part.points` as records come (only when report.html's samples are collected).
final class PartPointsWriter {
    private let file: OutputFile
    private var encoder = StateEncoder()
    let path: String

    init(path: String) throws {
        self.path = path
        file = try OutputFile(path: path)
    }

    func write(_ point: ChartPoint) {
        point.encode(to: &encoder)
        if encoder.bytes.count >= 1 << 16 { file.write(encoder.take()) }
    }

    func commit() throws {
        file.write(encoder.take())
        try file.commit()
    }
}

/// `part.figures`: the aggregation, report.html's samples without their points, and every
/// input's diagnostics.
struct PartFigures {
    static let magic = Array("meteraudit figures 1\n".utf8)

    var aggregation: Aggregation
    var charts: ChartSamples
    var inputs: [InputDiagnostics]

    /// Writes the file into `file` as it is encoded, 64 KiB at a time: built whole, the bytes
    /// and their copy behind the magic were the run's peak of memory on a large HAR of many
    /// endpoints (20 MB of figures on the 500 MB bench HAR, 52 MB at once; docs/BENCHMARK.md).
    func write(to file: OutputFile) throws {
        file.write(Self.magic)
        var encoder = StateEncoder(flushingTo: { file.write($0) })
        aggregation.encode(to: &encoder)
        charts.encodeSummary(to: &encoder)
        encoder.int(inputs.count)
        let json = JSONEncoder()
        json.outputFormatting = [.sortedKeys]
        for input in inputs {
            encoder.string(String(decoding: try json.encode(input), as: UTF8.self))
            // What its JSON leaves out: the cost layers and the counters by kind.
            encoder.bool(input.layers != nil)
            if let layers = input.layers {
                layers.up.encode(to: &encoder)
                layers.down.encode(to: &encoder)
            }
            let counters = input.counters.values.sorted { $0.kind.name < $1.kind.name }
            encoder.int(counters.count)
            for totals in counters { totals.encode(to: &encoder) }
        }
        // Only with HTTP/3 records: a part without is as before.
        if aggregation.hasQPACKFigures {
            encoder.uint64(Self.qpackMark)
            aggregation.encodeQPACKFigures(to: &encoder)
        }
        encoder.uint64(Self.end)
        encoder.flush()
    }

    /// The end's mark: a file cut short lacks it.
    static let end: UInt64 = 0x6D65_7465_7261_7564 // "meteraud"
    /// The mark of the HTTP/3 headers figures' section, before the end's.
    static let qpackMark: UInt64 = 0x7170_6163_6B66_6967 // "qpackfig"

    init(aggregation: Aggregation, charts: ChartSamples, inputs: [InputDiagnostics]) {
        self.aggregation = aggregation
        self.charts = charts
        self.inputs = inputs
    }

    init(bytes: [UInt8]) throws {
        guard bytes.starts(with: Self.magic) else {
            throw StateDecoder.Malformed(reason: "does not start as a figures file")
        }
        var decoder = StateDecoder(bytes: Array(bytes[Self.magic.count...]))
        aggregation = try Aggregation(state: &decoder)
        charts = try ChartSamples(summary: &decoder)
        inputs = []
        let json = JSONDecoder()
        for _ in 0..<(try decoder.count(minimumBytes: 8)) {
            var input = try json.decode(InputDiagnostics.self, from: Data(try decoder.string().utf8))
            if try decoder.bool() {
                var layers = InputDiagnostics.LayerCounts()
                layers.up = try DirectionCost(state: &decoder)
                layers.down = try DirectionCost(state: &decoder)
                input.layers = layers
            }
            for _ in 0..<(try decoder.count(minimumBytes: 8)) {
                let totals = try InputDiagnostics.CounterTotals(state: &decoder)
                input.counters[totals.kind] = totals
            }
            inputs.append(input)
        }
        var mark = try decoder.uint64()
        if mark == Self.qpackMark {
            try aggregation.decodeQPACKFigures(&decoder)
            mark = try decoder.uint64()
        }
        guard mark == Self.end, decoder.atEnd else {
            throw StateDecoder.Malformed(reason: "does not end as a figures file")
        }
    }
}

extension AuditRun {
    /// Writes `part.figures` and `part.json` last, when every other file is in place (their
    /// sizes go into the manifest).
    func writePart(
        report: RunReport, charts: ChartSamples, points: PartPointsWriter?, meters: Bool, written: [String]
    ) throws -> [String] {
        let formats = formats ?? AuditRun.formatNames
        var manifest = PartManifest(
            options: PartManifest.Options(options: options, formats: formats), inputs: inputs, files: [:])
        var files = written
        if meters {
            manifest.notMergeable =
                "made with --meter-log: a meter log is joined to the records of the whole run (its clock offset is estimated over all of them), so runs with meter logs cannot be merged; analyze those inputs in one run"
        } else {
            let figuresPath = outputDirectory + "/" + PartFiles.figures
            let file = try OutputFile(path: figuresPath)
            try PartFigures(aggregation: report.aggregation, charts: charts, inputs: report.inputs).write(to: file)
            try file.commit()
            files.append(figuresPath)
            if let points {
                try points.commit()
                files.append(points.path)
            }
        }
        for path in files {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            manifest.files[(path as NSString).lastPathComponent] = Int(status.st_size)
        }
        let manifestPath = outputDirectory + "/" + PartFiles.manifest
        try manifest.write(to: manifestPath)
        return [PartFiles.figures, PartFiles.points, PartFiles.manifest].map { outputDirectory + "/" + $0 }
            .filter { files.contains($0) || $0 == manifestPath }
    }
}
