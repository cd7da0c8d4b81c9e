/// A bounds-checked reader over handshake bytes: every read past the end returns nil.
struct ByteCursor {
    let bytes: UnsafeRawBufferPointer
    var at = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var remaining: Int { bytes.count - at }

    mutating func u8() -> UInt8? {
        guard at < bytes.count else { return nil }
        defer { at += 1 }
        return bytes[at]
    }

    mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { at += 2 }
        return UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
    }

    mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remaining >= count else { return nil }
        defer { at += count }
        return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + count)])
    }

    /// A vector with a 1- or 2-byte length prefix.
    mutating func vector(lengthBytes: Int) -> UnsafeRawBufferPointer? {
        let length: Int?
        switch lengthBytes {
        case 1: length = u8().map(Int.init)
        default: length = u16().map(Int.init)
        }
        guard let length else { return nil }
        return take(length)
    }
}

/// What a ClientHello tells.
public struct ClientHelloInfo: Sendable, Equatable {
    public var random: [UInt8] = []
    public var sessionID: [UInt8] = []
    public var serverName: String?
    public var offeredALPN: [String] = []
    public var supportedVersions: [UInt16] = []
    public var offersEncryptThenMAC = false
    public var offersExtendedMasterSecret = false
}

/// What a ServerHello (or HelloRetryRequest) tells.
public struct ServerHelloInfo: Sendable, Equatable {
    public var random: [UInt8] = []
    public var sessionID: [UInt8] = []
    /// The negotiated version: supported_versions when present, otherwise legacy_version.
    public var version: UInt16 = 0
    public var cipherSuite: UInt16 = 0
    public var selectedALPN: String?
    public var encryptThenMAC = false
    public var extendedMasterSecret = false
    public var isHelloRetryRequest = false
}

/// The hello parsers for a handshake carried outside TLS records (QUIC's CRYPTO frames, RFC 9001 §4).
public enum TLSHello {
    /// A ClientHello's facts from its handshake message body (after the 4-byte type and length).
    public static func clientHello(_ body: UnsafeRawBufferPointer) -> ClientHelloInfo? { HandshakeParser.clientHello(body) }
    /// A ServerHello's facts from its handshake message body.
    public static func serverHello(_ body: UnsafeRawBufferPointer) -> ServerHelloInfo? { HandshakeParser.serverHello(body) }
    /// A cipher suite's name as connections.csv writes it ("TLS_AES_128_GCM_SHA256", or hex).
    public static func suiteName(_ id: UInt16) -> String { CipherSuite.lookup(id)?.name ?? "0x" + hex16(id) }
}

enum HandshakeParser {
    /// SHA-256("HelloRetryRequest"): the random of a HelloRetryRequest (RFC 8446 §4.1.3).
    static let helloRetryRequestRandom: [UInt8] = [
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
        0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    ]

    static func clientHello(_ body: UnsafeRawBufferPointer) -> ClientHelloInfo? {
        var c = ByteCursor(body)
        var info = ClientHelloInfo()
        guard c.u16() != nil, let random = c.take(32), let session = c.vector(lengthBytes: 1),
            c.vector(lengthBytes: 2) != nil, c.vector(lengthBytes: 1) != nil
        else { return nil }
        info.random = Array(random)
        info.sessionID = Array(session)
        let wellFormed = walkExtensions(&c) { type, data in
            var d = ByteCursor(data)
            switch type {
            case ExtensionType.serverName:
                guard let list = d.vector(lengthBytes: 2) else { return false }
                var l = ByteCursor(list)
                while l.remaining > 0 {
                    guard let nameType = l.u8(), let name = l.vector(lengthBytes: 2) else { return false }
                    if nameType == 0 && info.serverName == nil {
                        info.serverName = String(decoding: name, as: UTF8.self)
                    }
                }
            case ExtensionType.alpn:
                guard let protocols = alpnList(data) else { return false }
                info.offeredALPN = protocols
            case ExtensionType.supportedVersions:
                guard let list = d.vector(lengthBytes: 1) else { return false }
                var l = ByteCursor(list)
                while let version = l.u16() { info.supportedVersions.append(version) }
            case ExtensionType.encryptThenMac: info.offersEncryptThenMAC = true
            case ExtensionType.extendedMasterSecret: info.offersExtendedMasterSecret = true
            default: break
            }
            return true
        }
        guard wellFormed else { return nil }
        return info
    }

    static func serverHello(_ body: UnsafeRawBufferPointer) -> ServerHelloInfo? {
        var c = ByteCursor(body)
        var info = ServerHelloInfo()
        guard let legacyVersion = c.u16(), let random = c.take(32), let session = c.vector(lengthBytes: 1),
            let suite = c.u16(), c.u8() != nil
        else { return nil }
        info.version = legacyVersion
        info.random = Array(random)
        info.sessionID = Array(session)
        info.cipherSuite = suite
        info.isHelloRetryRequest = info.random == helloRetryRequestRandom
        let wellFormed = walkExtensions(&c) { type, data in
            var d = ByteCursor(data)
            switch type {
            case ExtensionType.supportedVersions:
                guard let version = d.u16() else { return false }
                info.version = version
            case ExtensionType.alpn:
                guard let protocols = alpnList(data) else { return false }
                info.selectedALPN = protocols.first
            case ExtensionType.encryptThenMac: info.encryptThenMAC = true
            case ExtensionType.extendedMasterSecret: info.extendedMasterSecret = true
            default: break
            }
            return true
        }
        guard wellFormed else { return nil }
        return info
    }

    /// Hands each extension of a hello's extensions block to `visit` (type and data), which
    /// returns false for a malformed one. True when the hello ends before the block (it has
    /// none) or the block is well formed.
    private static func walkExtensions(
        _ c: inout ByteCursor, _ visit: (UInt16, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        guard c.remaining > 0 else { return true }
        guard let extensions = c.vector(lengthBytes: 2) else { return false }
        var e = ByteCursor(extensions)
        while e.remaining > 0 {
            guard let type = e.u16(), let data = e.vector(lengthBytes: 2), visit(type, data) else { return false }
        }
        return true
    }

    /// EncryptedExtensions (TLS 1.3): the selected ALPN protocol, if any; nil when malformed.
    static func encryptedExtensions(_ body: UnsafeRawBufferPointer) -> String?? {
        var c = ByteCursor(body)
        guard let extensions = c.vector(lengthBytes: 2) else { return nil }
        var e = ByteCursor(extensions)
        var selected: String?
        while e.remaining > 0 {
            guard let type = e.u16(), let data = e.vector(lengthBytes: 2) else { return nil }
            if type == ExtensionType.alpn {
                guard let protocols = alpnList(data) else { return nil }
                selected = protocols.first
            }
        }
        return .some(selected)
    }

    private static func alpnList(_ data: UnsafeRawBufferPointer) -> [String]? {
        var d = ByteCursor(data)
        guard let list = d.vector(lengthBytes: 2) else { return nil }
        var l = ByteCursor(list)
        var protocols: [String] = []
        while l.remaining > 0 {
            guard let name = l.vector(lengthBytes: 1) else { return nil }
            protocols.append(String(decoding: name, as: UTF8.self))
        }
        return protocols
    }
}

/// Cuts one direction's handshake byte stream (plaintext, or decrypted) into messages, which
/// may span records or share one. Only the messages this module reads are buffered; the body
/// of any other message (certificates, key exchange) is skipped as it passes.
struct HandshakeAssembler {
    private var header: [UInt8] = []
    private var body: [UInt8] = []
    private var messageType: UInt8 = 0
    private var bodyRemaining = 0
    private var inBody = false
    private var buffering = false
    /// Longest message buffered (a ClientHello with many extensions is a few KB).
    static let maximumBuffered = 1 << 16

    static func isRead(_ type: UInt8) -> Bool {
        switch type {
        case HandshakeType.clientHello, HandshakeType.serverHello, HandshakeType.encryptedExtensions,
            HandshakeType.finished, HandshakeType.keyUpdate:
            return true
        default: return false
        }
    }

    /// Feeds bytes; calls `message(type, body)` for each complete message (a skipped body
    /// comes as empty with `complete` false).
    mutating func feed(_ bytes: UnsafeRawBufferPointer, message: (UInt8, UnsafeRawBufferPointer, Bool) -> Void) {
        var offset = 0
        while offset < bytes.count {
            if !inBody {
                let take = min(4 - header.count, bytes.count - offset)
                header.append(contentsOf: bytes[offset..<(offset + take)])
                offset += take
                guard header.count == 4 else { return }
                messageType = header[0]
                bodyRemaining = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
                header.removeAll(keepingCapacity: true)
                buffering = Self.isRead(messageType) && bodyRemaining <= Self.maximumBuffered
                body.removeAll(keepingCapacity: true)
                inBody = true
            }
            let take = min(bodyRemaining, bytes.count - offset)
            if buffering { body.append(contentsOf: bytes[offset..<(offset + take)]) }
            offset += take
            bodyRemaining -= take
            if bodyRemaining == 0 {
                inBody = false
                body.withUnsafeBytes { message(messageType, $0, buffering) }
            }
        }
    }
}
