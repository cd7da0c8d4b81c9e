import CostAccounting

extension OverheadKind {
    /// TLS handshake, alert and change_cipher_spec records, TLS 1.3 post-handshake messages, and
    /// the headers of the packets they begin: `tls_control` in every output, after the
    /// transport's kinds. Its TLS bytes are connections.csv's `{direction}_tls_control_tls`.
    public static let tlsControl = OverheadKind.register("tls_control", part: .tls, order: 100)
}
