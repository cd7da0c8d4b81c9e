import Flows
import MessageModel
import TCPReassembly
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bounds on what the HTTP parser buffers.
public struct HTTPLimits: Sendable {
    /// A head (start line and fields) longer than this is cut off and the stream resynchronized.
    public var maxHeadBytes: Int
    /// Longest single line (chunk-size or trailer line, or a line scanned for a start line).
    public var maxLineBytes: Int

    public init(maxHeadBytes: Int = 64 << 10, maxLineBytes: Int = 16 << 10) {
        self.maxHeadBytes = maxHeadBytes
        self.maxLineBytes = maxLineBytes
    }
}

/// The HTTP/1.x state machine for one side of a connection (libhtp style): one state per
/// part of a message, input consumed by offset, only partial lines buffered. Every byte of
/// the stream lands in exactly one place: a message's line, headers or body, or the tally.
/// The outcome never depends on how the stream was cut into `receive` calls.
final class SideParser<Sink: MessageSink> {
    enum State: Equatable {
        /// Scanning lines for a start line (mid-connection start, after a gap or garbage).
        case seekingStart
        /// Reading a head; `head` holds its complete lines, `line` the partial one.
        case head
        case body(remaining: Int64)
        case chunkSize
        case chunkData(remaining: Int64)
        case chunkDataEnd
        case trailers
        case untilClose
        case tunnel
        /// The connection is TLS: bytes are only counted.
        case tls
        case ended
    }

    let side: Direction
    unowned let connection: HTTPConnection<Sink>
    private let limits: HTTPLimits
    private(set) var state: State
    private(set) var tally = StreamTally()

    private var line: [UInt8] = []
    /// Bytes of the current line beyond `maxLineBytes`: counted, not kept.
    private var overflowLength = 0
    private var lineOverflowed: Bool { overflowLength > 0 }
    private var lineStart = StreamPosition(time: 0, offset: 0, peerAcknowledged: nil)
    /// Where the packets carrying the current line begin, when time or acknowledgement changed:
    /// a start line found inside the line takes the values of the packet holding its first byte.
    private var lineMarks: [StreamPosition] = []
    private var head: [UInt8] = []
    private var fieldLines: [Range<Int>] = []
    private var startLine: StartLine?
    private var startLineLength = 0
    private var pendingAnomalies: MessageAnomalies = []
    private var messageStart = StreamPosition(time: 0, offset: 0, peerAcknowledged: nil)
    private var nextMessageAfterResync = false
    /// Trailer field lines of the current chunked body (ranges into `trailerBlock`).
    private var trailerBlock: [UInt8] = []
    private var trailerLines: [Range<Int>] = []

    /// The message being read, once its start line is known.
    private(set) var current: CapturedMessage?
    private var observer: Sink.Observer?
    /// Whether any byte of the current message's body (framing included) has been seen.
    private var bodyStarted = false
    /// Set when a final response came before this request's body (Expect: 100-continue).
    var bodyMayBeOmitted = false
    /// Bytes held until it is clear whether they are the body or the next request (see
    /// `bodyMayBeOmitted`), each run with its position; `heldPrefix` is their first bytes.
    private var held: [(bytes: [UInt8], position: StreamPosition)] = []
    private var heldPrefix: [UInt8] = []
    private var heldCount = 0

    init(side: Direction, connection: HTTPConnection<Sink>, limits: HTTPLimits, startsAtMessage: Bool) {
        self.side = side
        self.connection = connection
        self.limits = limits
        self.state = startsAtMessage ? .head : .seekingStart
        line.reserveCapacity(256)
        head.reserveCapacity(1024)
    }

    // MARK: - Input

    func receive(_ bytes: UnsafeRawBufferPointer, at position: StreamPosition) {
        var index = 0
        while index < bytes.count {
            if awaitsOmissionVerdict {
                hold(bytes, from: index, position)
                return
            }
            switch state {
            case .seekingStart:
                index = seekStart(bytes, from: index, position)
            case .head:
                index = readHead(bytes, from: index, position)
            case let .body(remaining):
                let taken = takeBody(bytes, from: index, upTo: remaining)
                index += taken
                let left = remaining - Int64(taken)
                if left == 0 { finishMessage(complete: true) } else { state = .body(remaining: left) }
            case .chunkSize:
                index = readChunkSize(bytes, from: index, position)
            case let .chunkData(remaining):
                let taken = takeBody(bytes, from: index, upTo: remaining)
                index += taken
                let left = remaining - Int64(taken)
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
            case .chunkDataEnd:
                index = readChunkDataEnd(bytes, from: index, position)
            case .trailers:
                index = readTrailer(bytes, from: index, position)
            case .untilClose:
                index += takeBody(bytes, from: index, upTo: Int64.max)
            case .tunnel:
                tally.tunnelBytes += bytes.count - index
                connection.tunnelReceive(
                    UnsafeRawBufferPointer(rebasing: bytes[index...]), from: side,
                    at: StreamPosition(
                        time: position.time, offset: position.offset + Int64(index),
                        peerAcknowledged: position.peerAcknowledged))
                index = bytes.count
            case .tls:
                tally.tlsBytes += bytes.count - index
                index = bytes.count
            case .ended:
                tally.skippedBytes += bytes.count - index
                index = bytes.count
            }
        }
    }

    /// `length` bytes of this side are missing from the capture.
    func gap(_ length: Int, at position: StreamPosition) {
        // Whatever waited for the omission verdict was sent before the hole: take it as body.
        if !held.isEmpty { releaseHeld(omitted: false) }
        let missing = Int64(length)
        switch state {
        case .seekingStart, .ended:
            tally.skippedBytes += lineLength
            tally.lostBytes += length
            discardLine()
            if state == .seekingStart { nextMessageAfterResync = true }
        case .head:
            // How much of the hole was head is unknown: the head keeps what was seen.
            tally.lostBytes += length
            if startLine == nil, let cut = cutStartLine() {
                // A start line cut short (snaplen, a lost segment) is kept with what was seen,
                // requests as responses: its peer may answer it.
                beginHead(with: cut, skipping: 0)
                abandonHead(cutByGap: true)
            } else if startLine == nil {
                tally.skippedBytes += lineLength
                discardLine()
            } else {
                abandonHead(cutByGap: true)
            }
            seekAfterGap()
        case let .body(remaining):
            let covered = min(missing, remaining)
            bodyMissing(Int(covered))
            if covered == remaining {
                finishMessage(complete: true)
            } else {
                state = .body(remaining: remaining - covered)
            }
            if missing > covered {
                tally.lostBytes += Int(missing - covered)
                seekAfterGap()
            }
        case let .chunkData(remaining):
            let covered = min(missing, remaining)
            bodyMissing(Int(covered))
            if missing < remaining {
                state = .chunkData(remaining: remaining - missing)
            } else if missing == remaining {
                state = .chunkDataEnd
            } else {
                // The hole took the chunk's CRLF and what follows: the framing is lost.
                tally.lostBytes += Int(missing - covered)
                finishMessage(complete: false)
                seekAfterGap()
            }
        case .chunkSize, .chunkDataEnd, .trailers:
            // Chunk framing is lost with the gap: the message ends here, cut short.
            current?.wireBody += lineLength
            current?.anomalies.insert(.bytesMissing)
            tally.lostBytes += length
            discardLine()
            finishMessage(complete: false)
            seekAfterGap()
        case .untilClose:
            bodyMissing(length)
        case .tunnel:
            tally.tunnelBytes += length
            connection.tunnelGap(length, from: side, at: position)
        case .tls:
            tally.tlsBytes += length
        }
    }

    /// The side sent its last byte.
    func end(reason: StreamEndReason) {
        // Bytes still waiting for the omission verdict were followed by the end: body.
        if !held.isEmpty { releaseHeld(omitted: false) }
        switch state {
        case .untilClose:
            finishMessage(complete: reason == .fin)
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            if bodyMayBeOmitted && !bodyStarted {
                finishOmittedBody()
            } else {
                current?.wireBody += lineLength // a partial chunk-size or trailer line
                finishMessage(complete: false)
            }
        case .head:
            if startLine != nil {
                abandonHead(cutByGap: false)
            } else {
                tally.skippedBytes += lineLength
            }
        case .seekingStart:
            tally.skippedBytes += lineLength
        case .tunnel, .tls, .ended:
            break
        }
        discardLine()
        state = .ended
    }

    /// The connection turned into a tunnel (CONNECT accepted, 101).
    func startTunnel() {
        switch state {
        case .tunnel, .tls, .ended: return
        default: break
        }
        // What this side sent after the message that opened the tunnel is tunnel traffic.
        tally.tunnelBytes += heldCount
        held = []
        heldPrefix = []
        heldCount = 0
        if current != nil {
            current?.wireBody += lineLength
            finishMessage(complete: false)
        } else {
            tally.tunnelBytes += head.count + lineLength
            // Bytes read ahead as a possible next head are the tunnel's first bytes.
            if !lineOverflowed && (!head.isEmpty || !line.isEmpty) {
                let start = head.isEmpty ? lineStart : messageStart
                state = .tunnel
                (head + line).withUnsafeBytes { connection.tunnelReceive($0, from: side, at: start) }
            }
        }
        discardLine()
        head.removeAll(keepingCapacity: true)
        fieldLines.removeAll(keepingCapacity: true)
        startLine = nil
        pendingAnomalies = []
        nextMessageAfterResync = false
        state = .tunnel
    }

    /// The connection is TLS; called before any byte.
    func startTLS() {
        if state != .ended { state = .tls }
    }

    // MARK: - Lines

    /// Moves bytes up to and including the next LF (looking at no more than `scanLimit` bytes)
    /// into `line`; returns where it stopped and whether the line is complete. Outside a head,
    /// a line keeps its first `maxLineBytes` bytes and only the length of the rest.
    private func takeLine(
        _ bytes: UnsafeRawBufferPointer, from start: Int, _ position: StreamPosition,
        scanLimit: Int = .max
    ) -> (next: Int, complete: Bool) {
        let here = StreamPosition(
            time: position.time, offset: position.offset + Int64(start),
            peerAcknowledged: position.peerAcknowledged)
        if lineLength == 0 {
            lineStart = here
            lineMarks.removeAll(keepingCapacity: true)
        }
        if !lineOverflowed,
            lineMarks.last.map({ $0.time != here.time || $0.peerAcknowledged != here.peerAcknowledged }) ?? true
        {
            lineMarks.append(here)
        }
        let available = min(bytes.count - start, max(1, scanLimit))
        let base = bytes.baseAddress! + start
        let found = memchr(base, 10, available)
        let end = found.map { start + (UnsafeRawPointer($0) - UnsafeRawPointer(base)) + 1 } ?? (start + available)
        let count = end - start
        let kept = state == .head ? count : min(count, max(0, limits.maxLineBytes - line.count))
        line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + kept)]))
        overflowLength += count - kept
        return (end, found != nil)
    }

    /// Length of the current line including bytes dropped for being over the limit.
    private var lineLength: Int { line.count + overflowLength }

    /// The partial line being read (of the current message, when one is open).
    var lineBytes: Int { lineLength }

    /// Bytes read but not yet known to be a message's or not: a head or line that may start
    /// one, and bytes held for the omission verdict (docs/METERING.md §2c).
    var unplacedBytes: Int { heldCount + (current == nil ? head.count + lineLength : 0) }

    /// The complete line without its terminator, and whether that was a bare LF. A line
    /// without LF (cut short, or over the limit) comes back whole.
    private func lineContent() -> (content: ArraySlice<UInt8>, bareLF: Bool) {
        var end = line.count
        guard end > 0, line[end - 1] == 10, !lineOverflowed else { return (line[0..<end], false) }
        end -= 1
        if end > 0, line[end - 1] == 13 { return (line[0..<(end - 1)], false) }
        return (line[0..<end], true)
    }

    /// Position of byte `index` of the current line.
    private func linePosition(at index: Int) -> StreamPosition {
        let offset = lineStart.offset + Int64(index)
        var mark = lineStart
        for candidate in lineMarks where candidate.offset <= offset { mark = candidate }
        return StreamPosition(time: mark.time, offset: offset, peerAcknowledged: mark.peerAcknowledged)
    }

    private func discardLine() {
        line.removeAll(keepingCapacity: true)
        overflowLength = 0
        lineMarks.removeAll(keepingCapacity: true)
    }

    // MARK: - Start and head

    private func seekStart(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, complete) = takeLine(bytes, from: index, position)
        guard complete else { return next }
        if let (start, skip) = findStartLine() {
            beginHead(with: start, skipping: skip)
            state = .head
        } else {
            tally.skippedBytes += lineLength
            nextMessageAfterResync = true
            discardLine()
        }
        return next
    }

    /// A start line this side may send in the current complete line: at its beginning, or
    /// glued to the end of bytes that are no message (a body without a final line break)
    /// at `skip`. Nil when there is none.
    private func findStartLine() -> (start: StartLine, skip: Int)? {
        guard !lineOverflowed else { return nil }
        let content = lineContent().content
        let expected = connection.expectedKind(from: side)
        if let start = StartLine.parse(content), expected == nil || expected == start.kind { return (start, 0) }
        return StartLine.parseGlued(content, kind: expected)
    }

    /// A request line that does not parse, at a message boundary of a side that may send
    /// requests (see `StartLine.parseMalformedRequest`).
    private func malformedRequestLine() -> StartLine? {
        guard !lineOverflowed, connection.expectedKind(from: side) != .response else { return nil }
        return StartLine.parseMalformedRequest(lineContent().content)
    }

    /// The partial current line as the beginning of a start line this side may send.
    private func cutStartLine() -> StartLine? {
        guard !lineOverflowed, let start = StartLine.parseCut(line[...]) else { return nil }
        let expected = connection.expectedKind(from: side)
        return expected == nil || expected == start.kind ? start : nil
    }

    /// Bytes the connection found to be no message (a malformed request nobody answered).
    func countSkipped(_ length: Int) {
        tally.skippedBytes += length
    }

    private func beginHead(with start: StartLine, skipping skip: Int) {
        if skip > 0 {
            tally.skippedBytes += skip
            nextMessageAfterResync = true
        }
        startLine = start
        messageStart = linePosition(at: skip)
        startLineLength = line.count - skip
        head.append(contentsOf: line[skip...])
        fieldLines.removeAll(keepingCapacity: true)
        if lineContent().bareLF { pendingAnomalies.insert(.bareLF) }
        discardLine()
    }

    private func readHead(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, complete) = takeLine(
            bytes, from: index, position,
            scanLimit: limits.maxHeadBytes - head.count - line.count)
        if !complete && head.count + line.count >= limits.maxHeadBytes {
            // The head stops at the limit exactly, wherever the packets cut it.
            if startLine == nil {
                tally.skippedBytes += line.count
                discardLine()
            } else {
                pendingAnomalies.insert(.headTooLarge)
                abandonHead(cutByGap: false)
            }
            state = .seekingStart
            nextMessageAfterResync = true
            return next
        }
        guard complete else { return next }
        let (content, bareLF) = lineContent()
        if startLine == nil {
            if content.isEmpty {
                // Empty lines between messages belong to no message (RFC 9112 §2.2).
                tally.skippedBytes += line.count
                discardLine()
            } else if let (start, skip) = findStartLine() {
                beginHead(with: start, skipping: skip)
            } else if let malformed = malformedRequestLine() {
                // Kept as a request for now; the connection drops it to skipped bytes
                // unless a response answers it.
                beginHead(with: malformed, skipping: 0)
                pendingAnomalies.insert(.malformedStartLine)
                // HTTP/0.9 has no header section.
                if case let .request(_, _, version) = malformed, version.isEmpty { completeHead() }
            } else {
                tally.skippedBytes += line.count
                discardLine()
                state = .seekingStart
                nextMessageAfterResync = true
            }
            return next
        }
        if pendingAnomalies.contains(.malformedStartLine), let start = StartLine.parse(content), start.kind == .request
        {
            // A well-formed request line among a malformed one's fields: that was no head.
            tally.skippedBytes += head.count
            head.removeAll(keepingCapacity: true)
            fieldLines.removeAll(keepingCapacity: true)
            pendingAnomalies = []
            nextMessageAfterResync = true
            beginHead(with: start, skipping: 0)
            return next
        }
        if bareLF { pendingAnomalies.insert(.bareLF) }
        let range = head.count..<(head.count + content.count)
        head.append(contentsOf: line)
        discardLine()
        if content.isEmpty {
            completeHead()
        } else {
            fieldLines.append(range)
        }
        return next
    }

    /// Builds the message from the complete head and decides its framing.
    private func completeHead() {
        guard var message = makeMessage() else { return }
        let (decision, observer) = connection.headParsed(&message, startingAt: messageStart)
        message.framing = decision.framing
        message.anomalies.formUnion(decision.anomalies)
        self.current = message
        self.observer = observer
        bodyStarted = false
        switch decision.framing {
        case .none:
            finishMessage(complete: true)
            if decision.startsTunnel { connection.startTunnel(after: message) }
        case let .length(length): state = .body(remaining: length)
        case .chunked: state = .chunkSize
        case .untilClose: state = .untilClose
        }
    }

    /// The message from what the head buffer holds; nil without a start line.
    private func makeMessage() -> CapturedMessage? {
        guard let start = startLine else { return nil }
        var message = connection.newMessage(
            kind: start.kind, from: side, at: messageStart,
            showsRoles: !pendingAnomalies.contains(.malformedStartLine))
        message.wireLine = startLineLength
        message.wireHeaders = head.count - startLineLength
        var lineEnd = startLineLength
        while lineEnd > 0, head[lineEnd - 1] == 10 || head[lineEnd - 1] == 13 { lineEnd -= 1 }
        message.startLine = Array(head[0..<lineEnd])
        switch start {
        case let .request(method, target, version):
            message.method = String(httpBytes: method)
            message.target = target
            message.version = String(httpBytes: version)
        case let .response(version, status, reason):
            message.version = String(httpBytes: version)
            message.status = status
            message.reason = reason
        }
        let block = FieldBlock(lines: fieldLines.lazy.map { self.head[$0] })
        message.fields = block.fields
        message.anomalies = pendingAnomalies.union(block.anomalies)
        if nextMessageAfterResync { message.anomalies.insert(.afterResync) }
        pendingAnomalies = []
        nextMessageAfterResync = false
        startLine = nil
        head.removeAll(keepingCapacity: true)
        fieldLines.removeAll(keepingCapacity: true)
        return message
    }

    /// A head cut short by a gap, the end of the stream or the size limit: kept as an
    /// incomplete record when its start line is known, with the bytes that were seen.
    private func abandonHead(cutByGap: Bool) {
        head.append(contentsOf: line)
        discardLine()
        guard var message = makeMessage() else { return }
        if cutByGap { message.anomalies.insert(.bytesMissing) }
        _ = connection.headParsed(&message, startingAt: messageStart, headComplete: false)
        current = message
        observer = nil
        finishMessage(complete: false)
    }

    private func seekAfterGap() {
        discardLine()
        if state != .ended { state = .seekingStart }
        nextMessageAfterResync = true
    }

    // MARK: - Body

    /// Hands up to `limit` body bytes to the observer; returns how many it took.
    private func takeBody(_ bytes: UnsafeRawBufferPointer, from index: Int, upTo limit: Int64) -> Int {
        let count = Int(min(Int64(bytes.count - index), limit))
        observer?.bodyBytes(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
        current?.wireBody += count
        current?.message.bodyLength += count // per packet: no key-path lookup
        if count > 0 { bodyStarted = true }
        return count
    }

    private func bodyMissing(_ length: Int) {
        guard length > 0 else { return }
        observer?.bodyGap(length)
        current?.wireBody += length
        current?.message.bodyLength += length
        current?.message.missingBytes += length
        current?.anomalies.insert(.bytesMissing)
        bodyStarted = true
    }

    /// Takes a chunk-size, chunk-end or trailer line: all of it is body framing. Returns the
    /// line without its terminator once complete (nil while partial).
    private func takeFramingLine(
        _ bytes: UnsafeRawBufferPointer, from index: Int,
        _ position: StreamPosition
    ) -> (next: Int, content: ArraySlice<UInt8>?) {
        let (next, complete) = takeLine(bytes, from: index, position)
        guard complete else { return (next, nil) }
        current?.wireBody += lineLength
        let (content, bareLF) = lineContent()
        if bareLF { current?.anomalies.insert(.bareLF) }
        return (next, content)
    }

    private func readChunkSize(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        // The body starts with the first byte of its first chunk-size line, not with the
        // line's end: a final response that comes while the line is partial must not make
        // the bytes already in `line` wait for an omission verdict they were never held for.
        bodyStarted = true
        let (next, line) = takeFramingLine(bytes, from: index, position)
        guard let content = line else { return next }
        let size = lineOverflowed ? nil : Framing.chunkSize(content)
        discardLine()
        guard let size else {
            current?.anomalies.insert(.malformedChunk)
            finishMessage(complete: false)
            seekAfterGap()
            return next
        }
        state = size == 0 ? .trailers : .chunkData(remaining: size)
        return next
    }

    private func readChunkDataEnd(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, line) = takeFramingLine(bytes, from: index, position)
        guard let content = line else { return next }
        if lineOverflowed || !content.isEmpty { current?.anomalies.insert(.malformedChunk) }
        discardLine()
        state = .chunkSize
        return next
    }

    private func readTrailer(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, line) = takeFramingLine(bytes, from: index, position)
        guard let content = line else { return next }
        if !lineOverflowed && content.isEmpty {
            discardLine()
            finishMessage(complete: true)
            return next
        }
        // Kept up to the head limit and parsed at the end, so that obs-fold lines join.
        if !lineOverflowed, trailerBlock.count + content.count <= limits.maxHeadBytes {
            trailerLines.append(trailerBlock.count..<(trailerBlock.count + content.count))
            trailerBlock.append(contentsOf: content)
        }
        discardLine()
        return next
    }

    // MARK: - Expect: 100-continue answered before the body

    /// True while the next bytes may be this request's body or, when the client left the
    /// body out after a final response, the next request.
    private var awaitsOmissionVerdict: Bool {
        guard bodyMayBeOmitted, !bodyStarted else { return false }
        switch state {
        case .body, .chunkSize: return true
        default: return false
        }
    }

    /// Holds bytes until they show whether they begin a request line, then replays them.
    private func hold(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) {
        let run = UnsafeRawBufferPointer(rebasing: bytes[index...])
        held.append(
            (
                Array(run),
                StreamPosition(
                    time: position.time, offset: position.offset + Int64(index),
                    peerAcknowledged: position.peerAcknowledged)
            ))
        heldCount += run.count
        heldPrefix.append(contentsOf: run.prefix(max(0, limits.maxLineBytes - heldPrefix.count)))
        switch omissionVerdict() {
        case nil where heldPrefix.count < limits.maxLineBytes: return
        case true?: releaseHeld(omitted: true)
        default: releaseHeld(omitted: false)
        }
    }

    /// True when the held bytes begin the next request (the body was left out), false when
    /// they are the body, nil while unknown. Each test only firms up as bytes come, so the
    /// verdict does not depend on how the stream was cut.
    private func omissionVerdict() -> Bool? {
        let asRequest = StartLine.beginsRequestLine(heldPrefix[...])
        if asRequest == false { return false }
        if case let .body(length) = state, heldPrefix.count > length {
            // Sent whole, the body would be followed by the next request: a body made of
            // token characters also reads as the start of a request line.
            switch StartLine.beginsRequestLine(heldPrefix[Int(length)...]) {
            case true?: return false
            case nil: return nil
            case false?: break
            }
        }
        return asRequest
    }

    private func releaseHeld(omitted: Bool) {
        if omitted { finishOmittedBody() } else { bodyMayBeOmitted = false }
        let runs = held
        held = []
        heldPrefix = []
        heldCount = 0
        for run in runs { run.bytes.withUnsafeBytes { receive($0, at: run.position) } }
    }

    private func finishOmittedBody() {
        current?.anomalies.insert(.bodyOmitted)
        finishMessage(complete: true)
    }

    private func finishMessage(complete: Bool) {
        bodyMayBeOmitted = false
        if !trailerLines.isEmpty {
            let block = FieldBlock(lines: trailerLines.lazy.map { self.trailerBlock[$0] })
            current?.trailers = block.fields
            current?.anomalies.formUnion(block.anomalies)
            trailerLines.removeAll(keepingCapacity: true)
            trailerBlock.removeAll(keepingCapacity: true)
        }
        guard var message = current else {
            if state != .ended { state = .head }
            return
        }
        message.complete = complete
        current = nil
        let observer = self.observer
        self.observer = nil
        if state != .ended { state = .head }
        connection.messageFinished(message, observer: observer, from: side)
    }
}
