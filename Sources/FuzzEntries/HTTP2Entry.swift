import Flows
import HTTP2
import MessageModel
import PacketLayers
import TCPReassembly

/// Two byte streams read as one HTTP/2 connection: the same input format as `HTTP1Entry`
/// (control byte, piece size, client length, gap length, then client and server bytes).
/// Control bit 0: the connection starts at its beginning (the client's preface expected);
/// otherwise frame boundaries are searched for and header blocks decoded against a table primed
/// with placeholders (mid-connection start). Bit 3: a gap after the first piece, bit 4 on
/// the server's side.
///
/// Checks, trapping on a violation: per direction, every byte fed or announced missing is
/// in exactly one place (the frames of the messages that side sent, its connection overhead,
/// or its lost bytes); and a second run, each piece cut again at points read from the input,
/// gives the same records, body bytes and connection summary; and no decoded header byte is
/// still counted as kept once the connection closed.
enum HTTP2Entry {
    @discardableResult
    static func run(_ input: UnsafeRawBufferPointer) -> CountingSink {
        let input = TwoStreamInput(input)
        let whole = read(input, cuttingAt: nil)
        let cut = read(input, cuttingAt: input.bytes)
        precondition(cut.summary == whole.summary, "summary depends on the cuts: \(cut.summary) != \(whole.summary)")
        precondition(cut.records.records.count == whole.records.records.count, "record count depends on the cuts")
        for (a, b) in zip(cut.records.records, whole.records.records) {
            precondition(a == b, "record depends on the cuts: \(a) != \(b)")
        }
        return whole.counting
    }

    /// Keeps every record and what its observer saw, beside the counts `CountingSink` keeps.
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

        let counting = CountingSink()
        var records: [Record] = []

        func bodyObserver(for message: HTTPMessage) -> Observer? { Observer() }

        func record(_ message: CapturedMessage, body: Observer?) {
            counting.record(message, body: nil)
            records.append(Record(message: message, observed: body?.bytes))
        }

        func connectionClosed(_ summary: HTTPConnectionSummary) { counting.connectionClosed(summary) }
    }

    static let keptPerConnection = 4096

    static func read(_ input: TwoStreamInput, cuttingAt cuts: UnsafeRawBufferPointer?) -> (
        records: RecordingSink, counting: CountingSink, summary: HTTP2ConnectionSummary
    ) {
        let sink = RecordingSink()
        let info = input.connectionInfo(sawHandshake: true)
        // Small header blocks and kept bytes, so short inputs reach the bounds; the header list
        // HPACK accepts is the default, so table-referencing bombs decode (and their values are
        // dropped past the kept bounds: the target's peak RSS limit, scripts/fuzz, checks it).
        let connection = HTTP2Connection(
            info: info, sink: sink,
            limits: HTTPLimits(
                maxHeaderBlockBytes: 2048, maxControlPayloadBytes: 64, maxKeptHeaderBytesPerBlock: 1024,
                maxKeptHeaderBytesPerConnection: keptPerConnection, maxPrimedTableSize: 8192),
            startsAtBeginning: input.control & 1 != 0)
        let (time, gapped) = input.feed(
            connection, startTime: info.firstPacketTime, acknowledging: false, cuttingAt: cuts)
        for side in [Direction.up, .down] { connection.end(of: side, reason: .fin, time: time) }
        var accounting = ConnectionAccounting(info: info)
        accounting.lastPacketTime = time
        connection.close(accounting)
        precondition(sink.counting.connections == 1, "one summary per connection")
        precondition(connection.keptHeaderBytes == 0, "decoded header bytes still counted after close")

        // The client is the initiator: its requests are its messages; responses and the
        // requests the server promised are the server's.
        var sent = [0, 0]
        for record in sink.records {
            let message = record.message
            // What a message keeps of its decoded fields is bounded (HTTPLimits): never more
            // than the connection may keep in all, however its blocks decoded.
            let kept = (message.message.fields + message.message.trailers).reduce(0) {
                $0 + $1.name.count + $1.value.count + 32
            }
            precondition(kept <= keptPerConnection, "a message keeps \(kept) decoded header bytes")
            let fromClient = message.kind == .request && !message.anomalies.contains(.pushed)
            sent[fromClient ? 0 : 1] += message.wireTotal
            if let observed = record.observed {
                precondition(
                    observed == message.bodyLength, "observer saw \(observed) body bytes of \(message.bodyLength)")
            }
        }
        let summary = connection.summary
        for (side, tally) in [(Direction.up, summary.client), (.down, summary.server)] {
            let fed = input.streams[side.rawValue].count + (side == input.gapSide ? gapped : 0)
            let counted = sent[side.rawValue] + tally.connectionOverheadBytes + tally.lostBytes
            precondition(
                counted == fed,
                "\(side) bytes: messages \(sent[side.rawValue]) + overhead \(tally.connectionOverheadBytes) "
                    + "+ lost \(tally.lostBytes) != fed \(input.streams[side.rawValue].count) + gap "
                    + "\(side == input.gapSide ? gapped : 0)")
        }
        return (sink, sink.counting, summary)
    }
}
