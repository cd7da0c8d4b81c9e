import Flows
import MessageModel
import NIOCore
import NIOHPACK
import PacketLayers
import TCPReassembly

/// Bounds on what the HTTP/2 reader keeps.
public struct HTTP2Limits: Sendable {
    /// A header block (HEADERS or PUSH_PROMISE and its CONTINUATIONs) longer than this is not
    /// decoded; its fields, and every later block of that direction, are unknown.
    public var maxHeaderBlockBytes: Int
    /// Bytes kept of a control frame's payload (SETTINGS, GOAWAY...); the rest is counted only.
    public var maxControlPayloadBytes: Int
    /// Largest decoded header list HPACK accepts in one block.
    public var maxHeaderListSize: Int

    public init(
        maxHeaderBlockBytes: Int = 1 << 20, maxControlPayloadBytes: Int = 1 << 12, maxHeaderListSize: Int = 1 << 20
    ) {
        self.maxHeaderBlockBytes = maxHeaderBlockBytes
        self.maxControlPayloadBytes = maxControlPayloadBytes
        self.maxHeaderListSize = maxHeaderListSize
    }
}

/// Frames and bytes of one type sent by one side.
public struct FrameCount: Sendable, Equatable {
    public var frames = 0
    /// Frame bytes, 9-byte headers included.
    public var bytes = 0

    public init(frames: Int = 0, bytes: Int = 0) {
        self.frames = frames
        self.bytes = bytes
    }
}

/// What one side of an HTTP/2 connection sent, by frame type, and what went wrong reading it.
public struct HTTP2DirectionTally: Sendable, Equatable {
    /// Indexed by frame type 0...9; index 10 counts unknown types (RFC 9113 §4.1: ignored).
    public var byType = [FrameCount](repeating: FrameCount(), count: 11)
    /// The client's 24-byte connection preface.
    public var prefaceBytes = 0
    /// Frames longer than the receiver's SETTINGS_MAX_FRAME_SIZE (read on all the same).
    public var frameSizeErrors = 0
    /// Frames that break RFC 9113's rules (padding longer than the frame, a CONTINUATION
    /// nothing awaited, a header block cut by another frame, a bad SETTINGS length...).
    public var protocolErrors = 0
    /// Header blocks HPACK could not decode (that direction's later blocks are unknown).
    public var hpackErrors = 0
    /// Bytes not read as frames: lost in gaps, skipped until frame boundaries were found, or
    /// a frame cut off by a gap or the end of the capture.
    public var lostBytes = 0
    /// DATA, HEADERS, PUSH_PROMISE and CONTINUATION frames no message took: protocol errors
    /// (stream 0, a CONTINUATION nothing awaited, a second request block on a stream, fields
    /// longer than their frame) and header blocks another frame cut short.
    public var unowned = FrameCount()

    public init() {}

    public subscript(type: FrameType) -> FrameCount { byType[Int(type.rawValue)] }
    public var unknown: FrameCount { byType[10] }

    /// Bytes of the frames no message owns: every type but DATA, HEADERS, CONTINUATION and
    /// PUSH_PROMISE, the preface and the unowned frames of those types included
    /// (docs/METERING.md §2a).
    public var connectionOverheadBytes: Int {
        var total = saturatingAdd(prefaceBytes, unowned.bytes)
        for (index, count) in byType.enumerated() where ![0, 1, 5, 9].contains(index) {
            total = saturatingAdd(total, count.bytes)
        }
        return total
    }
}

/// An HTTP/2 connection's summary: each side's frames by type and its errors.
public struct HTTP2ConnectionSummary: Sendable, Equatable {
    public var client = HTTP2DirectionTally()
    public var server = HTTP2DirectionTally()
    public var streams = 0

    public init() {}
}

/// One connection read as HTTP/2 (RFC 9113): a frame reader per side over the ordered bytes,
/// an HPACK decoder per direction (swift-nio-http2's `NIOHPACK`), and one record per message
/// of each stream, fed to the same sink as `HTTPConnection`'s (docs/METERING.md §2a).
public final class HTTP2Connection<Sink: MessageSink>: ByteStreamHandler {
    /// The client's connection preface (RFC 9113 §3.4).
    public static var prefaceBytes: [UInt8] { Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) }

    let info: ConnectionInfo
    private let sink: Sink
    private let limits: HTTP2Limits
    /// The side that sent the preface (or opened the connection).
    private let clientSide: Direction
    /// The two sides' readers (a `let`: reading one is not an access checked at run time).
    private let readers: [FrameReader]
    // Changed once per message; not checked for overlapping access at run time, like the
    // readers' and streams' state (see `FrameReader`).
    @exclusivity(unchecked) private var streams: [UInt32: StreamState] = [:]
    @exclusivity(unchecked) private var messageCounts = [0, 0]
    private var streamCount = 0
    /// A stream's request that came before the connection turned HTTP/2 (h2c Upgrade).
    private var upgradedRequest: RequestSummary?

    /// `clientSide`: who sends requests; `expectPreface`: whether that side's stream starts
    /// with the preface (false after an h2c upgrade the caller has already read it from, or
    /// mid-connection). `upgradedRequest`: the HTTP/1.1 request an h2c Upgrade turned into
    /// stream 1's request, whose response comes as frames.
    public init(
        info: ConnectionInfo, sink: Sink, limits: HTTP2Limits = HTTP2Limits(), clientSide: Direction = .up,
        firstIndexes: [Int] = [0, 0], upgradedRequest: RequestSummary? = nil, startsAtBeginning: Bool = true
    ) {
        self.info = info
        self.sink = sink
        self.limits = limits
        self.clientSide = clientSide
        if firstIndexes.count == 2 {
            messageCounts[clientSide.rawValue] = firstIndexes[0]
            messageCounts[clientSide.peer.rawValue] = firstIndexes[1]
        }
        let allocator = ByteBufferAllocator()
        readers = [Direction.up, .down].map { side in
            FrameReader(
                decoder: HPACKDecoder(
                    allocator: allocator, maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
                    maxHeaderListSize: limits.maxHeaderListSize),
                hpackInput: allocator.buffer(capacity: 0),
                phase: !startsAtBeginning ? .searching : (side == clientSide ? .preface : .frameHeader),
                hpackKnown: startsAtBeginning)
        }
        if let upgradedRequest {
            self.upgradedRequest = upgradedRequest
            let stream = StreamState()
            stream.requestIndex = upgradedRequest.index
            stream.requestSummary = upgradedRequest
            streams[1] = stream
            streamCount = 1
        }
    }

    public private(set) var summary = HTTP2ConnectionSummary()

    // MARK: - ByteStreamHandler

    public func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        guard !bytes.isEmpty else { return }
        var index = 0
        while index < bytes.count {
            index += step(UnsafeRawBufferPointer(rebasing: bytes[index...]), side: side, position: position, at: index)
        }
        readers[side.rawValue].offset = position.offset &+ Int64(bytes.count)
        settlePlacement(side)
    }

    /// Everything `side` read is placed but a frame or header block still being read, and
    /// bytes held while searching for frame boundaries (docs/METERING.md §2c).
    private func settlePlacement(_ side: Direction) {
        let reader = readers[side.rawValue]
        var placed = reader.offset
        if let block = reader.block { placed = min(placed, block.start.offset) }
        switch reader.phase {
        case .preface: placed = min(placed, reader.offset &- Int64(reader.prefaceMatched))
        case .frameHeader:
            if !reader.headerBytes.isEmpty, let start = reader.frameStart { placed = min(placed, start.offset) }
        case .payload:
            if reader.header.knownType != .data, let start = reader.frameStart { placed = min(placed, start.offset) }
        case .searching:
            if let start = reader.searchMarks.first?.position.offset { placed = min(placed, start) }
        case .lost: break
        }
        sink.settle(side, upTo: placed)
    }

    /// Claims the frame now read (or begun, for DATA, whose length says where it ends).
    private func claimFrame(_ side: Direction, by owner: StreamOwner) {
        let reader = readers[side.rawValue]
        guard let start = reader.frameStart?.offset else { return }
        sink.claim(start..<(start &+ Int64(reader.header.wireSize)), of: side, by: owner)
    }

    public func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        guard length > 0 else { return }
        let reader = readers[side.rawValue]
        // Inside a DATA, HEADERS or CONTINUATION frame's payload the frame goes on, its length
        // still telling where the next begins: DATA's bytes are the body's, missing; a header
        // block's fields are unknown.
        let type = reader.header.knownType
        if case .payload = reader.phase, type == .data || type == .headers || type == .continuation,
            length <= reader.payloadRemaining
        {
            var padLengthPart = 0
            if type == .data, reader.header.has(FrameFlags.padded), reader.padLength == nil, !reader.cutByGap {
                // The gap took the pad-length byte: data and padding can no longer be told
                // apart, so the rest of the frame, padding included, is the body's, missing
                // (never a later byte taken as the pad length).
                reader.dataRemaining = reader.payloadRemaining - 1
                padLengthPart = 1
            }
            reader.cutByGap = true
            let dataPart = type == .data ? min(length - padLengthPart, reader.dataRemaining) : 0
            reader.payloadRemaining -= length
            reader.dataRemaining -= dataPart
            reader.payloadRead += length
            if dataPart > 0 { bodyGap(dataPart, stream: reader.header.streamID, sender: side) }
            if reader.payloadRemaining == 0 { endFrame(side, position: position) }
            readers[side.rawValue].offset = position.offset &+ Int64(length)
            settlePlacement(side)
            return
        }
        // Anything else loses the frame boundaries, and a header block's bytes lose HPACK state.
        reader.tally.lostBytes = saturatingAdd(reader.tally.lostBytes, length)
        if case .payload = reader.phase, reader.header.knownType == .data {
            abandonMessage(stream: reader.header.streamID, sender: side)
        }
        dropUnfinished(reader)
        reader.phase = .searching
        reader.offset = position.offset &+ Int64(length)
        settlePlacement(side)
    }

    /// The end of the capture cut a DATA frame: its header and the payload that came are its
    /// open message's (which ends incomplete); without one they are lost.
    private func partialDataFrame(_ reader: FrameReader, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        let id = reader.header.streamID
        if id != 0, let stream = streams[id], stream.isOpen(kind) {
            stream.withOpen(kind) { open in
                open.message.wireBody = saturatingAdd(
                    open.message.wireBody, saturatingAdd(FrameHeader.size, reader.payloadRead))
                addFrames(&open.message, 1)
            }
            reader.phase = .frameHeader
        }
        dropUnfinished(reader)
    }

    /// Frames of a message type that no message takes.
    private func unowned(_ reader: FrameReader, frames: Int, bytes: Int) {
        reader.tally.unowned.frames = saturatingAdd(reader.tally.unowned.frames, frames)
        reader.tally.unowned.bytes = saturatingAdd(reader.tally.unowned.bytes, bytes)
    }

    /// What a side holds of a frame not finished (a gap took the rest, or the capture ended)
    /// is lost: the preface begun, a frame header's first bytes, a frame cut in its payload
    /// (its header included), bytes held while searching, a header block awaiting its
    /// CONTINUATION (whose fields, and HPACK state after them, are then unknown).
    private func dropUnfinished(_ reader: FrameReader) {
        var lost = 0
        switch reader.phase {
        case .preface:
            if reader.prefaceMatched < Self.prefaceBytes.count { lost = reader.prefaceMatched }
            reader.prefaceMatched = 0
        case .frameHeader:
            lost = reader.headerBytes.count
        case .payload:
            lost = saturatingAdd(reader.payloadRead, FrameHeader.size)
            if reader.carriesHeaderBlock { reader.hpackKnown = false }
        case .searching, .lost:
            lost = reader.searchBuffer.count
        }
        if let block = reader.block {
            unowned(reader, frames: block.frames, bytes: block.wire)
            reader.hpackKnown = false
            reader.block = nil
        }
        reader.tally.lostBytes = saturatingAdd(reader.tally.lostBytes, lost)
        reader.headerBytes.removeAll(keepingCapacity: true)
        reader.searchBuffer.removeAll(keepingCapacity: true)
        reader.searchMarks.removeAll(keepingCapacity: true)
    }

    public func end(of side: Direction, reason: StreamEndReason, time: Int64) {}

    public func close(_ accounting: ConnectionAccounting) {
        for side in [Direction.up, .down] {
            let reader = readers[side.rawValue]
            if reader.phase == .payload, reader.header.knownType == .data {
                // A DATA frame cut by the end of the capture: what came of it is its message's.
                partialDataFrame(reader, sender: side)
            } else {
                dropUnfinished(reader)
            }
        }
        for id in streams.keys.sorted() {
            guard let stream = streams[id] else { continue }
            for kind in [MessageKind.request, .response] { finish(stream, kind, complete: false, reset: false) }
            emitHeldRequest(stream)
        }
        summary.client = readers[clientSide.rawValue].tally
        summary.server = readers[clientSide.peer.rawValue].tally
        summary.streams = streamCount
        var clientTally = StreamTally()
        clientTally.lostBytes = summary.client.lostBytes
        var serverTally = StreamTally()
        serverTally.lostBytes = summary.server.lostBytes
        sink.connectionClosed(
            HTTPConnectionSummary(
                accounting: accounting, protocolKind: .http, serverName: nil, clientTally: clientTally,
                serverTally: serverTally, clientEndpoint: info.endpoint(clientSide)))
    }

    // MARK: - Frame reading

    /// Consumes what it can of `bytes` in the side's current phase; returns how many.
    private func step(_ bytes: UnsafeRawBufferPointer, side: Direction, position: StreamPosition, at index: Int) -> Int {
        let reader = readers[side.rawValue]
        let here = StreamPosition(
            time: position.time, offset: position.offset &+ Int64(index), peerAcknowledged: position.peerAcknowledged)
        switch reader.phase {
        case .preface:
            let preface = Self.prefaceBytes
            var used = 0
            while used < bytes.count, reader.prefaceMatched < preface.count {
                guard bytes[used] == preface[reader.prefaceMatched] else {
                    // Not the preface: frames may begin here after all (read on, reported).
                    reader.tally.protocolErrors += 1
                    reader.tally.lostBytes = saturatingAdd(reader.tally.lostBytes, reader.prefaceMatched)
                    reader.phase = reader.prefaceMatched == 0 ? .frameHeader : .searching
                    return used
                }
                reader.prefaceMatched += 1
                used += 1
            }
            if reader.prefaceMatched == preface.count {
                let end = here.offset &+ Int64(used)
                sink.claim((end &- Int64(preface.count))..<end, of: side, by: .overhead(.h2Control))
                reader.tally.prefaceBytes = preface.count
                reader.phase = .frameHeader
            }
            return used
        case .frameHeader:
            if reader.headerBytes.isEmpty, bytes.count >= FrameHeader.size {
                // The whole header in these bytes (the usual case): read where it lies.
                reader.frameStart = here
                beginFrame(FrameHeader(parsing: bytes), side: side)
                if reader.payloadRemaining == 0 { endFrame(side, position: here) }
                return FrameHeader.size
            }
            let needed = FrameHeader.size - reader.headerBytes.count
            let used = min(needed, bytes.count)
            if reader.headerBytes.isEmpty { reader.frameStart = here }
            reader.headerBytes.append(contentsOf: bytes[0..<used])
            if reader.headerBytes.count == FrameHeader.size {
                beginFrame(FrameHeader(parsing: reader.headerBytes), side: side)
                reader.headerBytes.removeAll(keepingCapacity: true)
                if reader.payloadRemaining == 0 { endFrame(side, position: here) }
            }
            return used
        case .payload:
            let used = min(reader.payloadRemaining, bytes.count)
            payload(UnsafeRawBufferPointer(rebasing: bytes[0..<used]), side: side)
            reader.payloadRemaining -= used
            reader.payloadRead += used
            if reader.payloadRemaining == 0 { endFrame(side, position: here) }
            return used
        case .searching:
            return search(bytes, side: side, position: here)
        case .lost:
            reader.tally.lostBytes = saturatingAdd(reader.tally.lostBytes, bytes.count)
            return bytes.count
        }
    }

    private func beginFrame(_ header: FrameHeader, side: Direction) {
        let reader = readers[side.rawValue]
        reader.header = header
        reader.payloadRemaining = header.length
        reader.payloadRead = 0
        reader.kept.removeAll(keepingCapacity: true)
        reader.padLength = nil
        reader.cutByGap = false
        reader.dataRemaining = 0
        reader.dataStream = nil
        // The receiver's SETTINGS_MAX_FRAME_SIZE bounds what this side may send.
        if header.length > readers[side.peer.rawValue].maxFrameSizeAllowedByThisSide {
            reader.tally.frameSizeErrors += 1
        }
        reader.phase = .payload
        if header.knownType == .data {
            // Unpadded: the whole payload is body; padded: the first byte says how much is not.
            reader.dataRemaining = header.has(FrameFlags.padded) ? 0 : header.length
            // Its owner is known now: the stream's open message, or the one it will make.
            let kind: MessageKind = side == clientSide ? .request : .response
            reader.dataStream = header.streamID == 0 ? nil : streams[header.streamID]
            if header.streamID == 0 {
                claimFrame(side, by: .unclaimed)
            } else if let offset = reader.dataStream?.openStreamOffset(kind) {
                claimFrame(side, by: .message(startingAt: offset))
            } else if let start = reader.frameStart?.offset {
                claimFrame(side, by: .message(startingAt: start))
            }
        }
    }

    private func payload(_ bytes: UnsafeRawBufferPointer, side: Direction) {
        let reader = readers[side.rawValue]
        if reader.header.knownType == .data {
            var rest = bytes[...]
            if reader.header.has(FrameFlags.padded), reader.padLength == nil, !reader.cutByGap,
                let first = rest.first
            {
                let pad = Int(first)
                reader.padLength = pad
                rest = rest.dropFirst()
                let data = reader.header.length - 1 - pad
                if data < 0 { reader.tally.protocolErrors += 1 }
                reader.dataRemaining = max(0, data)
            }
            let data = min(reader.dataRemaining, rest.count)
            if data > 0 {
                if reader.header.has(FrameFlags.padded), reader.padLength == nil {
                    // A gap took the pad length: these bytes may be padding, so not the body's.
                    bodyGap(data, stream: reader.header.streamID, sender: side)
                } else {
                    bodyBytes(
                        UnsafeRawBufferPointer(rebasing: rest.prefix(data)), stream: reader.header.streamID,
                        sender: side)
                }
                reader.dataRemaining -= data
            }
            return
        }
        let keep = reader.carriesHeaderBlock ? limits.maxHeaderBlockBytes : limits.maxControlPayloadBytes
        let room = max(0, keep - reader.kept.count)
        if room > 0 { reader.kept.append(contentsOf: bytes.prefix(room)) }
    }

    /// The frame whose header is `reader.header` is complete.
    private func endFrame(_ side: Direction, position: StreamPosition) {
        let reader = readers[side.rawValue]
        let header = reader.header
        reader.phase = .frameHeader
        let slot = header.knownType.map { Int($0.rawValue) } ?? 10
        reader.tally.byType[slot].frames += 1
        reader.tally.byType[slot].bytes = saturatingAdd(reader.tally.byType[slot].bytes, header.wireSize)
        let start = reader.frameStart ?? position
        // A header block admits only its own CONTINUATIONs between its frames (RFC 9113 §6.10):
        // any other frame, a CONTINUATION of another stream included, ends it unread.
        if let block = reader.block, header.knownType != .continuation || header.streamID != block.stream {
            reader.tally.protocolErrors += 1
            unowned(reader, frames: block.frames, bytes: block.wire)
            reader.block = nil
            reader.hpackKnown = false
            if header.knownType == .continuation {
                // The stray CONTINUATION belongs to nothing either (one error, counted above).
                unowned(reader, frames: 1, bytes: header.wireSize)
                return
            }
        }
        switch header.knownType {
        case .data:
            dataFrameEnded(header, sender: side)
        case .headers, .pushPromise:
            startBlock(header, side: side, at: start)
        case .continuation:
            guard var block = reader.block, block.stream == header.streamID else {
                reader.tally.protocolErrors += 1
                unowned(reader, frames: 1, bytes: header.wireSize)
                return
            }
            block.fragment += reader.kept
            block.frames += 1
            block.wire = saturatingAdd(block.wire, header.wireSize)
            block.truncated = block.truncated || reader.cutByGap || reader.kept.count < header.length
            reader.block = block
            if header.has(FrameFlags.endHeaders) { completeBlock(side: side) }
        case .settings:
            claimFrame(side, by: .overhead(.h2Control))
            settings(header, side: side)
        case .rstStream:
            claimFrame(side, by: .overhead(.h2Control))
            guard header.streamID != 0, header.length == 4 else {
                reader.tally.protocolErrors += 1
                return
            }
            reset(stream: header.streamID, sender: side)
        case .priority, .ping, .goaway, .windowUpdate, nil:
            claimFrame(side, by: .overhead(.h2Control))
        }
    }

    /// HEADERS or PUSH_PROMISE: the start of a header block (padding and priority removed).
    private func startBlock(_ header: FrameHeader, side: Direction, at start: StreamPosition) {
        let reader = readers[side.rawValue]
        if reader.cutByGap, header.knownType == .headers, header.streamID != 0 {
            // A gap took part of the frame: its padding and fields are unknown, never read from
            // the bytes that came after the gap; its size stays exact.
            reader.block = HeaderBlock(
                stream: header.streamID, promisedStream: nil, endStream: header.has(FrameFlags.endStream),
                fragment: [], frames: 1, wire: header.wireSize, start: start, truncated: true)
            if header.has(FrameFlags.endHeaders) { completeBlock(side: side) }
            return
        }
        let payload = reader.kept
        var first = 0
        var padding = 0
        if header.has(FrameFlags.padded) {
            guard let pad = payload.first else {
                reader.tally.protocolErrors += 1
                unowned(reader, frames: 1, bytes: header.wireSize)
                return
            }
            padding = Int(pad)
            first = 1
        }
        var promised: UInt32?
        if header.knownType == .headers, header.has(FrameFlags.priority) { first += 5 }
        if header.knownType == .pushPromise {
            guard payload.count >= first + 4 else {
                reader.tally.protocolErrors += 1
                unowned(reader, frames: 1, bytes: header.wireSize)
                return
            }
            promised =
                (UInt32(payload[first]) << 24 | UInt32(payload[first + 1]) << 16 | UInt32(payload[first + 2]) << 8
                    | UInt32(payload[first + 3])) & 0x7fff_ffff
            first += 4
        }
        let end = header.length - padding
        guard header.streamID != 0, first <= end else {
            // Padding or fields longer than the frame: the block cannot be read, nor HPACK after it.
            reader.tally.protocolErrors += 1
            reader.hpackKnown = false
            unowned(reader, frames: 1, bytes: header.wireSize)
            return
        }
        let keptEnd = min(end, payload.count)
        reader.block = HeaderBlock(
            stream: header.streamID, promisedStream: promised, endStream: header.has(FrameFlags.endStream),
            fragment: first < keptEnd ? Array(payload[first..<keptEnd]) : [], frames: 1, wire: header.wireSize,
            start: start, truncated: keptEnd < end)
        if header.has(FrameFlags.endHeaders) { completeBlock(side: side) }
    }

    /// SETTINGS from `side`: its HEADER_TABLE_SIZE bounds the dynamic table of the blocks
    /// the peer sends; its MAX_FRAME_SIZE bounds the peer's frames (RFC 9113 §6.5.2).
    private func settings(_ header: FrameHeader, side: Direction) {
        let reader = readers[side.rawValue]
        let peer = readers[side.peer.rawValue]
        if header.has(FrameFlags.ack) {
            // An ACK from `side` acknowledges the peer's settings: a smaller table size the
            // peer announced now binds the blocks `side` sends.
            if let size = reader.pendingTableSize {
                reader.decoder.maxDynamicTableLength = size
                reader.pendingTableSize = nil
            }
            return
        }
        guard header.length % 6 == 0, header.streamID == 0 else {
            reader.tally.protocolErrors += 1
            return
        }
        let payload = reader.kept
        var i = 0
        while i + 6 <= payload.count {
            let identifier = UInt16(payload[i]) << 8 | UInt16(payload[i + 1])
            let value =
                Int(payload[i + 2]) << 24 | Int(payload[i + 3]) << 16 | Int(payload[i + 4]) << 8 | Int(payload[i + 5])
            switch identifier {
            case 0x1:
                // Blocks the peer sends are decoded against this size; until `side`'s peer
                // acknowledges, the encoder may still use the larger of old and new.
                let clamped = min(value, 1 << 24)
                if clamped >= peer.decoder.maxDynamicTableLength {
                    peer.decoder.maxDynamicTableLength = clamped
                } else {
                    peer.pendingTableSize = clamped
                }
            case 0x5:
                if value >= 16384 && value <= 16_777_215 {
                    reader.maxFrameSizeAllowedByThisSide = value
                } else {
                    reader.tally.protocolErrors += 1
                }
            default:
                break
            }
            i += 6
        }
    }

    // MARK: - Header blocks and messages

    private func completeBlock(side: Direction) {
        let reader = readers[side.rawValue]
        guard let block = reader.block else { return }
        reader.block = nil
        var fields: HPACKHeaders?
        if reader.hpackKnown && !block.truncated {
            // One buffer per side, its storage reused from block to block.
            reader.hpackInput.clear()
            reader.hpackInput.writeBytes(block.fragment)
            do {
                fields = try reader.decoder.decodeHeaders(from: &reader.hpackInput)
            } catch {
                reader.tally.hpackErrors += 1
                reader.hpackKnown = false
            }
        } else if block.truncated {
            reader.hpackKnown = false
        }
        if let promised = block.promisedStream {
            promise(block, promised: promised, fields: fields, sender: side)
        } else {
            headers(block, fields: fields, sender: side)
        }
    }

    private func headers(_ block: HeaderBlock, fields: HPACKHeaders?, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        let stream = stream(block.stream)
        if let offset = stream.openStreamOffset(kind) {
            claimBlock(block, sender: sender, by: .message(startingAt: offset))
        } else if kind == .request, stream.requestIndex != nil {
            claimBlock(block, sender: sender, by: .unclaimed)
        } else {
            claimBlock(block, sender: sender, by: .message(startingAt: block.start.offset))
        }
        if stream.isOpen(kind) {
            // A second block on an open message: its trailers (docs/METERING.md §2a).
            stream.withOpen(kind) { open in
                open.message.wireHeaders = saturatingAdd(open.message.wireHeaders, block.wire)
                addFrames(&open.message, block.frames)
                if let fields {
                    open.message.message.trailers += fields.filter { !$0.name.hasPrefix(":") }.map {
                        HeaderField($0.name, $0.value)
                    }
                    addListSize(&open.message, fields)
                } else {
                    open.message.anomalies.insert(.hpackStateUnknown)
                    open.message.protocolFacts.headerListSize = nil
                }
            }
            if block.endStream { finish(stream, kind, complete: true, reset: false) }
            return
        }
        if kind == .request, stream.requestIndex != nil {
            // The stream's request was already read: a block that belongs to nothing.
            readers[sender.rawValue].tally.protocolErrors += 1
            unowned(readers[sender.rawValue], frames: block.frames, bytes: block.wire)
            return
        }
        var message = newMessage(kind, sender: sender, stream: block.stream, at: block.start)
        message.message.protocolFacts.frames = block.frames
        message.wireHeaders = block.wire
        apply(fields, to: &message)
        if kind == .response {
            if let request = stream.requestSummary {
                message.request = request
                if !message.isInterim {
                    message.pair = request.index
                    stream.responseIndex = message.index
                }
            }
            if message.isInterim {
                // 1xx interim blocks are records of their own, before the final response.
                message.complete = true
                sink.record(message, body: nil)
                return
            }
            emitHeldRequest(stream)
        } else {
            stream.requestIndex = message.index
            stream.requestSummary = summary(of: message)
            if let response = stream.responseIndex { message.pair = response }
        }
        message.framing = block.endStream ? .none : .untilClose
        let observer = block.endStream ? nil : sink.bodyObserver(for: message.message)
        stream.setOpen(kind, OpenMessage(message: message, observer: observer))
        if block.endStream { finish(stream, kind, complete: true, reset: false) }
    }

    /// PUSH_PROMISE: the promised request, a request record of the promised stream.
    private func promise(
        _ block: HeaderBlock, promised: UInt32, fields: HPACKHeaders?, sender: Direction
    ) {
        guard sender != clientSide else {
            // Only servers push (RFC 9113 §8.4): a client's PUSH_PROMISE belongs to nothing.
            readers[sender.rawValue].tally.protocolErrors += 1
            unowned(readers[sender.rawValue], frames: block.frames, bytes: block.wire)
            return
        }
        let stream = stream(promised)
        claimBlock(
            block, sender: sender,
            by: stream.requestIndex == nil ? .message(startingAt: block.start.offset) : .unclaimed)
        guard stream.requestIndex == nil else {
            readers[sender.rawValue].tally.protocolErrors += 1
            unowned(readers[sender.rawValue], frames: block.frames, bytes: block.wire)
            return
        }
        // Indexed among the client's requests: it stands for one the client did not send.
        var message = newMessage(.request, sender: clientSide, stream: promised, at: block.start)
        message.message.protocolFacts.frames = block.frames
        message.wireHeaders = block.wire
        message.anomalies.insert(.pushed)
        apply(fields, to: &message)
        message.complete = true
        stream.requestIndex = message.index
        stream.requestSummary = summary(of: message)
        stream.heldRequest = OpenMessage(message: message, observer: nil)
    }

    /// A complete header block's frames, from its first frame to the one just read.
    private func claimBlock(_ block: HeaderBlock, sender: Direction, by owner: StreamOwner) {
        let reader = readers[sender.rawValue]
        let end = (reader.frameStart?.offset ?? block.start.offset) &+ Int64(reader.header.wireSize)
        sink.claim(block.start.offset..<max(block.start.offset, end), of: sender, by: owner)
    }

    /// The stream of `id`, begun (and counted) when first seen.
    private func stream(_ id: UInt32) -> StreamState {
        if let stream = streams[id] { return stream }
        let stream = StreamState()
        streams[id] = stream
        streamCount += 1
        return stream
    }

    private func newMessage(_ kind: MessageKind, sender: Direction, stream: UInt32, at position: StreamPosition)
        -> CapturedMessage
    {
        var message = CapturedMessage(
            HTTPMessage(kind: kind, index: messageCounts[sender.rawValue]), connection: info.number,
            client: info.endpoint(clientSide), server: info.endpoint(clientSide.peer), time: position.time,
            streamOffset: position.offset)
        messageCounts[sender.rawValue] += 1
        message.version = "HTTP/2"
        message.message.protocolFacts = .http2(stream: stream)
        message.message.protocolFacts.headerListSize = 0
        return message
    }

    /// Decoded fields onto the message: pseudo-fields make its method, URL and status, the
    /// rest are its fields as the app sees them.
    private func apply(_ fields: HPACKHeaders?, to message: inout CapturedMessage) {
        guard let fields else {
            message.anomalies.insert(.hpackStateUnknown)
            message.message.protocolFacts.headerListSize = nil
            message.message.protocolFacts.headFieldsKnown = false
            return
        }
        var scheme: String?
        var authority: String?
        var path: String?
        // `message.message.fields`, not the wrapper's `message.fields`: appending through the
        // dynamic member would copy the array per field.
        message.message.fields.reserveCapacity(message.message.fields.count + fields.count)
        for (name, value, _) in fields {
            guard name.utf8.first == UInt8(ascii: ":") else {
                message.message.fields.append(HeaderField(name, value))
                continue
            }
            switch name {
            case ":method": message.method = value
            case ":scheme": scheme = value
            case ":authority": authority = value
            case ":path": path = value
            case ":status": message.status = Int(value)
            default: break
            }
        }
        addListSize(&message, fields)
        if message.kind == .request {
            // The URL the app asked for: absolute when scheme and authority are known.
            if let scheme, let authority {
                // Joined as bytes (once per request): no String made of the URL first.
                var target: [UInt8] = []
                target.reserveCapacity(scheme.utf8.count + 3 + authority.utf8.count + (path?.utf8.count ?? 0))
                target.append(contentsOf: scheme.utf8)
                target.append(contentsOf: "://".utf8)
                target.append(contentsOf: authority.utf8)
                if let path { target.append(contentsOf: path.utf8) }
                message.target = target
            } else {
                message.target = Array((path ?? authority ?? "").utf8)
            }
        }
    }

    private func addListSize(_ message: inout CapturedMessage, _ fields: HPACKHeaders) {
        guard let size = message.message.protocolFacts.headerListSize else { return }
        message.message.protocolFacts.headerListSize = fields.reduce(size) {
            saturatingAdd($0, $1.name.utf8.count + $1.value.utf8.count + 32)
        }
    }

    private func addFrames(_ message: inout CapturedMessage, _ frames: Int) {
        let count = message.message.protocolFacts.frames ?? 0
        message.message.protocolFacts.frames = saturatingAdd(count, frames)
    }

    private func summary(of message: CapturedMessage) -> RequestSummary {
        RequestSummary(
            index: message.index, method: message.method ?? "", target: message.target,
            host: message.requestHost, fieldsKnown: message.message.fieldsKnown)
    }

    // MARK: - Bodies

    // Body bytes come once per segment: the DATA frame's stream, found when its header was
    // read, is changed in place (no lookup in `streams` per segment).
    private func bodyBytes(_ bytes: UnsafeRawBufferPointer, stream id: UInt32, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        dataStream(id, sender: sender)?.withOpen(kind) { open in
            open.message.bodyLength = saturatingAdd(open.message.bodyLength, bytes.count)
            open.observer?.bodyBytes(bytes)
        }
    }

    private func bodyGap(_ length: Int, stream id: UInt32, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        dataStream(id, sender: sender)?.withOpen(kind) { open in
            open.message.bodyLength = saturatingAdd(open.message.bodyLength, length)
            open.message.missingBytes = saturatingAdd(open.message.missingBytes, length)
            open.message.anomalies.insert(.bytesMissing)
            open.observer?.bodyGap(length)
        }
    }

    private func dataFrameEnded(_ header: FrameHeader, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        guard header.streamID != 0 else {
            readers[sender.rawValue].tally.protocolErrors += 1
            unowned(readers[sender.rawValue], frames: 1, bytes: header.wireSize)
            return
        }
        // The usual case, a frame of an open message, changes it in place.
        if let stream = dataStream(header.streamID, sender: sender), stream.isOpen(kind) {
            stream.withOpen(kind) { open in
                open.message.wireBody = saturatingAdd(open.message.wireBody, header.wireSize)
                addFrames(&open.message, 1)
            }
            if header.has(FrameFlags.endStream) { finish(stream, kind, complete: true, reset: false) }
            return
        }
        let stream = stream(header.streamID)
        if !stream.isOpen(kind) {
            // DATA of a message whose head the capture lacks (mid-connection start, gap).
            var message = newMessage(
                kind, sender: sender, stream: header.streamID,
                at: readers[sender.rawValue].frameStart
                    ?? StreamPosition(time: info.firstPacketTime, offset: 0, peerAcknowledged: nil))
            apply(nil, to: &message)
            message.framing = .untilClose
            if kind == .request { stream.requestIndex = message.index } else { stream.responseIndex = message.index }
            stream.setOpen(kind, OpenMessage(message: message, observer: nil))
            // The bytes of this frame went by before the message existed: counted as missing.
            let data = max(
                0, header.length - (header.has(FrameFlags.padded) ? 1 + (readers[sender.rawValue].padLength ?? 0) : 0))
            stream.withOpen(kind) { open in
                open.message.bodyLength = data
                open.message.missingBytes = data
                open.message.anomalies.insert(.bytesMissing)
            }
        }
        guard stream.isOpen(kind) else { return }
        stream.withOpen(kind) { open in
            open.message.wireBody = saturatingAdd(open.message.wireBody, header.wireSize)
            addFrames(&open.message, 1)
        }
        if header.has(FrameFlags.endStream) { finish(stream, kind, complete: true, reset: false) }
    }

    /// A gap took a DATA frame's boundaries: its message ends incomplete.
    private func abandonMessage(stream id: UInt32, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        guard let stream = streams[id] else { return }
        stream.withOpen(kind) { open in open.message.anomalies.insert(.bytesMissing) }
        finish(stream, kind, complete: false, reset: false)
    }

    /// RST_STREAM ends its sender's open message at once. The peer's message may still have
    /// frames in flight (a request body sent before the server's early answer and reset
    /// arrived): it keeps them and ends at its END_STREAM, or incomplete at the end of the
    /// capture, marked `stream-reset` either way (docs/METERING.md §2a).
    private func reset(stream id: UInt32, sender: Direction) {
        guard let stream = streams[id] else { return }
        stream.resetSeen = true
        finish(stream, sender == clientSide ? .request : .response, complete: false, reset: true)
        emitHeldRequest(stream)
    }

    /// Ends the open message of `kind` on the stream: a response goes to the sink, a request
    /// waits for its pairing until the stream's response head or its end.
    private func finish(_ stream: StreamState, _ kind: MessageKind, complete: Bool, reset: Bool) {
        guard var open = stream.take(kind) else { return }
        open.message.complete = complete
        if reset || stream.resetSeen { open.message.anomalies.insert(.streamReset) }
        switch kind {
        case .response:
            if open.message.pair == nil { open.message.anomalies.insert(.unpaired) }
            sink.record(open.message, body: sinkObserver(open.observer))
        case .request:
            if let response = stream.responseIndex { open.message.pair = response }
            // A second request on the stream (DATA after the first ended, a protocol error):
            // the one still waiting for its pairing goes first, rather than being replaced.
            emitHeldRequest(stream)
            stream.heldRequest = open
            if stream.responseIndex != nil || reset || stream.resetSeen || !complete { emitHeldRequest(stream) }
        }
    }

    private func emitHeldRequest(_ stream: StreamState) {
        guard var held = stream.heldRequest, stream.requestOpen == nil else { return }
        stream.heldRequest = nil
        if let response = stream.responseIndex { held.message.pair = response }
        if held.message.pair == nil { held.message.anomalies.insert(.unpaired) }
        sink.record(held.message, body: sinkObserver(held.observer))
    }

    /// The DATA frame being read's stream: the one found when its header was read, or (when
    /// none was then, or the bytes are another frame's) a lookup.
    private func dataStream(_ id: UInt32, sender: Direction) -> StreamState? {
        let reader = readers[sender.rawValue]
        if let stream = reader.dataStream, reader.header.streamID == id { return stream }
        return streams[id]
    }

    /// The sink's own observer type back from the protocol: every observer a stream holds
    /// came from `sink.bodyObserver(for:)`, so the downcast always holds (debug builds check it).
    private func sinkObserver(_ observer: (any BodyObserver)?) -> Sink.Observer? {
        observer.map { unsafeDowncast($0, to: Sink.Observer.self) }
    }

    // MARK: - Finding frame boundaries

    /// Mid-connection or after a gap: bytes are held until a chain of plausible frame headers
    /// shows where frames begin; what came before is lost, and HPACK state is unknown. The held
    /// bytes are replayed with the positions (time, offset) they arrived at, so where the
    /// segments were cut changes nothing.
    private func search(_ bytes: UnsafeRawBufferPointer, side: Direction, position: StreamPosition) -> Int {
        let reader = readers[side.rawValue]
        let room = max(0, Self.searchWindow - reader.searchBuffer.count)
        let used = min(room, bytes.count)
        if used > 0 { reader.searchMarks.append((reader.searchBuffer.count, position)) }
        reader.searchBuffer.append(contentsOf: bytes[0..<used])
        let buffer = reader.searchBuffer
        var candidate = 0
        while candidate + FrameHeader.size <= buffer.count {
            switch Self.chain(in: buffer, from: candidate) {
            case .found:
                reader.hpackKnown = false
                reader.tally.lostBytes = saturatingAdd(reader.tally.lostBytes, candidate)
                let marks = reader.searchMarks
                reader.searchBuffer.removeAll(keepingCapacity: true)
                reader.searchMarks.removeAll(keepingCapacity: true)
                reader.phase = .frameHeader
                buffer.withUnsafeBytes { raw in
                    for (number, mark) in marks.enumerated() {
                        let markEnd = number + 1 < marks.count ? marks[number + 1].index : raw.count
                        let from = max(mark.index, candidate)
                        guard from < markEnd else { continue }
                        let piece = UnsafeRawBufferPointer(rebasing: raw[from..<markEnd])
                        let at = StreamPosition(
                            time: mark.position.time, offset: mark.position.offset &+ Int64(from - mark.index),
                            peerAcknowledged: mark.position.peerAcknowledged)
                        var index = 0
                        while index < piece.count {
                            index += step(
                                UnsafeRawBufferPointer(rebasing: piece[index...]), side: side, position: at, at: index)
                        }
                    }
                }
                return used
            case .needMore:
                if buffer.count < Self.searchWindow { return used }
                candidate += 1
            case .implausible:
                candidate += 1
            }
        }
        if buffer.count >= Self.searchWindow {
            // Nothing found in a whole window: drop all but the last header's worth.
            let dropped = buffer.count - (FrameHeader.size - 1)
            reader.tally.lostBytes = saturatingAdd(reader.tally.lostBytes, dropped)
            reader.searchBuffer.removeFirst(dropped)
            var kept: [(index: Int, position: StreamPosition)] = []
            for (number, mark) in reader.searchMarks.enumerated() {
                let markEnd =
                    number + 1 < reader.searchMarks.count ? reader.searchMarks[number + 1].index : buffer.count
                guard markEnd > dropped else { continue }
                let skip = max(0, dropped - mark.index)
                kept.append(
                    (
                        max(0, mark.index - dropped),
                        StreamPosition(
                            time: mark.position.time, offset: mark.position.offset &+ Int64(skip),
                            peerAcknowledged: mark.position.peerAcknowledged)
                    ))
            }
            reader.searchMarks = kept
        }
        return used
    }

    static var searchWindow: Int { 64 << 10 }

    /// Whether bytes that begin a direction are HTTP/2 frames (a capture started
    /// mid-connection, or a server's SETTINGS sent before the client's preface): true on a
    /// chain of plausible frame headers from the first byte, false when they cannot be,
    /// nil while the bytes are too few to tell.
    public static func beginsWithFrames<Bytes: Collection>(_ bytes: Bytes) -> Bool? where Bytes.Element == UInt8 {
        guard let first = bytes.first else { return nil }
        // A frame length within 16,384 starts with a zero byte: HTTP/1.x text and TLS never do.
        guard first == 0 else { return false }
        switch chain(in: Array(bytes.prefix(chainBytes)), from: 0) {
        case .found: return true
        case .needMore: return bytes.count >= chainBytes ? false : nil
        case .implausible: return false
        }
    }

    /// The most bytes a chain of three frame headers can take.
    public static var chainBytes: Int { 3 * (FrameHeader.size + 16384) }

    enum ChainResult { case found, needMore, implausible }

    /// Whether frames plausibly start at `start`: three headers in a row (or as many as the
    /// bytes hold, reaching their end exactly) each of a known type, a length within the
    /// default maximum, flags that type defines, and a stream that fits the type.
    static func chain(in buffer: [UInt8], from start: Int) -> ChainResult {
        var at = start
        var seen = 0
        while seen < 3 {
            if at == buffer.count { return seen > 0 ? .needMore : .needMore }
            guard at + FrameHeader.size <= buffer.count else { return .needMore }
            let header = FrameHeader(parsing: buffer[at..<(at + FrameHeader.size)])
            guard buffer[at + 5] & 0x80 == 0, plausible(header) else { return .implausible }
            at += header.wireSize
            seen += 1
        }
        return .found
    }

    static func plausible(_ header: FrameHeader) -> Bool {
        guard let type = header.knownType, header.length <= 16384 else { return false }
        let allowed: UInt8
        switch type {
        case .data: allowed = FrameFlags.endStream | FrameFlags.padded
        case .headers:
            allowed = FrameFlags.endStream | FrameFlags.endHeaders | FrameFlags.padded | FrameFlags.priority
        case .pushPromise: allowed = FrameFlags.endHeaders | FrameFlags.padded
        case .continuation: allowed = FrameFlags.endHeaders
        case .settings, .ping: allowed = FrameFlags.ack
        case .priority, .rstStream, .goaway, .windowUpdate: allowed = 0
        }
        guard header.flags & ~allowed == 0 else { return false }
        switch type {
        case .settings: return header.streamID == 0 && header.length % 6 == 0
        case .ping: return header.streamID == 0 && header.length == 8
        case .goaway: return header.streamID == 0 && header.length >= 8
        case .rstStream: return header.streamID != 0 && header.length == 4
        case .priority: return header.streamID != 0 && header.length == 5
        case .windowUpdate: return header.length == 4
        case .data, .headers, .pushPromise, .continuation: return header.streamID != 0
        }
    }
}

/// One side's frame reader.
///
/// Its buffers and tallies, and the open messages of `StreamState`, change for every frame or
/// segment, so they are not checked for overlapping access at run time
/// (`@exclusivity(unchecked)`): a connection and its readers and streams live on the parsing
/// thread alone, and while one of them is being changed the only code that runs is the body
/// observer's (`StreamState.withOpen`), which never reaches back into the connection. The
/// HTTP2 tests run every path in debug builds.
final class FrameReader {
    enum Phase: Equatable { case preface, frameHeader, payload, searching, lost }

    var phase: Phase
    var prefaceMatched = 0
    @exclusivity(unchecked) var headerBytes: [UInt8] = []
    var header = FrameHeader(length: 0, type: 0, flags: 0, streamID: 0)
    var frameStart: StreamPosition?
    var payloadRemaining = 0
    var payloadRead = 0
    /// The payload kept of a non-DATA frame (bounded by `HTTP2Limits`).
    @exclusivity(unchecked) var kept: [UInt8] = []
    var padLength: Int?
    /// A gap took part of this frame's payload (a padded frame's pad length, possibly).
    var cutByGap = false
    var dataRemaining = 0
    /// The stream of the DATA frame being read, when it existed at the frame's header.
    var dataStream: StreamState?
    /// The header block being assembled from HEADERS/PUSH_PROMISE and CONTINUATION frames.
    var block: HeaderBlock?
    /// Decodes the blocks this side sends.
    var decoder: HPACKDecoder
    /// The block being decoded.
    var hpackInput: ByteBuffer
    /// False once a block of this side could not be decoded (or was never seen): later
    /// blocks refer to table entries that are unknown.
    var hpackKnown: Bool
    /// A smaller HEADER_TABLE_SIZE the peer announced, binding once this side acknowledges.
    var pendingTableSize: Int?
    /// SETTINGS_MAX_FRAME_SIZE this side announced: the largest frame its peer may send.
    var maxFrameSizeAllowedByThisSide = 16384
    /// Bytes held while frame boundaries are searched for, and where each received piece of
    /// them begins in the buffer and in the stream.
    var searchBuffer: [UInt8] = []
    var searchMarks: [(index: Int, position: StreamPosition)] = []
    var offset: Int64 = 0
    @exclusivity(unchecked) var tally = HTTP2DirectionTally()

    init(decoder: HPACKDecoder, hpackInput: ByteBuffer, phase: Phase, hpackKnown: Bool) {
        self.decoder = decoder
        self.hpackInput = hpackInput
        self.phase = phase
        self.hpackKnown = hpackKnown
        headerBytes.reserveCapacity(FrameHeader.size)
    }

    var carriesHeaderBlock: Bool {
        header.knownType == .headers || header.knownType == .pushPromise || header.knownType == .continuation
    }
}

struct HeaderBlock {
    var stream: UInt32
    var promisedStream: UInt32?
    var endStream: Bool
    var fragment: [UInt8]
    var frames: Int
    /// Σ (9 + length) of the block's frames.
    var wire: Int
    var start: StreamPosition
    /// Longer than `HTTP2Limits.maxHeaderBlockBytes`: not decoded.
    var truncated: Bool
}

/// A message being read on a stream, and who sees its body.
struct OpenMessage {
    var message: CapturedMessage
    /// The sink's observer, held as the protocol: the stream table's types are concrete, so
    /// reading a frame looks up no generic type at run time.
    var observer: (any BodyObserver)?
}

/// One stream's messages. A class: the table hands out the stream itself, changed where it
/// lies (no copy of its state out of `streams` and back per frame). Its messages are not
/// checked for overlapping access at run time (see `FrameReader`).
final class StreamState {
    @exclusivity(unchecked) var requestOpen: OpenMessage?
    @exclusivity(unchecked) var responseOpen: OpenMessage?
    /// A finished request waiting for its pairing (the response head, or the stream's end).
    @exclusivity(unchecked) var heldRequest: OpenMessage?
    var requestIndex: Int?
    var requestSummary: RequestSummary?
    var responseIndex: Int?
    /// A RST_STREAM went by: a message still open ends `stream-reset`.
    var resetSeen = false

    func isOpen(_ kind: MessageKind) -> Bool { kind == .request ? requestOpen != nil : responseOpen != nil }

    /// Where the open message of `kind` begins in its sender's stream.
    func openStreamOffset(_ kind: MessageKind) -> Int64? {
        kind == .request ? requestOpen?.message.streamOffset : responseOpen?.message.streamOffset
    }

    /// Runs `body` on the open message of `kind`, in place; nothing when none is open.
    func withOpen(_ kind: MessageKind, _ body: (inout OpenMessage) -> Void) {
        if kind == .request {
            if requestOpen != nil { body(&requestOpen!) }
        } else if responseOpen != nil {
            body(&responseOpen!)
        }
    }

    func setOpen(_ kind: MessageKind, _ message: OpenMessage?) {
        if kind == .request { requestOpen = message } else { responseOpen = message }
    }

    /// The open message of `kind`, no longer open.
    func take(_ kind: MessageKind) -> OpenMessage? {
        var taken: OpenMessage?
        if kind == .request { swap(&taken, &requestOpen) } else { swap(&taken, &responseOpen) }
        return taken
    }
}

@inline(__always)
func saturatingAdd(_ a: Int, _ b: Int) -> Int {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? Int.max : sum
}
