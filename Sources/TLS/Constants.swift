import Flows

/// TLS record content types (the outer type on the wire, or the inner type of a TLS 1.3 record).
public enum TLSContentType: UInt8, Sendable {
    case changeCipherSpec = 20
    case alert = 21
    case handshake = 22
    case applicationData = 23
    case heartbeat = 24
}

/// Handshake message types this module reads.
enum HandshakeType {
    static let clientHello: UInt8 = 1
    static let serverHello: UInt8 = 2
    static let newSessionTicket: UInt8 = 4
    static let encryptedExtensions: UInt8 = 8
    static let finished: UInt8 = 20
    static let keyUpdate: UInt8 = 24
}

/// Extension numbers this module reads.
enum ExtensionType {
    static let serverName: UInt16 = 0
    static let alpn: UInt16 = 16
    static let encryptThenMac: UInt16 = 22
    static let extendedMasterSecret: UInt16 = 23
    static let supportedVersions: UInt16 = 43
}

/// Protocol versions as written on the wire.
public enum TLSVersion {
    public static let ssl3: UInt16 = 0x0300
    public static let tls10: UInt16 = 0x0301
    public static let tls11: UInt16 = 0x0302
    public static let tls12: UInt16 = 0x0303
    public static let tls13: UInt16 = 0x0304

    /// "TLS 1.2", "TLS 1.3", "SSL 3.0" ... or the hex value.
    public static func name(_ version: UInt16) -> String {
        switch version {
        case ssl3: return "SSL 3.0"
        case tls10: return "TLS 1.0"
        case tls11: return "TLS 1.1"
        case tls12: return "TLS 1.2"
        case tls13: return "TLS 1.3"
        default: return "0x" + hex16(version)
        }
    }
}

func hex16(_ value: UInt16) -> String {
    let digits = Array("0123456789abcdef")
    return String([
        digits[Int(value >> 12)], digits[Int((value >> 8) & 15)], digits[Int((value >> 4) & 15)],
        digits[Int(value & 15)],
    ])
}

/// Why a connection (or one direction of it) was not decrypted (docs/METERING.md §2b).
public enum NotDecryptedReason: String, Sendable, Equatable {
    /// The key log has no secret for the connection's client random.
    case noKey = "no-key"
    /// The server chose a cipher suite this module does not decrypt.
    case unsupportedSuite = "unsupported-suite"
    /// SSL 3.0 to TLS 1.1.
    case unsupportedVersion = "unsupported-version"
    /// A tag or MAC did not verify: the logged secret is not this connection's.
    case badKey = "bad-key"
    /// The ClientHello or ServerHello is not in the capture.
    case handshakeNotCaptured = "handshake-not-captured"
    /// Bytes of the stream are missing; records after them cannot be framed.
    case gap
    /// A record header or handshake message that cannot be TLS (length out of range,
    /// unknown content type, a message that overruns its record).
    case malformed
}

/// The record protection a cipher suite uses.
enum BulkCipher: Sendable {
    case aesGCM(keyLength: Int)
    case chaCha20Poly1305
    case aesCBC(keyLength: Int)
}

enum HashKind: Sendable {
    case sha1, sha256, sha384

    var length: Int {
        switch self {
        case .sha1: return 20
        case .sha256: return 32
        case .sha384: return 48
        }
    }
}

/// A cipher suite this module can decrypt: the bulk cipher, the record MAC (CBC suites only)
/// and the hash of the PRF (TLS 1.2) or of HKDF (TLS 1.3).
struct CipherSuite: Sendable {
    var id: UInt16
    var name: String
    var isTLS13: Bool
    var cipher: BulkCipher
    var mac: HashKind?
    var prfHash: HashKind

    static func lookup(_ id: UInt16) -> CipherSuite? {
        if let suite = table.first(where: { $0.id == id }) { return suite }
        return nil
    }

    /// TLS 1.2 suites by bulk cipher; the key exchange does not matter once the master secret
    /// is known.
    static let table: [CipherSuite] = {
        func gcm(_ id: UInt16, _ name: String, _ keyLength: Int, _ hash: HashKind) -> CipherSuite {
            CipherSuite(
                id: id, name: name, isTLS13: false, cipher: .aesGCM(keyLength: keyLength), mac: nil, prfHash: hash)
        }
        func cbc(_ id: UInt16, _ name: String, _ keyLength: Int, _ mac: HashKind) -> CipherSuite {
            // TLS 1.2's PRF is SHA-256 unless the suite names SHA-384.
            CipherSuite(
                id: id, name: name, isTLS13: false, cipher: .aesCBC(keyLength: keyLength), mac: mac,
                prfHash: mac == .sha384 ? .sha384 : .sha256)
        }
        func chacha(_ id: UInt16, _ name: String) -> CipherSuite {
            CipherSuite(id: id, name: name, isTLS13: false, cipher: .chaCha20Poly1305, mac: nil, prfHash: .sha256)
        }
        return [
            CipherSuite(
                id: 0x1301, name: "TLS_AES_128_GCM_SHA256", isTLS13: true, cipher: .aesGCM(keyLength: 16), mac: nil,
                prfHash: .sha256),
            CipherSuite(
                id: 0x1302, name: "TLS_AES_256_GCM_SHA384", isTLS13: true, cipher: .aesGCM(keyLength: 32), mac: nil,
                prfHash: .sha384),
            CipherSuite(
                id: 0x1303, name: "TLS_CHACHA20_POLY1305_SHA256", isTLS13: true, cipher: .chaCha20Poly1305, mac: nil,
                prfHash: .sha256),
            gcm(0x009C, "TLS_RSA_WITH_AES_128_GCM_SHA256", 16, .sha256),
            gcm(0x009D, "TLS_RSA_WITH_AES_256_GCM_SHA384", 32, .sha384),
            gcm(0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", 16, .sha256),
            gcm(0x009F, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", 32, .sha384),
            gcm(0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 16, .sha256),
            gcm(0xC02C, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 32, .sha384),
            gcm(0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 16, .sha256),
            gcm(0xC030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 32, .sha384),
            chacha(0xCCA8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
            chacha(0xCCA9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"),
            chacha(0xCCAA, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
            cbc(0x002F, "TLS_RSA_WITH_AES_128_CBC_SHA", 16, .sha1),
            cbc(0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            cbc(0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", 16, .sha1),
            cbc(0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            cbc(0xC009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", 16, .sha1),
            cbc(0xC00A, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            cbc(0xC013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", 16, .sha1),
            cbc(0xC014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            cbc(0x003C, "TLS_RSA_WITH_AES_128_CBC_SHA256", 16, .sha256),
            cbc(0x003D, "TLS_RSA_WITH_AES_256_CBC_SHA256", 32, .sha256),
            cbc(0x0067, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", 16, .sha256),
            cbc(0x006B, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", 32, .sha256),
            cbc(0xC023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 16, .sha256),
            cbc(0xC024, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", 32, .sha384),
            cbc(0xC027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", 16, .sha256),
            cbc(0xC028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", 32, .sha384),
        ]
    }()
}
