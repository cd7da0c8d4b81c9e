#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The secrets logged for one connection, found by its ClientHello random.
public struct ConnectionSecrets: Sendable, Equatable {
    /// TLS 1.2 (and earlier): the 48-byte master secret (`CLIENT_RANDOM`).
    public var masterSecret: [UInt8]?
    /// TLS 1.3 traffic secrets.
    public var clientHandshakeTrafficSecret: [UInt8]?
    public var serverHandshakeTrafficSecret: [UInt8]?
    public var clientTrafficSecret0: [UInt8]?
    public var serverTrafficSecret0: [UInt8]?
    /// TLS 1.3 0-RTT (QUIC 0-RTT packets).
    public var clientEarlyTrafficSecret: [UInt8]?

    public init() {}
}

/// A line of a key log that could not be used.
public struct KeyLogIssue: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: String, Sendable {
        /// Fewer or more than three space-separated fields.
        case wrongFieldCount = "expected LABEL CLIENT_RANDOM SECRET"
        /// The client random is not 64 hex digits.
        case badClientRandom = "client random is not 32 bytes of hex"
        /// The secret is not hex, or not a length a TLS secret has (32, 48 or 64 bytes).
        case badSecret = "secret is not 32, 48 or 64 bytes of hex"
        /// A pcapng Decryption Secrets Block whose type is not a TLS key log.
        case notTLSKeyLog = "decryption secrets block is not a TLS key log"
        /// A Decryption Secrets Block shorter than its own header or length field.
        case truncatedBlock = "decryption secrets block is truncated"
    }

    public var file: String
    /// 1-based line number; 0 for a problem with the whole block.
    public var line: Int
    public var problem: Problem

    public var description: String {
        line > 0 ? "\(file):\(line): \(problem.rawValue)" : "\(file): \(problem.rawValue)"
    }
}

/// NSS key log ("SSLKEYLOGFILE") secrets, keyed by client random. Lines with other labels and
/// `#` comments are skipped; malformed lines are reported in `issues` and the rest is used.
public struct KeyLog: Sendable {
    public private(set) var secrets: [[UInt8]: ConnectionSecrets] = [:]
    public private(set) var issues: [KeyLogIssue] = []
    /// The client randoms in the order the log first named them (a dictionary has no order:
    /// QUIC's trial of 1-RTT secrets on a connection found mid-way goes newest first).
    public private(set) var clientRandoms: [[UInt8]] = []

    public init() {}

    /// Parses key log text (any line ending). `file` names the source in issues.
    public init<Bytes: Collection>(text: Bytes, file: String) where Bytes.Element == UInt8 {
        add(text: text, file: file)
    }

    /// The secrets of a pcapng Decryption Secrets Block (block type 0x0000000A): `body` is the
    /// block body after the block type and total length, in the section's byte order.
    public init(decryptionSecretsBlockBody body: [UInt8], bigEndian: Bool, file: String) {
        add(decryptionSecretsBlockBody: body, bigEndian: bigEndian, file: file)
    }

    /// Reads a key log file; throws the `errno` description when it cannot be opened.
    public static func load(path: String) throws -> KeyLog {
        guard let handle = fopen(path, "rb") else { throw KeyLogFileError(path: path, errorNumber: errno) }
        defer { fclose(handle) }
        var content: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let read = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, handle) }
            if read > 0 { content.append(contentsOf: chunk[0..<read]) }
            if read < chunk.count { break }
        }
        if ferror(handle) != 0 { throw KeyLogFileError(path: path, errorNumber: errno) }
        return KeyLog(text: content, file: path)
    }

    public var isEmpty: Bool { secrets.isEmpty }

    public func secrets(forClientRandom random: [UInt8]) -> ConnectionSecrets? { secrets[random] }

    /// Adds the secrets of another key log (later entries win).
    public mutating func merge(_ other: KeyLog) {
        for random in other.clientRandoms {
            guard let entry = other.secrets[random] else { continue }
            if secrets[random] == nil { clientRandoms.append(random) }
            var merged = secrets[random] ?? ConnectionSecrets()
            merged.masterSecret = entry.masterSecret ?? merged.masterSecret
            merged.clientHandshakeTrafficSecret =
                entry.clientHandshakeTrafficSecret ?? merged.clientHandshakeTrafficSecret
            merged.serverHandshakeTrafficSecret =
                entry.serverHandshakeTrafficSecret ?? merged.serverHandshakeTrafficSecret
            merged.clientTrafficSecret0 = entry.clientTrafficSecret0 ?? merged.clientTrafficSecret0
            merged.serverTrafficSecret0 = entry.serverTrafficSecret0 ?? merged.serverTrafficSecret0
            merged.clientEarlyTrafficSecret = entry.clientEarlyTrafficSecret ?? merged.clientEarlyTrafficSecret
            secrets[random] = merged
        }
        issues += other.issues
    }

    public mutating func add(decryptionSecretsBlockBody body: [UInt8], bigEndian: Bool, file: String) {
        func u32(_ at: Int) -> UInt32 {
            let b = (UInt32(body[at]), UInt32(body[at + 1]), UInt32(body[at + 2]), UInt32(body[at + 3]))
            return bigEndian ? b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3 : b.3 << 24 | b.2 << 16 | b.1 << 8 | b.0
        }
        guard body.count >= 8 else {
            issues.append(KeyLogIssue(file: file, line: 0, problem: .truncatedBlock))
            return
        }
        guard u32(0) == 0x544c_534b else {
            issues.append(KeyLogIssue(file: file, line: 0, problem: .notTLSKeyLog))
            return
        }
        let length = Int(u32(4))
        guard length <= body.count - 8 else {
            issues.append(KeyLogIssue(file: file, line: 0, problem: .truncatedBlock))
            return
        }
        add(text: body[8..<(8 + length)], file: file)
    }

    public mutating func add<Bytes: Collection>(text: Bytes, file: String) where Bytes.Element == UInt8 {
        var lineNumber = 0
        var line: [UInt8] = []
        line.reserveCapacity(256)
        var iterator = text.makeIterator()
        var atEnd = false
        while !atEnd {
            line.removeAll(keepingCapacity: true)
            while true {
                guard let byte = iterator.next() else {
                    atEnd = true
                    break
                }
                if byte == UInt8(ascii: "\n") { break }
                line.append(byte)
            }
            if atEnd && line.isEmpty { break }
            lineNumber += 1
            parseLine(line, number: lineNumber, file: file)
        }
    }

    private mutating func parseLine(_ raw: [UInt8], number: Int, file: String) {
        var end = raw.count
        while end > 0,
            raw[end - 1] == UInt8(ascii: "\r") || raw[end - 1] == UInt8(ascii: " ")
                || raw[end - 1] == UInt8(ascii: "\t")
        { end -= 1 }
        var start = 0
        while start < end, raw[start] == UInt8(ascii: " ") || raw[start] == UInt8(ascii: "\t") { start += 1 }
        if start == end || raw[start] == UInt8(ascii: "#") { return }
        let fields = raw[start..<end].split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        guard let labelField = fields.first else { return }
        let label = String(decoding: labelField, as: UTF8.self)
        let known = [
            "CLIENT_RANDOM", "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0", "CLIENT_EARLY_TRAFFIC_SECRET",
        ]
        // Other labels (early traffic, exporter secrets, RSA pre-master secrets...) are not used.
        guard known.contains(label) else {
            if fields.count != 3 || label.contains(where: { !($0.isUppercase || $0 == "_" || $0.isNumber) }) {
                issues.append(KeyLogIssue(file: file, line: number, problem: .wrongFieldCount))
            }
            return
        }
        guard fields.count == 3 else {
            issues.append(KeyLogIssue(file: file, line: number, problem: .wrongFieldCount))
            return
        }
        guard let random = decodeHex(fields[1]), random.count == 32 else {
            issues.append(KeyLogIssue(file: file, line: number, problem: .badClientRandom))
            return
        }
        guard let secret = decodeHex(fields[2]), [32, 48, 64].contains(secret.count) else {
            issues.append(KeyLogIssue(file: file, line: number, problem: .badSecret))
            return
        }
        if label == "CLIENT_RANDOM" && secret.count != 48 {
            issues.append(KeyLogIssue(file: file, line: number, problem: .badSecret))
            return
        }
        if secrets[random] == nil { clientRandoms.append(random) }
        var entry = secrets[random] ?? ConnectionSecrets()
        switch label {
        case "CLIENT_RANDOM": entry.masterSecret = secret
        case "CLIENT_HANDSHAKE_TRAFFIC_SECRET": entry.clientHandshakeTrafficSecret = secret
        case "SERVER_HANDSHAKE_TRAFFIC_SECRET": entry.serverHandshakeTrafficSecret = secret
        case "CLIENT_TRAFFIC_SECRET_0": entry.clientTrafficSecret0 = secret
        case "CLIENT_EARLY_TRAFFIC_SECRET": entry.clientEarlyTrafficSecret = secret
        default: entry.serverTrafficSecret0 = secret
        }
        secrets[random] = entry
    }
}

/// A key log file that could not be read.
public struct KeyLogFileError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var errorNumber: Int32
    public var description: String { "\(path): " + String(cString: strerror(errorNumber)) }
}

/// Hex digits (either case) to bytes; nil for an odd count or a non-hex character.
func decodeHex<Digits: Collection>(_ digits: Digits) -> [UInt8]? where Digits.Element == UInt8 {
    guard digits.count % 2 == 0 else { return nil }
    func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var high: UInt8?
    for c in digits {
        guard let v = value(c) else { return nil }
        if let h = high {
            out.append(h << 4 | v)
            high = nil
        } else {
            high = v
        }
    }
    return out
}
