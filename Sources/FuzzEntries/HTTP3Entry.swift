import CaptureIO
import CostAccounting
import Flows
import HTTP3
import MessageModel
import PacketLayers

/// The streams of one QUIC connection read as HTTP/3, from an input of chunks, each a 2-byte
/// header and its bytes:
///
/// | byte | meaning |
/// | --- | --- |
/// | 0 | bits 0-2 which stream (0, 4, 8 bidirectional; 2, 6 the client's unidirectional; 3, 7, 11 the server's); bit 3 the server's side; bit 4 a gap of the length instead of bytes; bit 5 FIN after it; bit 6 RESET_STREAM after it |
/// | 1 | length (0-255) |
///
/// Checks, trapping on a violation: per side, every byte fed or announced missing is in exactly
/// one place (the frames of the messages that side sent, its HTTP/3 overhead, or its lost
/// bytes); and a second run, each chunk cut again at points read from the input, gives the same
/// records, body bytes and summary. Seeds: scripts/make-fuzz-corpus, from the HTTP/3 samples.
enum HTTP3Entry {
    static let streams: [UInt64] = [0, 4, 8, 2, 6, 3, 7, 11]

    @discardableResult
    static func run(_ input: UnsafeRawBufferPointer) -> Int {
        let whole = read(input, cutting: false)
        let cut = read(input, cutting: true)
        precondition(cut.summary == whole.summary, "summary depends on the cuts: \(cut.summary) != \(whole.summary)")
        precondition(cut.records == whole.records, "records depend on the cuts")
        return whole.records.count
    }

    final class RecordingSink: MessageSink {
        final class Observer: BodyObserver {
            var bytes = 0
            func bodyBytes(_ bytes: UnsafeRawBufferPointer) { self.bytes &+= bytes.count }
            func bodyGap(_ length: Int) { bytes &+= length }
        }

        struct Record: Equatable {
            var message: CapturedMessage
            var observed: Int?
        }

        var records: [Record] = []
        func bodyObserver(for message: HTTPMessage) -> Observer? { Observer() }
        func record(_ message: CapturedMessage, body: Observer?) {
            records.append(Record(message: message, observed: body?.bytes))
        }
        func connectionClosed(_ summary: HTTPConnectionSummary) {}
    }

    static func read(_ input: UnsafeRawBufferPointer, cutting: Bool) -> (
        records: [RecordingSink.Record], summary: HTTP3ConnectionSummary
    ) {
        let info = ConnectionInfo(
            number: 0, initiator: TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 50000),
            responder: TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 443), sawHandshake: true,
            firstPacketTime: 1, transport: .udp)
        let sink = RecordingSink()
        // Small bounds, so short inputs reach them.
        let connection = HTTP3Connection(
            info: info, sink: sink,
            limits: HTTPLimits(maxHeaderBlockBytes: 1024, maxControlPayloadBytes: 64, maxHeaderListSize: 2048))
        var offsets = [Int64](repeating: 0, count: 16)
        var ended = [Bool](repeating: false, count: 16)
        var fed = [0, 0]
        var cursor = InputCursor(input)
        var time: Int64 = 1
        while cursor.remaining >= 2 {
            let control = cursor.u8()
            let length = Int(cursor.u8())
            let index = Int(control & 7)
            let stream = streams[index]
            let side: Direction = control & 8 != 0 ? .down : .up
            let slot = index * 2 + side.rawValue
            time += 1
            if ended[slot] {
                if control & 16 == 0 { _ = cursor.take(length) }
                continue
            }
            let position = StreamPosition(time: time, offset: offsets[slot], peerAcknowledged: nil)
            if control & 16 != 0 {
                connection.gap(length, stream: stream, from: side, at: position)
                offsets[slot] += Int64(length)
                fed[side.rawValue] += length
            } else {
                let bytes = cursor.take(length)
                if cutting {
                    // Cut at points read from the bytes themselves: every chunk in up to 3 pieces.
                    var start = 0
                    while start < bytes.count {
                        let piece = max(1, Int(bytes[start]) % 7)
                        let end = min(bytes.count, start + piece)
                        connection.receive(
                            UnsafeRawBufferPointer(rebasing: bytes[start..<end]), stream: stream, from: side,
                            at: StreamPosition(time: time, offset: offsets[slot] + Int64(start), peerAcknowledged: nil))
                        start = end
                    }
                } else {
                    connection.receive(bytes, stream: stream, from: side, at: position)
                }
                offsets[slot] += Int64(bytes.count)
                fed[side.rawValue] += bytes.count
            }
            if control & 32 != 0 || control & 64 != 0 {
                ended[slot] = true
                connection.end(stream: stream, of: side, reason: control & 64 != 0 ? .reset : .fin, time: time)
            }
        }
        connection.close(ConnectionAccounting(info: info))
        let summary = connection.summary
        // Every byte in one place, per side.
        var placed = [summary.client, summary.server].map { saturatingSum($0.connectionOverheadBytes, $0.lostBytes) }
        for record in sink.records {
            let message = record.message
            let sender = message.kind == .request && !message.anomalies.contains(.pushed) ? 0 : 1
            placed[sender] = saturatingSum(placed[sender], saturatingSum(message.wireHeaders, message.wireBody))
        }
        precondition(placed == fed, "bytes not conserved: placed \(placed), fed \(fed)")
        return (sink.records, summary)
    }
}
