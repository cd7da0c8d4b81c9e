import CaptureIO
import Flows
import MessageModel
import NIOCore
import NIOHPACK
import TCPReassembly

// Header blocks and HPACK: a block assembled from HEADERS or PUSH_PROMISE and its
// CONTINUATIONs (padding, priority and the promised stream taken off), decoded by the sending
// side's `NIOHPACK` decoder, whose table size follows SETTINGS_HEADER_TABLE_SIZE; a block
// lost, cut or undecodable makes that side's later blocks unknown (`hpack-state-unknown`);
// decoded fields onto a message.

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

/// One side's header blocks: the one being assembled and the HPACK state that decodes them.
struct HeaderBlocks {
    /// The header block being assembled from HEADERS/PUSH_PROMISE and CONTINUATION frames.
    var block: HeaderBlock?
    /// Decodes the blocks this side sends.
    var decoder: HPACKDecoder
    /// The block being decoded (one buffer per side, its storage reused from block to block).
    var input: ByteBuffer
    /// False once a block of this side could not be decoded (or was never seen): later
    /// blocks refer to table entries that are unknown.
    var known: Bool
    /// A smaller HEADER_TABLE_SIZE the peer announced, binding once this side acknowledges.
    var pendingTableSize: Int?

    init(allocator: ByteBufferAllocator, maxHeaderListSize: Int, known: Bool) {
        decoder = HPACKDecoder(
            allocator: allocator, maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
            maxHeaderListSize: maxHeaderListSize)
        input = allocator.buffer(capacity: 0)
        self.known = known
    }

    mutating func decode(_ fragment: [UInt8]) throws -> HPACKHeaders {
        input.clear()
        input.writeBytes(fragment)
        return try decoder.decodeHeaders(from: &input)
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: blocks this side sends are decoded against it;
    /// until this side acknowledges, its encoder may still use the larger of old and new.
    mutating func tableSizeAnnounced(_ size: Int) {
        if size >= decoder.maxDynamicTableLength {
            decoder.maxDynamicTableLength = size
        } else {
            pendingTableSize = size
        }
    }

    /// This side acknowledged the peer's settings: a smaller table size the peer announced now
    /// binds the blocks this side sends.
    mutating func tableSizeAcknowledged() {
        if let size = pendingTableSize {
            decoder.maxDynamicTableLength = size
            pendingTableSize = nil
        }
    }
}

// MARK: - Assembly

extension FrameReader {
    /// A header block admits only its own CONTINUATIONs between its frames (RFC 9113 §6.10):
    /// the frame just read, any other (a CONTINUATION of another stream included), ends it
    /// unread. True when that frame is then done with: a stray CONTINUATION belongs to nothing.
    func interruptsBlock() -> Bool {
        guard let block = blocks.block, header.knownType != .continuation || header.streamID != block.stream else {
            return false
        }
        tally.protocolErrors += 1
        countUnowned(frames: block.frames, bytes: block.wire)
        blocks.block = nil
        blocks.known = false
        guard header.knownType == .continuation else { return false }
        // The stray CONTINUATION belongs to nothing either (one error, counted above).
        countUnowned(frames: 1, bytes: header.wireSize)
        return true
    }

    /// The HEADERS or PUSH_PROMISE frame just read, begun at `start`: the start of a header
    /// block (padding and priority removed). True when the block is complete (END_HEADERS).
    func startBlock(at start: StreamPosition) -> Bool {
        if cutByGap, header.knownType == .headers, header.streamID != 0 {
            // A gap took part of the frame: its padding and fields are unknown, never read from
            // the bytes that came after the gap; its size stays exact.
            blocks.block = HeaderBlock(
                stream: header.streamID, promisedStream: nil, endStream: header.has(FrameFlags.endStream),
                fragment: [], frames: 1, wire: header.wireSize, start: start, truncated: true)
            return header.has(FrameFlags.endHeaders)
        }
        let payload = kept
        var first = 0
        var padding = 0
        if header.has(FrameFlags.padded) {
            guard let pad = payload.first else {
                tally.protocolErrors += 1
                countUnowned(frames: 1, bytes: header.wireSize)
                return false
            }
            padding = Int(pad)
            first = 1
        }
        var promised: UInt32?
        if header.knownType == .headers, header.has(FrameFlags.priority) { first += 5 }
        if header.knownType == .pushPromise {
            guard payload.count >= first + 4 else {
                tally.protocolErrors += 1
                countUnowned(frames: 1, bytes: header.wireSize)
                return false
            }
            promised =
                (UInt32(payload[first]) << 24 | UInt32(payload[first + 1]) << 16 | UInt32(payload[first + 2]) << 8
                    | UInt32(payload[first + 3])) & 0x7fff_ffff
            first += 4
        }
        let end = header.length - padding
        guard header.streamID != 0, first <= end else {
            // Padding or fields longer than the frame: the block cannot be read, nor HPACK after it.
            tally.protocolErrors += 1
            blocks.known = false
            countUnowned(frames: 1, bytes: header.wireSize)
            return false
        }
        let keptEnd = min(end, payload.count)
        blocks.block = HeaderBlock(
            stream: header.streamID, promisedStream: promised, endStream: header.has(FrameFlags.endStream),
            fragment: first < keptEnd ? Array(payload[first..<keptEnd]) : [], frames: 1, wire: header.wireSize,
            start: start, truncated: keptEnd < end)
        return header.has(FrameFlags.endHeaders)
    }

    /// The CONTINUATION frame just read, joined to its block. True when the block is complete.
    func continueBlock() -> Bool {
        guard var block = blocks.block, block.stream == header.streamID else {
            tally.protocolErrors += 1
            countUnowned(frames: 1, bytes: header.wireSize)
            return false
        }
        block.fragment += kept
        block.frames += 1
        block.wire = saturatingSum(block.wire, header.wireSize)
        block.truncated = block.truncated || cutByGap || kept.count < header.length
        blocks.block = block
        return header.has(FrameFlags.endHeaders)
    }

    /// The complete block, no longer assembled, and its fields: nil when HPACK state is
    /// unknown, the block was cut, or it could not be decoded.
    func takeBlock() -> (block: HeaderBlock, fields: HPACKHeaders?)? {
        guard let block = blocks.block else { return nil }
        blocks.block = nil
        var fields: HPACKHeaders?
        if blocks.known && !block.truncated {
            do {
                fields = try blocks.decode(block.fragment)
            } catch {
                tally.hpackErrors += 1
                blocks.known = false
            }
        } else if block.truncated {
            blocks.known = false
        }
        return (block, fields)
    }
}

// MARK: - Fields onto messages

/// Decoded fields onto the message: pseudo-fields make its method, URL and status, the rest
/// are its fields as the app sees them; nil fields are unknown (`hpack-state-unknown`).
func apply(_ fields: HPACKHeaders?, to message: inout CapturedMessage) {
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

/// The decoded header list size (RFC 9113 §6.5.2's count: 32 per field) grows by `fields`.
func addListSize(_ message: inout CapturedMessage, _ fields: HPACKHeaders) {
    guard let size = message.message.protocolFacts.headerListSize else { return }
    message.message.protocolFacts.headerListSize = fields.reduce(size) {
        saturatingSum($0, $1.name.utf8.count + $1.value.utf8.count + 32)
    }
}
