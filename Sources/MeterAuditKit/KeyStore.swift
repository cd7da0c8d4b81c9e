import TLS

/// The keys a capture's TLS connections are decrypted with: the `--keylog` files, then the
/// secrets of the capture's own Decryption Secrets Blocks as they are read.
final class KeyStore {
    private(set) var keyLog: KeyLog

    init(_ keyLog: KeyLog) { self.keyLog = keyLog }

    func merge(_ other: KeyLog) { keyLog.merge(other) }
}
