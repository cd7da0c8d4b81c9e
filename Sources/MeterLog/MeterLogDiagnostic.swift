/// Why a meter log could not be read at all. Everything else is a `MeterLogDiagnostic`.
public enum MeterLogError: Error, Equatable, CustomStringConvertible {
    /// The file could not be opened (missing, unreadable).
    case cannotOpen(path: String, reason: String)
    /// Reading failed part-way (I/O error, a directory); what was read before is lost with it.
    case readFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "\(path): cannot open: \(reason)"
        case let .readFailed(path, reason): return "\(path): read failed: \(reason)"
        }
    }
}

/// Something wrong in a meter log, with the file and the line (1-based; 0 for the file as a
/// whole). The line is skipped unless the kind says otherwise; reading goes on with the next,
/// except after `.emptyFile` and `.missingHeader`, which end the file.
public struct MeterLogDiagnostic: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// No line with anything but blanks.
        case emptyFile
        /// The file is CSV (its first line is not a JSON object) but that line is no header:
        /// it names no known column, or not `time`, `url`, `method` and a byte count.
        case missingHeader(reason: String)
        /// A JSON Lines line that is not JSON, or not one object; column 1-based.
        case invalidJSON(column: Int, reason: String)
        /// A CSV row that cannot be split (an unterminated quote, more fields than the header).
        case invalidCSV(reason: String)
        /// A required field is absent or empty: `time`, `url`, `method`, `bytes`, or `kind`
        /// (when neither `request_bytes` nor `response_bytes` is given).
        case missingField(String)
        /// A field holds what it cannot: a number that is not a non-negative integer, an unknown
        /// `kind`, a URL that is not absolute, a time that is neither ISO 8601 with an offset nor
        /// epoch seconds, a status outside 100...999.
        case invalidField(String, reason: String)
        /// `time` parses but lies before 1970 or after 2262-04-11 (Int64 nanoseconds): often
        /// milliseconds written where seconds were meant.
        case timeOutOfRange(String)
        /// `line + headers + body != bytes`. The entry is kept with its logged values and
        /// `MeterEntry.Flags.componentsDoNotSum`.
        case componentsDoNotSum(bytes: Int64, line: Int64, headers: Int64, body: Int64)
        /// A second request (or response) of one meter with an id already used by another at
        /// `firstLine`. The entry is kept without its id, so it pairs with nothing by id.
        case duplicateID(String, firstLine: Int)
        /// A line longer than `MeterLogLimits.maxLineBytes`: skipped without being held.
        case lineTooLong(bytes: Int)
        /// More distinct methods or meter names than an entry can index (65,535).
        case tooManyNames(String)
    }

    public let path: String
    public let line: Int
    public let kind: Kind

    public init(path: String, line: Int, kind: Kind) {
        self.path = path
        self.line = line
        self.kind = kind
    }

    /// Whether the entry of this line is kept (the diagnostic only flags it).
    public var entryKept: Bool {
        switch kind {
        case .componentsDoNotSum, .duplicateID: return true
        default: return false
        }
    }

    /// A stable name per kind, for counting (`diagnostics.json`-style keys).
    public var key: String {
        switch kind {
        case .emptyFile: return "meter-log-empty"
        case .missingHeader: return "meter-log-missing-header"
        case .invalidJSON: return "meter-log-invalid-json"
        case .invalidCSV: return "meter-log-invalid-csv"
        case .missingField: return "meter-log-missing-field"
        case .invalidField: return "meter-log-invalid-field"
        case .timeOutOfRange: return "meter-log-time-out-of-range"
        case .componentsDoNotSum: return "meter-log-components-do-not-sum"
        case .duplicateID: return "meter-log-duplicate-id"
        case .lineTooLong: return "meter-log-line-too-long"
        case .tooManyNames: return "meter-log-too-many-names"
        }
    }

    public var description: String {
        let place = line > 0 ? "\(path):\(line)" : path
        switch kind {
        case .emptyFile: return "\(place): empty meter log (no line to read)"
        case let .missingHeader(reason): return "\(place): CSV meter log without a header row: \(reason)"
        case let .invalidJSON(column, reason): return "\(place):\(column): invalid JSON: \(reason); line skipped"
        case let .invalidCSV(reason): return "\(place): invalid CSV row: \(reason); line skipped"
        case let .missingField(name): return "\(place): no `\(name)`; line skipped"
        case let .invalidField(name, reason): return "\(place): `\(name)` \(reason); line skipped"
        case let .timeOutOfRange(text):
            return "\(place): `time` \(text) is out of range (1970 to 2262; milliseconds for seconds?); line skipped"
        case let .componentsDoNotSum(bytes, line, headers, body):
            return
                "\(place): line + headers + body = \(line) + \(headers) + \(body) is not bytes = \(bytes); entry kept"
        case let .duplicateID(id, firstLine):
            return "\(place): id \"\(id)\" already used at line \(firstLine); entry kept without its id"
        case let .lineTooLong(bytes): return "\(place): line of \(bytes) bytes is longer than the limit; skipped"
        case let .tooManyNames(what): return "\(place): more than 65,535 distinct \(what); line skipped"
        }
    }
}

/// Bounds on what reading a meter log holds in memory besides its entries.
public struct MeterLogLimits: Sendable, Equatable {
    /// Bytes read per `fread`.
    public var chunkBytes: Int
    /// A longer line is skipped as it streams by (`.lineTooLong`), never held whole.
    public var maxLineBytes: Int
    /// Diagnostics kept in full; the rest are only counted (`MeterLog.diagnosticCounts`).
    public var maxDiagnostics: Int

    public init(chunkBytes: Int = 64 * 1024, maxLineBytes: Int = 1 << 20, maxDiagnostics: Int = 1000) {
        self.chunkBytes = max(1, chunkBytes)
        self.maxLineBytes = max(1, maxLineBytes)
        self.maxDiagnostics = max(0, maxDiagnostics)
    }
}
