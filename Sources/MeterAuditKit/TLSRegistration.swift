import Flows
import TLS

/// TLS (docs/TLS.md): a TCP stream whose first bytes are a TLS record header; `TLSRelay`
/// decrypts it and hands the plaintext to the protocol ALPN chose. Its handshake, alert and
/// change_cipher_spec records are `tls_control`.
extension ProtocolRegistration {
    static let tls = ProtocolRegistration(
        name: "tls",
        entries: [
            .stream(
                probeLength: TLSRecordHeader.probeLength, probe: { bytes, _, _ in tlsProbe(bytes) },
                route: { route in
                    let relay = TLSRelay(route)
                    return Route(reader: relay, ending: relay)
                })
        ],
        overheadKinds: [.tlsControl])

    private static func tlsProbe(_ bytes: UnsafeRawBufferPointer) -> ProbeVerdict {
        switch TLSRecordHeader.begins(bytes) {
        case true?: return .yes
        case nil: return .needMore
        case false?: return .no
        }
    }
}
