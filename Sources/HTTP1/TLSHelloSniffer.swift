import TCPReassembly

/// Recognizes TLS and reads the server name (SNI) from the ClientHello when it is visible.
/// Nothing is decrypted.
struct TLSHelloSniffer {
    private(set) var serverName: String?
    private var buffer: [UInt8] = []
    private var done = false
    private static let maxBuffered = 16 << 10

    /// A TLS record header: handshake, alert, change-cipher-spec or application data, version 3.x.
    static func looksLikeTLSRecord(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 3 else { return false }
        return (20...23).contains(bytes[0]) && bytes[1] == 3 && bytes[2] <= 4
    }

    mutating func feed(_ bytes: UnsafeRawBufferPointer, from side: FlowSide) {
        guard !done else { return }
        buffer.append(contentsOf: bytes.prefix(Self.maxBuffered - buffer.count))
        switch Self.parseServerName(buffer) {
        case .needMore where buffer.count < Self.maxBuffered: return
        case let .found(name): serverName = name
        default: break
        }
        done = true
        buffer = []
    }

    enum Outcome: Equatable { case needMore, found(String), absent }

    /// Walks record → handshake → ClientHello → extensions → server_name.
    static func parseServerName(_ b: [UInt8]) -> Outcome {
        func u16(_ i: Int) -> Int? { i + 1 < b.count ? Int(b[i]) << 8 | Int(b[i + 1]) : nil }
        guard b.count >= 5 else { return .needMore }
        guard b[0] == 22, let recordLength = u16(3) else { return .absent }
        guard b.count >= 5 + min(recordLength, 4) else { return .needMore }
        guard b[5] == 1 else { return .absent }  // not a ClientHello
        var i = 5 + 4 + 2 + 32  // headers, client version, random
        guard i < b.count else { return .needMore }
        i += 1 + Int(b[i])  // session id
        guard let suites = u16(i) else { return .needMore }
        i += 2 + suites
        guard i < b.count else { return .needMore }
        i += 1 + Int(b[i])  // compression methods
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
