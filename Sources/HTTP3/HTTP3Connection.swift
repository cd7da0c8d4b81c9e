import CaptureIO
import CostAccounting
import Flows
import MessageModel
import PacketLayers

/// Frames and bytes of one kind.
public struct H3FrameCount: Sendable, Equatable {
    public var frames = 0
    /// Whole frames: type and length varints plus payload.
    public var bytes = 0

    public init(frames: Int = 0, bytes: Int = 0) {
        self.frames = frames
        self.bytes = bytes
    }
}

/// What one side of an HTTP/3 connection sent besides its messages' frames, and what went wrong
/// reading it. Every byte of the side's streams is in exactly one place: a message's frames
/// (`wire_headers`, `wire_body`), one of the byte counts here, or `lostBytes`.
public struct HTTP3DirectionTally: Sendable, Equatable {
    /// Frames read, by type (`H3FrameType.allCases` order, then unknown), on every stream.
    public var byType = [H3FrameCount](repeating: H3FrameCount(), count: H3FrameType.allCases.count + 1)
    /// The control stream: its type byte and every frame on it (SETTINGS, GOAWAY, ...).
    public var controlStreamBytes = 0
    /// The QPACK encoder stream (type byte included): the dynamic table's inserts.
    public var encoderStreamBytes = 0
    /// The QPACK decoder stream (type byte included): acknowledgements.
    public var decoderStreamBytes = 0
    /// Unidirectional streams of unknown (reserved, grease, extension) types, type included.
    public var unknownStreamBytes = 0
    /// Push streams' type byte and push id.
    public var pushStreamPreambleBytes = 0
    /// Frames on request and push streams that no message owns: unknown and reserved types,
    /// and types not allowed there (SETTINGS on a request stream: a protocol error).
    public var requestStreamOtherBytes = 0
    /// DATA, HEADERS and PUSH_PROMISE frames no message took (DATA before any HEADERS, a
    /// client's PUSH_PROMISE).
    public var unowned = H3FrameCount()
    /// Bytes not read as frames: lost in gaps, streams whose beginning the capture lacks,
    /// frames cut off by a gap or the stream's end.
    public var lostBytes = 0
    /// Frames and streams that break RFC 9114's rules.
    public var protocolErrors = 0
    /// Field sections QPACK could not decode (nghttp3 rejected them).
    public var qpackErrors = 0
    /// Field sections left unknown: they need encoder-stream inserts the capture lacks.
    public var qpackUnknownSections = 0
    /// Streams of this side's that carried anything, by type.
    public var requestStreams = 0
    public var uniStreams = 0
    /// The SETTINGS this side sent (QPACK_MAX_TABLE_CAPACITY 0x01, QPACK_BLOCKED_STREAMS 0x07,
    /// MAX_FIELD_SECTION_SIZE 0x06), when its control stream was read.
    public var qpackMaxTableCapacity: UInt64?
    public var qpackBlockedStreams: UInt64?

    public init() {}

    public subscript(type: H3FrameType) -> H3FrameCount { byType[type.slot] }
    public var unknownFrames: H3FrameCount { byType[H3FrameType.unknownSlot] }

    /// Bytes of the side's streams no message owns but the reader placed: the control and
    /// QPACK streams, unknown streams, push preambles, other frames and unowned frames
    /// (docs/METERING.md §2d: `h3_control`).
    public var connectionOverheadBytes: Int {
        [controlStreamBytes, encoderStreamBytes, decoderStreamBytes, unknownStreamBytes, pushStreamPreambleBytes,
         requestStreamOtherBytes, unowned.bytes].reduce(0, saturatingSum)
    }
}

/// An HTTP/3 connection's summary: each side's tally.
public struct HTTP3ConnectionSummary: Sendable, Equatable {
    public var client = HTTP3DirectionTally()
    public var server = HTTP3DirectionTally()

    public init() {}
}

extension OverheadKind {
    /// HTTP/3's control, QPACK encoder and decoder streams, unknown streams and frames, and
    /// their share of the QUIC packets under them: `h3_control` in every output.
    public static let h3Control = OverheadKind.register("h3_control", part: .other, order: 210)
}

/// One message being read: a class, so that a field section blocked on QPACK inserts and its
/// stream's reader both refer to it.
/// Its state, its exchange's and the connection's are touched for every STREAM frame, so they
/// are not checked for overlapping access at run time (`@exclusivity(unchecked)`): they live on
/// the parsing thread alone, each change is a plain read-modify-write or an `inout` pass to a
/// free function (`apply`), and no code that reaches them runs while one is open. On the HTTP/3
/// bench capture the checks were about 45 M instructions (docs/BENCHMARK.md).
final class H3Message {
    @exclusivity(unchecked) var captured: CapturedMessage
    @exclusivity(unchecked) var observer: (any BodyObserver)?
    /// Field sections of the message still waiting for QPACK inserts.
    @exclusivity(unchecked) var blockedSections = 0
    /// No frame will come any more (FIN, reset, the end of the capture).
    @exclusivity(unchecked) var ended = false
    @exclusivity(unchecked) var emitted = false
    /// The head's section was decoded and says 1xx.
    @exclusivity(unchecked) var interim = false
    /// The head's section was decoded (or found unknown).
    @exclusivity(unchecked) var headDone = false
    /// The exchange it belongs to (request stream, or push). Strong: a message a protocol
    /// error left behind outlives its exchange's place in the table; the connection breaks
    /// the cycle when it retires an exchange and at its close.
    let exchange: Exchange

    init(_ captured: CapturedMessage, exchange: Exchange) {
        self.captured = captured
        self.exchange = exchange
    }
}

/// A request and its response: a request stream's, or a push's (pushed request from its
/// PUSH_PROMISE, response from its push stream).
final class Exchange {
    @exclusivity(unchecked) var request: H3Message?
    @exclusivity(unchecked) var response: H3Message?
    @exclusivity(unchecked) var requestIndex: Int?
    @exclusivity(unchecked) var responseIndex: Int?
    /// The response side will send nothing more.
    @exclusivity(unchecked) var responseSideEnded = false
    /// RESET_STREAM on either side.
    @exclusivity(unchecked) var reset = false
}

/// One QUIC connection read as HTTP/3 (RFC 9114), behind the same `MessageSink` as
/// `HTTP2Connection`: QUIC hands each stream's ordered bytes (`MultiplexedStreamHandler`), a
/// `StreamReader` per (stream, side) reads its frames (unidirectional streams by type: control,
/// push, QPACK encoder and decoder, unknown), a `QPACKDecoder` per side (nghttp3) decodes that
/// side's field sections, and each request stream's messages become records: request,
/// response, interim 1xx, trailers, pushed requests (docs/METERING.md §2d). `wire_headers` is
/// Σ of a message's HEADERS (or PUSH_PROMISE) frames, `wire_body` Σ of its DATA frames, each
/// whole (type and length varints plus payload). Every frame is claimed on its own stream:
/// a message's frames by the message (named by its first frame's offset), the control and
/// QPACK streams' bytes as `h3_control`.
public final class HTTP3Connection<Sink: MessageSink>: MultiplexedStreamHandler {
    let info: ConnectionInfo
    let sink: Sink
    let limits: HTTPLimits
    /// The side that opens request streams (QUIC's client).
    let clientSide: Direction
    /// Per (stream, side): stream ids are 62-bit, so the side is the top bit of the key.
    @exclusivity(unchecked) var readers: [UInt64: StreamReader] = [:]
    /// The reader looked up last: the transport hands a stream's bytes packet after packet.
    /// Forgotten with the readers a retired stream drops.
    @exclusivity(unchecked) var lastReader: (key: UInt64, reader: StreamReader)?
    @exclusivity(unchecked) var exchanges: [UInt64: Exchange] = [:]
    /// Pushes by push id: the pushed request, and the response its push stream brings.
    @exclusivity(unchecked) var pushes: [UInt64: Exchange] = [:]
    /// Decoders of the sections each side sends, indexed by `Direction.rawValue`.
    let decoders: [QPACKDecoder]
    /// Sections blocked on inserts, per sending side, in the order they came.
    @exclusivity(unchecked) var blocked: [[(section: QPACKDecoder.Section, message: H3Message, trailers: Bool)]] = [[], []]
    @exclusivity(unchecked) var messageCounts = [0, 0]
    /// Messages made and not yet emitted, by identity: at the end, every one goes out, those a
    /// protocol error left behind too (a second request on a stream).
    @exclusivity(unchecked) var unemitted: [ObjectIdentifier: H3Message] = [:]
    @exclusivity(unchecked) public private(set) var summary = HTTP3ConnectionSummary()
    @exclusivity(unchecked) var tallies = [HTTP3DirectionTally(), HTTP3DirectionTally()]
    let control = StreamOwner.overhead(.h3Control)
    /// Sections held per side while they wait for inserts (each at most
    /// `HTTPLimits.maxHeaderBlockBytes`): a bound on what blocked sections keep.
    static var maxBlockedSections: Int { 256 }

    public init(info: ConnectionInfo, sink: Sink, limits: HTTPLimits = HTTPLimits(), clientSide: Direction = .up) {
        self.info = info
        self.sink = sink
        self.limits = limits
        self.clientSide = clientSide
        decoders = [Direction.up, .down].map { _ in
            QPACKDecoder(
                maxPendingEncoderBytes: limits.maxHeaderBlockBytes, maxFieldSectionBytes: limits.maxHeaderListSize)
        }
    }

    // MARK: - MultiplexedStreamHandler

    public func receive(
        _ bytes: UnsafeRawBufferPointer, stream: UInt64, from side: Direction, at position: StreamPosition
    ) {
        guard !bytes.isEmpty else { return }
        let reader = self.reader(stream, side)
        guard !reader.ended else { return }
        var bytes = bytes
        var position = position
        if position.offset > reader.offset {
            // Bytes before these never reached us (a start before the capture): a gap.
            gap(Int(clamping: position.offset &- reader.offset), stream: stream, from: side,
                at: StreamPosition(time: position.time, offset: reader.offset, peerAcknowledged: nil))
        } else if position.offset < reader.offset {
            // Bytes already read (the transport should not send them again): skipped.
            let skip = Int(clamping: reader.offset &- position.offset)
            guard skip < bytes.count else { return }
            bytes = UnsafeRawBufferPointer(rebasing: bytes[skip...])
            position.offset = reader.offset
        }
        var index = 0
        while index < bytes.count {
            let here = StreamPosition(
                time: position.time, offset: position.offset &+ Int64(index), peerAcknowledged: position.peerAcknowledged)
            let used = step(reader, UnsafeRawBufferPointer(rebasing: bytes[index...]), at: here)
            index += used
            reader.offset = here.offset &+ Int64(used)
        }
        sink.settle(side, stream: stream, upTo: reader.offset &- Int64(reader.header.count))
    }

    public func gap(_ length: Int, stream: UInt64, from side: Direction, at position: StreamPosition) {
        guard length > 0 else { return }
        let reader = self.reader(stream, side)
        guard !reader.ended else { return }
        let tally = side.rawValue
        switch reader.phase {
        case .payload where reader.knownFrameType == .data && reader.frameMessage != nil
            && UInt64(length) <= reader.payloadLeft:
            // Body bytes missing inside a DATA frame: the frame's boundaries stay known.
            if let message = reader.frameMessage {
                message.captured.message.bodyLength = saturatingSum(message.captured.message.bodyLength, length)
                message.captured.message.missingBytes = saturatingSum(message.captured.message.missingBytes, length)
                message.captured.message.anomalies.insert(.bytesMissing)
                message.observer?.bodyGap(length)
            }
            reader.payloadRead &+= UInt64(length)
            reader.offset = position.offset &+ Int64(length)
            if reader.payloadLeft == 0 { endFrame(reader) }
        case .opaque:
            // A QPACK or unknown stream: its bytes are still its kind's; inserts are lost.
            if reader.type == .qpackEncoder { decoders[tally].loseEncoderStream() }
            countOpaque(reader, length)
            sink.claim(position.offset..<(position.offset &+ Int64(length)), of: side, stream: stream, by: control)
            reader.offset = position.offset &+ Int64(length)
        default:
            loseFrames(reader, cutBy: length)
            tallies[tally].lostBytes = saturatingSum(tallies[tally].lostBytes, length)
            sink.claim(position.offset..<(position.offset &+ Int64(length)), of: side, stream: stream, by: .unclaimed)
            reader.offset = position.offset &+ Int64(length)
        }
        sink.settle(side, stream: stream, upTo: reader.offset &- Int64(reader.header.count))
    }

    public func end(stream: UInt64, of side: Direction, reason: StreamEndReason, time: Int64) {
        let reader = self.reader(stream, side)
        guard !reader.ended else { return }
        endReader(reader, reset: reason == .reset)
        sink.settle(side, stream: stream, upTo: reader.offset)
        retireIfDone(stream)
    }

    public func close(_ accounting: ConnectionAccounting) {
        for key in readers.keys.sorted() {
            guard let reader = readers[key], !reader.ended else { continue }
            endReader(reader, reset: false, closing: true)
        }
        // Sections still blocked need inserts the capture never showed: unknown.
        for side in [Direction.up, .down] {
            let waiting = blocked[side.rawValue]
            blocked[side.rawValue] = []
            for entry in waiting {
                tallies[side.rawValue].qpackUnknownSections += 1
                entry.message.blockedSections -= 1
                sectionDone(entry.message, fields: nil, listSize: 0, trailers: entry.trailers)
            }
        }
        for id in exchanges.keys.sorted() { exchanges[id].map(flush) }
        for id in pushes.keys.sorted() { pushes[id].map(flush) }
        for message in unemitted.values.sorted(by: { $0.captured.index < $1.captured.index }) {
            message.ended = true
            message.blockedSections = 0
            tryEmit(message, closing: true)
        }
        // Messages and exchanges refer to each other: the cycles end here.
        for exchange in Array(exchanges.values) + Array(pushes.values) {
            exchange.request = nil
            exchange.response = nil
        }
        exchanges = [:]
        pushes = [:]
        unemitted = [:]
        blocked = [[], []]
        summary.client = tallies[clientSide.rawValue]
        summary.server = tallies[clientSide.peer.rawValue]
        var clientTally = StreamTally()
        clientTally.lostBytes = summary.client.lostBytes
        var serverTally = StreamTally()
        serverTally.lostBytes = summary.server.lostBytes
        sink.connectionClosed(
            HTTPConnectionSummary(
                accounting: accounting, protocolKind: .http, serverName: nil, clientTally: clientTally,
                serverTally: serverTally, clientEndpoint: info.endpoint(clientSide)))
    }

    // MARK: - Readers

    static func key(_ stream: UInt64, _ side: Direction) -> UInt64 {
        stream & ((1 << 62) - 1) | (side == .down ? 1 << 63 : 0)
    }

    /// A request stream both of whose sides ended and whose messages are out is forgotten:
    /// memory follows the open streams, not every stream the connection ever had.
    func retireIfDone(_ stream: UInt64) {
        guard stream & 0x2 == 0, let exchange = exchanges[stream],
            readers[Self.key(stream, .up)]?.ended ?? false, readers[Self.key(stream, .down)]?.ended ?? false,
            exchange.request?.emitted ?? true, exchange.response?.emitted ?? true
        else { return }
        readers[Self.key(stream, .up)] = nil
        readers[Self.key(stream, .down)] = nil
        lastReader = nil
        exchanges[stream] = nil
        exchange.request = nil
        exchange.response = nil
    }

    func reader(_ stream: UInt64, _ side: Direction) -> StreamReader {
        let key = Self.key(stream, side)
        if let last = lastReader, last.key == key { return last.reader }
        if let reader = readers[key] {
            lastReader = (key, reader)
            return reader
        }
        let reader = StreamReader(id: stream, side: side)
        readers[key] = reader
        lastReader = (key, reader)
        if reader.type == .request { tallies[side.rawValue].requestStreams += 1 } else { tallies[side.rawValue].uniStreams += 1 }
        return reader
    }

    /// One step of `reader` over `bytes`; returns the bytes used.
    private func step(_ reader: StreamReader, _ bytes: UnsafeRawBufferPointer, at position: StreamPosition) -> Int {
        let side = reader.side
        switch reader.phase {
        case .streamType:
            let (used, value) = reader.readVarInt(bytes)
            guard let value else { return used }
            reader.type = H3StreamType(uniType: value)
            let typeSize = reader.lastVarIntLength
            reader.preambleBytes = typeSize
            countPreamble(reader, typeSize)
            sink.claim(0..<Int64(typeSize), of: side, stream: reader.id, by: control)
            switch reader.type {
            case .control: reader.phase = .frameHeader
            case .push where side == clientSide:
                // Only servers push (RFC 9114 §4.6): a client's push stream is read as opaque bytes.
                tallies[side.rawValue].protocolErrors += 1
                tallies[side.rawValue].pushStreamPreambleBytes -= typeSize
                tallies[side.rawValue].unknownStreamBytes += typeSize
                reader.type = .unknown(0x01)
                reader.phase = .opaque
            case .push:
                reader.phase = .pushID
            default: reader.phase = .opaque
            }
            return used
        case .pushID:
            let (used, value) = reader.readVarInt(bytes)
            guard let value else { return used }
            // Counted and claimed whole once read (a varint cut by the stream's end is lost).
            let length = reader.lastVarIntLength
            let end = position.offset &+ Int64(used)
            tallies[side.rawValue].pushStreamPreambleBytes += length
            sink.claim((end &- Int64(length))..<end, of: side, stream: reader.id, by: control)
            reader.pushID = value
            reader.phase = .frameHeader
            return used
        case .opaque:
            if reader.type == .qpackEncoder {
                decoders[side.rawValue].readEncoder(bytes)
                resumeBlocked(side)
            }
            countOpaque(reader, bytes.count)
            sink.claim(
                position.offset..<(position.offset &+ Int64(bytes.count)), of: side, stream: reader.id, by: control)
            return bytes.count
        case .lost:
            tallies[side.rawValue].lostBytes = saturatingSum(tallies[side.rawValue].lostBytes, bytes.count)
            sink.claim(
                position.offset..<(position.offset &+ Int64(bytes.count)), of: side, stream: reader.id,
                by: .unclaimed)
            return bytes.count
        case .frameHeader:
            if reader.header.isEmpty { reader.frameStart = position }
            let (used, done) = reader.readFrameHeader(bytes)
            if done { frameBegun(reader) }
            return used
        case .payload:
            let take = Int(clamping: min(UInt64(bytes.count), reader.payloadLeft))
            let piece = UnsafeRawBufferPointer(rebasing: bytes[..<take])
            if reader.knownFrameType == .data {
                if let message = reader.frameMessage {
                    message.captured.message.bodyLength = saturatingSum(message.captured.message.bodyLength, take)
                    message.observer?.bodyBytes(piece)
                }
            } else if reader.payload.count < keptPayloadBound(reader) {
                let room = keptPayloadBound(reader) - reader.payload.count
                reader.payload.append(contentsOf: piece.prefix(room))
                if room < take { reader.payloadTruncated = true }
            } else {
                reader.payloadTruncated = true
            }
            reader.payloadRead &+= UInt64(take)
            if reader.payloadLeft == 0 {
                // Settled to here by the caller: update the offset first.
                reader.offset = position.offset &+ Int64(take)
                endFrame(reader)
            }
            return take
        }
    }

    private func keptPayloadBound(_ reader: StreamReader) -> Int {
        switch reader.knownFrameType {
        case .headers?, .pushPromise?: return limits.maxHeaderBlockBytes
        default: return limits.maxControlPayloadBytes
        }
    }

    private func countPreamble(_ reader: StreamReader, _ bytes: Int) {
        let side = reader.side.rawValue
        switch reader.type {
        case .control: tallies[side].controlStreamBytes += bytes
        case .push: tallies[side].pushStreamPreambleBytes += bytes
        case .qpackEncoder: tallies[side].encoderStreamBytes += bytes
        case .qpackDecoder: tallies[side].decoderStreamBytes += bytes
        case .unknown: tallies[side].unknownStreamBytes += bytes
        case .request: break
        }
    }

    private func countOpaque(_ reader: StreamReader, _ bytes: Int) {
        let side = reader.side.rawValue
        switch reader.type {
        case .qpackEncoder: tallies[side].encoderStreamBytes = saturatingSum(tallies[side].encoderStreamBytes, bytes)
        case .qpackDecoder: tallies[side].decoderStreamBytes = saturatingSum(tallies[side].decoderStreamBytes, bytes)
        default: tallies[side].unknownStreamBytes = saturatingSum(tallies[side].unknownStreamBytes, bytes)
        }
    }

    // MARK: - Frames

    /// A frame header was read: its owner is known now, so the whole frame is claimed.
    private func frameBegun(_ reader: StreamReader) {
        let side = reader.side
        let range = reader.frameStart.offset..<(reader.frameStart.offset &+ Int64(reader.frameWireSize))
        reader.frameMessage = nil
        reader.phase = .payload
        let onControl = reader.type == .control
        let type = reader.knownFrameType
        if onControl {
            sink.claim(range, of: side, stream: reader.id, by: control)
        } else {
            switch type {
            case .data?:
                if let message = openMessage(reader), !message.ended {
                    reader.frameMessage = message
                    if message.observer == nil {
                        message.captured.message.framing = .untilClose
                        message.observer = sink.bodyObserver(for: message.captured.message)
                    }
                    sink.claim(range, of: side, stream: reader.id, by: .message(startingAt: message.captured.streamOffset))
                } else {
                    tallies[side.rawValue].protocolErrors += 1
                    sink.claim(range, of: side, stream: reader.id, by: .unclaimed)
                }
            case .headers?:
                let message = headersOwner(reader)
                reader.frameMessage = message
                sink.claim(range, of: side, stream: reader.id, by: .message(startingAt: message.captured.streamOffset))
            case .pushPromise? where side != clientSide && reader.type == .request:
                sink.claim(range, of: side, stream: reader.id, by: .message(startingAt: range.lowerBound))
            default:
                sink.claim(range, of: side, stream: reader.id, by: type == .pushPromise ? .unclaimed : control)
            }
        }
        if reader.frameLength == 0 { endFrame(reader) }
    }

    /// The frame is complete: counted, and its payload acted on.
    private func endFrame(_ reader: StreamReader) {
        let side = reader.side
        let size = reader.frameWireSize
        let slot = reader.knownFrameType?.slot ?? H3FrameType.unknownSlot
        tallies[side.rawValue].byType[slot].frames += 1
        tallies[side.rawValue].byType[slot].bytes = saturatingSum(tallies[side.rawValue].byType[slot].bytes, size)
        reader.phase = .frameHeader
        let message = reader.frameMessage
        reader.frameMessage = nil
        if reader.type == .control {
            tallies[side.rawValue].controlStreamBytes = saturatingSum(tallies[side.rawValue].controlStreamBytes, size)
            if reader.knownFrameType == .settings { readSettings(reader) }
            if [.data, .headers, .pushPromise].contains(reader.knownFrameType) {
                tallies[side.rawValue].protocolErrors += 1
            }
            return
        }
        switch reader.knownFrameType {
        case .data?:
            guard let message else {
                tallies[side.rawValue].unowned.frames += 1
                tallies[side.rawValue].unowned.bytes = saturatingSum(tallies[side.rawValue].unowned.bytes, size)
                return
            }
            message.captured.wireBody = saturatingSum(message.captured.wireBody, size)
            addFrame(message)
        case .headers?:
            guard let message else { return }
            let trailers = message.headDone || message.blockedSections > 0 || message.captured.wireHeaders > 0
            message.captured.wireHeaders = saturatingSum(message.captured.wireHeaders, size)
            addFrame(message)
            decodeSection(reader, message: message, sectionStart: 0, trailers: trailers)
        case .pushPromise? where side != clientSide && reader.type == .request:
            promise(reader, size: size)
        case .pushPromise?:
            tallies[side.rawValue].protocolErrors += 1
            tallies[side.rawValue].unowned.frames += 1
            tallies[side.rawValue].unowned.bytes = saturatingSum(tallies[side.rawValue].unowned.bytes, size)
        default:
            // Unknown and reserved types are ignored (RFC 9114 §9); control types here are errors.
            if reader.knownFrameType != nil { tallies[side.rawValue].protocolErrors += 1 }
            tallies[side.rawValue].requestStreamOtherBytes = saturatingSum(
                tallies[side.rawValue].requestStreamOtherBytes, size)
        }
    }

    private func addFrame(_ message: H3Message) {
        message.captured.message.protocolFacts.frames = saturatingSum(message.captured.message.protocolFacts.frames ?? 0, 1)
    }

    /// SETTINGS of `reader`'s side: its QPACK table capacity is what the *peer's* encoder may
    /// use, so it configures the decoder of the peer's sections.
    private func readSettings(_ reader: StreamReader) {
        var rest = reader.payload[...]
        var capacity: UInt64 = 0
        var blockedStreams: UInt64 = 0
        while let (id, idLength) = VarInt.read(rest), let (value, valueLength) = VarInt.read(rest.dropFirst(idLength)) {
            rest = rest.dropFirst(idLength + valueLength)
            if id == 0x01 { capacity = value }
            if id == 0x07 { blockedStreams = value }
        }
        if !rest.isEmpty || reader.payloadTruncated { tallies[reader.side.rawValue].protocolErrors += 1 }
        tallies[reader.side.rawValue].qpackMaxTableCapacity = capacity
        tallies[reader.side.rawValue].qpackBlockedStreams = blockedStreams
        // A table larger than the bound is not kept: the peer's sections that use it stay
        // unknown (a smaller capacity would decode their Required Insert Count wrongly).
        let decoder = decoders[reader.side.peer.rawValue]
        if capacity > UInt64(limits.maxHeaderBlockBytes) {
            decoder.configure(capacity: 0, blockedStreams: 0)
            decoder.loseEncoderStream()
        } else {
            decoder.configure(capacity: Int(capacity), blockedStreams: Int(clamping: min(blockedStreams, 1 << 16)))
        }
    }

    // MARK: - Messages

    /// The message DATA and trailers on this stream side go to.
    private func openMessage(_ reader: StreamReader) -> H3Message? {
        let exchange = self.exchange(of: reader)
        let isRequestSide = reader.type == .request && reader.side == clientSide
        let message = isRequestSide ? exchange?.request : exchange?.response
        return message
    }

    private func exchange(of reader: StreamReader) -> Exchange? {
        if reader.type == .push {
            guard let id = reader.pushID else { return nil }
            if let exchange = pushes[id] { return exchange }
            let exchange = Exchange()
            pushes[id] = exchange
            return exchange
        }
        if let exchange = exchanges[reader.id] { return exchange }
        let exchange = Exchange()
        exchanges[reader.id] = exchange
        return exchange
    }

    /// A HEADERS frame's message: trailers of the open message, or a new one from here.
    private func headersOwner(_ reader: StreamReader) -> H3Message {
        let exchange = self.exchange(of: reader)!
        let requestSide = reader.type == .request && reader.side == clientSide
        if let open = requestSide ? exchange.request : exchange.response, !open.ended, !open.interim {
            return open
        }
        let message = newMessage(requestSide ? .request : .response, reader: reader, exchange: exchange)
        if requestSide {
            if exchange.request != nil { tallies[reader.side.rawValue].protocolErrors += 1 }
            exchange.request = message
            exchange.requestIndex = message.captured.index
        } else {
            exchange.response = message
        }
        return message
    }

    private func newMessage(_ kind: MessageKind, reader: StreamReader, exchange: Exchange) -> H3Message {
        let sender = reader.side
        var captured = CapturedMessage(
            HTTPMessage(kind: kind, index: messageCounts[sender.rawValue]), connection: info.number,
            client: info.endpoint(clientSide), server: info.endpoint(clientSide.peer), time: reader.frameStart.time,
            streamOffset: reader.frameStart.offset)
        messageCounts[sender.rawValue] += 1
        captured.version = "HTTP/3"
        captured.message.protocolFacts = ProtocolFacts(
            .h3, stream: reader.id, frames: 0, headerListSize: 0, startLineInHeaderBlock: true)
        let message = H3Message(captured, exchange: exchange)
        unemitted[ObjectIdentifier(message)] = message
        return message
    }

    /// PUSH_PROMISE: the promised request, the server's record, on the stream that carried it.
    private func promise(_ reader: StreamReader, size: Int) {
        let side = reader.side
        guard let (pushID, idLength) = VarInt.read(reader.payload) else {
            tallies[side.rawValue].protocolErrors += 1
            tallies[side.rawValue].unowned.frames += 1
            tallies[side.rawValue].unowned.bytes = saturatingSum(tallies[side.rawValue].unowned.bytes, size)
            return
        }
        let exchange: Exchange
        if let existing = pushes[pushID] { exchange = existing } else { exchange = Exchange(); pushes[pushID] = exchange }
        let message = newMessage(.request, reader: reader, exchange: exchange)
        message.captured.anomalies.insert(.pushed)
        message.captured.wireHeaders = size
        message.captured.complete = true
        message.ended = true
        addFrame(message)
        if exchange.request != nil { tallies[side.rawValue].protocolErrors += 1 }
        exchange.request = message
        exchange.requestIndex = message.captured.index
        decodeSection(reader, message: message, sectionStart: idLength, trailers: false)
    }

    /// The frame's field section through its sender's QPACK decoder.
    private func decodeSection(_ reader: StreamReader, message: H3Message, sectionStart: Int, trailers: Bool) {
        let side = reader.side.rawValue
        guard !reader.payloadTruncated else {
            tallies[side].qpackUnknownSections += 1
            sectionDone(message, fields: nil, listSize: 0, trailers: trailers)
            return
        }
        let section = sectionStart == 0 ? reader.payload : Array(reader.payload[sectionStart...])
        handle(decoders[side].decode(section, stream: reader.id), message: message, trailers: trailers, side: side)
    }

    private func handle(_ outcome: QPACKDecoder.Outcome, message: H3Message, trailers: Bool, side: Int) {
        switch outcome {
        case .fields(let fields, let listSize):
            sectionDone(message, fields: fields, listSize: listSize, trailers: trailers)
        case .blocked(let section) where blocked[side].count >= Self.maxBlockedSections:
            // More sections waiting than any peer lets block: this one's fields stay unknown.
            _ = section
            tallies[side].qpackUnknownSections += 1
            sectionDone(message, fields: nil, listSize: 0, trailers: trailers)
        case .blocked(let section):
            message.blockedSections += 1
            blocked[side].append((section, message, trailers))
        case .failed:
            tallies[side].qpackErrors += 1
            sectionDone(message, fields: nil, listSize: 0, trailers: trailers)
        }
    }

    /// After encoder-stream bytes: sections whose inserts have come decode now, in order.
    private func resumeBlocked(_ side: Direction) {
        guard !blocked[side.rawValue].isEmpty else { return }
        let decoder = decoders[side.rawValue]
        let waiting = blocked[side.rawValue]
        blocked[side.rawValue] = []
        for entry in waiting {
            switch decoder.resume(entry.section) {
            case .blocked:
                blocked[side.rawValue].append(entry)
            case let outcome:
                entry.message.blockedSections -= 1
                handle(outcome, message: entry.message, trailers: entry.trailers, side: side.rawValue)
            }
        }
    }

    /// A field section's fields (nil: unknown) onto its message.
    func sectionDone(_ message: H3Message, fields: [HeaderField]?, listSize: Int, trailers: Bool) {
        if trailers {
            applyTrailers(fields, listSize: listSize, to: &message.captured)
        } else {
            apply(fields, listSize: listSize, to: &message.captured)
            message.headDone = true
            headDecoded(message)
        }
        tryEmit(message)
    }

    /// The head is known: a response's 1xx makes an interim record; a final response settles
    /// its request's pairing.
    private func headDecoded(_ message: H3Message) {
        let exchange = message.exchange
        guard message.captured.kind == .response else { return }
        if let status = message.captured.status, (100..<200).contains(status) {
            message.interim = true
            message.ended = true
            message.captured.complete = true
            if let request = exchange.request { message.captured.request = summary(of: request) }
            return
        }
        exchange.responseIndex = message.captured.index
        if let request = exchange.request { tryEmit(request) }
    }

    /// Ends the reader's side: a frame cut off is counted, the open message ends.
    private func endReader(_ reader: StreamReader, reset: Bool, closing: Bool = false) {
        reader.ended = true
        let cut = !reader.header.isEmpty || reader.phase == .payload || reader.phase == .streamType
            || reader.phase == .pushID
        cutFrame(reader)
        if reader.phase == .payload {
            if let message = reader.frameMessage, reader.knownFrameType == .data || reader.knownFrameType == .headers {
                message.captured.anomalies.insert(.bytesMissing)
            }
            reader.frameMessage = nil
        }
        reader.phase = .lost
        guard reader.type == .request || reader.type == .push, let exchange = exchange(of: reader) else { return }
        let requestSide = reader.type == .request && reader.side == clientSide
        if reset { exchange.reset = true }
        if let message = requestSide ? exchange.request : exchange.response, !message.ended {
            message.ended = true
            message.captured.complete = !reset && !cut && !closing
            if reset { message.captured.anomalies.insert(.streamReset) }
            tryEmit(message)
        }
        if !requestSide {
            exchange.responseSideEnded = true
            if let request = exchange.request { tryEmit(request) }
        }
    }

    /// The frame a stream's end or a gap cut off: a partial frame header is lost bytes; what
    /// was read of a DATA frame is its message's, of a control frame the control stream's, of
    /// any other frame lost.
    private func cutFrame(_ reader: StreamReader) {
        let side = reader.side.rawValue
        if !reader.header.isEmpty {
            tallies[side].lostBytes = saturatingSum(tallies[side].lostBytes, reader.header.count)
            sink.claim(
                (reader.offset &- Int64(reader.header.count))..<reader.offset, of: reader.side, stream: reader.id,
                by: .unclaimed)
            reader.header.removeAll()
        }
        guard reader.phase == .payload else { return }
        let read = saturatingSum(reader.frameHeaderSize, Int(clamping: reader.payloadRead))
        if reader.knownFrameType == .data, let message = reader.frameMessage {
            message.captured.wireBody = saturatingSum(message.captured.wireBody, read)
            addFrame(message)
        } else if reader.type == .control {
            tallies[side].controlStreamBytes = saturatingSum(tallies[side].controlStreamBytes, read)
        } else {
            tallies[side].lostBytes = saturatingSum(tallies[side].lostBytes, read)
        }
    }

    /// A gap or a lost start took the frame boundaries: the open frame's message ends incomplete.
    private func loseFrames(_ reader: StreamReader, cutBy length: Int) {
        let side = reader.side.rawValue
        cutFrame(reader)
        if reader.type == .qpackEncoder || reader.phase == .streamType {
            // A unidirectional stream whose type was never read may be the encoder stream.
            decoders[side].loseEncoderStream()
        }
        if let message = reader.frameMessage ?? (reader.type == .request || reader.type == .push ? openMessage(reader) : nil),
            !message.ended
        {
            message.captured.anomalies.insert(.bytesMissing)
            message.ended = true
            message.captured.complete = false
            tryEmit(message)
        }
        reader.frameMessage = nil
        reader.phase = .lost
    }

    /// Emits the message once nothing more can change it: its frames ended, its sections
    /// decoded (or found unknown), and, for a request, its pairing settled.
    func tryEmit(_ message: H3Message, closing: Bool = false) {
        guard !message.emitted, message.ended, message.blockedSections == 0 else { return }
        let exchange = message.exchange
        if message.captured.kind == .request {
            guard closing || exchange.responseIndex != nil || exchange.responseSideEnded || exchange.reset else {
                return
            }
            message.captured.pair = exchange.responseIndex
        } else if !message.interim {
            message.captured.pair = exchange.requestIndex
            if let request = exchange.request { message.captured.request = summary(of: request) }
        }
        if !message.interim, message.captured.pair == nil { message.captured.anomalies.insert(.unpaired) }
        if exchange.reset { message.captured.anomalies.insert(.streamReset) }
        message.emitted = true
        unemitted[ObjectIdentifier(message)] = nil
        sink.record(message.captured, body: message.observer.map { unsafeDowncast($0, to: Sink.Observer.self) })
        if !closing, let stream = message.captured.message.protocolFacts.stream { retireIfDone(stream) }
    }

    /// At the end: every message not yet emitted, request first.
    private func flush(_ exchange: Exchange) {
        for message in [exchange.request, exchange.response].compactMap({ $0 }) where !message.emitted {
            message.blockedSections = 0
            if !message.ended {
                message.ended = true
                message.captured.complete = false
            }
            tryEmit(message, closing: true)
        }
    }

    func summary(of message: H3Message) -> RequestSummary {
        let captured = message.captured
        return RequestSummary(
            index: captured.index, method: captured.method ?? "", target: captured.target,
            host: captured.message.requestHost, fieldsKnown: captured.message.requestLineKnown)
    }
}
