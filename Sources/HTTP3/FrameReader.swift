import CaptureIO
import Flows

/// A QUIC variable-length integer (RFC 9000 §16): its length from the first byte's two high bits.
enum VarInt {
    @inline(__always) static func length(firstByte: UInt8) -> Int { 1 << Int(firstByte >> 6) }

    /// Bytes `value` takes in its shortest encoding.
    @inline(__always) static func size(of value: UInt64) -> Int {
        value < 64 ? 1 : value < 16384 ? 2 : value < 1 << 30 ? 4 : 8
    }

    /// The integer at the start of `bytes` and its length; nil when `bytes` is shorter than it.
    static func read<C: Collection>(_ bytes: C) -> (value: UInt64, length: Int)? where C.Element == UInt8 {
        guard let first = bytes.first else { return nil }
        let length = Self.length(firstByte: first)
        guard bytes.count >= length else { return nil }
        var value = UInt64(first & 0x3f)
        for byte in bytes.dropFirst().prefix(length - 1) { value = value << 8 | UInt64(byte) }
        return (value, length)
    }
}

/// HTTP/3 frame types (RFC 9114 §7.2) this reader tells apart; every other type is unknown
/// (reserved and grease types among them) and ignored, as the RFC says, but counted.
public enum H3FrameType: UInt64, CaseIterable, Sendable {
    case data = 0x00
    case headers = 0x01
    case cancelPush = 0x03
    case settings = 0x04
    case pushPromise = 0x05
    case goaway = 0x07
    case maxPushID = 0x0d

    public var name: String {
        switch self {
        case .data: return "DATA"
        case .headers: return "HEADERS"
        case .cancelPush: return "CANCEL_PUSH"
        case .settings: return "SETTINGS"
        case .pushPromise: return "PUSH_PROMISE"
        case .goaway: return "GOAWAY"
        case .maxPushID: return "MAX_PUSH_ID"
        }
    }

    /// The tally's slot: the known types in order, then unknown.
    var slot: Int { H3FrameType.allCases.firstIndex(of: self)! }
    static var unknownSlot: Int { allCases.count }
}

/// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
public enum H3StreamType: Sendable, Equatable {
    case request
    case control
    case push
    case qpackEncoder
    case qpackDecoder
    /// A type this reader does not know (reserved, grease, extensions): read as opaque bytes.
    case unknown(UInt64)

    init(uniType: UInt64) {
        switch uniType {
        case 0x00: self = .control
        case 0x01: self = .push
        case 0x02: self = .qpackEncoder
        case 0x03: self = .qpackDecoder
        default: self = .unknown(uniType)
        }
    }
}

/// One direction of one QUIC stream, read as HTTP/3: the stream type of a unidirectional stream
/// (and a push stream's push id), then frames, or opaque bytes (QPACK streams, unknown types).
/// A class: the connection keeps one per (stream, side) and changes it in place.
// Its state changes for every STREAM frame, so it is not checked for overlapping access at run
// time (`@exclusivity(unchecked)`, as in the QUIC connection): a reader lives on the parsing
// thread alone, each change is a plain read-modify-write, and no code runs while one is open.
final class StreamReader {
    enum Phase {
        /// A unidirectional stream's type varint.
        case streamType
        /// A push stream's push id varint.
        case pushID
        /// A frame's type and length varints.
        case frameHeader
        /// A frame's payload.
        case payload
        /// Bytes with no frames: QPACK streams, unknown stream types.
        case opaque
        /// Frame boundaries are lost (a gap outside a DATA payload, a start the capture lacks):
        /// the rest of the stream is counted, not read.
        case lost
    }

    let id: UInt64
    let side: Direction
    @exclusivity(unchecked) var type: H3StreamType
    @exclusivity(unchecked) var phase: Phase
    /// The stream offset of the next byte expected.
    @exclusivity(unchecked) var offset: Int64 = 0
    /// Bytes of a varint (or a frame header's two) read so far.
    @exclusivity(unchecked) var header: [UInt8] = []
    /// The bytes the last varint `readVarInt` completed took.
    @exclusivity(unchecked) var lastVarIntLength = 0
    /// The push id of a push stream.
    @exclusivity(unchecked) var pushID: UInt64?
    /// The stream type and push id bytes (claimed as the stream's overhead).
    @exclusivity(unchecked) var preambleBytes = 0

    // The frame being read.
    @exclusivity(unchecked) var frameType: UInt64 = 0
    @exclusivity(unchecked) var frameLength: UInt64 = 0
    @exclusivity(unchecked) var frameHeaderSize = 0
    @exclusivity(unchecked) var frameStart = StreamPosition(time: 0, offset: 0, peerAcknowledged: nil)
    @exclusivity(unchecked) var payloadRead: UInt64 = 0
    /// The payload kept (field sections, control frames), up to the connection's bound.
    @exclusivity(unchecked) var payload: [UInt8] = []
    /// True when the kept payload is shorter than the frame (over the bound, or cut by a gap).
    @exclusivity(unchecked) var payloadTruncated = false
    /// The message the frame being read belongs to (DATA, HEADERS), found at its header.
    @exclusivity(unchecked) var frameMessage: H3Message?
    /// The side ended (FIN or reset).
    @exclusivity(unchecked) var ended = false

    init(id: UInt64, side: Direction) {
        self.id = id
        self.side = side
        let bidirectional = id & 0x2 == 0
        type = bidirectional ? .request : .unknown(UInt64.max)
        phase = bidirectional ? .frameHeader : .streamType
    }

    var knownFrameType: H3FrameType? { H3FrameType(rawValue: frameType) }
    var frameWireSize: Int { saturatingSum(frameHeaderSize, Int(clamping: frameLength)) }
    var payloadLeft: UInt64 { frameLength &- payloadRead }

    /// Reads a varint from `bytes` into `header`; returns the bytes used and the value when done.
    func readVarInt(_ bytes: UnsafeRawBufferPointer) -> (used: Int, value: UInt64?) {
        var used = 0
        while used < bytes.count {
            header.append(bytes[used])
            used += 1
            if header.count == VarInt.length(firstByte: header[0]) {
                let value = VarInt.read(header)!.value
                lastVarIntLength = header.count
                header.removeAll(keepingCapacity: true)
                return (used, value)
            }
        }
        return (used, nil)
    }

    /// Reads a frame header (two varints) from `bytes`; returns the bytes used and whether the
    /// header is complete (then `frameType`, `frameLength` and `frameHeaderSize` are set).
    func readFrameHeader(_ bytes: UnsafeRawBufferPointer) -> (used: Int, done: Bool) {
        var used = 0
        while used < bytes.count {
            header.append(bytes[used])
            used += 1
            let typeLength = VarInt.length(firstByte: header[0])
            guard header.count > typeLength else { continue }
            let lengthLength = VarInt.length(firstByte: header[typeLength])
            guard header.count == typeLength + lengthLength else { continue }
            frameType = VarInt.read(header)!.value
            frameLength = VarInt.read(header[typeLength...])!.value
            frameHeaderSize = header.count
            header.removeAll(keepingCapacity: true)
            payloadRead = 0
            payload.removeAll(keepingCapacity: true)
            payloadTruncated = false
            return (used, true)
        }
        return (used, false)
    }
}
