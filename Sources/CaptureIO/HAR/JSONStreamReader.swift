#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a JSON file could not be read. Positions are 1-based; `column` counts Unicode scalars
/// (UTF-8 lead bytes) from the start of the line, a tab counting as one.
public enum JSONStreamError: Error, Equatable, CustomStringConvertible {
    /// The file could not be opened (missing, unreadable).
    case cannotOpen(path: String, reason: String)
    /// Reading failed part-way (I/O error, a directory).
    case readFailed(path: String, reason: String)
    /// The bytes are not JSON: what was wrong, where.
    case invalidJSON(line: Int, column: Int, reason: String)
    /// The caller asked for something the stream cannot give here (e.g. `readValue()` where a
    /// key or a closing bracket comes next).
    case misuse(String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "\(path): cannot open: \(reason)"
        case let .readFailed(path, reason): return "\(path): read failed: \(reason)"
        case let .invalidJSON(line, column, reason): return "invalid JSON at line \(line), column \(column): \(reason)"
        case let .misuse(reason): return "JSON stream misuse: \(reason)"
        }
    }
}

/// A JSON number as written; `intValue` when it is an integer that fits in `Int`.
public struct JSONNumber: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The text as written; nil for an integer written as `String(intValue)` writes it, whose
    /// text is made only when asked for (most sizes are read as numbers, never as text).
    private let written: String?
    public let intValue: Int?

    /// The number as written.
    public var raw: String { written ?? String(intValue ?? 0) }

    public init(raw: String) {
        written = raw
        let integral = !raw.utf8.contains {
            $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
        }
        intValue = integral ? Int(raw) : nil
    }

    /// A number `readNumber` already checked and converted.
    init(raw: String, intValue: Int?) {
        written = raw
        self.intValue = intValue
    }

    /// An integer whose text is `String(value)`.
    init(canonical value: Int) {
        written = nil
        intValue = value
    }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        lhs.intValue == rhs.intValue && lhs.raw == rhs.raw
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(raw)
        hasher.combine(intValue)
    }

    /// What a skipped number stands as (its value unread).
    static let skipped = JSONNumber(raw: "0", intValue: 0)

    public var description: String { raw }
}

/// One token of a JSON text. Keys come as `.key` (the ':' is consumed with them).
public enum JSONToken: Equatable, Sendable {
    case beginObject, endObject, beginArray, endArray
    case key(String)
    case string(String)
    case number(JSONNumber)
    case bool(Bool)
    case null
}

/// A member whose string is used as bytes (a body's text): the string's UTF-8 (as a String
/// would hold it), or the value when it is not a string.
enum JSONText {
    case bytes([UInt8])
    case other(JSONValue)

    init(_ value: JSONValue) {
        if case let .string(text) = value {
            self = .bytes(Array(text.utf8))
        } else {
            self = .other(value)
        }
    }
}

/// A member whose array length is used: the length, or the value when it is not an array.
enum JSONCount {
    case count(Int)
    case other(JSONValue)
}

/// Which members of an object to materialize: `all` keeps a value whole; a filter with members
/// keeps those (each with its own filter) and skips every other member unread; `count` keeps an
/// array's length only (its elements become `null`, each skipped unread).
public final class JSONKeyFilter: Sendable {
    public let members: [String: JSONKeyFilter]?
    /// The members' names as bytes, for matching a key without making a String of it.
    let entries: [(name: String, bytes: [UInt8], child: JSONKeyFilter)]
    let countOnly: Bool

    public static let all = JSONKeyFilter(nil)
    public static let count = JSONKeyFilter(nil, countOnly: true)

    public init(_ members: [String: JSONKeyFilter]?) {
        self.members = members
        self.entries = (members ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, Array($0.key.utf8), $0.value) }
        self.countOnly = false
    }

    private init(_ members: [String: JSONKeyFilter]?, countOnly: Bool) {
        self.members = members
        self.entries = []
        self.countOnly = countOnly
    }

    /// The member whose name is these bytes.
    @inline(__always)
    func member(_ key: UnsafeBufferPointer<UInt8>) -> (name: String, child: JSONKeyFilter)? {
        for entry in entries where entry.bytes.count == key.count {
            let same = entry.bytes.withUnsafeBufferPointer { bytes in
                key.count == 0 || memcmp(bytes.baseAddress!, key.baseAddress!, key.count) == 0
            }
            if same { return (entry.name, entry.child) }
        }
        return nil
    }
}

/// A pull tokenizer over a file read in fixed-size chunks with `fread`: memory is one chunk plus
/// the value being materialized (a string, or what `readValue()` builds) and the table of shared
/// header texts (at most about 0.6 MB), never the whole file.
/// Checks the full JSON grammar (nesting, commas, colons, trailing data), skips a leading UTF-8
/// BOM, decodes every escape including `\uXXXX` surrogate pairs (a lone surrogate becomes
/// U+FFFD, as JavaScript's JSON.stringify may write them). Not thread-safe.
public final class JSONStreamReader {
    public static let defaultChunkSize = 256 * 1024
    /// Deeper nesting is rejected, which bounds the recursion of `readValue()`.
    public static let maximumDepth = 512

    public let path: String
    public let chunkSize: Int
    /// Line and column of the next unread byte (1-based).
    @exclusivity(unchecked) public private(set) var line = 1
    @exclusivity(unchecked) public private(set) var column = 1
    /// Bytes fread from the file so far.
    @exclusivity(unchecked) public private(set) var bytesRead = 0
    /// Bytes read from the file but not yet tokenized (at most `chunkSize`).
    public var bytesBuffered: Int { end - position }
    /// Offset in the file of the next unread byte.
    public var bytesConsumed: Int { bytesRead - bytesBuffered }

    @exclusivity(unchecked) private var file: UnsafeMutablePointer<FILE>?
    private let buffer: UnsafeMutablePointer<UInt8>
    // The reader's state changes for every byte, so it is not checked for overlapping access at
    // run time (`@exclusivity(unchecked)`): a reader belongs to one thread, and no callback runs
    // while a property is changed. The JSON tests go through every path in debug builds.
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var end = 0
    @exclusivity(unchecked) private var atEOF = false
    /// Open containers: '{' or '['.
    @exclusivity(unchecked) private var stack = ContainerStack()
    @exclusivity(unchecked) private var state: State = .start
    /// The last key read with `keyToScratch`: `keyCount` bytes at `keyStart` in the buffer, or
    /// in `keyBytes` when `keyStart` is -1 (a key with escapes, or one a refill would overwrite:
    /// `refill` copies it there first).
    @exclusivity(unchecked) private var keyBytes: [UInt8] = []
    @exclusivity(unchecked) private var keyStart = -1
    @exclusivity(unchecked) private var keyCount = 0
    /// Header names and values (`nameValueElementInBuffer`) recently made into arrays: a file's
    /// headers repeat (one client, a few servers), so most fields share an array made once
    /// instead of allocating two per field, here, and freeing them on the thread that drops
    /// the messages. A fixed table of `internSlots` arrays of at most `internMaximum` bytes, a
    /// new text replacing the one in its slot: memory stays bounded. Made at the first header
    /// element: a reader of one JSON line (a meter log's, one reader a line) never needs it.
    @exclusivity(unchecked) private var internArrays: UnsafeMutablePointer<[UInt8]>?
    /// Each slot's bytes again (`internMaximum` a slot) and their count, compared without
    /// retaining the slot's array.
    @exclusivity(unchecked) private var internBytes: UnsafeMutablePointer<UInt8>?
    @exclusivity(unchecked) private var internCounts: UnsafeMutablePointer<Int>?
    private static let internSlots = 1024
    private static let internMaximum = 256
    /// Where a string with escapes is decoded before it is copied out at its size: one buffer
    /// reused, not an array grown step by step per string (freed when a string made it large).
    @exclusivity(unchecked) private var scratch: [UInt8] = []

    private enum State { case start, value, objectKeyOrEnd, objectKey, arrayValueOrEnd, commaOrEnd, done }

    /// The open containers' bytes in a block of `maximumDepth` (`open` refuses more): no array
    /// to check for uniqueness at every push and pop. The reader frees it.
    private struct ContainerStack {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: JSONStreamReader.maximumDepth)
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }
        var last: UInt8? { count > 0 ? bytes[count &- 1] : nil }

        mutating func append(_ byte: UInt8) {
            precondition(count < JSONStreamReader.maximumDepth)
            bytes[count] = byte
            count &+= 1
        }

        mutating func removeLast() {
            precondition(count > 0)
            count &-= 1
        }
    }

    public init(path: String, chunkSize: Int = JSONStreamReader.defaultChunkSize) throws {
        self.path = path
        self.chunkSize = max(16, chunkSize)
        guard let file = fopen(path, "rb") else {
            throw JSONStreamError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        self.file = file
        buffer = .allocate(capacity: self.chunkSize)
        // On a throw here deinit still runs (every property is set), closing and freeing.
        if try refill(), end - position >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
            position = 3
        }
    }

    /// Tokenizes bytes already in memory (one line of a JSON Lines file): a copy of them is the
    /// only chunk; positions count from `line`. `path` only names the text in errors.
    public init(bytes: UnsafeRawBufferPointer, path: String, line: Int = 1) {
        self.path = path
        chunkSize = max(16, bytes.count)
        file = nil
        buffer = .allocate(capacity: chunkSize)
        if let base = bytes.baseAddress, bytes.count > 0 {
            buffer.initialize(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        end = bytes.count
        bytesRead = bytes.count
        atEOF = true
        self.line = line
    }

    deinit {
        close()
        buffer.deallocate()
        if let internArrays {
            internArrays.deinitialize(count: Self.internSlots)
            internArrays.deallocate()
        }
        internBytes?.deallocate()
        internCounts?.deallocate()
        stack.bytes.deallocate()
    }

    /// Closes the file early; further reads see end of file.
    public func close() {
        if let file { fclose(file) }
        file = nil
        atEOF = true
    }

    // MARK: Public reading

    /// The next token, or nil after the top-level value when only whitespace follows.
    public func next() throws -> JSONToken? {
        try nextToken(materialize: true)
    }

    /// Reads the whole next value (where a value is expected) into a `JSONValue`.
    public func readValue() throws -> JSONValue {
        guard let token = try next() else { throw JSONStreamError.misuse("readValue() after the end of the JSON text") }
        return try readValue(startingWith: token)
    }

    /// Completes a value whose first token the caller already took with `next()`.
    public func readValue(startingWith token: JSONToken) throws -> JSONValue {
        switch token {
        case .beginObject:
            var members: [(String, JSONValue)] = []
            while true {
                guard let token = try next() else { throw invalid("unexpected end of file") }
                if token == .endObject { return .object(members) }
                guard case let .key(key) = token else { throw JSONStreamError.misuse("expected a key, got \(token)") }
                members.append((key, try readValue()))
            }
        case .beginArray:
            var elements: [JSONValue] = []
            while true {
                guard let token = try next() else { throw invalid("unexpected end of file") }
                if token == .endArray { return .array(elements) }
                elements.append(try readValue(startingWith: token))
            }
        case let .string(text): return .string(text)
        case let .number(number): return .number(number)
        case let .bool(flag): return .bool(flag)
        case .null: return .null
        case .endObject, .endArray, .key:
            throw JSONStreamError.misuse("readValue() where \(token) comes next, not a value")
        }
    }

    /// Completes a value whose first token the caller already took, keeping only the members
    /// `filter` names (at any depth; an array's elements share its filter). The others are
    /// skipped without building their strings.
    public func readValue(startingWith token: JSONToken, keeping filter: JSONKeyFilter) throws -> JSONValue {
        if filter.countOnly {
            guard token == .beginArray else { return try readValue(startingWith: token) }
            var elements: [JSONValue] = []
            while true {
                guard let token = try nextToken(materialize: false) else { throw invalid("unexpected end of file") }
                if token == .endArray { return .array(elements) }
                try skipValue(startingWith: token)
                elements.append(.null)
            }
        }
        if filter.members == nil { return try readValue(startingWith: token) }
        switch token {
        case .beginObject:
            var kept: [(String, JSONValue)] = []
            while true {
                // The key goes to `keyBytes`, not into a String: most keys are skipped.
                guard let token = try nextToken(materialize: false, keyToScratch: true) else {
                    throw invalid("unexpected end of file")
                }
                if token == .endObject { return .object(kept) }
                guard case .key = token else { throw JSONStreamError.misuse("expected a key, got \(token)") }
                let member = withKey { filter.member($0) }
                if let (name, child) = member {
                    guard let first = try next() else { throw invalid("unexpected end of file") }
                    kept.append((name, try readValue(startingWith: first, keeping: child)))
                } else {
                    try skipValue()
                }
            }
        case .beginArray:
            var elements: [JSONValue] = []
            while true {
                guard let token = try next() else { throw invalid("unexpected end of file") }
                if token == .endArray { return .array(elements) }
                elements.append(try readValue(startingWith: token, keeping: filter))
            }
        default:
            return try readValue(startingWith: token)
        }
    }

    /// Skips the next value (where a value is expected) without building its strings.
    public func skipValue() throws {
        guard let token = try nextToken(materialize: false) else {
            throw JSONStreamError.misuse("skipValue() after the end of the JSON text")
        }
        try skipValue(startingWith: token)
    }

    /// Skips the rest of a value whose first token the caller already took.
    public func skipValue(startingWith token: JSONToken) throws {
        switch token {
        case .beginObject, .beginArray:
            if skipContainerInBuffer() { return }
            let target = stack.count - 1
            while stack.count > target {
                guard try nextToken(materialize: false) != nil else { throw invalid("unexpected end of file") }
            }
        case .string, .number, .bool, .null: return
        case .endObject, .endArray, .key:
            throw JSONStreamError.misuse("skipValue() where \(token) comes next, not a value")
        }
    }

    // MARK: Direct decoding (HAR entries, Charles transactions)

    /// The next token inside a value (end of file there is an error, as for `readValue`).
    /// `materialize` false: a string comes back empty (skipped unread).
    @inline(__always)
    func token(materialize: Bool = true) throws -> JSONToken {
        guard let token = try nextToken(materialize: materialize) else { throw invalid("unexpected end of file") }
        return token
    }

    /// Inside an object: reads the next member's key into the key scratch (no String made) and
    /// returns true, or consumes the closing brace and returns false.
    @inline(__always)
    func nextMemberKey() throws -> Bool {
        if let more = memberKeyInBuffer() { return more }
        guard let token = try nextToken(materialize: false, keyToScratch: true) else {
            throw invalid("unexpected end of file")
        }
        if token == .endObject { return false }
        guard case .key = token else { throw JSONStreamError.misuse("expected a key, got \(token)") }
        return true
    }

    /// Whether the key `nextMemberKey()` read is `name`, compared as bytes.
    @inline(__always)
    func keyIs(_ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard keyCount == count else { return false }
        if count == 0 { return true }
        if keyStart >= 0 { return memcmp(buffer + keyStart, name.utf8Start, count) == 0 }
        return keyBytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, name.utf8Start, count) == 0 }
    }

    /// The key `nextMemberKey()` (or a `keyToScratch` token) read, as bytes.
    @inline(__always)
    private func withKey<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if keyStart >= 0 { return body(UnsafeBufferPointer(start: buffer + keyStart, count: keyCount)) }
        return keyBytes.withUnsafeBufferPointer(body)
    }

    /// The value a member holds where only a scalar, or the kind of a container, is used: a
    /// scalar as read; an object or an array is skipped unread and stands as an empty one (its
    /// kind, for messages).
    func scalarOrKind(startingWith token: JSONToken) throws -> JSONValue {
        switch token {
        case .beginObject:
            try skipValue(startingWith: token)
            return .object([])
        case .beginArray:
            try skipValue(startingWith: token)
            return .array([])
        case let .string(text): return .string(text)
        case let .number(number): return .number(number)
        case let .bool(flag): return .bool(flag)
        case .null: return .null
        case .endObject, .endArray, .key:
            throw JSONStreamError.misuse("a value expected where \(token) comes next")
        }
    }

    /// The next member's value as `scalarOrKind`.
    @inline(__always)
    func scalarOrKind() throws -> JSONValue {
        try scalarOrKind(startingWith: try token())
    }

    /// The next member's value where a string's bytes are used (a body's text): a string as
    /// `.bytes` (no String made), anything else as `scalarOrKind`.
    func textOrKind() throws -> JSONText {
        if state == .value {
            try skipWhitespace()
            if let byte = try peek(), byte == 0x22 {
                advance(byte)
                let bytes = try readStringBytes()
                afterValue()
                return .bytes(bytes)
            }
        }
        return .other(try scalarOrKind())
    }

    /// The next value as a length when it is an array (its elements skipped unread), else as
    /// `scalarOrKind`.
    func countOrKind() throws -> JSONCount {
        let first = try token(materialize: false)
        guard first == .beginArray else {
            return .other(try scalarOrKind(startingWith: first))
        }
        var count = 0
        while true {
            let element = try token(materialize: false)
            if element == .endArray { return .count(count) }
            try skipValue(startingWith: element)
            count += 1
        }
    }

    /// "an object", "a string", ... of the value a token begins.
    static func kindName(_ token: JSONToken) -> String {
        switch token {
        case .beginObject: return "an object"
        case .beginArray: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        case .endObject, .endArray, .key: return "\(token)"
        }
    }

    // MARK: Fast paths over the buffer
    //
    // Each scans bytes already in the buffer without changing the reader's state, and commits
    // (position, line, column, state, stack) only when what it scanned is complete and valid
    // JSON; anything else (an escape it does not take, the buffer's end, a fault) leaves the
    // bytes to the token path, which reads them with the same results and the same errors.

    /// From `start`, the first byte in the buffer that ends a plain run of string bytes (`"`,
    /// `\`, a control byte; `end` when none), how many of the bytes before it begin a UTF-8
    /// character (the columns they take), and whether they are all ASCII. Eight bytes at a time
    /// but for the buffer's last few.
    @inline(__always)
    private func plainRun(from start: Int) -> (stop: Int, scalars: Int, ascii: Bool) {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = start
        var scalars = 0
        var high: UInt64 = 0
        while index &+ 8 <= end {
            // Byte i of the text is byte i of the word from its low end.
            let word = UInt64(littleEndian: UnsafeRawPointer(buffer + index).loadUnaligned(as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // The high bit of a byte set where `quote` or `backslash` is zero or `word` is under
            // 0x20. A flag can be wrong only above a right one (a borrow runs upward), so the
            // lowest flag is the first byte that ends the run.
            let stops = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)) & highs
            var run = word
            var taken = 8
            if stops != 0 {
                taken = stops.trailingZeroBitCount &>> 3
                run = word & ((1 &<< UInt64(taken &* 8)) &- 1)
            }
            // Continuation bytes (10xxxxxx) take no column; their count is summed in the top
            // byte of a multiplication (no popcount instruction on baseline x86-64).
            if run & highs == 0 {
                scalars &+= taken
            } else {
                let continuations = (run & ~(run &<< 1) & highs) &>> 7
                scalars &+= taken &- Int(truncatingIfNeeded: (continuations &* ones) &>> 56)
            }
            high |= run
            index &+= taken
            if stops != 0 { return (index, scalars, high & highs == 0) }
        }
        while index < end {
            let byte = buffer[index]
            if byte == 0x22 || byte == 0x5C || byte < 0x20 { break }
            scalars &+= Int(truncatingIfNeeded: (byte & 0xC0 != 0x80) ? 1 : 0)
            high |= UInt64(byte)
            index &+= 1
        }
        return (index, scalars, high & highs == 0)
    }

    /// A scan's place: index in the buffer, and the line and column there.
    private struct Cursor {
        var index: Int
        var line: Int
        var column: Int
    }

    @inline(__always)
    private func cursor() -> Cursor { Cursor(index: position, line: line, column: column) }

    @inline(__always)
    private func commit(_ cursor: Cursor) {
        position = cursor.index
        line = cursor.line
        column = cursor.column
    }

    @inline(__always)
    private func skipSpace(_ cursor: inout Cursor) {
        cursor.index = whitespaceEnd(from: cursor.index, line: &cursor.line, column: &cursor.column)
    }

    /// One ASCII byte.
    @inline(__always)
    private func take(_ cursor: inout Cursor, _ byte: UInt8) -> Bool {
        guard cursor.index < end, buffer[cursor.index] == byte else { return false }
        cursor.index &+= 1
        cursor.column &+= 1
        return true
    }

    /// A string without escapes or control bytes, from its opening quote: the bytes between the
    /// quotes (and whether they are ASCII), the cursor after the closing one.
    @inline(__always)
    private func plainString(_ cursor: inout Cursor) -> (bytes: UnsafeBufferPointer<UInt8>, ascii: Bool)? {
        guard cursor.index < end, buffer[cursor.index] == 0x22 else { return nil }
        let start = cursor.index &+ 1
        let (index, scalars, ascii) = plainRun(from: start)
        guard index < end, buffer[index] == 0x22 else { return nil }
        cursor.column &+= scalars &+ 2
        cursor.index = index &+ 1
        return (UnsafeBufferPointer(start: buffer + start, count: index - start), ascii)
    }

    /// A string's bytes as a String holds them: ASCII as it is, anything else through String's
    /// decoding, which repairs ill-formed UTF-8 (as every string this reader makes).
    @inline(__always)
    static func utf8Array(_ bytes: UnsafeBufferPointer<UInt8>, ascii: Bool) -> [UInt8] {
        ascii ? Array(bytes) : Array(String(decoding: bytes, as: UTF8.self).utf8)
    }

    /// `"name"`, white space, `:`, white space (`name` is ASCII).
    @inline(__always)
    private func memberKey(_ cursor: inout Cursor, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        let index = cursor.index
        guard index &+ count &+ 2 <= end, buffer[index] == 0x22, buffer[index &+ count &+ 1] == 0x22,
            memcmp(buffer + (index &+ 1), name.utf8Start, count) == 0
        else { return false }
        cursor.index = index &+ count &+ 2
        cursor.column &+= count &+ 2
        skipSpace(&cursor)
        guard take(&cursor, UInt8(ascii: ":")) else { return false }
        skipSpace(&cursor)
        return true
    }

    /// Inside an object, the next member's key when it is a plain string and it and the `:`
    /// after it are in the buffer: true, the key at `keyStart`, the value next; false when the
    /// object closes here (the `}` read). Nil otherwise, nothing read.
    @inline(__always)
    private func memberKeyInBuffer() -> Bool? {
        let afterMember: Bool
        switch state {
        case .objectKeyOrEnd: afterMember = false
        case .commaOrEnd:
            guard stack.last == UInt8(ascii: "{") else { return nil }
            afterMember = true
        default: return nil
        }
        var cursor = cursor()
        skipSpace(&cursor)
        guard cursor.index < end else { return nil }
        if buffer[cursor.index] == UInt8(ascii: "}") {
            cursor.index &+= 1
            cursor.column &+= 1
            commit(cursor)
            stack.removeLast()
            afterValue()
            return false
        }
        if afterMember {
            guard take(&cursor, UInt8(ascii: ",")) else { return nil }
            skipSpace(&cursor)
        }
        guard let key = plainString(&cursor) else { return nil }
        skipSpace(&cursor)
        guard take(&cursor, UInt8(ascii: ":")) else { return nil }
        skipSpace(&cursor)
        commit(cursor)
        state = .value
        keyStart = key.bytes.baseAddress! - UnsafePointer(buffer)
        keyCount = key.bytes.count
        return true
    }

    /// The next element of an open array when it is exactly `{"name": "…", "value": "…"}` (white
    /// space anywhere, plain strings): both strings' bytes (as `utf8Array`), the element read.
    /// Nil otherwise, nothing read.
    func nameValueElementInBuffer() -> (name: [UInt8], value: [UInt8])? {
        guard state == .arrayValueOrEnd || state == .commaOrEnd, stack.last == UInt8(ascii: "["),
            stack.count < Self.maximumDepth
        else { return nil }
        var cursor = cursor()
        skipSpace(&cursor)
        if state == .commaOrEnd {
            guard take(&cursor, UInt8(ascii: ",")) else { return nil }
            skipSpace(&cursor)
        }
        guard take(&cursor, UInt8(ascii: "{")) else { return nil }
        skipSpace(&cursor)
        guard memberKey(&cursor, "name"), let name = plainString(&cursor) else { return nil }
        skipSpace(&cursor)
        guard take(&cursor, UInt8(ascii: ",")) else { return nil }
        skipSpace(&cursor)
        guard memberKey(&cursor, "value"), let value = plainString(&cursor) else { return nil }
        skipSpace(&cursor)
        guard take(&cursor, UInt8(ascii: "}")) else { return nil }
        commit(cursor)
        state = .commaOrEnd
        return (intern(name.bytes, ascii: name.ascii), intern(value.bytes, ascii: value.ascii))
    }

    /// `utf8Array` of the bytes, shared with the last equal ASCII text of its table slot
    /// (see `internArrays`).
    @inline(__always)
    private func intern(_ bytes: UnsafeBufferPointer<UInt8>, ascii: Bool) -> [UInt8] {
        let count = bytes.count
        guard ascii, count <= Self.internMaximum else { return Self.utf8Array(bytes, ascii: ascii) }
        guard let base = bytes.baseAddress, count > 0 else { return [] }
        // A multiplicative hash of eight bytes at a time; the last eight (overlapping) for the
        // tail, byte by byte only for a text under eight bytes.
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var hash = UInt64(truncatingIfNeeded: count)
        if count >= 8 {
            var index = 0
            while index &+ 8 <= count {
                hash = (hash ^ UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) &* multiplier
                hash ^= hash &>> 29
                index &+= 8
            }
            if index < count {
                hash = (hash ^ UnsafeRawPointer(base + (count &- 8)).loadUnaligned(as: UInt64.self)) &* multiplier
            }
        } else {
            for index in 0..<count { hash = (hash ^ UInt64(base[index])) &* multiplier }
        }
        hash ^= hash &>> 32
        if internArrays == nil { makeInternTable() }
        let arrays = internArrays.unsafelyUnwrapped
        let counts = internCounts.unsafelyUnwrapped
        let slot = Int(truncatingIfNeeded: hash & UInt64(Self.internSlots &- 1))
        let bytesOfSlot = internBytes.unsafelyUnwrapped + slot &* Self.internMaximum
        if counts[slot] == count, memcmp(bytesOfSlot, base, count) == 0 { return arrays[slot] }
        let made = Array(bytes)
        arrays[slot] = made
        bytesOfSlot.update(from: base, count: count)
        counts[slot] = count
        return made
    }

    @inline(never)
    private func makeInternTable() {
        let arrays = UnsafeMutablePointer<[UInt8]>.allocate(capacity: Self.internSlots)
        arrays.initialize(repeating: [], count: Self.internSlots)
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: Self.internSlots)
        counts.initialize(repeating: 0, count: Self.internSlots)
        internBytes = .allocate(capacity: Self.internSlots * Self.internMaximum)
        internCounts = counts
        internArrays = arrays
    }

    /// A whole string from its opening quote, escapes checked, nothing decoded.
    @inline(__always)
    private func skipStringInBuffer(_ cursor: inout Cursor) -> Bool {
        var index = cursor.index &+ 1
        var column = cursor.column &+ 1
        while index < end {
            let (stop, scalars, _) = plainRun(from: index)
            index = stop
            column &+= scalars
            guard index < end else { return false }
            let byte = buffer[index]
            if byte == 0x22 {
                cursor.index = index &+ 1
                cursor.column = column &+ 1
                return true
            }
            if byte < 0x20 { return false }
            if byte == 0x5C {
                guard index &+ 1 < end else { return false }
                switch buffer[index &+ 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index &+= 2
                    column &+= 2
                case UInt8(ascii: "u"):
                    guard index &+ 6 <= end else { return false }
                    for offset in 2..<6 where !Self.isHex(buffer[index &+ offset]) { return false }
                    index &+= 6
                    column &+= 6
                default:
                    return false
                }
                continue
            }
            return false  // a control byte
        }
        return false
    }

    @inline(__always)
    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }

    @inline(__always)
    private static func isDigitByte(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// The end of a number that starts at `start` and is valid and complete inside the buffer
    /// (a byte other than the number's follows it), else nil; `integral`: no fraction or exponent.
    @inline(__always)
    private func numberEnd(from start: Int, integral: inout Bool) -> Int? {
        var index = start
        if index < end, buffer[index] == UInt8(ascii: "-") { index &+= 1 }
        guard index < end else { return nil }
        if buffer[index] == UInt8(ascii: "0") {
            index &+= 1
            if index < end, Self.isDigitByte(buffer[index]) { return nil }
        } else if Self.isDigitByte(buffer[index]) {
            while index < end, Self.isDigitByte(buffer[index]) { index &+= 1 }
        } else {
            return nil
        }
        integral = true
        if index < end, buffer[index] == UInt8(ascii: ".") {
            integral = false
            index &+= 1
            guard index < end, Self.isDigitByte(buffer[index]) else { return nil }
            while index < end, Self.isDigitByte(buffer[index]) { index &+= 1 }
        }
        if index < end, buffer[index] | 0x20 == UInt8(ascii: "e") {
            integral = false
            index &+= 1
            if index < end, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index &+= 1 }
            guard index < end, Self.isDigitByte(buffer[index]) else { return nil }
            while index < end, Self.isDigitByte(buffer[index]) { index &+= 1 }
        }
        return index < end ? index : nil
    }

    /// A number wholly inside the buffer, read without copying (nil: the token path reads it).
    @inline(__always)
    private func readNumberInBuffer(materialize: Bool) -> JSONNumber? {
        var integral = false
        guard let stop = numberEnd(from: position, integral: &integral) else { return nil }
        let start = position
        column &+= stop &- start
        position = stop
        guard materialize else { return .skipped }
        let run = UnsafeBufferPointer(start: buffer + start, count: stop &- start)
        guard integral else { return JSONNumber(raw: String(decoding: run, as: UTF8.self), intValue: nil) }
        let negative = run[0] == UInt8(ascii: "-")
        let digits = run.count - (negative ? 1 : 0)
        guard digits <= 18 else {
            let raw = String(decoding: run, as: UTF8.self)
            return JSONNumber(raw: raw, intValue: Int(raw))
        }
        var value = 0
        for byte in run[(negative ? 1 : 0)...] { value = value &* 10 &+ Int(byte &- 0x30) }
        // JSON has no leading zeros or `+`: every integer is written as `String(value)` but -0.
        if negative, value == 0 { return JSONNumber(raw: "-0", intValue: 0) }
        return JSONNumber(canonical: negative ? -value : value)
    }

    /// Skips the rest of the container just opened (its opening token taken, nothing of its
    /// content) when all of it is in the buffer and valid JSON: true, and it is closed.
    private func skipContainerInBuffer() -> Bool {
        guard let top = stack.last,
            (top == UInt8(ascii: "{") && state == .objectKeyOrEnd) || (top == UInt8(ascii: "[") && state == .arrayValueOrEnd)
        else { return false }
        // Containers it may open: the token path refuses a push at `maximumDepth`; the local
        // stack is one bit per level (1: object).
        let room = min(Self.maximumDepth - stack.count, 63)
        var objects: UInt64 = top == UInt8(ascii: "{") ? 1 : 0
        var depth = 0
        enum Expect { case keyOrEnd, key, valueOrEnd, value, commaOrEnd }
        var expect: Expect = top == UInt8(ascii: "{") ? .keyOrEnd : .valueOrEnd
        var cursor = cursor()
        while true {
            skipSpace(&cursor)
            guard cursor.index < end else { return false }
            let byte = buffer[cursor.index]
            var closes = false
            switch expect {
            case .keyOrEnd, .key:
                if byte == UInt8(ascii: "}"), expect == .keyOrEnd {
                    closes = true
                } else {
                    guard byte == 0x22, skipStringInBuffer(&cursor) else { return false }
                    skipSpace(&cursor)
                    guard take(&cursor, UInt8(ascii: ":")) else { return false }
                    expect = .value
                    continue
                }
            case .valueOrEnd, .value:
                if byte == UInt8(ascii: "]"), expect == .valueOrEnd {
                    closes = true
                    break
                }
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard depth &+ 1 <= room else { return false }
                    depth &+= 1
                    if byte == UInt8(ascii: "{") {
                        objects |= 1 << UInt64(depth)
                        expect = .keyOrEnd
                    } else {
                        objects &= ~(1 << UInt64(depth))
                        expect = .valueOrEnd
                    }
                    cursor.index &+= 1
                    cursor.column &+= 1
                    continue
                case 0x22:
                    guard skipStringInBuffer(&cursor) else { return false }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    var integral = false
                    guard let stop = numberEnd(from: cursor.index, integral: &integral) else { return false }
                    cursor.column &+= stop &- cursor.index
                    cursor.index = stop
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let word: StaticString = byte == UInt8(ascii: "t") ? "true" : byte == UInt8(ascii: "f") ? "false" : "null"
                    let count = word.utf8CodeUnitCount
                    guard cursor.index &+ count <= end, memcmp(buffer + cursor.index, word.utf8Start, count) == 0 else {
                        return false
                    }
                    cursor.index &+= count
                    cursor.column &+= count
                default:
                    return false
                }
                expect = .commaOrEnd
                continue
            case .commaOrEnd:
                let inObject = (objects >> UInt64(depth)) & 1 == 1
                if byte == UInt8(ascii: ",") {
                    cursor.index &+= 1
                    cursor.column &+= 1
                    expect = inObject ? .key : .value
                    continue
                }
                guard byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                closes = true
            }
            // `byte` closes the container at `depth`.
            guard closes else { return false }
            cursor.index &+= 1
            cursor.column &+= 1
            if depth == 0 {
                commit(cursor)
                stack.removeLast()
                afterValue()
                return true
            }
            depth &-= 1
            expect = .commaOrEnd
        }
    }

    // MARK: Bytes

    private func refill() throws -> Bool {
        guard !atEOF, let file else { return false }
        if keyStart >= 0 {
            // The key's bytes are about to be overwritten.
            keyBytes = Array(UnsafeBufferPointer(start: buffer + keyStart, count: keyCount))
            keyStart = -1
        }
        let count = fread(buffer, 1, chunkSize, file)
        if count == 0 {
            if ferror(file) != 0 {
                let reason = String(cString: strerror(errno))
                atEOF = true
                throw JSONStreamError.readFailed(path: path, reason: reason)
            }
            atEOF = true
            return false
        }
        position = 0
        end = count
        bytesRead += count
        return true
    }

    @inline(__always)
    private func peek() throws -> UInt8? {
        if position == end, !(try refill()) { return nil }
        return buffer[position]
    }

    @inline(__always)
    private func advance(_ byte: UInt8) {
        position += 1
        if byte == 0x0A {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private func invalid(_ reason: String) -> JSONStreamError {
        .invalidJSON(line: line, column: column, reason: reason)
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x20, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count < 2 ? "0" + hex : hex)"
    }

    private func skipWhitespace() throws {
        while true {
            if position == end, !(try refill()) { return }
            var line = self.line
            var column = self.column
            let index = whitespaceEnd(from: position, line: &line, column: &column)
            self.line = line
            self.column = column
            position = index
            if index < end { return }
        }
    }

    /// From `start`, the first byte in the buffer that is not JSON white space (`end` when
    /// none), `line` and `column` moved past what it passes. A run of spaces (a pretty-printed
    /// file's indentation, up to half of its bytes) goes eight bytes at a time.
    @inline(__always)
    private func whitespaceEnd(from start: Int, line: inout Int, column: inout Int) -> Int {
        let spaces: UInt64 = 0x2020_2020_2020_2020
        var index = start
        while index < end {
            let byte = buffer[index]
            if byte == 0x20 {
                index &+= 1
                column &+= 1
                while index &+ 8 <= end {
                    let word = UInt64(littleEndian: UnsafeRawPointer(buffer + index).loadUnaligned(as: UInt64.self))
                    let other = word ^ spaces
                    if other != 0 {
                        // The bytes before the first one that is not a space (little-endian order).
                        let run = other.trailingZeroBitCount &>> 3
                        index &+= run
                        column &+= run
                        break
                    }
                    index &+= 8
                    column &+= 8
                }
            } else if byte == 0x0A {
                index &+= 1
                line &+= 1
                column = 1
            } else if byte == 0x09 || byte == 0x0D {
                index &+= 1
                column &+= 1
            } else {
                break
            }
        }
        return index
    }

    // MARK: Tokens

    private func nextToken(materialize: Bool, keyToScratch: Bool = false) throws -> JSONToken? {
        while true {
            try skipWhitespace()
            guard let byte = try peek() else {
                switch state {
                case .done: return nil
                case .start: throw invalid("the file holds no JSON value")
                default: throw invalid("unexpected end of file")
                }
            }
            switch state {
            case .done:
                throw invalid("unexpected \(Self.describe(byte)) after the top-level value")
            case .start, .value:
                return try valueToken(byte, materialize: materialize)
            case .arrayValueOrEnd:
                if byte == UInt8(ascii: "]") {
                    advance(byte)
                    return close(.endArray)
                }
                return try valueToken(byte, materialize: materialize)
            case .objectKeyOrEnd, .objectKey:
                if byte == UInt8(ascii: "}"), state == .objectKeyOrEnd {
                    advance(byte)
                    return close(.endObject)
                }
                guard byte == UInt8(ascii: "\"") else {
                    throw invalid("expected a key in double quotes, found \(Self.describe(byte))")
                }
                advance(byte)
                let key = try readString(materialize: materialize, toScratch: keyToScratch)
                try skipWhitespace()
                guard let colon = try peek() else { throw invalid("unexpected end of file") }
                guard colon == UInt8(ascii: ":") else {
                    throw invalid("expected ':' after a key, found \(Self.describe(colon))")
                }
                advance(colon)
                state = .value
                return .key(key)
            case .commaOrEnd:
                let inObject = stack.last == UInt8(ascii: "{")
                if byte == UInt8(ascii: ",") {
                    advance(byte)
                    state = inObject ? .objectKey : .value
                    continue
                }
                if inObject, byte == UInt8(ascii: "}") {
                    advance(byte)
                    return close(.endObject)
                }
                if !inObject, byte == UInt8(ascii: "]") {
                    advance(byte)
                    return close(.endArray)
                }
                throw invalid("expected ',' or '\(inObject ? "}" : "]")', found \(Self.describe(byte))")
            }
        }
    }

    private func close(_ token: JSONToken) -> JSONToken {
        stack.removeLast()
        afterValue()
        return token
    }

    private func afterValue() {
        state = stack.isEmpty ? .done : .commaOrEnd
    }

    private func open(_ byte: UInt8) throws {
        guard stack.count < Self.maximumDepth else { throw invalid("nesting deeper than \(Self.maximumDepth) levels") }
        advance(byte)
        stack.append(byte)
        state = byte == UInt8(ascii: "{") ? .objectKeyOrEnd : .arrayValueOrEnd
    }

    private func valueToken(_ byte: UInt8, materialize: Bool) throws -> JSONToken {
        switch byte {
        case UInt8(ascii: "{"):
            try open(byte)
            return .beginObject
        case UInt8(ascii: "["):
            try open(byte)
            return .beginArray
        case UInt8(ascii: "\""):
            advance(byte)
            let text = try readString(materialize: materialize)
            afterValue()
            return .string(text)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try readNumberInBuffer(materialize: materialize) ?? readNumber()
            afterValue()
            return .number(number)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            afterValue()
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            afterValue()
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            afterValue()
            return .null
        default:
            throw invalid("expected a value, found \(Self.describe(byte))")
        }
    }

    private func expectLiteral(_ word: StaticString) throws {
        let startLine = line
        let startColumn = column
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard let byte = try peek(), byte == expected else {
                throw JSONStreamError.invalidJSON(
                    line: startLine, column: startColumn, reason: "invalid literal (expected '\(word)')")
            }
            advance(byte)
        }
    }

    private func readNumber() throws -> JSONNumber {
        var raw: [UInt8] = []
        func take() throws {
            let byte = try peek()!
            raw.append(byte)
            advance(byte)
        }
        func digits() throws {
            guard try peek().map(isDigit) == true else {
                throw invalid(
                    try peek().map { "expected a digit, found \(Self.describe($0))" } ?? "unexpected end of file")
            }
            while try peek().map(isDigit) == true { try take() }
        }
        if try peek() == UInt8(ascii: "-") { try take() }
        if try peek() == UInt8(ascii: "0") {
            try take()
            if try peek().map(isDigit) == true { throw invalid("leading zeros are not allowed in numbers") }
        } else {
            try digits()
        }
        if try peek() == UInt8(ascii: ".") {
            try take()
            try digits()
        }
        if let byte = try peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            try take()
            if let sign = try peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { try take() }
            try digits()
        }
        return JSONNumber(raw: String(decoding: raw, as: UTF8.self))
    }

    /// Reads after the opening quote up to and including the closing one. `toScratch`: the
    /// key's place is kept (`keyStart`, or `keyBytes`) and "" is returned.
    private func readString(materialize: Bool, toScratch: Bool = false) throws -> String {
        // Fast path: the whole string is plain bytes inside the buffer.
        do {
            let (index, scalars, _) = plainRun(from: position)
            if index < end, buffer[index] == 0x22 {
                let run = UnsafeBufferPointer(start: buffer + position, count: index - position)
                column += scalars + 1
                position = index + 1
                if toScratch {
                    keyStart = run.baseAddress! - UnsafePointer(buffer)
                    keyCount = run.count
                    return ""
                }
                return materialize ? String(decoding: run, as: UTF8.self) : ""
            }
        }
        scratch.removeAll(keepingCapacity: true)
        _ = try decodeString(materialize: materialize || toScratch, into: &scratch)
        defer { releaseLargeScratch() }
        if toScratch {
            keyBytes = scratch.withUnsafeBufferPointer { Array($0) }
            keyStart = -1
            keyCount = keyBytes.count
            return ""
        }
        return materialize ? String(decoding: scratch, as: UTF8.self) : ""
    }

    /// `readString` for a string whose bytes are wanted (a body's text): its UTF-8 as a String
    /// would hold it (`utf8Array`), without making the String.
    private func readStringBytes() throws -> [UInt8] {
        let (index, scalars, ascii) = plainRun(from: position)
        if index < end, buffer[index] == 0x22 {
            let run = UnsafeBufferPointer(start: buffer + position, count: index - position)
            column += scalars + 1
            position = index + 1
            return Self.utf8Array(run, ascii: ascii)
        }
        scratch.removeAll(keepingCapacity: true)
        let decodedASCII = try decodeString(materialize: true, into: &scratch)
        defer { releaseLargeScratch() }
        if decodedASCII || Self.isWellFormedUTF8(scratch) { return scratch.withUnsafeBufferPointer { Array($0) } }
        return Array(String(decoding: scratch, as: UTF8.self).utf8)
    }

    /// `scratch` keeps its room for the next string unless one made it over 1 MiB.
    @inline(__always)
    private func releaseLargeScratch() {
        if scratch.capacity > 1 << 20 { scratch = [] }
    }

    /// The token path of a string, after its opening quote up to and including the closing one:
    /// its decoded bytes appended to `out` (none when not `materialize`). True when they are all
    /// ASCII; otherwise they may be ill-formed UTF-8 (raw bytes of the file), which a String
    /// made of them repairs.
    private func decodeString(materialize: Bool, into out: inout [UInt8]) throws -> Bool {
        var ascii = true
        var pendingHigh: UInt32? // a high surrogate waiting for its low half
        func emit(_ scalar: UInt32) {
            guard materialize else { return }
            let value = Unicode.Scalar(scalar) ?? "\u{FFFD}"
            if value.value >= 0x80 { ascii = false }
            out.append(contentsOf: UTF8.encode(value)!)
        }
        func flushPending() {
            if pendingHigh != nil {
                emit(0xFFFD)
                pendingHigh = nil
            }
        }
        while true {
            if position == end, !(try refill()) { throw invalid("unterminated string") }
            // Fast path: a run of plain bytes.
            let (index, scalars, runASCII) = plainRun(from: position)
            if index > position {
                flushPending()
                if materialize {
                    out.append(contentsOf: UnsafeBufferPointer(start: buffer + position, count: index - position))
                    if !runASCII { ascii = false }
                }
                column += scalars
                position = index
            }
            if index == end { continue }
            let byte = buffer[index]
            if byte == 0x22 {
                flushPending()
                advance(byte)
                break
            }
            if byte < 0x20 { throw invalid("unescaped control character \(Self.describe(byte)) in a string") }
            // A backslash. Fast path: a one-letter escape whose letter is in the buffer (two
            // ASCII bytes, two columns).
            if pendingHigh == nil, index &+ 1 < end, let decoded = Self.shortEscape(buffer[index &+ 1]) {
                if materialize { out.append(decoded) }
                position = index &+ 2
                column &+= 2
                continue
            }
            advance(byte)
            guard let escape = try peek() else { throw invalid("unterminated string") }
            if escape == UInt8(ascii: "u") {
                advance(escape)
                var code: UInt32 = 0
                for _ in 0..<4 {
                    guard let hex = try peek() else { throw invalid("unterminated string") }
                    let digit: UInt32
                    switch hex {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(hex - 0x30)
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(hex - 0x61 + 10)
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(hex - 0x41 + 10)
                    default: throw invalid("invalid \\u escape: \(Self.describe(hex)) is not a hex digit")
                    }
                    code = code << 4 | digit
                    advance(hex)
                }
                switch code {
                case 0xD800...0xDBFF:
                    flushPending()
                    pendingHigh = code
                case 0xDC00...0xDFFF:
                    if let high = pendingHigh {
                        pendingHigh = nil
                        emit(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
                    } else {
                        emit(0xFFFD)
                    }
                default:
                    flushPending()
                    emit(code)
                }
                continue
            }
            flushPending()
            guard let decoded = Self.shortEscape(escape) else {
                throw invalid("invalid escape '\\' followed by \(Self.describe(escape))")
            }
            advance(escape)
            if materialize { out.append(decoded) }
        }
        return ascii
    }

    /// The byte a one-letter escape (`\n`, `\"`, ...) stands for; nil for `u` and for a letter
    /// that is no escape.
    @inline(__always)
    private static func shortEscape(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return letter
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        default: return nil
        }
    }

    /// Whether `bytes` are well-formed UTF-8 (The Unicode Standard, table 3-7): then a String
    /// made of them holds them unchanged.
    static func isWellFormedUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isWellFormedUTF8($0) }
    }

    static func isWellFormedUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index &+= 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: (length, low) = (3, 0xA0)
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: (length, high) = (3, 0x9F)
            case 0xF0: (length, low) = (4, 0x90)
            case 0xF1...0xF3: length = 4
            case 0xF4: (length, high) = (4, 0x8F)
            default: return false
            }
            guard count - index >= length else { return false }
            let second = bytes[index &+ 1]
            guard second >= low, second <= high else { return false }
            for offset in 2..<length where bytes[index &+ offset] & 0xC0 != 0x80 { return false }
            index &+= length
        }
        return true
    }
}
