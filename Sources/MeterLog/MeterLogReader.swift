import CaptureIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a meter log (docs/METER-LOG.md): JSON Lines or CSV with a header row, told apart by the
/// first line that is not blank (a JSON object or not). The file streams through a `LineReader`
/// line by line; each line becomes zero, one or two entries, or a diagnostic, and reading goes on.
public enum MeterLogReader {
    /// Reads the whole file. Throws only when it cannot be opened or read; everything wrong
    /// inside is in `MeterLog.diagnostics`.
    public static func read(path: String, limits: MeterLogLimits = MeterLogLimits()) throws -> MeterLog {
        try read(open(path: path, limits: limits))
    }

    /// Opens the file and reads its first line: a file that cannot be opened or read at all
    /// (missing, unreadable, a directory) throws here, before any reading of the rest.
    public static func open(path: String, limits: MeterLogLimits = MeterLogLimits()) throws -> OpenedMeterLog {
        let lines = try LineReader(path: path, limits: limits)
        let first = try lines.next()
        return OpenedMeterLog(path: path, limits: limits, lines: lines, first: first)
    }

    /// Reads the rest of an opened file (on any thread, one at a time). Throws only when the
    /// file cannot be read further; everything wrong inside is in `MeterLog.diagnostics`.
    public static func read(_ opened: OpenedMeterLog) throws -> MeterLog {
        var state = State(log: MeterLog(path: opened.path), limits: opened.limits)
        let lines = opened.lines
        var next = opened.first
        while let line = next {
            state.log.linesRead += 1
            if !state.take(line) { break }
            next = try lines.next()
        }
        state.log.peakLineBytes = lines.peakLineBytes
        if state.log.format == nil { state.report(line: 0, .emptyFile) }
        return state.log
    }

    /// The fields read; the rest are ignored.
    enum Field: Int, CaseIterable {
        case time, kind, method, url, status, bytes, line, headers, body, id, meter
        case requestBytes, requestLine, requestHeaders, requestBody
        case responseBytes, responseLine, responseHeaders, responseBody

        var name: String {
            switch self {
            case .time: return "time"
            case .kind: return "kind"
            case .method: return "method"
            case .url: return "url"
            case .status: return "status"
            case .bytes: return "bytes"
            case .line: return "line"
            case .headers: return "headers"
            case .body: return "body"
            case .id: return "id"
            case .meter: return "meter"
            case .requestBytes: return "request_bytes"
            case .requestLine: return "request_line"
            case .requestHeaders: return "request_headers"
            case .requestBody: return "request_body"
            case .responseBytes: return "response_bytes"
            case .responseLine: return "response_line"
            case .responseHeaders: return "response_headers"
            case .responseBody: return "response_body"
            }
        }

        static let byName: [String: Field] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

        /// The names as bytes, by raw value.
        static let utf8Names: [[UInt8]] = allCases.map { Array($0.name.utf8) }

        /// The fields by the length of their name: (raw value, name), the names compared only
        /// with keys of their length.
        static let byLength: [[(raw: Int, name: [UInt8])]] = {
            var table = [[(raw: Int, name: [UInt8])]](repeating: [], count: utf8Names.map(\.count).max()! + 1)
            for (raw, name) in utf8Names.enumerated() { table[name.count].append((raw, name)) }
            return table
        }()

        /// The field named by `bytes[range]` exactly; nil for a name not read.
        static func named(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Field? {
            let count = range.count
            guard count < byLength.count else { return nil }
            for (raw, name) in byLength[count] where name[0] == bytes[range.lowerBound] {
                var index = 1
                while index < count, name[index] == bytes[range.lowerBound + index] { index += 1 }
                if index == count { return Field(rawValue: raw) }
            }
            return nil
        }
    }

    /// One line's fields as text (a JSON number as written); nil when absent, empty or null.
    /// Kept as bytes: the line's own where the fast path read it (each field a range of it),
    /// else the texts appended one after another. A value becomes a String only when a table
    /// must look it up (a URL, method or id not the last line's) or a diagnostic names it.
    struct Fields {
        var bytes: [UInt8]
        /// Per field (raw value): the start and end of its value in `bytes`; −1 when absent.
        var bounds = [Int32](repeating: -1, count: 2 * Field.allCases.count)

        init(bytes: [UInt8] = []) { self.bytes = bytes }

        /// `bytes[range]` as `field`'s value (the fast path's, over the line's own bytes).
        mutating func set(_ field: Field, _ range: Range<Int>) {
            bounds[2 * field.rawValue] = Int32(truncatingIfNeeded: range.lowerBound)
            bounds[2 * field.rawValue + 1] = Int32(truncatingIfNeeded: range.upperBound)
        }

        func has(_ field: Field) -> Bool { bounds[2 * field.rawValue] >= 0 }

        func range(_ field: Field) -> Range<Int>? {
            let start = bounds[2 * field.rawValue]
            return start < 0 ? nil : Int(start)..<Int(bounds[2 * field.rawValue + 1])
        }

        subscript(field: Field) -> String? {
            get { range(field).map { String(decoding: bytes[$0], as: UTF8.self) } }
            set {
                guard let newValue else {
                    bounds[2 * field.rawValue] = -1
                    return
                }
                let start = bytes.count
                bytes.append(contentsOf: newValue.utf8)
                set(field, start..<bytes.count)
            }
        }

        /// Every field's text, by raw value.
        var values: [String?] { Field.allCases.map { self[$0] } }

        /// `body` over the bytes of `field`'s value; nil when absent.
        func withValue<R>(_ field: Field, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
            guard let range = range(field) else { return nil }
            return try bytes.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
        }

        /// Whether `field`'s value is exactly `text[range]` (an absent value is empty).
        func value(_ field: Field, equals text: [UInt8], _ other: Range<Int>) -> Bool {
            let range = self.range(field) ?? 0..<0
            guard range.count == other.count else { return false }
            guard !range.isEmpty else { return true }
            return bytes.withUnsafeBufferPointer { bytes in
                text.withUnsafeBufferPointer { text in
                    memcmp(bytes.baseAddress! + range.lowerBound, text.baseAddress! + other.lowerBound, range.count) == 0
                }
            }
        }

        /// `field`'s value kept for the next line, with its place in its table: the bytes
        /// (shared, not copied) and its range; empty when absent.
        func remember(_ field: Field, index: Int) -> LastValue {
            LastValue(bytes: bytes, range: range(field) ?? 0..<0, index: index)
        }

        /// `last`'s table index when `field` holds the same value on this line.
        func repeatedIndex(_ field: Field, last: LastValue?) -> Int? {
            guard let last, value(field, equals: last.bytes, last.range) else { return nil }
            return last.index
        }

        /// `field`'s table index when it repeats `last` (no text made); else its text (empty
        /// when absent) and its index in `table`, nil when it is new.
        func lookUp(_ field: Field, last: LastValue?, in table: [String: Int]) -> (index: Int?, text: String?) {
            if let index = repeatedIndex(field, last: last) { return (index, nil) }
            let text = self[field] ?? ""
            return (table[text], text)
        }
    }

    /// A value as the last line that named it wrote it (that line's bytes, shared with its
    /// fields, and the value's range there), with the value's place in its table.
    struct LastValue {
        var bytes: [UInt8]
        var range: Range<Int>
        var index: Int
    }

    /// A line-level problem: the diagnostic to report instead of entries.
    struct LineError: Error { let kind: MeterLogDiagnostic.Kind }

    enum EpochTime: Equatable {
        case nanoseconds(Int64)
        case outOfRange
        case notADecimal
    }

    struct State {
        var log: MeterLog
        let limits: MeterLogLimits
        /// CSV: the header's column for each field read.
        var columns: [Field?] = []
        /// (meter, id) → the lines that used it for a request and for a response (0: none yet).
        var idLines: [UInt64: (request: Int, response: Int)] = [:]
        /// A URL as written → its place in the URL table (while reading).
        var urlOfText: [String: Int] = [:]
        /// The last line's URL and id as written, with their places in the tables: a response's
        /// line names its request's again.
        /// Each as the bytes of the line that last named it (shared with that line's fields)
        /// and the value's range there.
        var lastURL: LastValue?
        var lastID: LastValue?
        /// The last line's method and meter name, with their places in the tables.
        var lastMethod: LastValue?
        var lastMeter: LastValue?

        mutating func report(line: Int, _ kind: MeterLogDiagnostic.Kind) {
            log.report(MeterLogDiagnostic(path: log.path, line: line, kind: kind), limit: limits.maxDiagnostics)
        }

        /// False once the file cannot be read further (no CSV header).
        mutating func take(_ line: LineReader.Line) -> Bool {
            switch line {
            case let .tooLong(number, length):
                report(line: number, .lineTooLong(bytes: length))
                return true
            case let .text(number, bytes):
                guard let first = bytes.firstIndex(where: { !isBlank($0) }) else { return true }
                let fields: Fields
                do {
                    switch log.format {
                    case nil:
                        if bytes[first] == UInt8(ascii: "{") {
                            log.format = .jsonLines
                            fields = try jsonFields(bytes, line: number)
                        } else {
                            log.format = .csv
                            if let reason = readHeader(bytes) {
                                report(line: number, .missingHeader(reason: reason))
                                return false
                            }
                            return true
                        }
                    case .jsonLines: fields = try jsonFields(bytes, line: number)
                    case .csv: fields = try csvFields(bytes)
                    }
                    try makeEntries(fields, line: number)
                } catch let error as LineError {
                    report(line: number, error.kind)
                } catch {
                    report(line: number, .invalidJSON(column: 1, reason: "\(error)"))
                }
                return true
            }
        }

        // MARK: JSON Lines

        func jsonFields(_ bytes: [UInt8], line: Int) throws -> Fields {
            if let fields = bytes.withUnsafeBytes(Self.flatJSONFields) { return fields }
            return try tokenizedJSONFields(bytes, line: line)
        }

        /// The line through the JSON tokenizer: any JSON, and the diagnostic of a bad line.
        func tokenizedJSONFields(_ bytes: [UInt8], line: Int) throws -> Fields {
            var fields = Fields()
            var invalid: LineError?
            do {
                try bytes.withUnsafeBytes { raw in
                    let stream = JSONStreamReader(bytes: raw, path: log.path, line: line)
                    guard try stream.next() == .beginObject else {
                        throw LineError(kind: .invalidJSON(column: 1, reason: "a line must hold one JSON object"))
                    }
                    while true {
                        guard let token = try stream.next() else { break }
                        if token == .endObject { break }
                        guard case let .key(key) = token else { continue }
                        guard let field = Field.byName[key], fields[field] == nil, invalid == nil else {
                            try stream.skipValue()
                            continue
                        }
                        guard let value = try stream.next() else { break }
                        switch value {
                        case let .string(text): fields[field] = text.isEmpty ? nil : text
                        case let .number(number): fields[field] = number.raw
                        case .null: break
                        case let .bool(flag):
                            invalid = LineError(kind: .invalidField(field.name, reason: "is \(flag), not a value"))
                        case .beginObject, .beginArray:
                            try stream.skipValue(startingWith: value)
                            invalid = LineError(
                                kind: .invalidField(
                                    field.name, reason: value == .beginObject ? "is an object" : "is an array"))
                        case .endObject, .endArray, .key: break
                        }
                    }
                    // Anything after the object is an error of the stream's own.
                    _ = try stream.next()
                }
            } catch let JSONStreamError.invalidJSON(_, column, reason) {
                throw LineError(kind: .invalidJSON(column: column, reason: reason))
            }
            if let invalid { throw invalid }
            return fields
        }

        /// The usual line read straight from its bytes, without the tokenizer's tokens and
        /// Strings: one flat object whose keys and string values are printable ASCII without
        /// escapes, and whose values are strings, numbers or `null`. Nil for anything else
        /// (escapes, other bytes, `true`, nested values, bad JSON): the tokenizer then reads the
        /// line, and reports what is wrong with it. For a line it reads, the fields are the
        /// tokenizer's: the first non-empty value of a key wins, a number as written.
        static func flatJSONFields(_ bytes: UnsafeRawBufferPointer) -> Fields? {
            let count = bytes.count
            var index = 0
            func skipBlanks() {
                while index < count, isBlank(bytes[index]) { index += 1 }
            }
            /// Past a run of printable ASCII up to a quote; false at anything else.
            func skipPlainString() -> Bool {
                while index < count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") { return true }
                    guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return false }
                    index += 1
                }
                return false
            }
            /// Past a JSON number (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`); false when
            /// it is not one.
            func skipNumber() -> Bool {
                func digits() -> Bool {
                    let start = index
                    while index < count, isDigit(bytes[index]) { index += 1 }
                    return index > start
                }
                if bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < count else { return false }
                if bytes[index] == UInt8(ascii: "0") {
                    index += 1
                    if index < count, isDigit(bytes[index]) { return false }
                } else if !digits() {
                    return false
                }
                if index < count, bytes[index] == UInt8(ascii: ".") {
                    index += 1
                    guard digits() else { return false }
                }
                if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                    index += 1
                    if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                        index += 1
                    }
                    guard digits() else { return false }
                }
                return true
            }
            var fields = Fields(bytes: Array(bytes))
            skipBlanks()
            guard index < count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            skipBlanks()
            if index < count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                skipBlanks()
                return index == count ? fields : nil
            }
            while true {
                guard index < count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                index += 1
                let keyStart = index
                guard skipPlainString() else { return nil }
                let field = Field.named(bytes, keyStart..<index)
                index += 1
                skipBlanks()
                guard index < count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipBlanks()
                guard index < count else { return nil }
                var value: Range<Int>?
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    let start = index
                    guard skipPlainString() else { return nil }
                    value = start..<index
                    index += 1
                case UInt8(ascii: "n"):
                    guard count - index >= 4, bytes[index + 1] == UInt8(ascii: "u"),
                        bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
                    else { return nil }
                    index += 4
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let start = index
                    guard skipNumber() else { return nil }
                    value = start..<index
                default:
                    return nil
                }
                if let field, !fields.has(field), let value, !value.isEmpty { fields.set(field, value) }
                skipBlanks()
                guard index < count else { return nil }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    skipBlanks()
                    continue
                }
                guard bytes[index] == UInt8(ascii: "}") else { return nil }
                index += 1
                skipBlanks()
                return index == count ? fields : nil
            }
        }

        // MARK: CSV

        /// Reads the header row; the reason it is none, or nil.
        mutating func readHeader(_ bytes: [UInt8]) -> String? {
            guard let names = try? Self.splitCSV(bytes) else { return "the first line is not a CSV row" }
            columns = names.map { Field.byName[Self.lowered($0)] }
            let known = Set(columns.compactMap { $0 })
            if known.isEmpty {
                return "the first line names no known column (time, kind, method, url, bytes, ...)"
            }
            for required in [Field.time, .method, .url] where !known.contains(required) {
                return "the header has no `\(required.name)` column"
            }
            let perMessage = known.contains(.bytes) && known.contains(.kind)
            if !perMessage, !known.contains(.requestBytes), !known.contains(.responseBytes) {
                return "the header has neither `kind` and `bytes` nor `request_bytes` / `response_bytes`"
            }
            return nil
        }

        func csvFields(_ bytes: [UInt8]) throws -> Fields {
            let values = try Self.splitCSV(bytes)
            guard values.count <= columns.count else {
                throw LineError(
                    kind: .invalidCSV(reason: "\(values.count) fields where the header has \(columns.count)"))
            }
            var fields = Fields()
            for (column, value) in zip(columns, values) {
                guard let column, !value.isEmpty, fields[column] == nil else { continue }
                fields[column] = value
            }
            return fields
        }

        /// RFC 4180 fields of one line: `"` quotes a field, `""` inside one is a quote; spaces
        /// around an unquoted field are dropped. A field cannot span lines.
        static func splitCSV(_ bytes: [UInt8]) throws -> [String] {
            var fields: [String] = []
            var index = 0
            while true {
                var field: [UInt8] = []
                while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    index += 1
                    while true {
                        guard index < bytes.count else {
                            throw LineError(kind: .invalidCSV(reason: "unterminated quoted field"))
                        }
                        if bytes[index] == UInt8(ascii: "\"") {
                            if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\"") {
                                field.append(UInt8(ascii: "\""))
                                index += 2
                                continue
                            }
                            index += 1
                            break
                        }
                        field.append(bytes[index])
                        index += 1
                    }
                    while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
                    guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else {
                        throw LineError(kind: .invalidCSV(reason: "text after a closing quote"))
                    }
                } else {
                    while index < bytes.count, bytes[index] != UInt8(ascii: ",") {
                        field.append(bytes[index])
                        index += 1
                    }
                    while field.last == UInt8(ascii: " ") { field.removeLast() }
                }
                fields.append(String(decoding: field, as: UTF8.self))
                guard index < bytes.count else { return fields }
                index += 1 // the comma
            }
        }

        /// Whether `lowered(text) == word` (a lower-case word), without making the lowered text.
        static func isLowered(_ text: String, _ word: StaticString) -> Bool {
            var text = text
            return text.withUTF8 { isLowered($0, word) }
        }

        static func isLowered(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
            let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            var index = 0
            for byte in bytes where !isBlank(byte) {
                guard index < expected.count, NormalizedURL.lower(byte) == expected[index] else { return false }
                index += 1
            }
            return index == expected.count
        }

        static func lowered(_ text: String) -> String {
            String(decoding: text.utf8.map(NormalizedURL.lower).filter { !isBlank($0) }, as: UTF8.self)
        }

        // MARK: Entries

        mutating func makeEntries(_ fields: Fields, line: Int) throws {
            guard fields.has(.time) else { throw LineError(kind: .missingField("time")) }
            let time = try Self.time(fields)
            guard fields.has(.method) else { throw LineError(kind: .missingField("method")) }
            guard fields.has(.url) else { throw LineError(kind: .missingField("url")) }
            // A URL seen before, as written, is not normalized again (nor made a String, when
            // it is the last line's).
            let (known, urlText) = fields.lookUp(.url, last: lastURL, in: urlOfText)
            guard let url = known.map({ log.urls.urls[$0] }) ?? NormalizedURL(urlText!) else {
                throw LineError(kind: .invalidField("url", reason: "is not an absolute URL (scheme://host/path)"))
            }
            var status: UInt16 = 0
            if let value = fields.withValue(.status, Self.integer) {
                guard let value, (100...999).contains(value) else {
                    throw LineError(kind: .invalidField("status", reason: "is not a status code (100...999)"))
                }
                status = UInt16(value)
            }
            // The line's one or two messages: (direction, total, line, headers, body fields).
            typealias Half = (direction: MeterDirection, total: Field, line: Field, headers: Field, body: Field)
            let requestHalf: Half = (.request, .requestBytes, .requestLine, .requestHeaders, .requestBody)
            let responseHalf: Half = (.response, .responseBytes, .responseLine, .responseHeaders, .responseBody)
            var first: Half
            var second: Half?
            if fields.has(.kind) {
                if fields.withValue(.kind, { Self.isLowered($0, "request") })! {
                    first = (.request, .bytes, .line, .headers, .body)
                } else if fields.withValue(.kind, { Self.isLowered($0, "response") })! {
                    first = (.response, .bytes, .line, .headers, .body)
                } else {
                    throw LineError(kind: .invalidField("kind", reason: "is neither request nor response"))
                }
            } else if fields.has(.requestBytes) {
                first = requestHalf
                if fields.has(.responseBytes) { second = responseHalf }
            } else if fields.has(.responseBytes) {
                first = responseHalf
            } else {
                throw LineError(kind: .missingField("kind"))
            }
            let exchangeLine = second != nil || !fields.has(.kind)
            // Every number is checked before any entry is kept: a line gives all its entries or none.
            typealias Sizes = (direction: MeterDirection, bytes: Int64, line: Int64, headers: Int64, body: Int64)
            func count(_ field: Field) throws -> Int64? {
                guard let value = fields.withValue(field, Self.integer) else { return nil }
                guard let value else {
                    throw LineError(
                        kind: .invalidField(field.name, reason: "is not a byte count (a non-negative integer)"))
                }
                return value
            }
            func sizes(_ half: Half) throws -> Sizes {
                guard let bytes = try count(half.total) else { throw LineError(kind: .missingField(half.total.name)) }
                let line = try count(half.line) ?? MeterEntry.absent
                let headers = try count(half.headers) ?? MeterEntry.absent
                let body = try count(half.body) ?? MeterEntry.absent
                return (half.direction, bytes, line, headers, body)
            }
            let firstSizes = try sizes(first)
            let secondSizes = try second.map(sizes)
            // A name is taken into its table only while indexes remain: bad lines grow nothing.
            // The last line's method and meter are the usual ones: no table look-up (nor
            // String) for them.
            let (knownMethod, methodText) = fields.lookUp(.method, last: lastMethod, in: log.methods.index)
            guard knownMethod != nil || log.methods.strings.count <= Int(UInt16.max) else {
                throw LineError(kind: .tooManyNames("methods"))
            }
            let (knownMeter, meterText) = fields.lookUp(.meter, last: lastMeter, in: log.meters.index)
            guard knownMeter != nil || log.meters.strings.count <= Int(UInt16.max) else {
                throw LineError(kind: .tooManyNames("meter names"))
            }
            let methodIndex = knownMethod ?? log.methods.intern(methodText!)
            let meterIndex = knownMeter ?? log.meters.intern(meterText!)
            if methodText != nil { lastMethod = fields.remember(.method, index: methodIndex) }
            if meterText != nil { lastMeter = fields.remember(.meter, index: meterIndex) }
            let urlPosition = known ?? log.urls.intern(url)
            if known == nil { urlOfText[urlText!] = urlPosition }
            if urlText != nil { lastURL = fields.remember(.url, index: urlPosition) }
            let urlIndex = UInt32(truncatingIfNeeded: urlPosition)
            var idIndex = MeterEntry.noID
            if fields.has(.id) {
                let index: Int
                if let repeated = fields.repeatedIndex(.id, last: lastID) {
                    index = repeated
                } else {
                    index = log.ids.intern(fields[.id]!)
                    lastID = fields.remember(.id, index: index)
                }
                idIndex = UInt32(truncatingIfNeeded: index)
            }
            var pending: Sizes? = firstSizes
            var following = secondSizes
            while let (direction, bytes, lineBytes, headersBytes, bodyBytes) = pending {
                pending = following
                following = nil
                var entry = MeterEntry(
                    time: time, bytes: bytes, storedLine: lineBytes, storedHeaders: headersBytes, storedBody: bodyBytes,
                    logLine: UInt32(clamping: line), urlIndex: urlIndex, idIndex: idIndex,
                    methodIndex: UInt16(methodIndex), meterIndex: UInt16(meterIndex),
                    storedStatus: direction == .response ? status : 0, direction: direction,
                    flags: exchangeLine ? .fromExchange : [])
                if lineBytes >= 0, headersBytes >= 0, bodyBytes >= 0 {
                    let (partial, overflow1) = lineBytes.addingReportingOverflow(headersBytes)
                    let (sum, overflow2) = partial.addingReportingOverflow(bodyBytes)
                    if overflow1 || overflow2 || sum != bytes {
                        entry.flags.insert(.componentsDoNotSum)
                        report(
                            line: line,
                            .componentsDoNotSum(bytes: bytes, line: lineBytes, headers: headersBytes, body: bodyBytes))
                    }
                }
                if entry.hasID {
                    let key = UInt64(meterIndex) << 32 | UInt64(idIndex)
                    var lines = idLines[key] ?? (0, 0)
                    let earlier = direction == .request ? lines.request : lines.response
                    if earlier != 0 {
                        report(line: line, .duplicateID(log.ids.strings[Int(idIndex)], firstLine: earlier))
                        entry.idIndex = MeterEntry.noID
                    } else if direction == .request {
                        lines.request = line
                    } else {
                        lines.response = line
                    }
                    idLines[key] = lines
                }
                log.entries.append(entry)
            }
        }

        // MARK: Values

        /// The `time` field: epoch seconds read from its bytes; ISO 8601 (or a diagnostic) from
        /// its text.
        static func time(_ fields: Fields) throws -> Int64 {
            let epoch = fields.withValue(.time) { bytes -> EpochTime? in
                let looksISO =
                    bytes.count > 4 && bytes.prefix(4).allSatisfy(isDigit) && bytes[4] == UInt8(ascii: "-")
                return looksISO ? nil : epochNanoseconds(bytes)
            }
            if case let .nanoseconds(value)?? = epoch { return value }
            return try time(fields[.time]!)
        }

        /// ISO 8601 with an offset, or epoch seconds (a decimal, fractions and exponent allowed).
        static func time(_ text: String) throws -> Int64 {
            let bytes = text.utf8
            let looksISO =
                bytes.count > 4 && bytes.prefix(4).allSatisfy(isDigit) && bytes.dropFirst(4).first == UInt8(ascii: "-")
            if looksISO {
                if let parsed = ISO8601Time.parse(text, requiringOffset: true) {
                    if parsed.clamped { throw LineError(kind: .timeOutOfRange(text)) }
                    return parsed.nanoseconds
                }
                let reason =
                    ISO8601Time.parse(text) != nil
                    ? "has no UTC offset (Z or ±hh:mm)" : "is not an ISO 8601 time (YYYY-MM-DDThh:mm:ss[.f]±hh:mm)"
                throw LineError(kind: .invalidField("time", reason: reason))
            }
            var text = text
            switch text.withUTF8(epochNanoseconds) {
            case let .nanoseconds(value): return value
            case .outOfRange: throw LineError(kind: .timeOutOfRange(text))
            case .notADecimal:
                throw LineError(
                    kind: .invalidField("time", reason: "is neither ISO 8601 with an offset nor epoch seconds"))
            }
        }

        /// Seconds since 1970 as a decimal (`1700000000`, `1700000000.25`, `1.7e9`) in
        /// nanoseconds (digits past the ninth decimal dropped); out of range when negative or past
        /// Int64 nanoseconds.
        static func epochNanoseconds(_ bytes: [UInt8]) -> EpochTime {
            bytes.withUnsafeBufferPointer(epochNanoseconds)
        }

        static func epochNanoseconds(_ bytes: UnsafeBufferPointer<UInt8>) -> EpochTime {
            var index = 0
            var negative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                negative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            // The significant digits (from the first that is not 0): how many, and the first 19
            // as a number (no more can count: the value has at most 19 digits).
            var digitCount = 0
            var leading: UInt64 = 0
            func take(_ byte: UInt8) {
                if digitCount < 19 { leading = leading * 10 + UInt64(byte - 48) }
                digitCount += 1
            }
            var point = 0
            var sawDigit = false
            while index < bytes.count, isDigit(bytes[index]) {
                if !(digitCount == 0 && bytes[index] == UInt8(ascii: "0")) { take(bytes[index]) }
                if digitCount > 0 { point += 1 }
                sawDigit = true
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                while index < bytes.count, isDigit(bytes[index]) {
                    if digitCount == 0 && bytes[index] == UInt8(ascii: "0") {
                        point -= 1
                    } else {
                        take(bytes[index])
                    }
                    sawDigit = true
                    index += 1
                }
            }
            guard sawDigit else { return .notADecimal }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                var exponentNegative = false
                if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                    exponentNegative = bytes[index] == UInt8(ascii: "-")
                    index += 1
                }
                var exponent = 0
                var sawExponent = false
                while index < bytes.count, isDigit(bytes[index]) {
                    exponent = min(exponent * 10 + Int(bytes[index] - 48), 100_000)
                    sawExponent = true
                    index += 1
                }
                guard sawExponent else { return .notADecimal }
                point += exponentNegative ? -exponent : exponent
            }
            guard index == bytes.count else { return .notADecimal }
            if digitCount == 0 { return .nanoseconds(0) }
            if negative { return .outOfRange }
            // The digits before the point moved 9 places right are the nanoseconds: the first
            // `integerDigits` significant digits, zeros where the digits run out.
            let integerDigits = point + 9
            guard integerDigits <= 19 else { return .outOfRange }
            guard integerDigits > 0 else { return .nanoseconds(0) }
            let kept = min(digitCount, 19)
            let used = min(integerDigits, kept)
            var value = leading
            for _ in 0..<(kept - used) { value /= 10 }
            for _ in 0..<(integerDigits - used) {
                let (scaled, overflow) = value.multipliedReportingOverflow(by: 10)
                if overflow { return .outOfRange }
                value = scaled
            }
            guard value <= UInt64(Int64.max) else { return .outOfRange }
            return .nanoseconds(Int64(value))
        }

        /// A non-negative decimal integer.
        static func integer(_ text: String) -> Int64? {
            var text = text
            return text.withUTF8(integer)
        }

        /// A non-negative decimal integer, from its bytes.
        static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
            var value: Int64 = 0
            var any = false
            for byte in bytes {
                guard isDigit(byte) else { return nil }
                let (scaled, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = scaled.addingReportingOverflow(Int64(byte - 48))
                if overflow1 || overflow2 { return nil }
                value = sum
                any = true
            }
            return any ? value : nil
        }
    }
}

@inline(__always) func isBlank(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == 0x09 || byte == 0x0D
}

/// A meter log whose file is open and first line read (`MeterLogReader.open`), the rest to read.
/// Handed to one reading thread: no two threads use it at once.
public final class OpenedMeterLog: @unchecked Sendable {
    public let path: String
    let limits: MeterLogLimits
    let lines: LineReader
    let first: LineReader.Line?

    init(path: String, limits: MeterLogLimits, lines: LineReader, first: LineReader.Line?) {
        self.path = path
        self.limits = limits
        self.lines = lines
        self.first = first
    }
}
