import DequeModule

/// A segment that arrived ahead of a hole, copied because the frame it came in is borrowed.
struct BufferedSegment {
    var offset: Int64
    var bytes: [UInt8]
    /// Bytes after `bytes` that snaplen cut from the packet: known length, unknown content.
    var missingTail: Int
    var fin: Bool
    var time: Int64
    var peerAcknowledged: Int64?

    var end: Int64 { offset + Int64(bytes.count + missingTail) }
}

/// One direction of a connection: where the stream stands and what waits behind a hole.
struct HalfStream {
    /// Whether the first sequence number is known (SYN seen, or first data seen).
    var started = false
    /// The sequence number of stream offset 0.
    var baseSequence: UInt32 = 0
    /// The next offset to deliver.
    var nextOffset: Int64 = 0
    /// Whether this side's SYN was seen (a second one is a retransmission).
    var sawSYN = false
    /// Offset at which FIN sits, once seen.
    var finOffset: Int64?
    /// Set when the side ended (FIN delivered, RST, flush).
    var ended = false
    /// Out-of-order segments, sorted by offset. A deque: segments leave from the front as
    /// the hole fills, which an array would make quadratic.
    var buffered: Deque<BufferedSegment> = []
    var bufferedBytes = 0
    /// The highest stream end this side has sent (payload end), nil before any payload.
    var sentEnd: Int64?
    /// The highest offset of the peer's stream this side has acknowledged, nil before any ACK.
    var acknowledgedPeer: Int64?

    /// Starts the stream so that `sequence` is offset 0.
    mutating func start(at sequence: UInt32) {
        started = true
        baseSequence = sequence
        nextOffset = 0
    }

    /// The stream offset of `sequence`, taken as the nearest one to the delivery point, so
    /// that sequence numbers wrapping past 2^32 keep counting up.
    func offset(of sequence: UInt32) -> Int64 {
        let expected = baseSequence &+ UInt32(truncatingIfNeeded: nextOffset)
        return nextOffset + Int64(Int32(bitPattern: sequence &- expected))
    }

    /// Inserts keeping the order by offset; a segment identical to one already held is dropped.
    /// Returns false for such a duplicate.
    mutating func insert(_ segment: BufferedSegment) -> Bool {
        var index = buffered.endIndex
        while index > buffered.startIndex, buffered[index - 1].offset > segment.offset {
            index -= 1
        }
        if index > buffered.startIndex {
            let previous = buffered[index - 1]
            if previous.offset == segment.offset, previous.end >= segment.end { return false }
        }
        buffered.insert(segment, at: index)
        bufferedBytes += segment.bytes.count
        return true
    }

    mutating func removeFirstBuffered() -> BufferedSegment {
        let segment = buffered.removeFirst()
        bufferedBytes -= segment.bytes.count
        return segment
    }
}
