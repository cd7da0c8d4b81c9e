import Foundation
import Flows
import TLS

/// What a QUIC connection's reader counted, per direction (`up` from the client).
public struct QUICDirectionFigures: Sendable, Equatable {
    /// Packets by type (`QUICPacketType.rawValue`), coalesced ones each counted.
    public var packets = [Int](repeating: 0, count: QUICPacketType.allCases.count)
    /// Packets whose payload was decrypted and read.
    public var decrypted = 0
    /// Packets of an epoch whose keys were not known (no key log entry, or no handshake seen).
    public var withoutKey = 0
    /// Packets whose AEAD tag did not verify with the known keys: a wrong key, never guessed past.
    public var badTag = 0
    /// Bytes of a datagram that could not be read as a QUIC packet (after a broken one).
    public var unreadableBytes = 0
    /// STREAM frame data bytes, repeated ones included, and the repeated part.
    public var streamBytes = 0
    public var repeatedStreamBytes = 0
    public var streamFrames = 0
    public var cryptoBytes = 0
    public var ackFrames = 0
    public var paddingBytes = 0
    public var otherFrames = 0
    public var unknownFrames = 0
    public var malformedPackets = 0
    public var keyUpdates = 0
    /// Bytes of stream data never captured (holes given up).
    public var gapBytes = 0
    /// The STREAM frames' own bytes (type, stream id, offset, length), apart from their data.
    public var streamFrameHeaderBytes = 0
    /// Every QUIC packet's bytes (header, packet number, payload, AEAD tag) by what it carried
    /// (`QUICPacketClass`); with `datagramPadding` and `unreadableBytes` they are every UDP
    /// payload byte of the direction.
    public var packetBytes = [Int](repeating: 0, count: QUICPacketClass.allCases.count)
    /// Zeros after the last packet of a datagram (padding outside any packet).
    public var datagramPadding = 0

    public init() {}
}

/// What a QUIC packet carried, for the cost layers (docs/METERING.md §2d): the packets that
/// carry no stream byte are connection overhead by kind; the others are claimed, header and
/// tag with their first STREAM frame, by the stream bytes they carry.
public enum QUICPacketClass: Int, Sendable, CaseIterable {
    /// Initial and Handshake packets (the handshake, its ACKs and padding).
    case handshake
    /// 0-RTT and 1-RTT packets with at least one STREAM frame.
    case stream
    /// Packets of ACK and PADDING frames only.
    case ackOnly
    /// Other packets without stream data (flow control, PING, NEW_CONNECTION_ID, HANDSHAKE_DONE, ...).
    case control
    /// Packets not decrypted (no key, a tag that did not verify), Retry and Version Negotiation.
    case unread

    public var name: String {
        switch self {
        case .handshake: return "handshake"
        case .stream: return "stream"
        case .ackOnly: return "ack_only"
        case .control: return "control"
        case .unread: return "unread"
        }
    }
}

/// Why a QUIC connection's 1-RTT packets were not read.
public enum QUICNotDecrypted: String, Sendable {
    case noKey = "no-key"
    case badKey = "bad-key"
    case handshakeNotCaptured = "handshake-not-captured"
}

/// One QUIC connection (RFC 9000, 9001; RFC 9369 for v2) over one or more UDP flows: its
/// packets read one datagram at a time (coalesced packets each), Initial packets decrypted with
/// the keys of the client's first Destination Connection ID, Handshake, 0-RTT and 1-RTT packets
/// with the key log's secrets for the ClientHello's random (key updates followed by the key
/// phase bit), CRYPTO data ordered per epoch for the hellos, and each stream's data ordered per
/// direction and fed to a `MultiplexedStreamHandler`. Directions are the connection's: `up`
/// from the client.
///
/// The state every packet touches is not checked for overlapping access at run time
/// (`@exclusivity(unchecked)`): a connection lives on the parsing thread alone, and what runs
/// inside a long access (the datagram's `scratch`, a stream's `ordered` while it delivers) is the
/// application's handler, which never calls back into the connection. `QUICConnectionTests`
/// run every path in debug builds.
public final class QUICConnection {
    public typealias SecretsLookup = (_ clientRandom: [UInt8]) -> ConnectionSecrets?

    @exclusivity(unchecked) public private(set) var version: QUICVersion?
    public private(set) var clientHello: ClientHelloInfo?
    public private(set) var serverHello: ServerHelloInfo?
    public private(set) var cipher: QUICCipher?
    @exclusivity(unchecked) public private(set) var figures = [QUICDirectionFigures(), QUICDirectionFigures()]
    /// Connection IDs each side chose (the peer sends to them): index 0 the client's, 1 the server's.
    @exclusivity(unchecked) public private(set) var connectionIDs: [Set<QUICConnectionID>] = [[], []]
    @exclusivity(unchecked) public private(set) var closeError: UInt64?

    private let secrets: SecretsLookup
    private let maxHeldBytes: Int
    @exclusivity(unchecked) private var handler: MultiplexedStreamHandler?
    /// Called with each connection ID learned (for the endpoint's look-up across flows).
    @exclusivity(unchecked) public var learnedConnectionID: ((QUICConnectionID) -> Void)?
    /// Cost hooks (docs/METERING.md §2d), called in capture order: each packet's class and bytes
    /// (header, payload, tag), and whether it is its datagram's first (the one the datagram's
    /// UDP, IP and link bytes go with); then, for a packet of class `stream`, each STREAM frame
    /// read from it (stream, direction, offset, data bytes, the frame's bytes, how many of its
    /// data bytes repeat bytes seen before) comes before it, once its data went to the stream.
    /// The run's `QUICCostLayer` settles the cost layers from them.
    @exclusivity(unchecked) public var packetRead: ((_ direction: Direction, _ carried: QUICPacketClass, _ bytes: Int, _ firstInDatagram: Bool) -> Void)?
    @exclusivity(unchecked) public var streamFrameRead: ((_ stream: UInt64, _ direction: Direction, _ offset: UInt64, _ dataBytes: Int, _ frameBytes: Int, _ repeatedBytes: Int) -> Void)?
    /// Called once the handshake tells the application protocol (ALPN), to choose the handler.
    public var chooseHandler: ((_ alpn: String?) -> MultiplexedStreamHandler?)?

    @exclusivity(unchecked) private var initialKeys: [QUICPacketKeys]?
    @exclusivity(unchecked) private var handshakeKeys: [QUICPacketKeys?] = [nil, nil]
    @exclusivity(unchecked) private var zeroRTTKeys: QUICPacketKeys?
    /// 1-RTT keys per direction: the current generation, its key phase bit, and the previous one.
    @exclusivity(unchecked)
    private var oneRTT: [(current: QUICPacketKeys, phase: Bool, previous: QUICPacketKeys?)?] = [nil, nil]
    @exclusivity(unchecked) private var largest: [[UInt64?]] = [[nil, nil], [nil, nil], [nil, nil]]
    private var crypto: [[OrderedStream]] = Array(repeating: [OrderedStream(), OrderedStream()], count: 4)
    private var handshakeBuffers: [[UInt8]] = Array(repeating: [], count: 8)
    @exclusivity(unchecked) private var streams: [StreamKey: StreamState] = [:]
    @exclusivity(unchecked) private var heldBytes = 0
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    /// A packet's plaintext, written by its AEAD (`QUICPacketKeys.open`) and read by `frames`
    /// before the next packet's: nothing a frame leads to opens a packet.
    @exclusivity(unchecked) private var plaintextBuffer: [UInt8] = []
    private var sawKeyLog = false
    /// A connection found mid-way (`beginMidway`): the entry and variant its keys came from, the
    /// destination ID length of each direction's short headers once known, the trial budget left
    /// to find the other direction, and how many of its datagrams may still be tried.
    @exclusivity(unchecked) public private(set) var startedMidway = false
    private var midwayKeys: QUICTrialKeys?
    private var midwayVariant = 0
    private var midwayBounds = QUICTrialBounds(packetNumberWindows: 1, keyGenerations: 1)
    @exclusivity(unchecked) private var shortDestinationLength: [Int?] = [nil, nil]
    private var peerTrials = 0
    @exclusivity(unchecked) private var peerDatagrams = 0

    private struct StreamKey: Hashable {
        var id: UInt64
        var direction: Direction

        /// One word hashed (stream ids are 62-bit).
        func hash(into hasher: inout Hasher) { hasher.combine(id << 1 | UInt64(direction.rawValue & 1)) }
    }

    /// One direction of a stream, held by reference: a STREAM frame looks it up once and
    /// changes it in place.
    private final class StreamState {
        @exclusivity(unchecked) var ordered = OrderedStream()
    }

    /// The stream's state, made on first use.
    private func streamState(_ key: StreamKey) -> StreamState {
        if let known = streams[key] { return known }
        let made = StreamState()
        streams[key] = made
        return made
    }

    public init(secrets: @escaping SecretsLookup, maxHeldBytes: Int = 4 << 20) {
        self.secrets = secrets
        self.maxHeldBytes = maxHeldBytes
        scratch.reserveCapacity(2048)
    }

    /// The ALPN the server chose, from EncryptedExtensions (a Handshake-epoch message): nil
    /// without the handshake keys.
    public private(set) var selectedALPN: String?

    /// Why 1-RTT packets were not read; nil when some were (or none was sent with keys known).
    public var notDecrypted: QUICNotDecrypted? {
        if decryptedOneRTT > 0 { return nil }
        if startedMidway { return .badKey }
        if oneRTT[0] != nil || oneRTT[1] != nil { return figures[0].badTag + figures[1].badTag > 0 ? .badKey : nil }
        return clientHello == nil ? .handshakeNotCaptured : .noKey
    }

    @exclusivity(unchecked) private var decryptedOneRTT = 0

    /// One UDP datagram's payload from `direction`; returns its zeros after the last packet
    /// (padding). The count comes back from here because the QUIC cost layer needs it for every
    /// datagram: read from another module, `figures` is checked for overlapping access at run
    /// time (`@exclusivity(unchecked)` binds this module's accesses only), twice per datagram.
    @discardableResult
    public func datagram(_ payload: UnsafeRawBufferPointer, from direction: Direction, time: Int64) -> Int {
        let paddingBefore = figures[direction.rawValue].datagramPadding
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: payload)
        scratch.withUnsafeMutableBytes { buffer in
            var offset = 0
            if startedMidway, shortDestinationLength[direction.rawValue] == nil, peerDatagrams > 0 {
                findPeer(UnsafeRawBufferPointer(buffer), from: direction)
            }
            while offset < buffer.count {
                let shortLength =
                    shortDestinationLength[direction.rawValue] ?? connectionIDs[direction.peer.rawValue].first?.length ?? 0
                guard let header = QUICPacketHeader.read(UnsafeRawBufferPointer(buffer), at: offset, shortDestinationLength: shortLength),
                    header.end <= buffer.count
                else {
                    // Padding after coalesced packets is zeros; anything else could not be read.
                    if buffer[offset...].contains(where: { $0 != 0 }) {
                        figures[direction.rawValue].unreadableBytes &+= buffer.count &- offset
                    } else {
                        figures[direction.rawValue].datagramPadding &+= buffer.count &- offset
                    }
                    return
                }
                figures[direction.rawValue].packets[header.type.rawValue] &+= 1
                if let source = header.source, header.type != .versionNegotiation, header.type != .retry {
                    learn(source, of: direction)
                }
                if version == nil, let raw = header.version, let known = QUICVersion(rawValue: raw) { version = known }
                if header.type == .initial, direction == .up, initialKeys == nil, let known = version {
                    let keys = QUICPacketKeys.initial(connectionID: header.destination.bytes, version: known)
                    initialKeys = [keys.client, keys.server]
                    learnedConnectionID?(header.destination)
                }
                let packetClass: QUICPacketClass
                if header.type.epoch != nil {
                    packetClass = packet(buffer, at: offset, header, from: direction, time: time)
                } else {
                    packetClass = .unread
                }
                figures[direction.rawValue].packetBytes[packetClass.rawValue] &+= header.end &- offset
                packetRead?(direction, packetClass, header.end &- offset, offset == 0)
                offset = header.end
            }
        }
        return figures[direction.rawValue].datagramPadding &- paddingBefore
    }

    private func learn(_ id: QUICConnectionID, of direction: Direction) {
        guard id.length > 0, connectionIDs[direction.rawValue].insert(id).inserted else { return }
        learnedConnectionID?(id)
    }

    /// Reads one packet; returns what it carried.
    private func packet(
        _ buffer: UnsafeMutableRawBufferPointer, at start: Int, _ header: QUICPacketHeader, from direction: Direction,
        time: Int64
    ) -> QUICPacketClass {
        guard let epoch = header.type.epoch else { return .unread }
        let side = direction.rawValue
        let keys: QUICPacketKeys?
        switch epoch {
        case .initial: keys = initialKeys?[side]
        case .handshake: keys = handshakeKeys[side]
        case .zeroRTT: keys = direction == .up ? zeroRTTKeys : nil
        case .oneRTT: keys = oneRTT[side]?.current
        }
        guard let keys else {
            figures[side].withoutKey &+= 1
            return .unread
        }
        guard let (length, truncated, first) = QUICHeaderProtection.remove(buffer, at: start, header: header, keys: keys)
        else {
            figures[side].malformedPackets &+= 1
            return .unread
        }
        let space = epoch.space
        let number = QUICHeaderProtection.decode(truncated: truncated, length: length, largest: largest[space][side])
        let headerEnd = header.packetNumberOffset &+ length
        let aad = UnsafeRawBufferPointer(rebasing: buffer[start..<headerEnd])
        let sealed = UnsafeRawBufferPointer(rebasing: buffer[headerEnd..<header.end])
        var plaintextLength: Int?
        if epoch == .oneRTT, var state = oneRTT[side] {
            let phase = first & 0x04 != 0
            if phase == state.phase {
                plaintextLength = state.current.open(header: aad, packetNumber: number, sealed: sealed, into: &plaintextBuffer)
                if plaintextLength == nil, let previous = state.previous {
                    plaintextLength = previous.open(header: aad, packetNumber: number, sealed: sealed, into: &plaintextBuffer)
                }
            } else {
                // A flipped key phase: the next generation (RFC 9001 §6), or a late packet of the previous.
                let next = state.current.updated()
                if let opened = next.open(header: aad, packetNumber: number, sealed: sealed, into: &plaintextBuffer) {
                    plaintextLength = opened
                    state = (next, phase, state.current)
                    oneRTT[side] = state
                    figures[side].keyUpdates &+= 1
                } else if let previous = state.previous {
                    plaintextLength = previous.open(header: aad, packetNumber: number, sealed: sealed, into: &plaintextBuffer)
                }
            }
        } else {
            plaintextLength = keys.open(header: aad, packetNumber: number, sealed: sealed, into: &plaintextBuffer)
        }
        guard let plaintextLength else {
            figures[side].badTag &+= 1
            return .unread
        }
        if largest[space][side].map({ number > $0 }) ?? true { largest[space][side] = number }
        figures[side].decrypted &+= 1
        if epoch == .oneRTT { decryptedOneRTT &+= 1 }
        let carried = plaintextBuffer.withUnsafeBytes {
            frames(UnsafeRawBufferPointer(rebasing: $0[0..<plaintextLength]), epoch: epoch, from: direction, time: time)
        }
        if epoch == .initial || epoch == .handshake { return .handshake }
        return carried
    }

    /// Reads a packet's frames; returns the packet's class by what they were (application epochs).
    private func frames(_ payload: UnsafeRawBufferPointer, epoch: QUICEpoch, from direction: Direction, time: Int64)
        -> QUICPacketClass
    {
        let side = direction.rawValue
        var sawStream = false
        var sawControl = false
        let stopped = QUICFrameReader.read(payload) { frame, length in
            switch frame {
            case .padding, .ack: break
            default: sawControl = true
            }
            switch frame {
            case .padding: figures[side].paddingBytes &+= length
            case .ack: figures[side].ackFrames &+= 1
            case .crypto(let offset, let data):
                figures[side].cryptoBytes &+= data.count
                cryptoData(data, at: offset, epoch: epoch, from: direction)
            case .stream(let id, let offset, let data, let fin):
                sawStream = true
                figures[side].streamFrames &+= 1
                figures[side].streamBytes &+= data.count
                figures[side].streamFrameHeaderBytes &+= length &- data.count
                let repeatedBefore = figures[side].repeatedStreamBytes
                streamData(id, data, at: offset, fin: fin, from: direction, time: time)
                streamFrameRead?(
                    id, direction, UInt64(offset), data.count, length,
                    figures[side].repeatedStreamBytes &- repeatedBefore)
            case .resetStream(let id, let finalSize):
                figures[side].otherFrames &+= 1
                let state = streamState(StreamKey(id: id, direction: direction))
                if !state.ordered.ended {
                    state.ordered.ended = true
                    state.ordered.finalSize = finalSize
                    handler?.end(stream: id, of: direction, reason: .reset, time: time)
                }
            case .newConnectionID(_, let id):
                figures[side].otherFrames &+= 1
                learn(id, of: direction)
            case .connectionClose(let error, _):
                figures[side].otherFrames &+= 1
                closeError = error
            default:
                figures[side].otherFrames &+= 1
            }
        }
        switch stopped {
        case .unknownType?: figures[side].unknownFrames &+= 1
        case .malformed?: figures[side].malformedPackets &+= 1
        case nil: break
        }
        return sawStream ? .stream : sawControl ? .control : .ackOnly
    }

    private func streamData(
        _ id: UInt64, _ data: UnsafeRawBufferPointer, at offset: UInt64, fin: Bool, from direction: Direction, time: Int64
    ) {
        let key = StreamKey(id: id, direction: direction)
        let state: StreamState
        if let known = streams[key] {
            state = known
        } else {
            state = StreamState()
            if startedMidway, offset > 0 {
                // A stream first seen mid-way: its bytes before this frame were sent before the
                // capture began (never captured: a gap), as far as the capture can tell.
                state.ordered = OrderedStream(startingAt: offset)
                figures[direction.rawValue].gapBytes &+= Int(clamping: offset)
                handler?.gap(
                    Int(clamping: offset), stream: id, from: direction,
                    at: StreamPosition(time: time, offset: 0, peerAcknowledged: nil))
            }
            streams[key] = state
        }
        guard !state.ordered.ended else {
            figures[direction.rawValue].repeatedStreamBytes &+= data.count
            return
        }
        let repeatedBefore = state.ordered.repeatedBytes
        if fin { state.ordered.finalSize = offset &+ UInt64(data.count) }
        let handler = self.handler
        heldBytes &+= state.ordered.add(data, at: offset) { bytes, at in
            handler?.receive(
                bytes, stream: id, from: direction,
                at: StreamPosition(time: time, offset: Int64(clamping: at), peerAcknowledged: nil))
        }
        // Over the bound, this stream's holes are given up first, then other streams'.
        while heldBytes > maxHeldBytes, state.ordered.hasHeld {
            heldBytes &+= giveUpHole(of: &state.ordered, key, time: time)
        }
        while heldBytes > maxHeldBytes, let other = streams.first(where: { $0.value.ordered.hasHeld }) {
            heldBytes &+= giveUpHole(of: &other.value.ordered, other.key, time: time)
        }
        figures[direction.rawValue].repeatedStreamBytes &+= state.ordered.repeatedBytes &- repeatedBefore
        if let final = state.ordered.finalSize, state.ordered.delivered >= final {
            state.ordered.ended = true
            handler?.end(stream: id, of: direction, reason: .fin, time: time)
        }
    }

    /// Gives up a stream's first hole: a gap to the handler, then what followed it. Returns the
    /// change in held bytes.
    private func giveUpHole(of stream: inout OrderedStream, _ key: StreamKey, time: Int64) -> Int {
        let handler = self.handler
        let change = stream.skipHole(
            gap: { length, at in
                figures[key.direction.rawValue].gapBytes &+= length
                handler?.gap(
                    length, stream: key.id, from: key.direction,
                    at: StreamPosition(time: time, offset: Int64(clamping: at), peerAcknowledged: nil))
            },
            deliver: { bytes, at in
                handler?.receive(
                    bytes, stream: key.id, from: key.direction,
                    at: StreamPosition(time: time, offset: Int64(clamping: at), peerAcknowledged: nil))
            })
        // The hole may have been all that stood before the FIN.
        if !stream.ended, let final = stream.finalSize, stream.delivered >= final {
            stream.ended = true
            handler?.end(stream: key.id, of: key.direction, reason: .fin, time: time)
        }
        return change
    }

    private func cryptoData(_ data: UnsafeRawBufferPointer, at offset: UInt64, epoch: QUICEpoch, from direction: Direction) {
        let index = epoch.rawValue * 2 + direction.rawValue
        var ordered = crypto[epoch.rawValue][direction.rawValue]
        var delivered: [UInt8] = []
        // CRYPTO data past 64 KiB of a hole is not held: a handshake is smaller than that.
        guard offset <= ordered.delivered &+ 65_536 else { return }
        _ = ordered.add(data, at: offset) { bytes, _ in delivered += bytes }
        crypto[epoch.rawValue][direction.rawValue] = ordered
        guard !delivered.isEmpty, handshakeBuffers[index].count < 65_536 else { return }
        handshakeBuffers[index] += delivered
        handshakeMessages(index: index, epoch: epoch, from: direction)
    }

    /// Reads the handshake messages complete in an epoch's CRYPTO stream (type, 3-byte length, body).
    private func handshakeMessages(index: Int, epoch: QUICEpoch, from direction: Direction) {
        var buffer = handshakeBuffers[index]
        var consumed = 0
        while buffer.count &- consumed >= 4 {
            let length = Int(buffer[consumed &+ 1]) << 16 | Int(buffer[consumed &+ 2]) << 8 | Int(buffer[consumed &+ 3])
            guard buffer.count &- consumed &- 4 >= length else { break }
            let type = buffer[consumed]
            buffer.withUnsafeBytes { raw in
                let body = UnsafeRawBufferPointer(rebasing: raw[(consumed &+ 4)..<(consumed &+ 4 &+ length)])
                if type == 1, direction == .up, clientHello == nil {
                    clientHello = TLSHello.clientHello(body)
                    deriveKeys()
                } else if type == 2, direction == .down, serverHello == nil {
                    serverHello = TLSHello.serverHello(body)
                    if let suite = serverHello?.cipherSuite { cipher = QUICCipher(tlsSuite: suite) }
                    deriveKeys()
                } else if type == 8, direction == .down {
                    selectedALPN = Self.encryptedExtensionsALPN(body)
                    if handler == nil { handler = chooseHandler?(selectedALPN) }
                }
            }
            consumed &+= 4 &+ length
        }
        buffer.removeFirst(consumed)
        handshakeBuffers[index] = buffer
    }

    /// The ALPN in EncryptedExtensions (extension 16: a list of one name).
    static func encryptedExtensionsALPN(_ body: UnsafeRawBufferPointer) -> String? {
        var r = QUICReader(body)
        guard let high = r.u8(), let low = r.u8() else { return nil }
        let total = Int(high) << 8 | Int(low)
        let end = min(r.at &+ total, body.count)
        while r.at &+ 4 <= end {
            guard let t1 = r.u8(), let t2 = r.u8(), let l1 = r.u8(), let l2 = r.u8() else { return nil }
            let length = Int(l1) << 8 | Int(l2)
            guard let data = r.take(length) else { return nil }
            if t1 == 0, t2 == 16, data.count >= 3 {
                let nameLength = Int(data[2])
                guard data.count >= 3 &+ nameLength else { return nil }
                return String(decoding: UnsafeRawBufferPointer(rebasing: data[3..<(3 &+ nameLength)]), as: UTF8.self)
            }
        }
        return nil
    }

    /// Handshake, 0-RTT and 1-RTT keys from the key log, once the ClientHello's random (and for
    /// all but 0-RTT the ServerHello's suite) is known; looked up again while any is missing.
    private func deriveKeys() {
        guard let random = clientHello?.random, let version, let entry = secrets(random) else { return }
        sawKeyLog = true
        if zeroRTTKeys == nil, let early = entry.clientEarlyTrafficSecret {
            zeroRTTKeys = QUICPacketKeys(secret: early, cipher: cipher ?? .aes128GCM, version: version)
        }
        guard let cipher else { return }
        if let client = entry.clientHandshakeTrafficSecret, let server = entry.serverHandshakeTrafficSecret,
            handshakeKeys[0] == nil
        {
            handshakeKeys = [
                QUICPacketKeys(secret: client, cipher: cipher, version: version),
                QUICPacketKeys(secret: server, cipher: cipher, version: version),
            ]
        }
        if let client = entry.clientTrafficSecret0, let server = entry.serverTrafficSecret0, oneRTT[0] == nil {
            oneRTT = [
                (QUICPacketKeys(secret: client, cipher: cipher, version: version), false, nil),
                (QUICPacketKeys(secret: server, cipher: cipher, version: version), false, nil),
            ]
        }
    }

    /// Starts a connection found mid-way by a trial of the key log's 1-RTT secrets
    /// (`QUICShortHeaderTrial`), before its first datagram is read: the matched side's keys at
    /// the matched generation (its key phase), the version and AEAD the trial verified, the
    /// packet number space placed at the matched number, and the destination ID length of that
    /// side's short headers. The other side's keys are the same entry's other secret; its
    /// destination ID length, packet numbers and key generation are found by trial on its first
    /// datagrams (at most `peerDatagrams` of them, `peerTrials` trials in all; its packets stay
    /// unread until then). Streams first seen at an offset past 0 start there (a gap before).
    public func beginMidway(
        _ match: QUICTrialMatch, datagram: UnsafeRawBufferPointer, bounds: QUICTrialBounds, peerTrials: Int,
        peerDatagrams: Int
    ) {
        startedMidway = true
        midwayKeys = match.keys
        midwayVariant = match.variant
        midwayBounds = bounds
        self.peerTrials = peerTrials
        self.peerDatagrams = peerDatagrams
        version = match.version
        cipher = match.cipher
        adopt(match, datagram: datagram)
    }

    /// One side's keys and short-header facts, from a match.
    private func adopt(_ match: QUICTrialMatch, datagram: UnsafeRawBufferPointer) {
        let side = match.sender.rawValue
        let keys = match.keys.keys(side: match.sender, variant: match.variant, generation: match.generation)
        let previous =
            match.generation > 0
            ? match.keys.keys(side: match.sender, variant: match.variant, generation: match.generation - 1) : nil
        oneRTT[side] = (keys, match.generation % 2 == 1, previous)
        // The matched packet decodes to its number: the next expected one.
        largest[QUICEpoch.oneRTT.space][side] = match.packetNumber > 0 ? match.packetNumber &- 1 : nil
        shortDestinationLength[side] = match.destinationLength
        // The destination ID the sender's peer chose.
        if match.destinationLength > 0, datagram.count > match.destinationLength,
            let id = QUICConnectionID(UnsafeRawBufferPointer(rebasing: datagram[1..<(1 &+ match.destinationLength)]))
        {
            learn(id, of: match.sender.peer)
        }
    }

    /// Finds the other side of a connection found mid-way: the same entry's other secret, tried
    /// on this datagram (its destination ID is the one the first side chose).
    private func findPeer(_ datagram: UnsafeRawBufferPointer, from direction: Direction) {
        guard let keys = midwayKeys, QUICShortHeaderTrial.looksLikeShortHeader(datagram) else { return }
        peerDatagrams &-= 1
        guard
            let match = QUICShortHeaderTrial.search(
                datagram, candidates: [keys], sides: [direction], variant: midwayVariant, bounds: midwayBounds,
                trials: &peerTrials)
        else { return }
        adopt(match, datagram: datagram)
    }

    /// Sets the handler of the streams (when the caller chose it before the handshake was read).
    public func setHandler(_ handler: MultiplexedStreamHandler?) { self.handler = handler }

    /// The connection is over: streams with held bytes give up their holes, then the handler closes.
    public func close(_ accounting: ConnectionAccounting) {
        for key in streams.keys.sorted(by: { ($0.id, $0.direction) < ($1.id, $1.direction) }) {
            let state = streams[key]!
            while state.ordered.hasHeld {
                heldBytes &+= giveUpHole(of: &state.ordered, key, time: accounting.lastPacketTime)
            }
        }
        handler?.close(accounting)
        handler = nil
    }
}
