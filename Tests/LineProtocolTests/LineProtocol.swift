import Flows
import MessageModel
import MeterAuditKit

/// A protocol of this test's own, to show that a protocol is one reader and one registration:
/// on one TCP port, every CRLF-terminated line is one message, a request from the client, a
/// response from the server (the n-th response answers the n-th request). Nothing under
/// Sources/ knows it.
enum LineProtocol {
    /// The registration: connections to `port` are read as lines.
    static func registration(port: UInt16) -> ProtocolRegistration {
        .tcp(
            "line", probe: { _, _, connection in connection.responder.port == port ? .yes : .no },
            reader: LineReader.init)
    }
}

/// Reads one connection's lines; claims each line as its message, so that the cost layers
/// under it are exact.
final class LineReader: ConnectionReader {
    private let info: ConnectionInfo
    private let sink: ConnectionRecordSink
    private let clientSide: Direction
    /// Per side: where the line being read began (and when), and the lines so far.
    private var lineStart: [Int64] = [0, 0]
    private var lineTime: [Int64?] = [nil, nil]
    private var lastByteWasCR = [false, false]
    private var counts = [0, 0]

    init(_ route: ReaderRoute) {
        info = route.info
        sink = route.sink
        clientSide = route.clientSide
    }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        let s = side.rawValue
        for (index, byte) in bytes.enumerated() {
            if lineTime[s] == nil { lineTime[s] = position.time }
            let end = position.offset + Int64(index) + 1
            if byte == UInt8(ascii: "\n"), lastByteWasCR[s] { finishLine(side, end: end) }
            lastByteWasCR[s] = byte == UInt8(ascii: "\r")
        }
    }

    private func finishLine(_ side: Direction, end: Int64) {
        let s = side.rawValue
        let start = lineStart[s]
        let kind: MessageKind = side == clientSide ? .request : .response
        let client = info.endpoint(clientSide)
        var message = CapturedMessage(
            HTTPMessage(kind: kind, index: counts[s]), connection: info.number, client: client,
            server: info.endpoint(clientSide.peer), time: lineTime[s] ?? 0, streamOffset: start)
        message.wireLine = Int(end - start)
        message.complete = true
        message.pair = counts[s]
        counts[s] += 1
        sink.claim(start..<end, of: side, stream: 0, by: .message(startingAt: start))
        sink.settle(side, stream: 0, upTo: end)
        sink.record(message, body: nil)
        lineStart[s] = end
        lineTime[s] = nil
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        // A line cut by a gap is no message: its bytes and the gap belong to nobody.
        lineStart[side.rawValue] = position.offset + Int64(max(0, length))
        lineTime[side.rawValue] = nil
        lastByteWasCR[side.rawValue] = false
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) { sink.settle(side, stream: 0, upTo: .max) }

    func close(_ accounting: ConnectionAccounting) {
        for side in [Direction.up, .down] { sink.settle(side, stream: 0, upTo: .max) }
        sink.connectionClosed(
            HTTPConnectionSummary(
                accounting: accounting, protocolKind: .other, serverName: nil, clientTally: StreamTally(),
                serverTally: StreamTally(), clientEndpoint: info.endpoint(clientSide)))
    }
}
