@testable import TCPReassembly
import Flows
import PacketLayers
import TestSupport
import XCTest

// A scripted-connection harness for TCPAssembler tests. Expectations are always computed
// from the script (the bytes and segments sent), never from what the assembler did.

// MARK: - Recording

/// Everything the assembler told handlers, in call order, across connections; `.packet(i)`
/// marks the start of feeding packet `i`, `.finish` the call to `finish()`.
enum Event: Equatable {
    case packet(Int)
    case finish
    case open(Int)
    case receive(connection: Int, side: Direction, offset: Int64, count: Int)
    case gap(connection: Int, side: Direction, offset: Int64, length: Int)
    case end(connection: Int, side: Direction, reason: StreamEndReason)
    case close(Int)
}

final class EventLog {
    var events: [Event] = []

    /// The packet being fed when `event` happened (-1 for `finish()`, nil if it never happened).
    func packetIndex(of predicate: (Event) -> Bool) -> Int? {
        var current = -2
        for event in events {
            switch event {
            case .packet(let index): current = index
            case .finish: current = -1
            default: if predicate(event) { return current }
            }
        }
        return nil
    }

    func index(of predicate: (Event) -> Bool) -> Int? { events.firstIndex(where: predicate) }
}

struct SeenGap: Equatable, CustomStringConvertible {
    var offset: Int64
    var length: Int
    var description: String { "gap(\(offset), \(length))" }
}

/// Concatenates each side's bytes, with every gap filled by `gapMarker` and recorded, and
/// checks the protocol contract (contiguous offsets, nothing after end or close).
final class RecordingHandler: ByteStreamHandler {
    static let gapMarker: UInt8 = 0xEE

    let info: ConnectionInfo
    let log: EventLog
    var streams: [[UInt8]] = [[], []]
    var gaps: [[SeenGap]] = [[], []]
    var gapTimes: [[Int64]] = [[], []]
    var positions: [[StreamPosition]] = [[], []]
    var receivedCounts: [[Int]] = [[], []]
    var ends: [StreamEndReason?] = [nil, nil]
    var endTimes: [Int64?] = [nil, nil]
    var accounting: ConnectionAccounting?
    var problems: [String] = []
    /// Every packet's cost, per side, in the order told.
    var costs: [[PacketCost]] = [[], []]

    init(info: ConnectionInfo, log: EventLog) {
        self.info = info
        self.log = log
    }

    func stream(_ side: Direction) -> [UInt8] { streams[side.rawValue] }
    func gaps(_ side: Direction) -> [SeenGap] { gaps[side.rawValue] }
    func end(_ side: Direction) -> StreamEndReason? { ends[side.rawValue] }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        check(side, at: position.offset, "receive")
        if bytes.isEmpty { problems.append("empty receive from \(side) at \(position.offset)") }
        streams[side.rawValue].append(contentsOf: bytes)
        positions[side.rawValue].append(position)
        receivedCounts[side.rawValue].append(bytes.count)
        log.events.append(.receive(connection: info.number, side: side, offset: position.offset, count: bytes.count))
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        check(side, at: position.offset, "gap")
        if length <= 0 { problems.append("gap of \(length) from \(side) at \(position.offset)") }
        streams[side.rawValue].append(contentsOf: repeatElement(Self.gapMarker, count: max(0, length)))
        gaps[side.rawValue].append(SeenGap(offset: position.offset, length: length))
        gapTimes[side.rawValue].append(position.time)
        log.events.append(.gap(connection: info.number, side: side, offset: position.offset, length: length))
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        if accounting != nil { problems.append("end of \(side) after close") }
        if ends[side.rawValue] != nil { problems.append("\(side) ended twice") }
        ends[side.rawValue] = reason
        endTimes[side.rawValue] = time
        log.events.append(.end(connection: info.number, side: side, reason: reason))
    }

    func close(_ accounting: ConnectionAccounting) {
        if self.accounting != nil { problems.append("closed twice") }
        if ends.contains(where: { $0 == nil }) { problems.append("closed before both sides ended: \(ends)") }
        if accounting.initiatorEnd != ends[0] || accounting.responderEnd != ends[1] {
            problems.append(
                "accounting ends \(String(describing: accounting.initiatorEnd)), "
                    + "\(String(describing: accounting.responderEnd)) differ from end calls \(ends)")
        }
        if accounting.info.number != info.number { problems.append("accounting for another connection") }
        self.accounting = accounting
        log.events.append(.close(info.number))
    }

    func packet(_ cost: PacketCost, from side: Direction) {
        costs[side.rawValue].append(cost)
    }

    private func check(_ side: Direction, at offset: Int64, _ what: String) {
        if accounting != nil { problems.append("\(what) from \(side) after close") }
        if ends[side.rawValue] != nil { problems.append("\(what) from \(side) after its end") }
        if offset != Int64(streams[side.rawValue].count) {
            problems.append("\(what) from \(side) at offset \(offset), expected \(streams[side.rawValue].count)")
        }
    }
}

final class RecordingFactory: ByteStreamHandlerFactory {
    let log = EventLog()
    var handlers: [RecordingHandler] = []
    var problems: [String] = []

    func makeHandler(for connection: ConnectionInfo) -> ByteStreamHandler {
        if connection.number != handlers.count {
            problems.append("connection numbered \(connection.number), expected \(handlers.count)")
        }
        let handler = RecordingHandler(info: connection, log: log)
        handlers.append(handler)
        log.events.append(.open(connection.number))
        return handler
    }
}

// MARK: - Packets

func endpoint(_ address: UInt32, _ port: UInt16) -> TransportEndpoint {
    TransportEndpoint(address: IPAddress(ipv4: address), port: port)
}

let clientEndpoint = endpoint(0x0A00_0001, 50_000)
let serverEndpoint = endpoint(0x0A00_0002, 80)
let baseTime: Int64 = 1_700_000_000 * 1_000_000_000
let millisecond: Int64 = 1_000_000
let second: Int64 = 1_000_000_000

/// One packet of a script. `payload.count < payloadLength` models snaplen truncation.
struct Packet {
    var source: TransportEndpoint
    var destination: TransportEndpoint
    var sequence: UInt32
    var acknowledgment: UInt32
    var flags: TCPFlags
    var payload: [UInt8] = []
    var payloadLength: Int = 0
    var time: Int64 = 0

    /// Frame and IP lengths as if Ethernet + IPv4 + TCP without options.
    var frameLength: Int { 54 + payloadLength }
    var ipLength: Int { 40 + payloadLength }
}

/// Gives packets increasing capture times, one millisecond apart.
func stamped(_ packets: [Packet], from start: Int64 = baseTime, step: Int64 = millisecond) -> [Packet] {
    var packets = packets
    for index in packets.indices { packets[index].time = start + Int64(index) * step }
    return packets
}

/// One assembler, one recording factory, and the event log that interleaves both.
final class Harness {
    let factory = RecordingFactory()
    let assembler: TCPAssembler
    private(set) var fed = 0
    /// Called after every packet (for invariants such as bounded buffers).
    var afterEachPacket: ((TCPAssembler) -> Void)?

    init(limits: ReassemblyLimits = ReassemblyLimits()) {
        assembler = TCPAssembler(limits: limits, factory: factory)
    }

    var log: EventLog { factory.log }
    var handlers: [RecordingHandler] { factory.handlers }

    func feed(_ packets: [Packet]) {
        for packet in packets { feed(packet) }
    }

    func feed(_ packet: Packet) {
        factory.log.events.append(.packet(fed))
        packet.payload.withUnsafeBytes { payload in
            assembler.process(
                TCPSegment(
                    source: packet.source, destination: packet.destination, sequence: packet.sequence,
                    acknowledgment: packet.acknowledgment, flags: packet.flags, window: 65535,
                    payload: payload, payloadLength: packet.payloadLength, frameLength: packet.frameLength,
                    ipLength: packet.ipLength, timestamp: packet.time, frameNumber: fed + 1))
        }
        fed += 1
        afterEachPacket?(assembler)
    }

    func finish() {
        factory.log.events.append(.finish)
        assembler.finish()
    }

    /// Fails on any contract problem a handler or the factory noticed.
    func assertNoProblems(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(factory.problems, [], file: file, line: line)
        for handler in factory.handlers {
            XCTAssertEqual(handler.problems, [], "connection \(handler.info.number)", file: file, line: line)
        }
    }
}

// MARK: - Scripted connections

/// A stretch of a stream: `length` bytes at `offset`.
struct Cut: Equatable {
    var offset: Int
    var length: Int
    var end: Int { offset + length }
}

/// Cuts `total` bytes into consecutive segments whose sizes cycle through `sizes`.
func cuts(_ total: Int, sizes: [Int]) -> [Cut] {
    var result: [Cut] = []
    var offset = 0
    var index = 0
    while offset < total {
        let length = min(sizes[index % sizes.count], total - offset)
        result.append(Cut(offset: offset, length: length))
        offset += length
        index += 1
    }
    return result
}

/// A connection's endpoints and initial sequence numbers; builds its packets by stream offset.
/// The client is the initiator.
struct Flow {
    var client = clientEndpoint
    var server = serverEndpoint
    var clientISN: UInt32 = 1_000
    var serverISN: UInt32 = 500_000

    func isn(_ side: Direction) -> UInt32 { side == .up ? clientISN : serverISN }
    func source(_ side: Direction) -> TransportEndpoint { side == .up ? client : server }

    /// A packet from `side` whose data starts at stream offset `offset` (sequence ISN + 1 +
    /// offset) acknowledging the peer's stream up to offset `ack` (no ACK flag when nil).
    func packet(
        _ side: Direction, offset: Int, _ payload: [UInt8] = [], ack: Int?, flags: TCPFlags = [],
        payloadLength: Int? = nil
    ) -> Packet {
        Packet(
            source: source(side), destination: source(side.peer),
            sequence: isn(side) &+ 1 &+ UInt32(truncatingIfNeeded: offset),
            acknowledgment: ack.map { isn(side.peer) &+ 1 &+ UInt32(truncatingIfNeeded: $0) } ?? 0,
            flags: ack == nil ? flags : flags.union(.ack),
            payload: payload, payloadLength: payloadLength ?? payload.count)
    }

    func syn() -> Packet {
        Packet(source: client, destination: server, sequence: clientISN, acknowledgment: 0, flags: .syn)
    }

    func synAck() -> Packet {
        Packet(
            source: server, destination: client, sequence: serverISN, acknowledgment: clientISN &+ 1,
            flags: [.syn, .ack])
    }

    func handshake() -> [Packet] { [syn(), synAck(), packet(.up, offset: 0, ack: 0)] }

    func data(_ side: Direction, _ bytes: [UInt8], _ cut: Cut, ack: Int?, flags: TCPFlags = .psh) -> Packet {
        packet(side, offset: cut.offset, Array(bytes[cut.offset..<cut.end]), ack: ack, flags: flags)
    }

    func fin(_ side: Direction, offset: Int, ack: Int?) -> Packet {
        packet(side, offset: offset, ack: ack, flags: .fin)
    }

    func rst(_ side: Direction, offset: Int) -> Packet {
        packet(side, offset: offset, ack: nil, flags: .rst)
    }
}

/// What a receiver that got exactly the captured segments would acknowledge: the end of
/// the contiguous bytes from offset 0 (plus one for a FIN reached).
struct ReceiverModel {
    /// Received ranges past the contiguous point.
    private var pending: [Cut] = []
    private(set) var contiguous = 0
    var finOffset: Int?

    mutating func receive(_ cut: Cut) {
        pending.append(cut)
        var advanced = true
        while advanced {
            advanced = false
            pending.removeAll { range in
                guard range.offset <= contiguous else { return false }
                if range.end > contiguous {
                    contiguous = range.end
                    advanced = true
                }
                return true
            }
        }
    }

    var acknowledgment: Int { contiguous + (finOffset == contiguous ? 1 : 0) }
}

/// Bytes of `sends` (in capture order) that repeat bytes of an earlier send.
func repeatedBytes(_ sends: [Cut]) -> Int {
    var seen: [Bool] = []
    var repeated = 0
    for cut in sends {
        if seen.count < cut.end { seen += repeatElement(false, count: cut.end - seen.count) }
        for offset in cut.offset..<cut.end {
            if seen[offset] { repeated += 1 } else { seen[offset] = true }
        }
    }
    return repeated
}

/// Sends that start past the contiguous bytes before them (arrive ahead of a hole).
func aheadOfHole(_ sends: [Cut]) -> Int {
    var model = ReceiverModel()
    var ahead = 0
    for cut in sends {
        if cut.offset > model.contiguous { ahead += 1 }
        model.receive(cut)
    }
    return ahead
}

/// A request/response exchange: handshake, the client's data segments in `requestSends`
/// order, the server's in `responseSends` order (each optionally followed by the receiver's
/// cumulative ACK), then FIN, FIN-ACK, ACK.
struct Exchange {
    var flow = Flow()
    var request: [UInt8]
    var response: [UInt8]
    var requestSends: [Cut]
    var responseSends: [Cut]
    /// The receiver ACKs its contiguous point after every data segment.
    var receiverAcks = true
    /// The server's FIN rides on its segment that ends the response, instead of its own packet.
    var finOnLastResponseSegment = false

    init(request: [UInt8], response: [UInt8], requestSizes: [Int], responseSizes: [Int]) {
        self.request = request
        self.response = response
        requestSends = cuts(request.count, sizes: requestSizes)
        responseSends = cuts(response.count, sizes: responseSizes)
    }

    func handshakePackets() -> [Packet] { flow.handshake() }

    func requestPackets() -> [Packet] {
        var packets: [Packet] = []
        var receiver = ReceiverModel()
        for cut in requestSends {
            packets.append(flow.data(.up, request, cut, ack: 0))
            receiver.receive(cut)
            if receiverAcks { packets.append(flow.packet(.down, offset: 0, ack: receiver.acknowledgment)) }
        }
        return packets
    }

    func responsePackets() -> [Packet] {
        var packets: [Packet] = []
        var receiver = ReceiverModel()
        for cut in responseSends {
            let fin = finOnLastResponseSegment && cut.end == response.count
            packets.append(flow.data(.down, response, cut, ack: request.count, flags: fin ? [.psh, .fin] : .psh))
            if fin { receiver.finOffset = response.count }
            receiver.receive(cut)
            if receiverAcks {
                packets.append(flow.packet(.up, offset: request.count, ack: receiver.acknowledgment))
            }
        }
        return packets
    }

    func teardownPackets() -> [Packet] {
        var packets: [Packet] = []
        if !finOnLastResponseSegment {
            packets.append(flow.fin(.down, offset: response.count, ack: request.count))
        }
        packets.append(flow.fin(.up, offset: request.count, ack: response.count + 1))
        packets.append(flow.packet(.down, offset: response.count + 1, ack: request.count + 1))
        return packets
    }

    func packets() -> [Packet] {
        stamped(handshakePackets() + requestPackets() + responsePackets() + teardownPackets())
    }
}

/// Checks one side's packet accounting against the packets the script made it send.
func assertAccounting(
    _ accounting: SideAccounting, sentBy source: TransportEndpoint, in packets: [Packet],
    file: StaticString = #filePath, line: UInt = #line
) {
    let sent = packets.filter { $0.source == source }
    XCTAssertEqual(accounting.packets, sent.count, "packets", file: file, line: line)
    XCTAssertEqual(accounting.frameBytes, sent.reduce(0) { $0 + $1.frameLength }, "frameBytes", file: file, line: line)
    XCTAssertEqual(accounting.ipBytes, sent.reduce(0) { $0 + $1.ipLength }, "ipBytes", file: file, line: line)
    XCTAssertEqual(
        accounting.payloadBytes, sent.reduce(0) { $0 + $1.payloadLength }, "payloadBytes",
        file: file, line: line)
    XCTAssertEqual(
        accounting.controlPackets, sent.filter { $0.payloadLength == 0 }.count, "controlPackets",
        file: file, line: line)
}

/// Compares byte streams, reporting the first difference instead of dumping both.
func assertSameBytes(
    _ actual: [UInt8], _ expected: [UInt8], _ message: String = "",
    file: StaticString = #filePath, line: UInt = #line
) {
    guard actual != expected else { return }
    let first =
        zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, expected.count)
    XCTFail(
        "\(message) streams differ: \(actual.count) bytes delivered, \(expected.count) expected, first difference at \(first)",
        file: file, line: line)
}

/// `bytes` with each cut replaced by gap markers, as a recording handler shows a gap.
func withGaps(_ bytes: [UInt8], _ holes: [Cut]) -> [UInt8] {
    var result = bytes
    for hole in holes {
        for offset in hole.offset..<hole.end { result[offset] = RecordingHandler.gapMarker }
    }
    return result
}

// MARK: - Data and randomness

/// Recognizable text of `count` bytes: no two nearby offsets carry the same byte pattern.
func patternBytes(_ count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131 &+ ($0 >> 8) &* 7 &+ seed &* 17) % 251) }
}

let sampleRequest: [UInt8] =
    Array(
        ("POST /api/v1/upload?id=42 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: meter-test/1.0\r\n"
            + "Content-Type: application/octet-stream\r\nContent-Length: 64\r\n\r\n").utf8) + patternBytes(64, seed: 1)

let sampleResponse: [UInt8] =
    Array(
        ("HTTP/1.1 200 OK\r\nServer: test\r\nContent-Type: text/plain\r\nContent-Length: 900\r\n"
            + "Cache-Control: no-store\r\n\r\n").utf8) + patternBytes(900, seed: 2)

let requestSizes = [1, 7, 30, 2, 50, 13, 25, 4, 40]
let responseSizes = [100, 1, 37, 200, 3, 64, 128, 9, 250, 17, 80, 45]

/// All orders of 0..<k.
func permutations(_ k: Int) -> [[Int]] {
    guard k > 1 else { return [Array(0..<k)] }
    var result: [[Int]] = []
    for rest in permutations(k - 1) {
        for position in 0...rest.count {
            var order = rest
            order.insert(k - 1, at: position)
            result.append(order)
        }
    }
    return result
}

/// Every reordering of `n` items that permutes one window of `k` consecutive items.
func windowReorderings(count n: Int, window k: Int) -> [[Int]] {
    guard n >= k else { return [] }
    var result: [[Int]] = []
    for start in 0...(n - k) {
        for permutation in permutations(k) where permutation != Array(0..<k) {
            var order = Array(0..<n)
            for index in 0..<k { order[start + index] = start + permutation[index] }
            result.append(order)
        }
    }
    return result
}
