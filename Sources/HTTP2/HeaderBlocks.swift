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
    /// Longer than `HTTPLimits.maxHeaderBlockBytes`: not decoded.
    var truncated: Bool
}

/// One side's header blocks: the one being assembled and the HPACK state that decodes them.
///
/// When the capture lacks part of that state (it began mid-connection, a gap took a block, a
/// block could not be decoded), the next block is decoded by a fresh decoder whose dynamic
/// table is primed with placeholder entries standing for every entry the capture never saw
/// (docs/METERING.md §2a, "Partial decoding"): a field that resolves to a placeholder, by its
/// name or whole, is unknown; every other field is the one sent.
struct HeaderBlocks {
    /// The header block being assembled from HEADERS/PUSH_PROMISE and CONTINUATION frames.
    var block: HeaderBlock?
    /// Decodes the blocks this side sends.
    var decoder: HPACKDecoder
    /// The block being decoded (one buffer per side, its storage reused from block to block).
    var input: ByteBuffer
    /// False once a block of this side could not be decoded (or was never seen): the table
    /// holds entries the capture did not see, and the next block primes a fresh decoder.
    var known: Bool
    /// True once the decoder was primed with placeholders: a decoded field whose name is a
    /// placeholder's refers to state the capture never saw.
    var primed = false
    /// A smaller HEADER_TABLE_SIZE the peer announced, binding once this side acknowledges.
    var pendingTableSize: Int?
    /// The largest HEADER_TABLE_SIZE the peer announced in the capture (4,096 until then, the
    /// protocol's initial value): the table size a primed decoder assumes, bounded.
    var announcedTableSize = HPACKDecoder.maxDynamicTableSize
    private let allocator: ByteBufferAllocator
    private let maxHeaderListSize: Int
    private let maxPrimedTableSize: Int

    init(allocator: ByteBufferAllocator, limits: HTTPLimits, known: Bool) {
        self.allocator = allocator
        maxHeaderListSize = limits.maxHeaderListSize
        maxPrimedTableSize = limits.maxPrimedTableSize
        decoder = HPACKDecoder(
            allocator: allocator, maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
            maxHeaderListSize: limits.maxHeaderListSize)
        input = allocator.buffer(capacity: 0)
        self.known = known
    }

    mutating func decode(_ fragment: [UInt8]) throws -> HPACKHeaders {
        input.clear()
        input.writeBytes(fragment)
        return try decoder.decodeHeaders(from: &input)
    }

    // MARK: Placeholders

    /// A placeholder entry's name: one NUL byte. RFC 9113 §8.2.1 forbids NUL in a field name,
    /// so no name a conforming peer sends is (or begins with) it; its entry size is 33 bytes
    /// (1 + 0 + 32), the least any entry with a non-empty name takes, so the placeholders a
    /// table of the assumed size holds are at least as many as the unseen entries it can hold.
    static let placeholderNameByte: UInt8 = 0

    /// A block of `count` placeholders: each "literal with incremental indexing, new name"
    /// (RFC 7541 §6.2.1): 0x40, the name (length 1, NUL), an empty value.
    static func primingBlock(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 4)
        for _ in 0..<count { bytes += [0x40, 0x01, placeholderNameByte, 0x00] }
        return bytes
    }

    /// A fresh decoder whose table is full of placeholders older than anything the capture
    /// shows: the sender's table may hold entries the capture never saw, at most as many as fit
    /// the table size it uses. That size is the peer's last HEADER_TABLE_SIZE at most, assumed
    /// to be the largest announced in the capture (4,096 when none was), up to
    /// `HTTPLimits.maxPrimedTableSize`. Dynamic table size updates in later blocks are
    /// accepted up to SETTINGS' own bound, as the sender may have been allowed more.
    mutating func prime() {
        let size = min(max(announcedTableSize, HPACKDecoder.maxDynamicTableSize), maxPrimedTableSize)
        decoder = HPACKDecoder(allocator: allocator, maxDynamicTableSize: size, maxHeaderListSize: Int.max)
        let count = size / 33
        input.clear()
        input.writeBytes(Self.primingBlock(count: count))
        _ = try? decoder.decodeHeaders(from: &input)
        decoder.maxHeaderListSize = maxHeaderListSize
        decoder.maxDynamicTableLength = Self.maxAnnouncedTableSize
        pendingTableSize = nil
        known = true
        primed = true
    }

    /// The largest SETTINGS_HEADER_TABLE_SIZE taken from a peer.
    static var maxAnnouncedTableSize: Int { 1 << 24 }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: blocks this side sends are decoded against it;
    /// until this side acknowledges, its encoder may still use the larger of old and new.
    mutating func tableSizeAnnounced(_ size: Int) {
        announcedTableSize = max(announcedTableSize, size)
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

    /// The complete block, no longer assembled, and its fields: nil when the block was cut or
    /// could not be decoded. After HPACK state was lost, the block is decoded by a decoder
    /// primed with placeholders (`HeaderBlocks.prime`): `primed` then says that fields named
    /// as a placeholder are unknown.
    func takeBlock() -> (block: HeaderBlock, fields: HPACKHeaders?, primed: Bool)? {
        guard let block = blocks.block else { return nil }
        blocks.block = nil
        var fields: HPACKHeaders?
        if block.truncated {
            blocks.known = false
        } else {
            if !blocks.known { blocks.prime() }
            do {
                fields = try blocks.decode(block.fragment)
            } catch {
                tally.hpackErrors += 1
                blocks.known = false
            }
        }
        return (block, fields, blocks.primed)
    }
}

// MARK: - Fields onto messages

/// What a decoded block's fields add up to, counted before any is copied.
struct BlockMeasure {
    /// Σ len(name) + len(value) + 32 over the known fields.
    var listSize = 0
    /// Fields that resolved to a placeholder (their names, or all of them, unseen).
    var unknown = 0

    init(_ fields: HPACKHeaders, primed: Bool) {
        for (name, value, _) in fields {
            if primed, name.utf8.first == HeaderBlocks.placeholderNameByte {
                unknown += 1
            } else {
                listSize = saturatingSum(listSize, name.utf8.count + value.utf8.count + 32)
            }
        }
    }
}

/// Decoded fields onto the message's head: pseudo-fields make its method, URL and status,
/// the rest are its fields as the app sees them. Nil fields are all unknown
/// (`hpack-state-unknown`); a field that resolved to a placeholder is unknown and left out, the
/// head's unknown parts named (`unknownHeadParts`). When the block's decoded size is over
/// `room` (the bound per block and what the connection may still keep), no value is copied:
/// the head keeps its status and a short method, its sizes are counted, and it is marked
/// `header-values-dropped`. Returns the decoded bytes the message now keeps.
func apply(_ fields: HPACKHeaders?, primed: Bool, to message: inout CapturedMessage, room: Int) -> Int {
    let kind = message.kind
    guard let fields else {
        message.anomalies.insert(.hpackStateUnknown)
        message.message.protocolFacts.headerListSize = nil
        message.message.protocolFacts.headFieldsKnown = false
        message.message.protocolFacts.unknownHeadParts = HeadParts.all(kind)
        return 0
    }
    let measure = BlockMeasure(fields, primed: primed)
    let keep = measure.listSize <= room
    var scheme: String?
    var authority: String?
    var path: String?
    var seen: HeadParts = []
    if keep {
        // `message.message.fields`, not the wrapper's `message.fields`: appending through the
        // dynamic member would copy the array per field.
        message.message.fields.reserveCapacity(message.message.fields.count + fields.count - measure.unknown)
    }
    for (name, value, _) in fields {
        let first = name.utf8.first
        if primed, first == HeaderBlocks.placeholderNameByte { continue }
        guard first == UInt8(ascii: ":") else {
            if keep { message.message.fields.append(HeaderField(name, value)) }
            continue
        }
        switch name {
        case ":method":
            seen.insert(.method)
            if keep || value.utf8.count <= 32 { message.method = value }
        case ":scheme":
            seen.insert(.scheme)
            scheme = value
        case ":authority":
            seen.insert(.authority)
            authority = value
        case ":path":
            seen.insert(.path)
            path = value
        case ":status":
            seen.insert(.status)
            message.status = Int(value)
        default: break
        }
    }
    if measure.unknown > 0 {
        message.anomalies.insert(.hpackStateUnknown)
        message.message.protocolFacts.headerListSize = nil
        message.message.protocolFacts.headFieldsKnown = false
        message.message.protocolFacts.unknownHeadParts = HeadParts.all(kind).subtracting(seen).union(.fields)
    } else {
        addListSize(&message, measure.listSize)
    }
    guard keep else {
        message.anomalies.insert(.headerValuesDropped)
        message.message.protocolFacts.headFieldsKnown = false
        message.message.protocolFacts.unknownHeadParts.formUnion(
            kind == .request ? [.scheme, .authority, .path, .fields] : [.fields])
        return 0
    }
    if kind == .request {
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
    return measure.listSize
}

/// Decoded fields of a second block on an open message: its trailers, unknown when the
/// block's are (the head stays as it was) or dropped past `room`. Returns the bytes kept.
func applyTrailers(_ fields: HPACKHeaders?, primed: Bool, to message: inout CapturedMessage, room: Int) -> Int {
    guard let fields else {
        message.anomalies.insert(.hpackStateUnknown)
        message.message.protocolFacts.headerListSize = nil
        return 0
    }
    let measure = BlockMeasure(fields, primed: primed)
    if measure.unknown > 0 {
        message.anomalies.insert(.hpackStateUnknown)
        message.message.protocolFacts.headerListSize = nil
    } else {
        addListSize(&message, measure.listSize)
    }
    guard measure.listSize <= room else {
        message.anomalies.insert(.headerValuesDropped)
        return 0
    }
    for (name, value, _) in fields {
        let first = name.utf8.first
        if first == UInt8(ascii: ":") || (primed && first == HeaderBlocks.placeholderNameByte) { continue }
        message.message.trailers.append(HeaderField(name, value))
    }
    return measure.listSize
}

/// The decoded header list size (RFC 9113 §6.5.2's count: 32 per field) grows by `size`.
func addListSize(_ message: inout CapturedMessage, _ size: Int) {
    guard let total = message.message.protocolFacts.headerListSize else { return }
    message.message.protocolFacts.headerListSize = saturatingSum(total, size)
}
