import CaptureIO
import Flows
import TCPReassembly

// The frame reader: one side's ordered bytes into frames (RFC 9113 §4). It owns the reading
// state machine (preface, 9-byte headers, payloads, DATA padding, a gap inside a payload,
// frames cut at the end), SETTINGS, what is placed and what lost, and the side's tally. What a
// frame means for streams and messages is the connection's: each step says what it read.

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

    /// What a step read that the connection acts on. Returned rather than called back: the
    /// reader needs no reference to its generic connection, and its cases carry only numbers
    /// and bytes already in hand (a step allocates nothing).
    enum Event {
        case none
        /// The client's preface, ending where the step ended.
        case prefaceRead
        /// A frame header, now `header`, beginning at `frameStart`.
        case frameBegun
        /// Body bytes of the DATA frame being read.
        case body(UnsafeRawBufferPointer)
        /// Bytes of the DATA frame being read that may be padding (a gap took its pad length):
        /// the body's, missing.
        case bodyGap(Int)
        /// Frame boundaries found this many bytes into the held bytes: `replayHeld` reads them.
        case boundariesFound(Int)
    }

    struct Step {
        /// Bytes the step consumed.
        var used: Int
        var event: Event
        /// The frame `header` describes ended with this step (already counted).
        var frameEnded = false
    }

    /// The client's connection preface (RFC 9113 §3.4).
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

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
    /// The header blocks this side sends: the one being assembled, and its HPACK state.
    var blocks: HeaderBlocks
    /// SETTINGS_MAX_FRAME_SIZE the peer announced: the largest frame this side may send.
    var maxFrameSize = 16384
    /// Bytes held while frame boundaries are searched for, and where each received piece of
    /// them begins in the buffer and in the stream.
    var searchBuffer: [UInt8] = []
    var searchMarks: [(index: Int, position: StreamPosition)] = []
    var offset: Int64 = 0
    @exclusivity(unchecked) var tally = HTTP2DirectionTally()
    /// Payload bytes kept of a frame carrying a header block, and of a control frame.
    private let keepHeaderBlock: Int
    private let keepControl: Int

    init(blocks: HeaderBlocks, phase: Phase, limits: HTTP2Limits) {
        self.blocks = blocks
        self.phase = phase
        keepHeaderBlock = limits.maxHeaderBlockBytes
        keepControl = limits.maxControlPayloadBytes
        headerBytes.reserveCapacity(FrameHeader.size)
    }

    var carriesHeaderBlock: Bool {
        header.knownType == .headers || header.knownType == .pushPromise || header.knownType == .continuation
    }

    /// In the payload of a DATA frame.
    var readingData: Bool { phase == .payload && header.knownType == .data }

    // MARK: - Reading

    /// Consumes what it can of `bytes` (beginning at `here`) in the current phase.
    func read(_ bytes: UnsafeRawBufferPointer, at here: StreamPosition) -> Step {
        switch phase {
        case .preface:
            let preface = Self.preface
            var used = 0
            while used < bytes.count, prefaceMatched < preface.count {
                guard bytes[used] == preface[prefaceMatched] else {
                    // Not the preface: frames may begin here after all (read on, reported).
                    tally.protocolErrors += 1
                    tally.lostBytes = saturatingSum(tally.lostBytes, prefaceMatched)
                    phase = prefaceMatched == 0 ? .frameHeader : .searching
                    return Step(used: used, event: .none)
                }
                prefaceMatched += 1
                used += 1
            }
            guard prefaceMatched == preface.count else { return Step(used: used, event: .none) }
            tally.prefaceBytes = preface.count
            phase = .frameHeader
            return Step(used: used, event: .prefaceRead)
        case .frameHeader:
            if headerBytes.isEmpty, bytes.count >= FrameHeader.size {
                // The whole header in these bytes (the usual case): read where it lies.
                frameStart = here
                begin(FrameHeader(parsing: bytes))
                return Step(used: FrameHeader.size, event: .frameBegun, frameEnded: endIfComplete())
            }
            let needed = FrameHeader.size - headerBytes.count
            let used = min(needed, bytes.count)
            if headerBytes.isEmpty { frameStart = here }
            headerBytes.append(contentsOf: bytes[0..<used])
            guard headerBytes.count == FrameHeader.size else { return Step(used: used, event: .none) }
            begin(FrameHeader(parsing: headerBytes))
            headerBytes.removeAll(keepingCapacity: true)
            return Step(used: used, event: .frameBegun, frameEnded: endIfComplete())
        case .payload:
            let used = min(payloadRemaining, bytes.count)
            let event = payload(UnsafeRawBufferPointer(rebasing: bytes[0..<used]))
            payloadRemaining -= used
            payloadRead += used
            return Step(used: used, event: event, frameEnded: endIfComplete())
        case .searching:
            return search(bytes, at: here)
        case .lost:
            tally.lostBytes = saturatingSum(tally.lostBytes, bytes.count)
            return Step(used: bytes.count, event: .none)
        }
    }

    private func begin(_ header: FrameHeader) {
        self.header = header
        payloadRemaining = header.length
        payloadRead = 0
        kept.removeAll(keepingCapacity: true)
        padLength = nil
        cutByGap = false
        dataRemaining = 0
        dataStream = nil
        // The receiver's SETTINGS_MAX_FRAME_SIZE bounds what this side may send.
        if header.length > maxFrameSize { tally.frameSizeErrors += 1 }
        phase = .payload
        if header.knownType == .data {
            // Unpadded: the whole payload is body; padded: the first byte says how much is not.
            dataRemaining = header.has(FrameFlags.padded) ? 0 : header.length
        }
    }

    private func payload(_ bytes: UnsafeRawBufferPointer) -> Event {
        guard header.knownType == .data else {
            let keep = carriesHeaderBlock ? keepHeaderBlock : keepControl
            let room = max(0, keep - kept.count)
            if room > 0 { kept.append(contentsOf: bytes.prefix(room)) }
            return .none
        }
        var rest = bytes[...]
        if header.has(FrameFlags.padded), padLength == nil, !cutByGap, let first = rest.first {
            let pad = Int(first)
            padLength = pad
            rest = rest.dropFirst()
            let data = header.length - 1 - pad
            if data < 0 { tally.protocolErrors += 1 }
            dataRemaining = max(0, data)
        }
        let data = min(dataRemaining, rest.count)
        guard data > 0 else { return .none }
        dataRemaining -= data
        // A gap took the pad length: these bytes may be padding, so not the body's.
        if header.has(FrameFlags.padded), padLength == nil { return .bodyGap(data) }
        return .body(UnsafeRawBufferPointer(rebasing: rest.prefix(data)))
    }

    /// When the frame's payload is all read: the frame counted, the next one awaited.
    private func endIfComplete() -> Bool {
        guard payloadRemaining == 0 else { return false }
        phase = .frameHeader
        let slot = header.knownType.map { Int($0.rawValue) } ?? 10
        tally.byType[slot].frames += 1
        tally.byType[slot].bytes = saturatingSum(tally.byType[slot].bytes, header.wireSize)
        return true
    }

    // MARK: - Gaps and the end

    /// A gap of `length` bytes: inside a DATA, HEADERS or CONTINUATION frame's payload the frame
    /// goes on, its length still telling where the next begins (DATA's bytes are the body's,
    /// missing; a header block's fields are unknown). Returns the body bytes the gap took and
    /// whether the frame ended; nil when the gap is not within such a frame
    /// (`loseBoundaries`).
    func gapWithinFrame(_ length: Int) -> (body: Int, frameEnded: Bool)? {
        let type = header.knownType
        guard phase == .payload, type == .data || type == .headers || type == .continuation,
            length <= payloadRemaining
        else { return nil }
        var padLengthPart = 0
        if type == .data, header.has(FrameFlags.padded), padLength == nil, !cutByGap {
            // The gap took the pad-length byte: data and padding can no longer be told
            // apart, so the rest of the frame, padding included, is the body's, missing
            // (never a later byte taken as the pad length).
            dataRemaining = payloadRemaining - 1
            padLengthPart = 1
        }
        cutByGap = true
        let dataPart = type == .data ? min(length - padLengthPart, dataRemaining) : 0
        payloadRemaining -= length
        dataRemaining -= dataPart
        payloadRead += length
        return (dataPart, endIfComplete())
    }

    /// A gap anywhere else loses the frame boundaries (and a header block's bytes, HPACK
    /// state): what is held is lost, and frames are searched for from `offset` on.
    func loseBoundaries(_ length: Int, resumingAt offset: Int64) {
        tally.lostBytes = saturatingSum(tally.lostBytes, length)
        dropUnfinished()
        phase = .searching
        self.offset = offset
    }

    /// The end of the capture: what is held of an unfinished frame is lost, but a DATA frame
    /// cut short whose message took what came of it (`dataFrameTaken`).
    func endOfCapture(dataFrameTaken: Bool) {
        if dataFrameTaken { phase = .frameHeader }
        dropUnfinished()
    }

    /// Frames of a message type that no message takes.
    func countUnowned(frames: Int, bytes: Int) {
        tally.unowned.frames = saturatingSum(tally.unowned.frames, frames)
        tally.unowned.bytes = saturatingSum(tally.unowned.bytes, bytes)
    }

    /// What the side holds of a frame not finished (a gap took the rest, or the capture ended)
    /// is lost: the preface begun, a frame header's first bytes, a frame cut in its payload
    /// (its header included), bytes held while searching, a header block awaiting its
    /// CONTINUATION (whose fields, and HPACK state after them, are then unknown).
    func dropUnfinished() {
        var lost = 0
        switch phase {
        case .preface:
            if prefaceMatched < Self.preface.count { lost = prefaceMatched }
            prefaceMatched = 0
        case .frameHeader:
            lost = headerBytes.count
        case .payload:
            lost = saturatingSum(payloadRead, FrameHeader.size)
            if carriesHeaderBlock { blocks.known = false }
        case .searching, .lost:
            lost = searchBuffer.count
        }
        if let block = blocks.block {
            countUnowned(frames: block.frames, bytes: block.wire)
            blocks.known = false
            blocks.block = nil
        }
        tally.lostBytes = saturatingSum(tally.lostBytes, lost)
        headerBytes.removeAll(keepingCapacity: true)
        searchBuffer.removeAll(keepingCapacity: true)
        searchMarks.removeAll(keepingCapacity: true)
    }

    /// Where everything read is placed up to: all but a frame or header block still being
    /// read, and bytes held while searching for frame boundaries (docs/METERING.md §2c).
    var placedOffset: Int64 {
        var placed = offset
        if let block = blocks.block { placed = min(placed, block.start.offset) }
        switch phase {
        case .preface: placed = min(placed, offset &- Int64(prefaceMatched))
        case .frameHeader:
            if !headerBytes.isEmpty, let start = frameStart { placed = min(placed, start.offset) }
        case .payload:
            if header.knownType != .data, let start = frameStart { placed = min(placed, start.offset) }
        case .searching:
            if let start = searchMarks.first?.position.offset { placed = min(placed, start) }
        case .lost: break
        }
        return placed
    }

    // MARK: - SETTINGS

    /// The SETTINGS frame just read, sent by this side: its HEADER_TABLE_SIZE bounds the
    /// dynamic table of the blocks `peer` sends; its MAX_FRAME_SIZE bounds `peer`'s frames
    /// (RFC 9113 §6.5.2).
    func readSettings(peer: FrameReader) {
        if header.has(FrameFlags.ack) {
            // An ACK from this side acknowledges the peer's settings.
            blocks.tableSizeAcknowledged()
            return
        }
        guard header.length % 6 == 0, header.streamID == 0 else {
            tally.protocolErrors += 1
            return
        }
        let payload = kept
        var i = 0
        while i + 6 <= payload.count {
            let identifier = UInt16(payload[i]) << 8 | UInt16(payload[i + 1])
            let value =
                Int(payload[i + 2]) << 24 | Int(payload[i + 3]) << 16 | Int(payload[i + 4]) << 8 | Int(payload[i + 5])
            switch identifier {
            case 0x1:
                peer.blocks.tableSizeAnnounced(min(value, 1 << 24))
            case 0x5:
                if value >= 16384 && value <= 16_777_215 {
                    peer.maxFrameSize = value
                } else {
                    tally.protocolErrors += 1
                }
            default:
                break
            }
            i += 6
        }
    }
}
