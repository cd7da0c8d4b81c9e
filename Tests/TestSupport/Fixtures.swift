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

    /// The bytes of a fixture file.
    public static func bytes(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(relative))))
    }
}
