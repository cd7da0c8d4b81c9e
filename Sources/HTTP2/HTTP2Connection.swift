import CaptureIO
import CostAccounting
import Flows
import MessageModel
import NIOCore
import NIOHPACK
import PacketLayers
import TCPReassembly

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
        var total = saturatingSum(prefaceBytes, unowned.bytes)
        for (index, count) in byType.enumerated() where ![0, 1, 5, 9].contains(index) {
            total = saturatingSum(total, count.bytes)
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
///
/// This file is the wiring: bytes and gaps to each side's `FrameReader` (FrameReader.swift;
/// frame boundaries searched for in FrameBoundarySearch.swift), each frame it reads to its
/// header block (HeaderBlocks.swift) or stream (HTTP2Streams.swift), and frames' bytes claimed
/// for their owners.
public final class HTTP2Connection<Sink: MessageSink>: ByteStreamHandler {
    /// The client's connection preface (RFC 9113 §3.4).
    public static var prefaceBytes: [UInt8] { FrameReader.preface }

    let info: ConnectionInfo
    let sink: Sink
    /// The side that sent the preface (or opened the connection).
    let clientSide: Direction
    let limits: HTTPLimits
    /// Decoded header bytes the open and held messages keep (bounded by `limits`).
    public internal(set) var keptHeaderBytes = 0
    /// The two sides' readers (a `let`: reading one is not an access checked at run time).
    let readers: [FrameReader]
    // Changed once per message; not checked for overlapping access at run time, like the
    // readers' and streams' state (see `FrameReader`).
    @exclusivity(unchecked) var streams: [UInt32: StreamState] = [:]
    @exclusivity(unchecked) var messageCounts = [0, 0]
    var streamCount = 0
    /// A stream's request that came before the connection turned HTTP/2 (h2c Upgrade).
    private var upgradedRequest: RequestSummary?
    /// Who owns the preface and control frames: read once, not a registered global per frame.
    let control = StreamOwner.overhead(.h2Control)

    /// `clientSide`: who sends requests; `expectPreface`: whether that side's stream starts
    /// with the preface (false after an h2c upgrade the caller has already read it from, or
    /// mid-connection). `upgradedRequest`: the HTTP/1.1 request an h2c Upgrade turned into
    /// stream 1's request, whose response comes as frames.
    public init(
        info: ConnectionInfo, sink: Sink, limits: HTTPLimits = HTTPLimits(), clientSide: Direction = .up,
        firstIndexes: [Int] = [0, 0], upgradedRequest: RequestSummary? = nil, startsAtBeginning: Bool = true
    ) {
        self.info = info
        self.sink = sink
        self.clientSide = clientSide
        self.limits = limits
        if firstIndexes.count == 2 {
            messageCounts[clientSide.rawValue] = firstIndexes[0]
            messageCounts[clientSide.peer.rawValue] = firstIndexes[1]
        }
        let allocator = ByteBufferAllocator()
        readers = [Direction.up, .down].map { side in
            FrameReader(
                blocks: HeaderBlocks(allocator: allocator, limits: limits, known: startsAtBeginning),
                phase: !startsAtBeginning ? .searching : (side == clientSide ? .preface : .frameHeader),
                limits: limits)
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
        feed(bytes, side: side, position: position)
        readers[side.rawValue].offset = position.offset &+ Int64(bytes.count)
        settlePlacement(side)
    }

    public func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        guard length > 0 else { return }
        let reader = readers[side.rawValue]
        if let cut = reader.gapWithinFrame(length) {
            if cut.body > 0 { bodyGap(cut.body, stream: reader.header.streamID, sender: side) }
            if cut.frameEnded { endFrame(side, position: position) }
            reader.offset = position.offset &+ Int64(length)
            settlePlacement(side)
            return
        }
        if reader.readingData { abandonMessage(stream: reader.header.streamID, sender: side) }
        reader.loseBoundaries(length, resumingAt: position.offset &+ Int64(length))
        settlePlacement(side)
    }

    public func end(of side: Direction, reason: StreamEndReason, time: Int64) {}

    public func close(_ accounting: ConnectionAccounting) {
        for side in [Direction.up, .down] {
            let reader = readers[side.rawValue]
            // A DATA frame cut by the end of the capture: what came of it is its message's.
            reader.endOfCapture(dataFrameTaken: reader.readingData && partialDataFrame(reader, sender: side))
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

    // MARK: - Frames

    /// `bytes` of `side`, beginning at `position`, through its reader.
    private func feed(_ bytes: UnsafeRawBufferPointer, side: Direction, position: StreamPosition) {
        var index = 0
        while index < bytes.count {
            index += step(UnsafeRawBufferPointer(rebasing: bytes[index...]), side: side, position: position, at: index)
        }
    }

    /// One step of the side's reader, and what it read acted on; returns the bytes consumed.
    private func step(_ bytes: UnsafeRawBufferPointer, side: Direction, position: StreamPosition, at index: Int) -> Int {
        let reader = readers[side.rawValue]
        let here = StreamPosition(
            time: position.time, offset: position.offset &+ Int64(index), peerAcknowledged: position.peerAcknowledged)
        let step = reader.read(bytes, at: here)
        switch step.event {
        case .none:
            break
        case .prefaceRead:
            let end = here.offset &+ Int64(step.used)
            sink.claim(
                (end &- Int64(FrameReader.preface.count))..<end, of: side, stream: Self.byteStream, by: control)
        case .frameBegun:
            if reader.header.knownType == .data { dataFrameBegun(side) }
        case .body(let body):
            bodyBytes(body, stream: reader.header.streamID, sender: side)
        case .bodyGap(let length):
            bodyGap(length, stream: reader.header.streamID, sender: side)
        case .boundariesFound(let start):
            reader.replayHeld(from: start) { piece, at in feed(piece, side: side, position: at) }
        }
        if step.frameEnded { endFrame(side, position: here) }
        return step.used
    }

    /// The frame whose header is the reader's `header` is complete (and counted): to its
    /// header block, stream or the connection's control.
    private func endFrame(_ side: Direction, position: StreamPosition) {
        let reader = readers[side.rawValue]
        let header = reader.header
        let start = reader.frameStart ?? position
        if reader.interruptsBlock() { return }
        switch header.knownType {
        case .data:
            dataFrameEnded(header, sender: side)
        case .headers, .pushPromise:
            if reader.startBlock(at: start) { completeBlock(side: side) }
        case .continuation:
            if reader.continueBlock() { completeBlock(side: side) }
        case .settings:
            claimFrame(side, by: control)
            reader.readSettings(peer: readers[side.peer.rawValue])
        case .rstStream:
            claimFrame(side, by: control)
            guard header.streamID != 0, header.length == 4 else {
                reader.tally.protocolErrors += 1
                return
            }
            reset(stream: header.streamID, sender: side)
        case .priority, .ping, .goaway, .windowUpdate, nil:
            claimFrame(side, by: control)
        }
    }

    /// A complete header block, decoded, to the message it begins or ends.
    private func completeBlock(side: Direction) {
        guard let complete = readers[side.rawValue].takeBlock() else { return }
        if let promised = complete.block.promisedStream {
            promise(complete.block, promised: promised, fields: complete.fields, primed: complete.primed, sender: side)
        } else {
            headers(complete.block, fields: complete.fields, primed: complete.primed, sender: side)
        }
    }

    // MARK: - Claims

    /// Every frame travels in the carrier's one byte stream per side (TCP or TLS): the claims'
    /// stream 0, whatever HTTP/2 stream the frame belongs to.
    private static var byteStream: UInt64 { 0 }

    /// Everything `side` read is placed but a frame or header block still being read, and
    /// bytes held while searching for frame boundaries (docs/METERING.md §2c).
    private func settlePlacement(_ side: Direction) {
        sink.settle(side, stream: Self.byteStream, upTo: readers[side.rawValue].placedOffset)
    }

    /// Claims the frame now read (or begun, for DATA, whose length says where it ends).
    func claimFrame(_ side: Direction, by owner: StreamOwner) {
        let reader = readers[side.rawValue]
        guard let start = reader.frameStart?.offset else { return }
        sink.claim(start..<(start &+ Int64(reader.header.wireSize)), of: side, stream: Self.byteStream, by: owner)
    }

    /// A complete header block's frames, from its first frame to the one just read.
    func claimBlock(_ block: HeaderBlock, sender: Direction, by owner: StreamOwner) {
        let reader = readers[sender.rawValue]
        let end = (reader.frameStart?.offset ?? block.start.offset) &+ Int64(reader.header.wireSize)
        sink.claim(
            block.start.offset..<max(block.start.offset, end), of: sender, stream: Self.byteStream, by: owner)
    }
}
