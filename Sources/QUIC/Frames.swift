/// One QUIC frame (RFC 9000 §19, RFC 9221 DATAGRAM), its data borrowed from the packet's plaintext.
public enum QUICFrame {
    /// A run of PADDING bytes.
    case padding
    case ping
    /// ACK (0x02) or ACK with ECN counts (0x03).
    case ack(largest: UInt64, ecn: Bool)
    case resetStream(id: UInt64, finalSize: UInt64)
    case stopSending(id: UInt64)
    case crypto(offset: UInt64, data: UnsafeRawBufferPointer)
    case newToken
    /// STREAM (0x08...0x0f): offset 0 unless the OFF bit, to the packet's end unless the LEN bit.
    case stream(id: UInt64, offset: UInt64, data: UnsafeRawBufferPointer, fin: Bool)
    /// MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, DATA_BLOCKED, STREAM_DATA_BLOCKED, STREAMS_BLOCKED.
    case flowControl(type: UInt64)
    case newConnectionID(sequence: UInt64, id: QUICConnectionID)
    case retireConnectionID(sequence: UInt64)
    case pathChallenge, pathResponse
    /// CONNECTION_CLOSE: 0x1c (transport) or 0x1d (application).
    case connectionClose(error: UInt64, application: Bool)
    case handshakeDone
    /// DATAGRAM (0x30, 0x31).
    case datagram(length: Int)
}

/// Why a packet's frames stop before its end.
public enum QUICFrameError: Equatable, Sendable {
    /// A frame type this reader does not know: its length is unknown, the rest of the packet is skipped.
    case unknownType(UInt64)
    /// A frame that runs past the packet or holds an impossible value.
    case malformed
}

/// Reads a packet's plaintext frame by frame.
public enum QUICFrameReader {
    /// Calls `body` with each frame and its length in bytes (a run of PADDING is one call);
    /// returns why it stopped early, or nil when every byte was read.
    @discardableResult
    public static func read(_ payload: UnsafeRawBufferPointer, _ body: (QUICFrame, Int) -> Void) -> QUICFrameError? {
        var r = QUICReader(payload)
        while r.remaining > 0 {
            let start = r.at
            guard let type = r.varint() else { return .malformed }
            let frame: QUICFrame
            switch type {
            case 0x00:
                while r.remaining > 0, r.bytes[r.at] == 0 { r.at &+= 1 }
                frame = .padding
            case 0x01:
                frame = .ping
            case 0x02, 0x03:
                guard let largest = r.varint(), r.varint() != nil, let count = r.varint(), r.varint() != nil else {
                    return .malformed
                }
                // Each range is two varints of at least one byte: a count past the bytes left is malformed.
                guard count <= UInt64(r.remaining / 2) else { return .malformed }
                for _ in 0..<count {
                    guard r.varint() != nil, r.varint() != nil else { return .malformed }
                }
                if type == 0x03 {
                    guard r.varint() != nil, r.varint() != nil, r.varint() != nil else { return .malformed }
                }
                frame = .ack(largest: largest, ecn: type == 0x03)
            case 0x04:
                guard let id = r.varint(), r.varint() != nil, let finalSize = r.varint() else { return .malformed }
                frame = .resetStream(id: id, finalSize: finalSize)
            case 0x05:
                guard let id = r.varint(), r.varint() != nil else { return .malformed }
                frame = .stopSending(id: id)
            case 0x06:
                guard let offset = r.varint(), let length = r.length(), let data = r.take(length) else { return .malformed }
                frame = .crypto(offset: offset, data: data)
            case 0x07:
                guard let length = r.length(), length > 0, r.skip(length) else { return .malformed }
                frame = .newToken
            case 0x08...0x0F:
                guard let id = r.varint() else { return .malformed }
                var offset: UInt64 = 0
                if type & 0x04 != 0 {
                    guard let value = r.varint() else { return .malformed }
                    offset = value
                }
                let length: Int
                if type & 0x02 != 0 {
                    guard let value = r.length() else { return .malformed }
                    length = value
                } else {
                    length = r.remaining
                }
                guard let data = r.take(length), offset <= (1 << 62) &- UInt64(length) else { return .malformed }
                frame = .stream(id: id, offset: offset, data: data, fin: type & 0x01 != 0)
            case 0x10, 0x12, 0x13, 0x14, 0x16, 0x17:
                guard r.varint() != nil else { return .malformed }
                frame = .flowControl(type: type)
            case 0x11, 0x15:
                guard r.varint() != nil, r.varint() != nil else { return .malformed }
                frame = .flowControl(type: type)
            case 0x18:
                guard let sequence = r.varint(), r.varint() != nil, let length = r.u8(), (1...20).contains(length),
                    let bytes = r.take(Int(length)), let id = QUICConnectionID(bytes), r.skip(16)
                else { return .malformed }
                frame = .newConnectionID(sequence: sequence, id: id)
            case 0x19:
                guard let sequence = r.varint() else { return .malformed }
                frame = .retireConnectionID(sequence: sequence)
            case 0x1A, 0x1B:
                guard r.skip(8) else { return .malformed }
                frame = type == 0x1A ? .pathChallenge : .pathResponse
            case 0x1C, 0x1D:
                guard let error = r.varint() else { return .malformed }
                if type == 0x1C { guard r.varint() != nil else { return .malformed } }
                guard let length = r.length(), r.skip(length) else { return .malformed }
                frame = .connectionClose(error: error, application: type == 0x1D)
            case 0x1E:
                frame = .handshakeDone
            case 0x30:
                let length = r.remaining
                _ = r.skip(length)
                frame = .datagram(length: length)
            case 0x31:
                guard let length = r.length(), r.skip(length) else { return .malformed }
                frame = .datagram(length: length)
            default:
                return .unknownType(type)
            }
            body(frame, r.at &- start)
        }
        return nil
    }
}
