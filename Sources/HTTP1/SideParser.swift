import TCPReassembly
#if canImport(Glibc)
import Glibc
#endif

/// Where the bytes of one side's stream went that belong to no message.
public struct StreamTally: Sendable, Equatable {
    /// Bytes skipped while looking for a message start (mid-connection, after a gap, garbage).
    public var skippedBytes = 0
    /// Bytes lost in gaps while no message was being read.
    public var lostBytes = 0
    /// Bytes after CONNECT or 101 Switching Protocols.
    public var tunnelBytes = 0

    public init() {}
}

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
final class SideParser<Sink: HTTPRecordSink> {
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
        case ended
    }

    let side: FlowSide
    unowned let connection: HTTPConnection<Sink>
    private let limits: HTTPLimits
    private(set) var state: State
    private(set) var tally = StreamTally()

    private var line: [UInt8] = []
    private var lineOverflowed = false
    private var lineStart = StreamPosition(time: 0, offset: 0, peerAcknowledged: nil)
    private var head: [UInt8] = []
    private var fieldLines: [Range<Int>] = []
    private var startLine: StartLine?
    private var messageStart = StreamPosition(time: 0, offset: 0, peerAcknowledged: nil)
    private var nextMessageAfterResync = false

    /// The message being read, once its start line is known.
    private(set) var current: HTTPMessage?
    private var observer: Sink.Observer?
    /// Whether any byte of the current message's body (framing included) has been seen.
    private var bodyStarted = false
    /// Set when a final response came before this request's body (Expect: 100-continue).
    var bodyMayBeOmitted = false

    init(side: FlowSide, connection: HTTPConnection<Sink>, limits: HTTPLimits, startsAtMessage: Bool) {
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
            switch state {
            case .seekingStart:
                index = seekStart(bytes, from: index, position)
            case .head:
                index = readHead(bytes, from: index, position)
            case let .body(remaining):
                if omitsBody(bytes, from: index) { finishOmittedBody(); continue }
                let taken = takeBody(bytes, from: index, upTo: remaining)
                index += taken
                let left = remaining - Int64(taken)
                if left == 0 { finishMessage(complete: true) } else { state = .body(remaining: left) }
            case .chunkSize:
                if omitsBody(bytes, from: index) { finishOmittedBody(); continue }
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
                index = bytes.count
            case .ended:
                tally.skippedBytes += bytes.count - index
                index = bytes.count
            }
        }
    }

    /// `length` bytes of this side are missing from the capture.
    func gap(_ length: Int, at position: StreamPosition) {
        let missing = Int64(length)
        switch state {
        case .seekingStart, .ended:
            tally.lostBytes += length
            discardLine()
        case .head:
            if startLine == nil {
                tally.lostBytes += length
                tally.skippedBytes += head.count + line.count
                discardLine()
                head.removeAll(keepingCapacity: true)
                fieldLines.removeAll(keepingCapacity: true)
            } else {
                abandonHead(lost: length)
            }
            seekAfterGap()
        case let .body(remaining):
            let covered = min(missing, remaining)
            bodyMissing(Int(covered))
            if covered == remaining { finishMessage(complete: true) } else { state = .body(remaining: remaining - covered) }
            if missing > covered { tally.lostBytes += Int(missing - covered); seekAfterGap() }
        case let .chunkData(remaining) where missing <= remaining:
            bodyMissing(length)
            state = missing == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - missing)
        case .chunkData, .chunkSize, .chunkDataEnd, .trailers:
            // Chunk framing is lost with the gap: the message ends here, cut short.
            tally.lostBytes += length
            discardLine()
            finishMessage(complete: false)
            seekAfterGap()
        case .untilClose:
            bodyMissing(length)
        case .tunnel:
            tally.tunnelBytes += length
        }
    }

    /// The side sent its last byte.
    func end(reason: StreamEndReason) {
        switch state {
        case .untilClose:
            finishMessage(complete: reason == .fin)
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            if bodyMayBeOmitted && !bodyStarted { finishOmittedBody() } else { finishMessage(complete: false) }
        case .head:
            if startLine != nil {
                abandonHead(lost: 0)
            } else {
                tally.skippedBytes += head.count + line.count
            }
        case .seekingStart:
            tally.skippedBytes += line.count
        case .tunnel, .ended:
            break
        }
        discardLine()
        state = .ended
    }

    /// The connection turned into a tunnel (CONNECT accepted, 101).
    func startTunnel() {
        if state != .ended { state = .tunnel }
    }

    // MARK: - Lines

    /// Moves bytes up to and including the next LF into `line`; returns where it stopped
    /// and whether the line is complete. Lines over the limit keep only their length.
    private func takeLine(_ bytes: UnsafeRawBufferPointer, from start: Int, _ position: StreamPosition) -> (next: Int, complete: Bool) {
        if line.isEmpty && !lineOverflowed {
            lineStart = StreamPosition(time: position.time, offset: position.offset + Int64(start),
                                       peerAcknowledged: position.peerAcknowledged)
        }
        let base = bytes.baseAddress! + start
        let found = memchr(base, 10, bytes.count - start)
        let end = found.map { start + (UnsafeRawPointer($0) - UnsafeRawPointer(base)) + 1 } ?? bytes.count
        if line.count + (end - start) > limits.maxLineBytes && !(state == .head) {
            lineOverflowed = true
            overflowLength += end - start
        } else {
            line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        }
        return (end, found != nil)
    }

    private var overflowLength = 0

    /// Length of the current line including bytes dropped for being over the limit.
    private var lineLength: Int { line.count + overflowLength }

    /// The line without its terminator, and whether it ended with a bare LF.
    private func lineContent() -> (content: ArraySlice<UInt8>, bareLF: Bool) {
        var end = line.count
        if end > 0, line[end - 1] == 10 { end -= 1 }
        let bareLF = !(end > 0 && line[end - 1] == 13)
        if !bareLF { end -= 1 }
        return (line[0..<end], bareLF)
    }

    private func discardLine() {
        line.removeAll(keepingCapacity: true)
        lineOverflowed = false
        overflowLength = 0
    }

    // MARK: - Start and head

    private func seekStart(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, complete) = takeLine(bytes, from: index, position)
        guard complete else { return next }
        if !lineOverflowed, let start = acceptableStartLine() {
            beginHead(with: start)
            state = .head
        } else {
            tally.skippedBytes += lineLength
            discardLine()
        }
        return next
    }

    /// The current line as a start line this side may send, nil otherwise.
    private func acceptableStartLine() -> StartLine? {
        guard let start = StartLine.parse(lineContent().content) else { return nil }
        if let expected = connection.expectedKind(from: side), expected != start.kind { return nil }
        return start
    }

    private func beginHead(with start: StartLine) {
        startLine = start
        messageStart = lineStart
        startLineLength = line.count
        head.append(contentsOf: line)
        fieldLines.removeAll(keepingCapacity: true)
        if lineContent().bareLF { pendingAnomalies.insert(.bareLF) }
        discardLine()
    }

    private var pendingAnomalies: MessageAnomalies = []
    private var startLineLength = 0

    private func readHead(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, complete) = takeLine(bytes, from: index, position)
        if head.count + line.count > limits.maxHeadBytes {
            if startLine == nil {
                tally.skippedBytes += line.count
                discardLine()
                state = .seekingStart
                nextMessageAfterResync = true
            } else {
                pendingAnomalies.insert(.headTooLarge)
                head.append(contentsOf: line)
                discardLine()
                abandonHead(lost: 0)
                state = .seekingStart
                nextMessageAfterResync = true
            }
            return next
        }
        guard complete else { return next }
        let (content, bareLF) = lineContent()
        if startLine == nil {
            if content.isEmpty {
                // Empty lines between messages belong to no message (RFC 9112 §2.2).
                tally.skippedBytes += line.count
                discardLine()
            } else if let start = acceptableStartLine() {
                beginHead(with: start)
            } else {
                tally.skippedBytes += line.count
                discardLine()
                state = .seekingStart
                nextMessageAfterResync = true
            }
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
            if decision.startsTunnel { connection.startTunnel() }
        case let .length(length): state = .body(remaining: length)
        case .chunked: state = .chunkSize
        case .untilClose: state = .untilClose
        }
    }

    /// The message from what the head buffer holds; nil without a start line.
    private func makeMessage() -> HTTPMessage? {
        guard let start = startLine else { return nil }
        var message = connection.newMessage(kind: start.kind, from: side, at: messageStart)
        message.wireLine = startLineLength
        message.wireHeaders = head.count - startLineLength
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
    /// incomplete record when its start line is known.
    private func abandonHead(lost: Int) {
        head.append(contentsOf: line)
        discardLine()
        guard var message = makeMessage() else { return }
        message.missingBytes += lost
        if lost > 0 { message.anomalies.insert(.bytesMissing) }
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
        current?.bodyLength += count
        if count > 0 { bodyStarted = true }
        return count
    }

    private func bodyMissing(_ length: Int) {
        observer?.bodyGap(length)
        current?.wireBody += length
        current?.bodyLength += length
        current?.missingBytes += length
        current?.anomalies.insert(.bytesMissing)
        bodyStarted = true
    }

    private func readChunkSize(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, complete) = takeLine(bytes, from: index, position)
        guard complete else { return next }
        current?.wireBody += lineLength
        let (content, bareLF) = lineContent()
        if bareLF { current?.anomalies.insert(.bareLF) }
        let size = lineOverflowed ? nil : Framing.chunkSize(content)
        discardLine()
        bodyStarted = true
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
        let (next, complete) = takeLine(bytes, from: index, position)
        guard complete else { return next }
        current?.wireBody += lineLength
        let (content, bareLF) = lineContent()
        if bareLF { current?.anomalies.insert(.bareLF) }
        if !content.isEmpty { current?.anomalies.insert(.malformedChunk) }
        discardLine()
        state = .chunkSize
        return next
    }

    private func readTrailer(_ bytes: UnsafeRawBufferPointer, from index: Int, _ position: StreamPosition) -> Int {
        let (next, complete) = takeLine(bytes, from: index, position)
        guard complete else { return next }
        current?.wireBody += lineLength
        let (content, bareLF) = lineContent()
        if bareLF { current?.anomalies.insert(.bareLF) }
        if content.isEmpty {
            discardLine()
            finishMessage(complete: true)
        } else {
            if !lineOverflowed {
                current?.trailers.append(contentsOf: FieldBlock(lines: CollectionOfOne(content)).fields)
            }
            discardLine()
        }
        return next
    }

    /// True when a request whose body the client may leave out (a final response came
    /// first) is followed by what looks like the next request line instead of its body.
    private func omitsBody(_ bytes: UnsafeRawBufferPointer, from index: Int) -> Bool {
        guard bodyMayBeOmitted, !bodyStarted else { return false }
        var i = index
        while i < bytes.count, i - index < 24, isTokenChar(bytes[i]) { i += 1 }
        return i > index && i < bytes.count && bytes[i] == 32
    }

    private func finishOmittedBody() {
        current?.anomalies.insert(.bodyOmitted)
        finishMessage(complete: true)
    }

    private func finishMessage(complete: Bool) {
        bodyMayBeOmitted = false
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
