import Flows
import QUIC

/// Datagrams of one QUIC connection from the input, read by a `QUICConnection` whose streams go
/// to a handler that checks the stream contract: per (stream, side), each run starts where the
/// last run or gap ended, and nothing comes after the stream's end.
///
/// | bytes | meaning |
/// | --- | --- |
/// | then, repeated | 1 byte: bit 7 the datagram is the server's; 2 bytes: its length (big endian), clamped to what follows; the datagram |
///
/// When the first datagram looks like a short header, the trial that finds a connection begun
/// before the capture runs on it first (`QUICShortHeaderTrial`, fixed secrets, a small budget
/// that must never be overspent); a match would start the connection mid-way.
///
/// Seeds: RFC 9001 Appendix A's client and server Initial (Tests/Fixtures/fuzz/FuzzQUIC), and
/// scripts/make-fuzz-corpus cuts more from the HTTP/3 samples when present.
enum QUICEntry {
    /// The handler that checks the order of what it is fed (a violation traps: the fuzzer's find).
    final class Checker: MultiplexedStreamHandler {
        struct Key: Hashable {
            var stream: UInt64
            var side: Direction
        }
        var next: [Key: Int64] = [:]
        var ended: Set<Key> = []
        var bytes = 0

        func receive(_ data: UnsafeRawBufferPointer, stream: UInt64, from side: Direction, at position: StreamPosition) {
            let key = Key(stream: stream, side: side)
            precondition(!ended.contains(key), "bytes after the stream's end")
            precondition(position.offset == next[key, default: 0], "a run out of order")
            next[key] = position.offset + Int64(data.count)
            bytes += data.count
        }

        func gap(_ length: Int, stream: UInt64, from side: Direction, at position: StreamPosition) {
            let key = Key(stream: stream, side: side)
            precondition(position.offset == next[key, default: 0] && length > 0, "a gap out of order")
            next[key] = position.offset + Int64(length)
        }

        func end(stream: UInt64, of side: Direction, reason: StreamEndReason, time: Int64) {
            ended.insert(Key(stream: stream, side: side))
        }

        func close(_ accounting: ConnectionAccounting) {}
    }

    /// Fixed 1-RTT secrets for the trial.
    static let trialKeys = QUICTrialKeys(
        clientRandom: [UInt8](repeating: 0, count: 32), client: [UInt8](repeating: 1, count: 32),
        server: [UInt8](repeating: 2, count: 32))!

    @discardableResult
    static func run(_ input: UnsafeRawBufferPointer) -> (connection: QUICConnection, checker: Checker) {
        var cursor = InputCursor(input)
        let checker = Checker()
        // A small bound so that the fuzzer reaches the holes given up.
        let connection = QUICConnection(secrets: { _ in nil }, maxHeldBytes: 4096)
        connection.setHandler(checker)
        var time: Int64 = 0
        var first = true
        while !cursor.isAtEnd {
            let control = cursor.u8()
            let length = Int(cursor.u16())
            let datagram = cursor.take(length)
            if first, QUICShortHeaderTrial.looksLikeShortHeader(datagram) {
                var trials = 256
                let bounds = QUICTrialBounds(packetNumberWindows: 2, keyGenerations: 2)
                if let match = QUICShortHeaderTrial.search(
                    datagram, candidates: [trialKeys], sides: [.up, .down], bounds: bounds, trials: &trials)
                {
                    connection.beginMidway(match, datagram: datagram, bounds: bounds, peerTrials: 256, peerDatagrams: 2)
                }
                precondition(trials >= 0, "a trial budget overspent")
            }
            first = false
            connection.datagram(datagram, from: control & 0x80 != 0 ? .down : .up, time: time)
            time += 1000
        }
        let info = ConnectionInfo(
            number: 0, initiator: .init(address: .init(ipv4: 1), port: 1), responder: .init(address: .init(ipv4: 2), port: 2),
            sawHandshake: false, firstPacketTime: 0, transport: .udp)
        connection.close(ConnectionAccounting(info: info))
        return (connection, checker)
    }
}
