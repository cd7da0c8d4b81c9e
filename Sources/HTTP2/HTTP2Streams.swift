import CaptureIO
import Flows
import MessageModel
import NIOHPACK
import TCPReassembly

// Streams: a `StreamState` per stream seen, one record per message of each stream (a block's
// message, its body from DATA frames, trailers, 1xx interim records, PUSH_PROMISE's pushed
// requests, RST_STREAM's resets), a request held until its response says how they pair.

/// A message being read on a stream, and who sees its body.
struct OpenMessage {
    var message: CapturedMessage
    /// The sink's observer, held as the protocol: the stream table's types are concrete, so
    /// reading a frame looks up no generic type at run time.
    var observer: (any BodyObserver)?
    /// Decoded header bytes the message keeps (fields and trailers copied), counted in the
    /// connection's `keptHeaderBytes` until the message leaves it.
    var keptHeaderBytes = 0
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

// MARK: - Header blocks to messages

extension HTTP2Connection {
    func headers(_ block: HeaderBlock, fields: HPACKHeaders?, primed: Bool, sender: Direction) {
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
            let room = headerRoom
            var kept = 0
            stream.withOpen(kind) { open in
                open.message.wireHeaders = saturatingSum(open.message.wireHeaders, block.wire)
                addFrames(&open.message, block.frames)
                kept = applyTrailers(fields, primed: primed, to: &open.message, room: room)
                open.keptHeaderBytes += kept
            }
            keptHeaderBytes += kept
            if block.endStream { finish(stream, kind, complete: true, reset: false) }
            return
        }
        if kind == .request, stream.requestIndex != nil {
            // The stream's request was already read: a block that belongs to nothing.
            readers[sender.rawValue].tally.protocolErrors += 1
            readers[sender.rawValue].countUnowned(frames: block.frames, bytes: block.wire)
            return
        }
        var message = newMessage(kind, sender: sender, stream: block.stream, at: block.start)
        message.message.protocolFacts.frames = block.frames
        message.wireHeaders = block.wire
        let kept = apply(fields, primed: primed, to: &message, room: headerRoom)
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
        keptHeaderBytes += kept
        stream.setOpen(kind, OpenMessage(message: message, observer: observer, keptHeaderBytes: kept))
        if block.endStream { finish(stream, kind, complete: true, reset: false) }
    }

    /// PUSH_PROMISE: the promised request, a request record of the promised stream.
    func promise(_ block: HeaderBlock, promised: UInt32, fields: HPACKHeaders?, primed: Bool, sender: Direction) {
        guard sender != clientSide else {
            // Only servers push (RFC 9113 §8.4): a client's PUSH_PROMISE belongs to nothing.
            readers[sender.rawValue].tally.protocolErrors += 1
            readers[sender.rawValue].countUnowned(frames: block.frames, bytes: block.wire)
            return
        }
        let stream = stream(promised)
        claimBlock(
            block, sender: sender,
            by: stream.requestIndex == nil ? .message(startingAt: block.start.offset) : .unclaimed)
        guard stream.requestIndex == nil else {
            readers[sender.rawValue].tally.protocolErrors += 1
            readers[sender.rawValue].countUnowned(frames: block.frames, bytes: block.wire)
            return
        }
        // Indexed among the server's records: it travels in the server's PUSH_PROMISE (§2a).
        var message = newMessage(.request, sender: sender, stream: promised, at: block.start)
        message.message.protocolFacts.frames = block.frames
        message.wireHeaders = block.wire
        message.anomalies.insert(.pushed)
        let kept = apply(fields, primed: primed, to: &message, room: headerRoom)
        message.complete = true
        stream.requestIndex = message.index
        stream.requestSummary = summary(of: message)
        keptHeaderBytes += kept
        stream.heldRequest = OpenMessage(message: message, observer: nil, keptHeaderBytes: kept)
    }

    /// The decoded header bytes a block may keep: its own bound, and what the connection's
    /// open and held messages may keep in all (`HTTPLimits`).
    var headerRoom: Int {
        min(limits.maxKeptHeaderBytesPerBlock, max(0, limits.maxKeptHeaderBytesPerConnection - keptHeaderBytes))
    }

    /// The stream of `id`, begun (and counted) when first seen.
    func stream(_ id: UInt32) -> StreamState {
        if let stream = streams[id] { return stream }
        let stream = StreamState()
        streams[id] = stream
        streamCount += 1
        return stream
    }

    func newMessage(_ kind: MessageKind, sender: Direction, stream: UInt32, at position: StreamPosition)
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

    func addFrames(_ message: inout CapturedMessage, _ frames: Int) {
        let count = message.message.protocolFacts.frames ?? 0
        message.message.protocolFacts.frames = saturatingSum(count, frames)
    }

    func summary(of message: CapturedMessage) -> RequestSummary {
        RequestSummary(
            index: message.index, method: message.method ?? "", target: message.target,
            host: message.requestHost, fieldsKnown: message.message.requestLineKnown)
    }

    // MARK: - Bodies

    /// A DATA frame's header: its owner is known now, the stream's open message or the one it
    /// will make.
    func dataFrameBegun(_ side: Direction) {
        let reader = readers[side.rawValue]
        let header = reader.header
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

    // Body bytes come once per segment: the DATA frame's stream, found when its header was
    // read, is changed in place (no lookup in `streams` per segment).
    func bodyBytes(_ bytes: UnsafeRawBufferPointer, stream id: UInt32, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        dataStream(id, sender: sender)?.withOpen(kind) { open in
            open.message.bodyLength = saturatingSum(open.message.bodyLength, bytes.count)
            open.observer?.bodyBytes(bytes)
        }
    }

    func bodyGap(_ length: Int, stream id: UInt32, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        dataStream(id, sender: sender)?.withOpen(kind) { open in
            open.message.bodyLength = saturatingSum(open.message.bodyLength, length)
            open.message.missingBytes = saturatingSum(open.message.missingBytes, length)
            open.message.anomalies.insert(.bytesMissing)
            open.observer?.bodyGap(length)
        }
    }

    func dataFrameEnded(_ header: FrameHeader, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        guard header.streamID != 0 else {
            readers[sender.rawValue].tally.protocolErrors += 1
            readers[sender.rawValue].countUnowned(frames: 1, bytes: header.wireSize)
            return
        }
        // The usual case, a frame of an open message, changes it in place.
        if let stream = dataStream(header.streamID, sender: sender), stream.isOpen(kind) {
            stream.withOpen(kind) { open in
                open.message.wireBody = saturatingSum(open.message.wireBody, header.wireSize)
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
            _ = apply(nil, primed: false, to: &message, room: 0)
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
            open.message.wireBody = saturatingSum(open.message.wireBody, header.wireSize)
            addFrames(&open.message, 1)
        }
        if header.has(FrameFlags.endStream) { finish(stream, kind, complete: true, reset: false) }
    }

    /// The end of the capture cut a DATA frame: its header and the payload that came are its
    /// open message's (which ends incomplete). False without one: they are lost.
    func partialDataFrame(_ reader: FrameReader, sender: Direction) -> Bool {
        let kind: MessageKind = sender == clientSide ? .request : .response
        let id = reader.header.streamID
        guard id != 0, let stream = streams[id], stream.isOpen(kind) else { return false }
        stream.withOpen(kind) { open in
            open.message.wireBody = saturatingSum(
                open.message.wireBody, saturatingSum(FrameHeader.size, reader.payloadRead))
            addFrames(&open.message, 1)
        }
        return true
    }

    /// A gap took a DATA frame's boundaries: its message ends incomplete.
    func abandonMessage(stream id: UInt32, sender: Direction) {
        let kind: MessageKind = sender == clientSide ? .request : .response
        guard let stream = streams[id] else { return }
        stream.withOpen(kind) { open in open.message.anomalies.insert(.bytesMissing) }
        finish(stream, kind, complete: false, reset: false)
    }

    /// The DATA frame being read's stream: the one found when its header was read, or (when
    /// none was then, or the bytes are another frame's) a lookup.
    func dataStream(_ id: UInt32, sender: Direction) -> StreamState? {
        let reader = readers[sender.rawValue]
        if let stream = reader.dataStream, reader.header.streamID == id { return stream }
        return streams[id]
    }

    // MARK: - Ends

    /// RST_STREAM ends its sender's open message at once. The peer's message may still have
    /// frames in flight (a request body sent before the server's early answer and reset
    /// arrived): it keeps them and ends at its END_STREAM, or incomplete at the end of the
    /// capture, marked `stream-reset` either way (docs/METERING.md §2a).
    func reset(stream id: UInt32, sender: Direction) {
        guard let stream = streams[id] else { return }
        stream.resetSeen = true
        finish(stream, sender == clientSide ? .request : .response, complete: false, reset: true)
        emitHeldRequest(stream)
    }

    /// Ends the open message of `kind` on the stream: a response goes to the sink, a request
    /// waits for its pairing until the stream's response head or its end.
    func finish(_ stream: StreamState, _ kind: MessageKind, complete: Bool, reset: Bool) {
        guard var open = stream.take(kind) else { return }
        open.message.complete = complete
        if reset || stream.resetSeen { open.message.anomalies.insert(.streamReset) }
        switch kind {
        case .response:
            if open.message.pair == nil { open.message.anomalies.insert(.unpaired) }
            keptHeaderBytes -= open.keptHeaderBytes
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

    func emitHeldRequest(_ stream: StreamState) {
        guard var held = stream.heldRequest, stream.requestOpen == nil else { return }
        stream.heldRequest = nil
        if let response = stream.responseIndex { held.message.pair = response }
        if held.message.pair == nil { held.message.anomalies.insert(.unpaired) }
        keptHeaderBytes -= held.keptHeaderBytes
        sink.record(held.message, body: sinkObserver(held.observer))
    }

    /// The sink's own observer type back from the protocol: every observer a stream holds
    /// came from `sink.bodyObserver(for:)`, so the downcast always holds (debug builds check it).
    func sinkObserver(_ observer: (any BodyObserver)?) -> Sink.Observer? {
        observer.map { unsafeDowncast($0, to: Sink.Observer.self) }
    }
}
