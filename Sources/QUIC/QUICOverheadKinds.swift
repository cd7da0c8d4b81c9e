import CostAccounting

/// QUIC's connection overhead (docs/METERING.md §2d): Initial and Handshake packets, packets of
/// ACK (and PADDING) frames alone, packets of other frames without stream data, and zeros after
/// a datagram's last packet. Stream bytes no message owns are the reader's kinds (`h3_control`)
/// or `unclaimed`, as are packets that could not be read.
extension OverheadKind {
    public static let quicHandshake = OverheadKind.register("quic_handshake", part: .emptyPackets, order: 50)
    public static let quicAck = OverheadKind.register("quic_ack", part: .emptyPackets, order: 50)
    public static let quicControl = OverheadKind.register("quic_control", part: .other, order: 50)
    public static let quicPadding = OverheadKind.register("quic_padding", part: .other, order: 50)
}
