import MessageModel

@testable import HTTP1
import Flows
import PacketLayers
@testable import TCPReassembly
import TestSupport
import XCTest

// Drives an HTTPConnection directly with a scripted conversation (no pcap), and checks what
// every scenario must satisfy: the byte buckets add up, and the records do not depend on how
// the bytes were cut into receive() calls.

/// What a message's body observer saw.
struct ObservedBody: Equatable {
    var bytes: [UInt8] = []
    var gaps = 0
    var gapBytes = 0
}

final class BodyCounter: BodyObserver {
    var seen = ObservedBody()
    func bodyBytes(_ bytes: UnsafeRawBufferPointer) { seen.bytes.append(contentsOf: bytes) }
    func bodyGap(_ length: Int) {
        seen.gaps += 1
        seen.gapBytes += length
    }
}

final class TestSink: MessageSink {
    var records: [CapturedMessage] = []
    var bodies: [ObservedBody?] = []
    var observersAsked: [HTTPMessage] = []
    var summaries: [HTTPConnectionSummary] = []

    func bodyObserver(for message: HTTPMessage) -> BodyCounter? {
        observersAsked.append(message)
        return BodyCounter()
    }

    func record(_ message: CapturedMessage, body: BodyCounter?) {
        records.append(message)
        bodies.append(body?.seen)
    }

    func connectionClosed(_ summary: HTTPConnectionSummary) { summaries.append(summary) }
}

/// One event of a scripted conversation.
enum Step {
    enum Ack { case auto, none, at(Int64) }
    /// Bytes from a side; `ack` is what the packet acknowledges of the peer's stream (`auto`:
    /// everything the peer sent so far).
    case send(Direction, [UInt8], ack: Ack)
    case gap(Direction, Int)
    case end(Direction, StreamEndReason)

    static func client(_ text: String, ack: Ack = .auto) -> Step { .send(.up, Array(text.utf8), ack: ack) }
    static func server(_ text: String, ack: Ack = .auto) -> Step { .send(.down, Array(text.utf8), ack: ack) }
    static func clientBytes(_ bytes: [UInt8]) -> Step { .send(.up, bytes, ack: .auto) }
    static func serverBytes(_ bytes: [UInt8]) -> Step { .send(.down, bytes, ack: .auto) }
}

/// How each send is cut into receive() calls.
enum Split: CustomStringConvertible {
    case whole
    case bytes
    case random(UInt64)

    var description: String {
        switch self {
        case .whole: return "whole"
        case .bytes: return "byte by byte"
        case let .random(seed): return "random(\(seed))"
        }
    }
}

struct Outcome {
    var records: [CapturedMessage]
    var bodies: [ObservedBody?]
    var summary: HTTPConnectionSummary
    var observersAsked: [HTTPMessage]
    /// Bytes handed to receive() and bytes announced by gap().
    var fedBytes: Int
    var gapBytes: Int

    var requests: [CapturedMessage] { records.filter { $0.kind == .request } }
    var responses: [CapturedMessage] { records.filter { $0.kind == .response } }

    func request(_ index: Int) -> CapturedMessage? { requests.first { $0.index == index } }
    func response(_ index: Int) -> CapturedMessage? { responses.first { $0.index == index } }
    func body(of message: CapturedMessage?) -> ObservedBody? {
        guard let message, let at = records.firstIndex(where: { $0.kind == message.kind && $0.index == message.index })
        else { return nil }
        return bodies[at]
    }

    var tallies: [StreamTally] { [summary.clientTally, summary.serverTally] }
}

let initiatorEndpoint = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 40000)
let responderEndpoint = TransportEndpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80)
let startTime: Int64 = 1_700_000_000_000_000_000

/// The capture time given to step `index` of a script.
func stepTime(_ index: Int) -> Int64 { startTime + Int64(index) * 1_000 }

/// Runs a script through a fresh connection handler. Sides the script did not end are ended
/// with `.endOfCapture` before close, as the assembler does, unless `endSides` is false.
func run(
    _ steps: [Step], handshake: Bool = true, limits: HTTPLimits = HTTPLimits(), split: Split = .whole,
    endSides: Bool = true
) -> Outcome {
    let sink = TestSink()
    let factory = HTTPConnectionFactory(sink: sink, limits: limits)
    let info = ConnectionInfo(
        number: 3, initiator: initiatorEndpoint, responder: responderEndpoint,
        sawHandshake: handshake, firstPacketTime: startTime)
    let handler = factory.makeHandler(for: info)
    var offsets: [Int64] = [0, 0]
    var ended = [false, false]
    var fed = 0
    var gapped = 0
    var generator: SplitMix64? = nil
    if case let .random(seed) = split { generator = SplitMix64(seed: seed) }

    for (index, step) in steps.enumerated() {
        let time = stepTime(index)
        switch step {
        case let .send(side, bytes, ack):
            let acknowledged: Int64?
            switch ack {
            case .auto: acknowledged = offsets[side.peer.rawValue]
            case .none: acknowledged = nil
            case let .at(value): acknowledged = value
            }
            var start = 0
            while start < bytes.count {
                var length: Int
                switch split {
                case .whole: length = bytes.count
                case .bytes: length = 1
                case .random: length = 1 + Int(generator!.next() % 13)
                }
                length = min(length, bytes.count - start)
                let position = StreamPosition(
                    time: time, offset: offsets[side.rawValue], peerAcknowledged: acknowledged)
                bytes[start..<(start + length)].withUnsafeBytes { handler.receive($0, from: side, at: position) }
                offsets[side.rawValue] += Int64(length)
                start += length
            }
            fed += bytes.count
        case let .gap(side, length):
            handler.gap(
                length, from: side,
                at: StreamPosition(time: time, offset: offsets[side.rawValue], peerAcknowledged: nil))
            offsets[side.rawValue] += Int64(length)
            gapped += length
        case let .end(side, reason):
            handler.end(of: side, reason: reason, time: time)
            ended[side.rawValue] = true
        }
    }
    let closeTime = stepTime(steps.count)
    if endSides {
        for side in [Direction.up, .down] where !ended[side.rawValue] {
            handler.end(of: side, reason: .endOfCapture, time: closeTime)
        }
    }
    var accounting = ConnectionAccounting(info: info)
    accounting.lastPacketTime = closeTime
    handler.close(accounting)
    precondition(sink.summaries.count == 1, "one summary per connection")
    return Outcome(
        records: sink.records, bodies: sink.bodies, summary: sink.summaries[0],
        observersAsked: sink.observersAsked, fedBytes: fed, gapBytes: gapped)
}

/// Every byte fed (and every gap byte) lands in exactly one bucket: a record's line, headers
/// or body, or a side's skipped, lost, tunnel or TLS bytes.
func assertBuckets(_ outcome: Outcome, _ context: String = "", file: StaticString = #filePath, line: UInt = #line) {
    let inRecords = outcome.records.reduce(0) { $0 + $1.wireLine + $1.wireHeaders + $1.wireBody }
    let inTallies = outcome.tallies.reduce(0) { $0 + $1.skippedBytes + $1.lostBytes + $1.tunnelBytes + $1.tlsBytes }
    XCTAssertEqual(
        inRecords + inTallies, outcome.fedBytes + outcome.gapBytes,
        "buckets (\(context)): records \(inRecords) + tallies \(inTallies) != fed \(outcome.fedBytes) + gaps \(outcome.gapBytes)",
        file: file, line: line)
    for record in outcome.records {
        XCTAssertLessThanOrEqual(
            record.missingBytes, record.wireBody, "missing bytes are body bytes", file: file, line: line)
        XCTAssertLessThanOrEqual(
            record.bodyLength, record.wireBody, "the de-chunked body is within the wire body", file: file, line: line)
    }
}

/// Runs `steps` whole, byte by byte and cut at seeded random points; checks the buckets of
/// each run and that all runs give the same records, bodies and tallies. Returns the whole run.
@discardableResult
func verify(
    _ steps: [Step], handshake: Bool = true, limits: HTTPLimits = HTTPLimits(), endSides: Bool = true,
    file: StaticString = #filePath, line: UInt = #line
) -> Outcome {
    let whole = run(steps, handshake: handshake, limits: limits, split: .whole, endSides: endSides)
    assertBuckets(whole, "whole", file: file, line: line)
    let splits: [Split] = [.bytes] + (1...12).map { .random($0 &* 7919) }
    for split in splits {
        let other = run(steps, handshake: handshake, limits: limits, split: split, endSides: endSides)
        assertBuckets(other, split.description, file: file, line: line)
        XCTAssertEqual(other.records.count, whole.records.count, "record count, \(split)", file: file, line: line)
        for (index, (a, b)) in zip(whole.records, other.records).enumerated() where a != b {
            XCTFail("record \(index) differs \(split):\n whole: \(a)\n split: \(b)", file: file, line: line)
        }
        XCTAssertEqual(other.bodies, whole.bodies, "bodies, \(split)", file: file, line: line)
        XCTAssertEqual(
            other.summary.clientTally, whole.summary.clientTally, "client tally, \(split)", file: file, line: line)
        XCTAssertEqual(
            other.summary.serverTally, whole.summary.serverTally, "server tally, \(split)", file: file, line: line)
        XCTAssertEqual(
            other.summary.protocolKind, whole.summary.protocolKind, "protocol, \(split)", file: file, line: line)
        XCTAssertEqual(
            other.summary.serverName, whole.summary.serverName, "server name, \(split)", file: file, line: line)
    }
    return whole
}

/// Checks a record's size buckets.
func assertSizes(
    _ message: CapturedMessage?, line wireLine: Int, headers: Int, body: Int, bodyLength: Int? = nil,
    file: StaticString = #filePath, line: UInt = #line
) {
    guard let message else { return XCTFail("no such record", file: file, line: line) }
    XCTAssertEqual(message.wireLine, wireLine, "wire_line", file: file, line: line)
    XCTAssertEqual(message.wireHeaders, headers, "wire_headers", file: file, line: line)
    XCTAssertEqual(message.wireBody, body, "wire_body", file: file, line: line)
    XCTAssertEqual(message.bodyLength, bodyLength ?? body, "body length", file: file, line: line)
    XCTAssertEqual(message.wireTotal, wireLine + headers + body, "wire_total", file: file, line: line)
}

extension Array where Element == UInt8 {
    var text: String { String(decoding: self, as: UTF8.self) }
}
