import MessageModel
import TCPReassembly

/// Recognizes TLS and reads the server name (SNI) from the ClientHello when it is visible.
/// Nothing is decrypted.
public struct TLSHelloSniffer {
    private(set) var serverName: String?
    /// The side's first record is a ClientHello: it is the client.
    private(set) var sawClientHello = false
    private var buffer: [UInt8] = []
    private var done = false
    private static let maxBuffered = 16 << 10

    /// Whether the first bytes of a stream are a TLS record header (change-cipher-spec, alert,
    /// handshake or application data, version 3.x): nil while fewer than 3 bytes leave it open.
    public static func classify<Bytes: Collection>(_ bytes: Bytes) -> ConnectionProtocol? where Bytes.Element == UInt8 {
        var count = 0
        for byte in bytes.prefix(3) {
            let fits = count == 0 ? (20...23).contains(byte) : (count == 1 ? byte == 3 : byte <= 4)
            guard fits else { return .http }
            count += 1
        }
        return count == 3 ? .tls : nil
    }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !done else { return }
        buffer.append(contentsOf: bytes.prefix(Self.maxBuffered - buffer.count))
        if buffer.count >= 6, buffer[0] == 22, buffer[5] == 1 { sawClientHello = true }
        switch Self.parseServerName(buffer) {
        case .needMore where buffer.count < Self.maxBuffered: return
        case let .found(name): serverName = name
        default: break
        }
        done = true
        buffer = []
    }

    enum Outcome: Equatable {
        case needMore
        case found(String)
        case absent
    }

    /// Walks record → handshake → ClientHello → extensions → server_name.
    static func parseServerName(_ b: [UInt8]) -> Outcome {
        func u16(_ i: Int) -> Int? { i + 1 < b.count ? Int(b[i]) << 8 | Int(b[i + 1]) : nil }
        guard b.count >= 6 else { return .needMore } // record header and handshake type
        guard b[0] == 22, b[5] == 1 else { return .absent } // not a ClientHello
        var i = 5 + 4 + 2 + 32 // headers, client version, random
        guard i < b.count else { return .needMore }
        i += 1 + Int(b[i]) // session id
        guard let suites = u16(i) else { return .needMore }
        i += 2 + suites
        guard i < b.count else { return .needMore }
        i += 1 + Int(b[i]) // compression methods
        guard let extensionsLength = u16(i) else { return .needMore }
        i += 2
        let end = i + extensionsLength
        while i + 4 <= end {
            guard let type = u16(i), let length = u16(i + 2) else { return .needMore }
            if type == 0 {
                // server_name_list: length, then entries of type(1) length(2) name
                guard let nameLength = u16(i + 7), i + 9 + nameLength <= b.count else { return .needMore }
                return .found(String(decoding: b[(i + 9)..<(i + 9 + nameLength)], as: UTF8.self))
            }
            i += 4 + length
        }
        return i >= b.count ? .needMore : .absent
    }
}
