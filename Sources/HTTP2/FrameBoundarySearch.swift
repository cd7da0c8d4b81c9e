import CaptureIO
import Flows
import TCPReassembly

// Finding frame boundaries mid-connection or after a gap: bytes are held until a chain of
// plausible frame headers shows where frames begin, then replayed from there at the positions
// they arrived at. Also whether a direction's first bytes are frames at all (the router's
// probe).

extension FrameReader {
    static var searchWindow: Int { 64 << 10 }

    /// Holds `bytes` (beginning at `position`) until a chain of plausible frame headers shows
    /// where frames begin; what came before is lost, and HPACK state is unknown. The held bytes
    /// are replayed (`replayHeld`) with the positions (time, offset) they arrived at, so where
    /// the segments were cut changes nothing.
    func search(_ bytes: UnsafeRawBufferPointer, at position: StreamPosition) -> Step {
        let room = max(0, Self.searchWindow - searchBuffer.count)
        let used = min(room, bytes.count)
        if used > 0 { searchMarks.append((searchBuffer.count, position)) }
        searchBuffer.append(contentsOf: bytes[0..<used])
        let buffer = searchBuffer
        var candidate = 0
        while candidate + FrameHeader.size <= buffer.count {
            switch Self.chain(in: buffer, from: candidate) {
            case .found:
                blocks.known = false
                tally.lostBytes = saturatingSum(tally.lostBytes, candidate)
                phase = .frameHeader
                return Step(used: used, event: .boundariesFound(candidate))
            case .needMore:
                if buffer.count < Self.searchWindow { return Step(used: used, event: .none) }
                candidate += 1
            case .implausible:
                candidate += 1
            }
        }
        if buffer.count >= Self.searchWindow {
            // Nothing found in a whole window: drop all but the last header's worth.
            let dropped = buffer.count - (FrameHeader.size - 1)
            tally.lostBytes = saturatingSum(tally.lostBytes, dropped)
            searchBuffer.removeFirst(dropped)
            var kept: [(index: Int, position: StreamPosition)] = []
            for (number, mark) in searchMarks.enumerated() {
                let markEnd = number + 1 < searchMarks.count ? searchMarks[number + 1].index : buffer.count
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
            searchMarks = kept
        }
        return Step(used: used, event: .none)
    }

    /// After `.boundariesFound(start)`: the held bytes from `start` on, no longer held, each
    /// piece to `read` with the position it arrived at.
    func replayHeld(from start: Int, _ read: (UnsafeRawBufferPointer, StreamPosition) -> Void) {
        let buffer = searchBuffer
        let marks = searchMarks
        searchBuffer.removeAll(keepingCapacity: true)
        searchMarks.removeAll(keepingCapacity: true)
        buffer.withUnsafeBytes { raw in
            for (number, mark) in marks.enumerated() {
                let markEnd = number + 1 < marks.count ? marks[number + 1].index : raw.count
                let from = max(mark.index, start)
                guard from < markEnd else { continue }
                read(
                    UnsafeRawBufferPointer(rebasing: raw[from..<markEnd]),
                    StreamPosition(
                        time: mark.position.time, offset: mark.position.offset &+ Int64(from - mark.index),
                        peerAcknowledged: mark.position.peerAcknowledged))
            }
        }
    }

    /// The most bytes a chain of three frame headers can take.
    static var chainBytes: Int { 3 * (FrameHeader.size + 16384) }

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

extension HTTP2Connection {
    /// Whether bytes that begin a direction are HTTP/2 frames (a capture started
    /// mid-connection, or a server's SETTINGS sent before the client's preface): true on a
    /// chain of plausible frame headers from the first byte, false when they cannot be,
    /// nil while the bytes are too few to tell.
    public static func beginsWithFrames<Bytes: Collection>(_ bytes: Bytes) -> Bool? where Bytes.Element == UInt8 {
        guard let first = bytes.first else { return nil }
        // A frame length within 16,384 starts with a zero byte: HTTP/1.x text and TLS never do.
        guard first == 0 else { return false }
        switch FrameReader.chain(in: Array(bytes.prefix(chainBytes)), from: 0) {
        case .found: return true
        case .needMore: return bytes.count >= chainBytes ? false : nil
        case .implausible: return false
        }
    }

    /// The most bytes a chain of three frame headers can take.
    public static var chainBytes: Int { FrameReader.chainBytes }
}
