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
        var cursor = InputCursor(input)
        let control = cursor.u8()
        let pieceSize = Int(cursor.u8()) + 1
        let split = Int(cursor.u16())
        let gapLength = Int(cursor.u8()) + 1
        let data = cursor.rest()
        let clientEnd = min(split, data.count)
        let streams = [
            UnsafeRawBufferPointer(rebasing: data[..<clientEnd]),
            UnsafeRawBufferPointer(rebasing: data[clientEnd...]),
        ]
        let sink = CountingSink()
        let info = ConnectionInfo(
            number: 0, initiator: TransportEndpoint(address: TCPAssemblerEntry.clientAddress, port: 40000),
            responder: TransportEndpoint(address: TCPAssemblerEntry.serverAddress, port: 80),
            sawHandshake: true, firstPacketTime: 1_700_000_000_000_000_000)
        // Small header blocks, so short inputs reach the bounds.
        let connection = HTTP2Connection(
            info: info, sink: sink,
            limits: HTTP2Limits(maxHeaderBlockBytes: 2048, maxControlPayloadBytes: 64, maxHeaderListSize: 4096),
            startsAtBeginning: control & 1 != 0)
        var fed = [0, 0]
        var offsets: [Int64] = [0, 0]
        var time = info.firstPacketTime
        var gapPending = control & 8 != 0
        var gapped = 0
        while fed[0] < streams[0].count || fed[1] < streams[1].count {
            for side in [FlowSide.initiator, .responder] {
                let stream = streams[side.rawValue]
                let start = fed[side.rawValue]
                guard start < stream.count else { continue }
                let end = min(start + pieceSize, stream.count)
                time += 1_000
                connection.receive(
                    UnsafeRawBufferPointer(rebasing: stream[start..<end]), from: side,
                    at: StreamPosition(time: time, offset: offsets[side.rawValue], peerAcknowledged: nil))
                fed[side.rawValue] = end
                offsets[side.rawValue] += Int64(end - start)
                if gapPending {
                    gapPending = false
                    let gapSide: FlowSide = control & 16 != 0 ? .responder : .initiator
                    connection.gap(
                        gapLength, from: gapSide,
                        at: StreamPosition(time: time, offset: offsets[gapSide.rawValue], peerAcknowledged: nil))
                    offsets[gapSide.rawValue] += Int64(gapLength)
                    gapped += gapLength
                }
            }
        }
        for side in [FlowSide.initiator, .responder] { connection.end(of: side, reason: .fin, time: time) }
        var accounting = ConnectionAccounting(info: info)
        accounting.lastPacketTime = time
        connection.close(accounting)
        precondition(sink.connections == 1, "one summary per connection")
        // Every frame is one message's at most: records never hold more than was fed.
        precondition(
            sink.recordBytes <= data.count + gapped,
            "records \(sink.recordBytes) > fed \(data.count) + gap \(gapped)")
        return sink
    }
}
