import CaptureIO
import Flows
import Foundation
import MessageModel
@testable import HTTP2
import PacketLayers
import TCPReassembly
import TestSupport
import XCTest

/// Every HTTP/2 sample's connections, reassembled by the project's own stages, read again by
/// an `HTTP2Connection` with their bytes cut in other places: as captured, byte by byte, and
/// at random splits (seeded) that also join a side's consecutive segments. The records (sizes,
/// frames, header_list, anomalies, fields, body bytes observed) and the connection summary
/// must not depend on where the bytes were cut.
final class SplitInvarianceTests: XCTestCase {
    /// One connection as the reassembler delivered it: both sides' calls in capture order.
    final class RecordedConnection: ByteStreamHandler {
        enum Event {
            case bytes(Direction, [UInt8], StreamPosition)
            case gap(Direction, Int, StreamPosition)
        }

        let info: ConnectionInfo
        var events: [Event] = []
        var accounting: ConnectionAccounting?

        init(info: ConnectionInfo) { self.info = info }

        func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
            events.append(.bytes(side, Array(bytes), position))
        }
        func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
            events.append(.gap(side, length, position))
        }
        func end(of side: Direction, reason: StreamEndReason, time: Int64) {}
        func close(_ accounting: ConnectionAccounting) { self.accounting = accounting }

        func firstBytes(of side: Direction, count: Int) -> [UInt8] {
            var result: [UInt8] = []
            for case .bytes(let from, let bytes, _) in events where from == side && result.count < count {
                result += bytes.prefix(count - result.count)
            }
            return result
        }
    }

    final class Recorder: ByteStreamHandlerFactory {
        var connections: [RecordedConnection] = []
        func makeHandler(for connection: ConnectionInfo) -> ByteStreamHandler {
            let handler = RecordedConnection(info: connection)
            connections.append(handler)
            return handler
        }
    }

    final class Body: BodyObserver {
        var bytes: [UInt8] = []
        var gaps = 0
        func bodyBytes(_ bytes: UnsafeRawBufferPointer) { self.bytes += bytes }
        func bodyGap(_ length: Int) { gaps += length }
    }

    struct Outcome: Equatable {
        var message: CapturedMessage
        var body: [UInt8]?
        var bodyGaps: Int?
    }

    final class Sink: MessageSink {
        var outcomes: [Outcome] = []
        func bodyObserver(for message: HTTPMessage) -> Body? { Body() }
        func record(_ message: CapturedMessage, body: Body?) {
            outcomes.append(Outcome(message: message, body: body?.bytes, bodyGaps: body?.gaps))
        }
        func connectionClosed(_ summary: HTTPConnectionSummary) {}
    }

    /// How a run cuts the recorded bytes.
    enum Cut: CustomStringConvertible {
        case asCaptured
        case byteByByte
        /// Random cuts inside each segment, and a side's consecutive segments sometimes joined.
        case random(seed: UInt64)

        var description: String {
            switch self {
            case .asCaptured: return "as captured"
            case .byteByByte: return "byte by byte"
            case .random(let seed): return "random splits, seed \(seed)"
            }
        }
    }

    static let samples = ["h2c-prior", "h2c-upgrade", "h2c-more", "h2c-midconn", "h2c-curl"]

    func recordedConnections(_ name: String) throws -> [RecordedConnection] {
        let reader = try CaptureReader(path: Fixtures.sample("\(name).pcap"))
        let decoder = PacketDecoder()
        let recorder = Recorder()
        let assembler = TCPAssembler(factory: recorder)
        while let frame = try reader.next() {
            if case .segment(let segment) = decoder.decode(frame) { assembler.process(segment) }
        }
        assembler.finish()
        return recorder.connections
    }

    /// Where each side's frames begin: after the preface-less HTTP/1.1 head of an h2c Upgrade
    /// (the request, and the 101 that answered it), else at the first byte.
    static func http2Start(of connection: RecordedConnection) -> (skip: [Int], upgraded: RequestSummary?) {
        let clientHead = connection.firstBytes(of: .up, count: 4096)
        guard clientHead.starts(with: Array("GET ".utf8)) || clientHead.starts(with: Array("POST ".utf8)) else {
            return ([0, 0], nil)
        }
        func headLength(_ bytes: [UInt8]) -> Int {
            for index in 0..<max(0, bytes.count - 3) where bytes[index..<(index + 4)].elementsEqual([13, 10, 13, 10]) {
                return index + 4
            }
            return 0
        }
        let serverHead = connection.firstBytes(of: .down, count: 4096)
        XCTAssertTrue(serverHead.starts(with: Array("HTTP/1.1 101".utf8)), "an h2c Upgrade answered by 101")
        let line = clientHead.prefix { $0 != 13 }.split(separator: 32)
        let request = RequestSummary(
            index: 0, method: String(decoding: line[0], as: UTF8.self), target: Array(line[1]), host: nil)
        return ([headLength(clientHead), headLength(serverHead)], request)
    }

    /// The connection's HTTP/2 part fed to a fresh `HTTP2Connection`, cut as `cut` says.
    func read(_ connection: RecordedConnection, cut: Cut) -> ([Outcome], HTTP2ConnectionSummary) {
        let (skip, upgraded) = Self.http2Start(of: connection)
        let preface = HTTP2Connection<Sink>.prefaceBytes
        let clientStart = connection.firstBytes(of: .up, count: skip[0] + preface.count).dropFirst(skip[0])
        let sink = Sink()
        let http2 = HTTP2Connection(
            info: connection.info, sink: sink, firstIndexes: upgraded == nil ? [0, 0] : [1, 1],
            upgradedRequest: upgraded, startsAtBeginning: clientStart.elementsEqual(preface))
        var generator = SplitMix64(seed: 0)
        if case .random(let seed) = cut { generator = SplitMix64(seed: seed) }
        var toSkip = skip
        // Bytes held back to be joined with the same side's next segment (random cuts only).
        var pending: (side: Direction, bytes: [UInt8], position: StreamPosition)?
        func flush() {
            guard let held = pending else { return }
            pending = nil
            feed(held.bytes, side: held.side, position: held.position)
        }
        func feed(_ bytes: [UInt8], side: Direction, position: StreamPosition) {
            var start = 0
            while start < bytes.count {
                let length: Int
                switch cut {
                case .asCaptured: length = bytes.count
                case .byteByByte: length = 1
                case .random:
                    // Mostly short pieces (they cut frame headers), sometimes long ones.
                    length = generator.below(4) == 0 ? 1 + generator.below(bytes.count) : 1 + generator.below(12)
                }
                let end = min(bytes.count, start + length)
                bytes[start..<end].withUnsafeBytes {
                    http2.receive(
                        $0, from: side,
                        at: StreamPosition(
                            time: position.time, offset: position.offset + Int64(start),
                            peerAcknowledged: position.peerAcknowledged))
                }
                start = end
            }
        }
        for event in connection.events {
            switch event {
            case .bytes(let side, var bytes, var position):
                if toSkip[side.rawValue] > 0 {
                    let dropped = min(toSkip[side.rawValue], bytes.count)
                    toSkip[side.rawValue] -= dropped
                    bytes.removeFirst(dropped)
                    position.offset += Int64(dropped)
                    if bytes.isEmpty { continue }
                }
                if case .random = cut {
                    if let held = pending, held.side == side, generator.below(2) == 0 {
                        pending?.bytes += bytes
                        continue
                    }
                    flush()
                    pending = (side, bytes, position)
                } else {
                    feed(bytes, side: side, position: position)
                }
            case .gap(let side, let length, let position):
                flush()
                http2.gap(length, from: side, at: position)
            }
        }
        flush()
        for side in [Direction.up, .down] { http2.end(of: side, reason: .fin, time: 0) }
        http2.close(connection.accounting ?? ConnectionAccounting(info: connection.info))
        return (sink.outcomes, http2.summary)
    }

    /// Joined segments take the first one's capture time, so random cuts compare all but times.
    static func withoutTimes(_ outcomes: [Outcome]) -> [Outcome] {
        outcomes.map {
            var outcome = $0
            outcome.message.time = 0
            return outcome
        }
    }

    func testEverySampleGivesTheSameRecordsHoweverItsBytesAreCut() throws {
        var connectionsChecked = 0
        var recordsChecked = 0
        for name in Self.samples {
            for connection in try recordedConnections(name) {
                let label = "\(name) connection \(connection.info.number)"
                let (baseline, baselineSummary) = read(connection, cut: .asCaptured)
                XCTAssertFalse(baseline.isEmpty, "\(label): records")
                for cut in [Cut.byteByByte, .random(seed: 1), .random(seed: 2), .random(seed: 3), .random(seed: 42)] {
                    let (outcomes, summary) = read(connection, cut: cut)
                    XCTAssertEqual(summary, baselineSummary, "\(label), \(cut): summary")
                    XCTAssertEqual(outcomes.count, baseline.count, "\(label), \(cut): records")
                    let compared: ([Outcome], [Outcome])
                    if case .byteByByte = cut {
                        compared = (outcomes, baseline)
                    } else {
                        compared = (Self.withoutTimes(outcomes), Self.withoutTimes(baseline))
                    }
                    for (got, want) in zip(compared.0, compared.1) where got != want {
                        XCTFail(
                            "\(label), \(cut): stream \(want.message.message.protocolFacts.stream ?? 0) "
                                + "\(want.message.kind): \(got) != \(want)")
                    }
                }
                connectionsChecked += 1
                recordsChecked += baseline.count
            }
        }
        // h2c-prior 1 connection, h2c-upgrade 1, h2c-more 1, h2c-midconn 1, h2c-curl 4.
        XCTAssertEqual(connectionsChecked, 8)
        // The records of the frame logs (Samples/*.h2truth.jsonl): 17 + 1 + 12 + n + 8.
        XCTAssertEqual(recordsChecked, Self.truthLines.reduce(0, +))
    }

    /// Lines of each sample's frame log: one per HTTP/2 record.
    static var truthLines: [Int] {
        samples.map { name in
            (try? String(contentsOfFile: Fixtures.sample("\(name).h2truth.jsonl"), encoding: .utf8))?
                .split(separator: "\n").count ?? -1
        }
    }
}
