import Flows
import HTTP1
import MessageModel
import PacketLayers
import TCPReassembly

/// Takes whatever the HTTP layer finds and keeps only byte counts, so a run allocates
/// nothing that outlives it and the counts can be checked against what was fed.
final class CountingSink: MessageSink {
    final class Observer: BodyObserver {
        var bytes = 0
        func bodyBytes(_ bytes: UnsafeRawBufferPointer) { self.bytes &+= bytes.count }
        func bodyGap(_ length: Int) { bytes &+= length }
    }

    private let observer = Observer()
    /// Wire bytes of every record (line, headers, body).
    private(set) var recordBytes = 0
    /// Bytes the connections' tallies hold (skipped, lost, tunnel, TLS).
    private(set) var tallyBytes = 0
    private(set) var connections = 0
    private(set) var records = 0
    private(set) var requests = 0

    func bodyObserver(for message: HTTPMessage) -> Observer? { observer }

    func record(_ message: CapturedMessage, body: Observer?) {
        records += 1
        if message.message.kind == .request { requests += 1 }
        recordBytes += message.wireTotal
    }

    func connectionClosed(_ summary: HTTPConnectionSummary) {
        connections += 1
        for tally in [summary.clientTally, summary.serverTally] {
            tallyBytes += tally.skippedBytes + tally.lostBytes + tally.tunnelBytes + tally.tlsBytes
        }
    }
}

/// Small limits, so inputs of a few hundred bytes reach the paths that bound memory.
let fuzzHTTPLimits = HTTPLimits(maxHeadBytes: 2048, maxLineBytes: 512)

/// A sequence of TCP segments made from the input, fed to a `TCPAssembler` with HTTP/1
/// connections, then `finish()`.
///
/// Each segment is a 6-byte header and its payload:
///
/// | byte | meaning |
/// | --- | --- |
/// | 0 | bit 0 direction (server to client); bits 1-2 which of 4 client ports (connections); bit 3 acknowledge all the peer sent, else the peer's next byte plus the sequence delta; bits 4-7 shift of the sequence delta |
/// | 1 | TCP flags |
/// | 2-3 | sequence delta, signed, from the direction's next byte (before the shift) |
/// | 4 | bits 0-6 payload length; bit 7 the payload was cut by snaplen (100 more bytes on the wire) |
/// | 5 | time step: bits 0-5 value; bits 6-7 unit: µs, s, 64 s, or backwards in s |
///
/// scripts/make-fuzz-corpus writes seeds in this format from the sample captures.
enum TCPAssemblerEntry {
    static let headerLength = 6
    static let clientAddress = IPAddress(ipv4: 0x0A00_0001)
    static let serverAddress = IPAddress(ipv4: 0x0A00_0002)
    /// Initial sequence numbers: the model's "next byte" before anything was sent.
    static let initialSequence: [UInt32] = [1000, 500_000]

    @discardableResult
    static func run(_ input: UnsafeRawBufferPointer) -> CountingSink {
        let sink = CountingSink()
        let assembler = TCPAssembler(
            limits: ReassemblyLimits(
                maxBufferedBytesPerSide: 2048, maxBufferedBytesTotal: 6144,
                idleTimeoutSeconds: 30, closedLingerSeconds: 5),
            factory: HTTPConnectionFactory(sink: sink, limits: fuzzHTTPLimits))
        // Next sequence number per connection and direction, as the model sees it.
        var next = [UInt32](repeating: 0, count: 8)
        for index in 0..<8 { next[index] = initialSequence[index & 1] }
        var time: Int64 = 1_700_000_000_000_000_000
        var cursor = InputCursor(input)
        var frameNumber = 0

        while cursor.remaining >= headerLength {
            let control = cursor.u8()
            let flags = TCPFlags(rawValue: cursor.u8())
            let delta = Int32(Int16(bitPattern: cursor.u16())) << Int32(control >> 4)
            let lengthByte = cursor.u8()
            let step = cursor.u8()
            let payload = cursor.take(Int(lengthByte & 0x7F))

            let side = Int(control & 1)
            let connection = Int(control >> 1 & 3)
            let slot = connection * 2 + side
            let peerSlot = connection * 2 + (1 - side)
            let sequence = next[slot] &+ UInt32(bitPattern: delta)
            let acknowledgment = control & 8 != 0 ? next[peerSlot] : next[peerSlot] &+ UInt32(bitPattern: delta)

            let value = Int64(step & 0x3F)
            switch step >> 6 {
            case 0: time += value * 1_000
            case 1: time += value * 1_000_000_000
            case 2: time += value * 64_000_000_000
            default: time -= value * 1_000_000_000
            }

            let client = TransportEndpoint(address: clientAddress, port: 40000 + UInt16(connection))
            let server = TransportEndpoint(address: serverAddress, port: 80)
            let payloadLength = payload.count + (lengthByte & 0x80 != 0 ? 100 : 0)
            frameNumber += 1
            let segment = TCPSegment(
                source: side == 0 ? client : server, destination: side == 0 ? server : client,
                sequence: sequence, acknowledgment: acknowledgment, flags: flags, window: 65535,
                payload: payload, payloadLength: payloadLength, frameLength: 54 + payloadLength,
                ipLength: 40 + payloadLength, timestamp: time, frameNumber: frameNumber)
            assembler.process(segment)

            var consumed = UInt32(truncatingIfNeeded: payloadLength)
            if flags.contains(.syn) { consumed &+= 1 }
            if flags.contains(.fin) { consumed &+= 1 }
            next[slot] = sequence &+ consumed
        }
        assembler.finish()
        return sink
    }
}

/// One connection given straight to `HTTPConnection`: the input's two directions, fed in
/// alternating pieces, with an optional gap, then ended and closed. Checks that every byte fed
/// or announced missing lands in exactly one place (a record or a tally).
///
/// | byte | meaning |
/// | --- | --- |
/// | 0 | bit 0 the handshake was seen; bit 1 sides end by FIN, bit 2 by RST (else end of capture); bit 3 a gap after the first piece; bit 4 the gap is the server's; bit 5 no acknowledgments |
/// | 1 | piece size minus 1 |
/// | 2-3 | where the client's bytes end and the server's begin |
/// | 4 | gap length minus 1 |
/// | 5... | the client's bytes, then the server's |
enum HTTP1Entry {
    @discardableResult
    static func run(_ input: UnsafeRawBufferPointer) -> CountingSink {
        let input = TwoStreamInput(input)
        let sink = CountingSink()
        let info = input.connectionInfo(sawHandshake: input.control & 1 != 0)
        let handler = HTTPConnectionFactory(sink: sink, limits: fuzzHTTPLimits).makeHandler(for: info)
        let (time, gapped) = input.feed(
            handler, startTime: info.firstPacketTime, acknowledging: input.control & 32 == 0)
        let control = input.control
        let reason: StreamEndReason = control & 2 != 0 ? .fin : (control & 4 != 0 ? .reset : .endOfCapture)
        for side in [Direction.up, .down] { handler.end(of: side, reason: reason, time: time) }
        var accounting = ConnectionAccounting(info: info)
        accounting.lastPacketTime = time
        handler.close(accounting)

        precondition(sink.connections == 1, "one summary per connection")
        precondition(
            sink.recordBytes + sink.tallyBytes == input.byteCount + gapped,
            "byte buckets: records \(sink.recordBytes) + tallies \(sink.tallyBytes) != fed \(input.byteCount) + gap \(gapped)"
        )
        return sink
    }
}

/// The input format of `HTTP1Entry` and `HTTP2Entry`: a control byte, the piece size, where the
/// client's bytes end, the gap length, then the client's and the server's bytes.
struct TwoStreamInput {
    let control: UInt8
    let pieceSize: Int
    let gapLength: Int
    let streams: [UnsafeRawBufferPointer]
    /// The whole input: where a second run's cuts come from (`feed(cuttingAt:)`).
    let bytes: UnsafeRawBufferPointer
    var byteCount: Int { streams[0].count + streams[1].count }
    /// The side the gap (control bit 3) is in.
    var gapSide: Direction { control & 16 != 0 ? .down : .up }

    init(_ input: UnsafeRawBufferPointer) {
        bytes = input
        var cursor = InputCursor(input)
        control = cursor.u8()
        pieceSize = Int(cursor.u8()) + 1
        let split = Int(cursor.u16())
        gapLength = Int(cursor.u8()) + 1
        let data = cursor.rest()
        let clientEnd = min(split, data.count)
        streams = [
            UnsafeRawBufferPointer(rebasing: data[..<clientEnd]),
            UnsafeRawBufferPointer(rebasing: data[clientEnd...]),
        ]
    }

    func connectionInfo(sawHandshake: Bool) -> ConnectionInfo {
        ConnectionInfo(
            number: 0, initiator: TransportEndpoint(address: TCPAssemblerEntry.clientAddress, port: 40000),
            responder: TransportEndpoint(address: TCPAssemblerEntry.serverAddress, port: 80),
            sawHandshake: sawHandshake, firstPacketTime: 1_700_000_000_000_000_000)
    }

    /// Feeds both streams to `handler` in alternating pieces, with the gap (control bit 3; bit 4
    /// on the server's side) after the first piece; returns the last time and the gap's length.
    /// `cuttingAt`: each piece is handed over in smaller ones (same time, same order of the
    /// sides, same gap position) whose lengths are read in turn from these bytes (1 + the low
    /// 5 bits), so a parser that depends on where its input is cut gives another result.
    func feed(
        _ handler: ByteStreamHandler, startTime: Int64, acknowledging: Bool,
        cuttingAt cuts: UnsafeRawBufferPointer? = nil
    ) -> (time: Int64, gapped: Int) {
        var cutIndex = 0
        var fed = [0, 0]
        var offsets: [Int64] = [0, 0]
        var time = startTime
        var gapPending = control & 8 != 0
        var gapped = 0
        while fed[0] < streams[0].count || fed[1] < streams[1].count {
            for side in [Direction.up, .down] {
                let stream = streams[side.rawValue]
                let start = fed[side.rawValue]
                guard start < stream.count else { continue }
                let end = min(start + pieceSize, stream.count)
                time += 1_000
                let acknowledged: Int64? = acknowledging ? offsets[side.peer.rawValue] : nil
                var from = start
                while from < end {
                    var to = end
                    if let cuts, !cuts.isEmpty {
                        to = min(end, from + 1 + Int(cuts[cutIndex % cuts.count] & 0x1f))
                        cutIndex += 1
                    }
                    handler.receive(
                        UnsafeRawBufferPointer(rebasing: stream[from..<to]), from: side,
                        at: StreamPosition(
                            time: time, offset: offsets[side.rawValue] + Int64(from - start),
                            peerAcknowledged: acknowledged))
                    from = to
                }
                fed[side.rawValue] = end
                offsets[side.rawValue] += Int64(end - start)
                if gapPending {
                    gapPending = false
                    handler.gap(
                        gapLength, from: gapSide,
                        at: StreamPosition(time: time, offset: offsets[gapSide.rawValue], peerAcknowledged: nil))
                    offsets[gapSide.rawValue] += Int64(gapLength)
                    gapped += gapLength
                }
            }
        }
        return (time, gapped)
    }
}
