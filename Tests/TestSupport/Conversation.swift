import CaptureIO
import PacketLayers

/// Scripts a TCP conversation (handshake, data both ways, FIN teardown) as Ethernet frames
/// with consistent sequence and acknowledgment numbers, for end-to-end tests.
public struct Conversation {
    public enum Side { case client, server }

    public let client: String
    public let server: String
    public var link: PacketBuilder.Link
    public private(set) var frames: [CaptureFileWriter.Frame] = []
    private var clientSeq: UInt32
    private var serverSeq: UInt32
    private var time: Int64

    /// `client`/`server` as `"127.0.0.1:40000"` or `"[::1]:8080"`; `start` in ns since the epoch.
    public init(
        client: String = "127.0.0.1:40000", server: String = "127.0.0.1:8080",
        start: Int64 = 1_700_000_000_000_000_000, clientISN: UInt32 = 1000, serverISN: UInt32 = 5000,
        link: PacketBuilder.Link = .ethernet
    ) {
        self.client = client
        self.server = server
        self.link = link
        self.clientSeq = clientISN
        self.serverSeq = serverISN
        self.time = start
    }

    private mutating func append(_ side: Side, flags: TCPFlags, payload: [UInt8] = []) {
        let (from, to) = side == .client ? (client, server) : (server, client)
        let seq = side == .client ? clientSeq : serverSeq
        let ack = side == .client ? serverSeq : clientSeq
        frames.append(
            CaptureFileWriter.Frame(
                timestamp: time,
                bytes: PacketBuilder.tcp(
                    from: from, to: to, seq: seq, ack: flags.contains(.syn) && side == .client ? 0 : ack,
                    flags: flags, payload: payload, link: link)))
        time += 1_000_000 // 1 ms apart
        let consumed = UInt32(payload.count) + (flags.contains(.syn) || flags.contains(.fin) ? 1 : 0)
        if side == .client { clientSeq &+= consumed } else { serverSeq &+= consumed }
    }

    public mutating func handshake() {
        append(.client, flags: [.syn])
        append(.server, flags: [.syn, .ack])
        append(.client, flags: [.ack])
    }

    /// Sends `text` from `side` in segments of at most `segmentSize` bytes, each acknowledged.
    public mutating func send(_ side: Side, _ text: String, segmentSize: Int = 1460) {
        send(side, Array(text.utf8), segmentSize: segmentSize)
    }

    public mutating func send(_ side: Side, _ bytes: [UInt8], segmentSize: Int = 1460) {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + segmentSize)
            append(side, flags: [.ack, .psh], payload: Array(bytes[start..<end]))
            append(side == .client ? .server : .client, flags: [.ack])
            start = end
        }
    }

    /// A RST from `side` that the endpoints never act on (forged, or dropped before the host):
    /// in the window at `side`'s next sequence number plus `advance`, acknowledging what the
    /// peer sent; the conversation's sequence numbers go on as if it had not been sent.
    public mutating func forgedReset(from side: Side, advance: UInt32 = 0) {
        let (from, to) = side == .client ? (client, server) : (server, client)
        let seq = (side == .client ? clientSeq : serverSeq) &+ advance
        let ack = side == .client ? serverSeq : clientSeq
        frames.append(
            CaptureFileWriter.Frame(
                timestamp: time,
                bytes: PacketBuilder.tcp(from: from, to: to, seq: seq, ack: ack, flags: [.rst, .ack], link: link)))
        time += 1_000_000
    }

    public mutating func close() {
        append(.client, flags: [.fin, .ack])
        append(.server, flags: [.fin, .ack])
        append(.client, flags: [.ack])
    }

    /// The conversation as a classic pcap file's bytes.
    public func pcap() -> [UInt8] {
        CaptureFileWriter.pcap(frames, linkType: link.linkType)
    }
}
