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
    /// HTTP/2 only: the frames no message owns, per direction and type.
    public var http2: HTTP2Overhead?
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

/// Frames of one type and their bytes, 9-byte headers included.
public struct FrameTypeCount: Sendable, Equatable, Codable {
    public var frames: Int
    public var bytes: Int

    public init(frames: Int, bytes: Int) {
        self.frames = frames
        self.bytes = bytes
    }

    mutating func add(_ other: FrameTypeCount) {
        frames = saturatingSum(frames, other.frames)
        bytes = saturatingSum(bytes, other.bytes)
    }
}

/// An HTTP/2 connection's overhead: the preface and the frames no message owns (SETTINGS,
/// PING, GOAWAY, WINDOW_UPDATE, PRIORITY, RST_STREAM, unknown types), per direction, keyed by
/// frame type name (docs/METERING.md §2a).
public struct HTTP2Overhead: Sendable, Equatable, Codable {
    public var client: [String: FrameTypeCount]
    public var server: [String: FrameTypeCount]
    /// Frame-size, protocol and HPACK errors found reading each direction.
    public var clientErrors: Int
    public var serverErrors: Int
    public var streams: Int

    public init(
        client: [String: FrameTypeCount], server: [String: FrameTypeCount], clientErrors: Int, serverErrors: Int,
        streams: Int
    ) {
        self.client = client
        self.server = server
        self.clientErrors = clientErrors
        self.serverErrors = serverErrors
        self.streams = streams
    }

    public var clientBytes: Int { client.values.reduce(0) { $0 + $1.bytes } }
    public var serverBytes: Int { server.values.reduce(0) { $0 + $1.bytes } }
}

extension Int {
    /// `self = saturatingSum(self, other)`, in place (through a dictionary's `default:` subscript,
    /// one lookup instead of a read and a write).
    mutating func addSaturating(_ other: Int) {
        self = saturatingSum(self, other)
    }
}
