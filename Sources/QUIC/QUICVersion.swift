/// The QUIC versions read here: 1 (RFC 9000/9001) and 2 (RFC 9369), which differ in the Initial
/// salt, the key labels and the long header's type bits.
public enum QUICVersion: UInt32, Sendable {
    case v1 = 0x0000_0001
    case v2 = 0x6B33_43CF

    /// The Initial salt (RFC 9001 §5.2; RFC 9369 §3.3.1).
    var initialSalt: [UInt8] {
        switch self {
        case .v1:
            return [
                0x38, 0x76, 0x2C, 0xF7, 0xF5, 0x59, 0x34, 0xB3, 0x4D, 0x17, 0x9A, 0xE6, 0xA4, 0xC8, 0x0C, 0xAD, 0xCC, 0xBB,
                0x7F, 0x0A,
            ]
        case .v2:
            return [
                0x0D, 0xED, 0xE3, 0xDE, 0xF7, 0x00, 0xA6, 0xDB, 0x81, 0x93, 0x81, 0xBE, 0x6E, 0x26, 0x9D, 0xCB, 0xF9, 0xBD,
                0x2E, 0xD9,
            ]
        }
    }

    /// "quic " in v1, "quicv2 " in v2, before key, iv, hp and ku (RFC 9369 §3.3.2).
    var labelPrefix: String { self == .v1 ? "quic " : "quicv2 " }

    /// The packet type of a long header's two type bits (RFC 9369 §3.2 swaps them in v2).
    func longPacketType(_ bits: UInt8) -> QUICPacketType {
        switch (self, bits & 3) {
        case (.v1, 0), (.v2, 1): return .initial
        case (.v1, 1), (.v2, 2): return .zeroRTT
        case (.v1, 2), (.v2, 3): return .handshake
        default: return .retry
        }
    }

    /// The version's name in outputs: "1", "2".
    public var name: String { self == .v1 ? "1" : "2" }
}

/// A QUIC packet's type: its header form and, for long headers, its type bits.
public enum QUICPacketType: Int, Sendable, CaseIterable {
    case initial, zeroRTT, handshake, retry, oneRTT, versionNegotiation

    /// The packet number space and key epoch.
    var epoch: QUICEpoch? {
        switch self {
        case .initial: return .initial
        case .zeroRTT: return .zeroRTT
        case .handshake: return .handshake
        case .oneRTT: return .oneRTT
        case .retry, .versionNegotiation: return nil
        }
    }
}

/// The keys a packet is protected with (RFC 9001 §4): Initial (from the DCID), 0-RTT, Handshake
/// and 1-RTT (from the key log).
public enum QUICEpoch: Int, Sendable, CaseIterable {
    case initial = 0, zeroRTT, handshake, oneRTT

    /// The packet number space: 0-RTT and 1-RTT share the application space.
    var space: Int { self == .oneRTT || self == .zeroRTT ? 2 : rawValue == 0 ? 0 : 1 }
}
