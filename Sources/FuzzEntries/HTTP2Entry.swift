import HTTP1
import HTTP2
import PacketLayers
import TCPReassembly

/// Two byte streams read as one HTTP/2 connection: the same input format as `HTTP1Entry`
/// (control byte, piece size, client length, gap length, then client and server bytes).
/// Control bit 0: the connection starts at its beginning (the client's preface expected);
/// otherwise frame boundaries are searched for. Bit 3: a gap after the first piece, bit 4 on
/// the server's side.
enum HTTP2Entry {
    @discardableResult
    static func run(_ input: UnsafeRawBufferPointer) -> CountingSink {
        let input = TwoStreamInput(input)
        let sink = CountingSink()
        let info = input.connectionInfo(sawHandshake: true)
        // Small header blocks, so short inputs reach the bounds.
        let connection = HTTP2Connection(
            info: info, sink: sink,
            limits: HTTP2Limits(maxHeaderBlockBytes: 2048, maxControlPayloadBytes: 64, maxHeaderListSize: 4096),
            startsAtBeginning: input.control & 1 != 0)
        let (time, gapped) = input.feed(connection, startTime: info.firstPacketTime, acknowledging: false)
        for side in [FlowSide.initiator, .responder] { connection.end(of: side, reason: .fin, time: time) }
        var accounting = ConnectionAccounting(info: info)
        accounting.lastPacketTime = time
        connection.close(accounting)
        precondition(sink.connections == 1, "one summary per connection")
        // Every frame is one message's at most: records never hold more than was fed.
        precondition(
            sink.recordBytes <= input.byteCount + gapped,
            "records \(sink.recordBytes) > fed \(input.byteCount) + gap \(gapped)")
        return sink
    }
}
