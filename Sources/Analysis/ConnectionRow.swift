import CaptureIO
import CostAccounting
import MessageModel

/// What one TCP connection carried (a row of `connections.csv`, docs/METERING.md §6): its
/// protocol, what its TLS handshake said, whether it was decrypted, and its bytes per
/// direction, as TCP payload and as TLS records.
public struct ConnectionRow: Sendable, Equatable {
    /// What the connection was read as.
    public enum Content: String, Sendable {
        /// HTTP/1.x messages, in cleartext or decrypted from TLS.
        case http1
        /// HTTP/2 (docs/METERING.md §2a): h2c (preface or Upgrade) or decrypted TLS whose ALPN
        /// (or connection preface) says so.
        case h2
        /// TLS that could not be decrypted (the reason is in `decrypted`).
        case tlsUndecrypted = "tls-undecrypted"
        /// HTTP/3 (docs/METERING.md §2d): a QUIC connection whose ALPN says h3.
        case h3
        /// QUIC with another ALPN, or none known.
        case quic
        /// Neither an HTTP/1.x message nor TLS was found.
        case other
    }

    public var input: String
    public var connection: Int
    public var client: String
    public var server: String
    public var protocolKind: Content
    /// The host of the `CONNECT` whose tunnel this is (empty for a TCP connection of its own).
    public var tunnelHost: String = ""
    /// TLS only; empty otherwise.
    public var serverName: String = ""
    public var alpn: String = ""
    public var tlsVersion: String = ""
    public var cipherSuite: String = ""
    /// `yes`, or the reason it was not decrypted; empty without TLS.
    public var decrypted: String = ""
    /// HTTP records the connection produced.
    public var records = 0
    /// TCP payload bytes (sequence space, gaps included) sent by the client and by the server;
    /// for a tunnel, the tunnel's bytes.
    public var clientTCPBytes = 0
    public var serverTCPBytes = 0
    /// Bytes of TLS records (5-byte headers included) each side sent; 0 without TLS.
    public var clientTLSBytes = 0
    public var serverTLSBytes = 0
    /// Bytes of each side's handshake, alert and change_cipher_spec records (the records that
    /// carry no application data); 0 without TLS.
    public var clientTLSControlBytes = 0
    public var serverTLSControlBytes = 0
    /// Each registered protocol's own counts (HTTP/2: the frames no message owns), filled by
    /// its reader; empty when no protocol counted anything.
    public var counters: [ConnectionCounterKind: ConnectionCounters] = [:]
    /// What each direction cost at every layer of docs/METERING.md §2c, and the part of it that
    /// no message owns.
    public var clientCost = DirectionCost()
    public var serverCost = DirectionCost()

    public init(input: String, connection: Int, client: String, server: String, protocolKind: Content) {
        self.input = input
        self.connection = connection
        self.client = client
        self.server = server
        self.protocolKind = protocolKind
    }
}

extension Int {
    /// `self = saturatingSum(self, other)`, in place (through a dictionary's `default:` subscript,
    /// one lookup instead of a read and a write).
    mutating func addSaturating(_ other: Int) {
        self = saturatingSum(self, other)
    }
}
