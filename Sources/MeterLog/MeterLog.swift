import CaptureIO

/// What one meter-log file holds once read: its entries (every meter of the file), the string
/// tables they index, and what was wrong with it. Memory: 64 bytes per entry (`MeterEntry`'s
/// stride), plus, once per distinct URL, method, meter name or id, the text and about 60 bytes
/// of table (the URL table keeps path and query: about 100 bytes a URL).
public struct MeterLog: Sendable {
    public enum Format: String, Sendable { case jsonLines = "jsonl", csv }

    public let path: String
    /// Nil when the file was empty.
    public internal(set) var format: Format?
    public internal(set) var entries: [MeterEntry] = []
    /// The first `MeterLogLimits.maxDiagnostics`, in file order.
    public internal(set) var diagnostics: [MeterLogDiagnostic] = []
    /// Every diagnostic counted by its `key`, those not kept too.
    public internal(set) var diagnosticCounts: [String: Int] = [:]
    public internal(set) var linesRead = 0
    /// The most bytes one line held in memory while reading (at most `maxLineBytes`).
    public internal(set) var peakLineBytes = 0

    var methods = StringTable()
    var meters = StringTable()
    var ids = StringTable()
    var urls = URLTable()

    init(path: String) {
        self.path = path
        meters.intern("") // index 0: the file's own meter, for entries without `meter`
    }

    public func method(of entry: MeterEntry) -> String { methods.strings[Int(entry.methodIndex)] }
    public func url(of entry: MeterEntry) -> NormalizedURL { urls.urls[Int(entry.urlIndex)] }
    /// The `meter` field; "" when the entry had none (the file's meter, named by the caller).
    public func meter(of entry: MeterEntry) -> String { meters.strings[Int(entry.meterIndex)] }
    public func id(of entry: MeterEntry) -> String? { entry.hasID ? ids.strings[Int(entry.idIndex)] : nil }

    /// The distinct URLs and methods, each once (a caller numbering them once, not per entry),
    /// and an entry's place among them.
    public var urlCount: Int { urls.urls.count }
    public func url(at index: Int) -> NormalizedURL { urls.urls[index] }
    public func urlIndex(of entry: MeterEntry) -> Int { Int(entry.urlIndex) }
    public var methodCount: Int { methods.strings.count }
    public func method(at index: Int) -> String { methods.strings[index] }
    public func methodIndex(of entry: MeterEntry) -> Int { Int(entry.methodIndex) }

    /// The meter names entries carry, in order of first appearance ("" first when any entry had
    /// no `meter`).
    public var meterNames: [String] {
        var used = [Bool](repeating: false, count: meters.strings.count)
        for entry in entries { used[Int(entry.meterIndex)] = true }
        return meters.strings.indices.filter { used[$0] }.map { meters.strings[$0] }
    }

    /// One meter's entries as the join takes them; `JoinEntry.index` is the position in `entries`.
    public func joinEntries(meter: String) -> [JoinEntry] {
        guard let meterIndex = meters.index[meter] else { return [] }
        var out: [JoinEntry] = []
        for (index, entry) in entries.enumerated() where entry.meterIndex == meterIndex {
            out.append(
                JoinEntry(
                    direction: entry.direction, method: method(of: entry), url: url(of: entry), status: entry.status,
                    time: entry.time, pairing: entry.hasID ? Int(entry.idIndex) : nil, index: index))
        }
        return out
    }

    mutating func report(_ diagnostic: MeterLogDiagnostic, limit: Int) {
        diagnosticCounts[diagnostic.key, default: 0] += 1
        if diagnostics.count < limit { diagnostics.append(diagnostic) }
    }
}

struct StringTable: Sendable {
    var strings: [String] = []
    var index: [String: Int] = [:]

    @discardableResult
    mutating func intern(_ text: String) -> Int {
        if let found = index[text] { return found }
        strings.append(text)
        index[text] = strings.count - 1
        return strings.count - 1
    }
}

/// The URLs, one per distinct text the log writes (the reader finds a text's place by the text:
/// two spellings of one URL are two places, equal URLs).
struct URLTable: Sendable {
    var urls: [NormalizedURL] = []

    mutating func intern(_ url: NormalizedURL) -> Int {
        urls.append(url)
        return urls.count - 1
    }
}
