import Foundation

/// Paths of the repository's test fixtures and samples, found from this file's location.
public enum Fixtures {
    /// The repository root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file under Tests/Fixtures.
    public static func path(_ relative: String) -> String {
        root.appendingPathComponent("Tests/Fixtures").appendingPathComponent(relative).path
    }

    /// A file under Samples/.
    public static func sample(_ name: String) -> String {
        root.appendingPathComponent("Samples").appendingPathComponent(name).path
    }

    /// Every sample input in the order of `scripts/analyze-samples`: `*.pcap`, `*.pcapng`,
    /// `*.pcap.gz`, `*.pcapng.gz`, `*.har`, `*.chlsj`, `*.chlsx`, each sorted by the bytes of the name (LC_ALL=C).
    public static func sampleInputs() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Samples").path)
        return [".pcap", ".pcapng", ".pcap.gz", ".pcapng.gz", ".har", ".chlsj", ".chlsx"].flatMap { suffix in
            names.filter { $0.hasSuffix(suffix) }
                .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
                .map(sample)
        }
    }

    /// Every key log in Samples/ (`*.keys`, the TLS samples' secrets), sorted by name: what
    /// `scripts/analyze-samples` passes with `--keylog`.
    public static func sampleKeyLogs() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Samples").path)
        return names.filter { $0.hasSuffix(".keys") }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map(sample)
    }

    /// Every meter log in Samples/ (`*.meter.jsonl`, the app meters of `meter-app.*`), sorted by
    /// name: what `scripts/analyze-samples` passes with `--meter-log`.
    public static func sampleMeterLogs() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Samples").path)
        return names.filter { $0.hasSuffix(".meter.jsonl") }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map(sample)
    }

    /// The bytes of a fixture file.
    public static func bytes(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(relative))))
    }
}
