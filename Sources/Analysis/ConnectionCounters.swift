import CaptureIO

/// A protocol's own counts on a connection's row, besides its cost layers: per direction, the
/// units of the protocol that no message owns, by type, with their bytes; and counts of the
/// connection (HTTP/2: the preface and control frames, its streams and reading errors). A
/// protocol registers a kind once, where its registration lives; its reader fills the row's
/// `counters`; connections.csv and diagnostics.json write every kind in `all` without knowing
/// the protocol, the way `OverheadKind` serves the overhead columns.
public struct ConnectionCounterKind: Hashable, Sendable {
    /// Where the registry keeps the kind: the order of registration, not of the outputs.
    let index: Int

    /// Registers a kind, or returns the one registered under `name` (idempotent). `name`
    /// prefixes its outputs (connections.csv's `client_{name}_overhead_bytes`,
    /// `client_{name}_{unit}`, then `{name}_{count}` for each of `counts`; diagnostics.json's
    /// object `{name}`); `order` places its columns among the kinds' (ties go by name). Call it
    /// from a `static let`, so that a kind is registered once, before the first run reads `all`.
    public static func register(_ name: String, unit: String, counts: [String], order: Int) -> ConnectionCounterKind {
        ConnectionCounterKind(index: counterRegistry.register(Entry(name: name, unit: unit, counts: counts, order: order)))
    }

    /// Every kind registered, in the outputs' order.
    public static var all: [ConnectionCounterKind] { counterRegistry.orderedIndices().map(ConnectionCounterKind.init) }

    /// What the outputs call it.
    public var name: String { counterRegistry.entry(at: index).name }
    /// What it counts by type, per direction ("frames").
    public var unit: String { counterRegistry.entry(at: index).unit }
    /// The names of the connection's counts, in `ConnectionCounters.counts`' order.
    public var counts: [String] { counterRegistry.entry(at: index).counts }

    struct Entry {
        var name: String
        var unit: String
        var counts: [String]
        var order: Int
    }
}

/// Units of one type and their bytes (headers included).
public struct FrameTypeCount: Sendable, Equatable, Codable {
    public var frames: Int
    public var bytes: Int

    public init(frames: Int, bytes: Int) {
        self.frames = frames
        self.bytes = bytes
    }

    mutating func add(_ other: FrameTypeCount) {
        frames = saturatingSum(frames, other.frames)
        bytes = saturatingSum(bytes, other.bytes)
    }
}

/// One connection's counts of a registered kind.
public struct ConnectionCounters: Sendable, Equatable {
    /// Per direction, the units no message owns, by type name.
    public var client: [String: FrameTypeCount]
    public var server: [String: FrameTypeCount]
    /// The connection's counts, in the order of its kind's `counts`.
    public var counts: [Int]

    public init(client: [String: FrameTypeCount], server: [String: FrameTypeCount], counts: [Int]) {
        self.client = client
        self.server = server
        self.counts = counts
    }

    public var clientBytes: Int { client.values.reduce(0) { $0 + $1.bytes } }
    public var serverBytes: Int { server.values.reduce(0) { $0 + $1.bytes } }
}

private let counterRegistry = NamedRegistry<ConnectionCounterKind.Entry>(name: \.name, order: \.order)
