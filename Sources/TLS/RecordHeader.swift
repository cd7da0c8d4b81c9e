/// What a TLS record header looks like, for telling TLS from other protocols by a stream's
/// first bytes (the router's probe).
public enum TLSRecordHeader {
    /// Bytes the probe needs: content type and version.
    public static let probeLength = 3

    /// Whether `bytes` begin with a TLS record header: change_cipher_spec, alert, handshake or
    /// application_data, version 3.x (x ≤ 4); nil while fewer than 3 bytes leave it open.
    public static func begins(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        var count = 0
        for byte in bytes.prefix(probeLength) {
            let fits = count == 0 ? (20...23).contains(byte) : (count == 1 ? byte == 3 : byte <= 4)
            guard fits else { return false }
            count += 1
        }
        return count == probeLength ? true : nil
    }
}
