import CaptureIO
import Flows

/// Records and bytes of one content type in one direction.
public struct TLSRecordTally: Sendable, Equatable {
    public var records = 0
    /// Wire bytes: 5-byte headers plus fragments.
    public var bytes = 0

    mutating func add(_ wireLength: Int) {
        records += 1
        bytes = bytes.addingReportingOverflow(wireLength).overflow ? Int.max : bytes + wireLength
    }
}

/// One direction of a TLS connection, as read.
public struct TLSDirectionSummary: Sendable, Equatable {
    /// Records by content type: the inner type when the record was decrypted (TLS 1.3 hides
    /// handshake and alert records under application_data), the type on the wire otherwise.
    public var handshake = TLSRecordTally()
    public var alert = TLSRecordTally()
    public var changeCipherSpec = TLSRecordTally()
    public var applicationData = TLSRecordTally()
    /// heartbeat and content types TLS does not define
    public var other = TLSRecordTally()
    /// Records decrypted (any content type), and the application-data plaintext bytes they held.
    public var decryptedRecords = 0
    public var plaintextBytes = 0
    /// TLS 1.3 KeyUpdate messages this direction sent.
    public var keyUpdates = 0
    /// Bytes missing from the capture (gaps), then bytes that could not be framed as records
    /// after a gap or a malformed header, or a record cut off at the end.
    public var gapBytes = 0
    public var unreadBytes = 0
    /// Why this direction's records (from some point on) were not decrypted; nil when every
    /// encrypted record was.
    public var notDecrypted: NotDecryptedReason?

    public var records: Int {
        handshake.records + alert.records + changeCipherSpec.records + applicationData.records + other.records
    }

    public var recordBytes: Int {
        handshake.bytes + alert.bytes + changeCipherSpec.bytes + applicationData.bytes + other.bytes
    }

    mutating func count(contentType: UInt8, wireLength: Int) {
        switch contentType {
        case TLSContentType.handshake.rawValue: handshake.add(wireLength)
        case TLSContentType.alert.rawValue: alert.add(wireLength)
        case TLSContentType.changeCipherSpec.rawValue: changeCipherSpec.add(wireLength)
        case TLSContentType.applicationData.rawValue: applicationData.add(wireLength)
        default: other.add(wireLength)
        }
    }
}

/// What is known of a TLS connection: the hellos, the negotiated parameters, and whether it
/// was decrypted.
public struct TLSSummary: Sendable, Equatable {
    public var clientHello: ClientHelloInfo?
    public var serverHello: ServerHelloInfo?
    /// A HelloRetryRequest came before the ServerHello.
    public var helloRetryRequest = false
    /// TLS 1.3: from EncryptedExtensions; TLS 1.2: from the ServerHello.
    public var selectedALPN: String?
    /// TLS 1.2 abbreviated handshake: the server echoed the client's session id.
    public var resumed = false
    /// Why the connection was not (wholly) decrypted: the first reason met; nil when it was.
    public var notDecrypted: NotDecryptedReason?
    public var client = TLSDirectionSummary()
    public var server = TLSDirectionSummary()

    public var serverName: String? { clientHello?.serverName }
    public var offeredALPN: [String] { clientHello?.offeredALPN ?? [] }
    public var version: UInt16? { serverHello?.version }
    public var cipherSuite: UInt16? { serverHello?.cipherSuite }
    public var cipherSuiteName: String? {
        guard let id = serverHello?.cipherSuite else { return nil }
        return CipherSuite.lookup(id)?.name ?? "0x" + hex16(id)
    }
    public var encryptThenMAC: Bool { serverHello?.encryptThenMAC ?? false }
    public var extendedMasterSecret: Bool { serverHello?.extendedMasterSecret ?? false }
    public var isDecrypted: Bool { notDecrypted == nil }

    public subscript(direction: Direction) -> TLSDirectionSummary {
        get { direction == .up ? client : server }
        set { if direction == .up { client = newValue } else { server = newValue } }
    }
}

/// One record as read, handed to the consumer in stream order per direction.
public struct TLSRecordInfo: Sendable, Equatable {
    public var direction: Direction
    /// Content type in the record header.
    public var outerContentType: UInt8
    /// The inner content type of a decrypted TLS 1.3 record; otherwise the outer type.
    public var contentType: UInt8
    /// 5 header bytes plus the fragment: what the record cost on the wire.
    public var wireLength: Int
    /// The record was decrypted (or was plaintext to begin with, before the cipher change).
    public var readable: Bool
}

/// Reads one TLS connection: both directions' ordered stream bytes, in pieces of any size,
/// with gaps. Parses the hellos, derives keys from the key log, decrypts, and hands every
/// record to `onRecord` with, for readable application data, its plaintext (borrowed for the
/// call). The two directions may be fed in any interleaving: records that depend on the
/// peer's hello wait for it (bounded).
public final class TLSConnection {
    public typealias RecordHandler = (TLSRecordInfo, UnsafeRawBufferPointer) -> Void

    /// Largest TLSCiphertext fragment (RFC 5246 §6.2.3: 2^14 + 2048).
    static let maximumFragment = 16384 + 2048
    /// Bytes of whole records one direction may hold while it waits for the peer's hello.
    static let maximumWaiting = 1 << 20

    private enum Phase { case awaitingClientHello, awaitingServerHello, established, opaque }
    private enum KeyChange { case none, applicationSecret, keyUpdate }

    private struct DirectionState {
        var partial: [UInt8] = []
        var partialTarget = 0
        var stopped = false
        var waiting: [UInt8] = []
        var handshake = HandshakeAssembler()
        var decryptor: RecordDecryptor?
        var pendingDecryptor: RecordDecryptor?
        var applicationSecret: [UInt8]?
        var afterCipherChange = false
        var keyChange = KeyChange.none
        var sawRecord = false
        var finishedSeen = false
    }

    public private(set) var summary = TLSSummary()
    private let keyLog: KeyLog
    private let onRecord: RecordHandler?
    private var phase = Phase.awaitingClientHello
    private var isTLS13 = false
    private var directions = [DirectionState(), DirectionState()]
    private var plaintext: [UInt8] = []
    private var finished = false
    private var pendingMessages: [PendingMessage] = []

    private struct PendingMessage {
        var type: UInt8
        var body: [UInt8]
        var complete: Bool
    }

    private func runHandshakeMessages(from direction: Direction) {
        while !pendingMessages.isEmpty {
            let message = pendingMessages.removeFirst()
            message.body.withUnsafeBytes {
                handshakeMessage(message.type, body: $0, complete: message.complete, from: direction)
            }
        }
    }

    public init(keyLog: KeyLog, onRecord: RecordHandler? = nil) {
        self.keyLog = keyLog
        self.onRecord = onRecord
        plaintext.reserveCapacity(Self.maximumFragment)
    }

    // MARK: input

    /// In-order stream bytes of `direction`.
    public func receive(_ bytes: UnsafeRawBufferPointer, from direction: Direction) {
        let d = direction.rawValue
        guard !directions[d].stopped else {
            summary[direction].unreadBytes = saturatingSum(summary[direction].unreadBytes, bytes.count)
            return
        }
        var offset = 0
        while offset < bytes.count {
            if directions[d].partial.isEmpty && bytes.count - offset >= 5 {
                guard let total = recordLength(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 5)])) else {
                    stop(direction, reason: .malformed, unread: bytes.count - offset)
                    return
                }
                if bytes.count - offset >= total {
                    handle(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + total)]), from: direction)
                    offset += total
                    continue
                }
            }
            // The record (or its header) continues in a later piece: keep its bytes.
            let target = directions[d].partial.count < 5 ? 5 : directions[d].partialTarget
            let take = min(target - directions[d].partial.count, bytes.count - offset)
            directions[d].partial.append(contentsOf: bytes[offset..<(offset + take)])
            offset += take
            if directions[d].partial.count == 5 && directions[d].partialTarget == 0 {
                guard let total = directions[d].partial.withUnsafeBytes({ recordLength($0) }) else {
                    stop(direction, reason: .malformed, unread: directions[d].partial.count + bytes.count - offset)
                    return
                }
                directions[d].partialTarget = total
            }
            if directions[d].partialTarget > 0 && directions[d].partial.count == directions[d].partialTarget {
                let record = directions[d].partial
                directions[d].partial.removeAll(keepingCapacity: true)
                directions[d].partialTarget = 0
                record.withUnsafeBytes { handle($0, from: direction) }
            }
        }
    }

    /// `length` bytes of `direction`'s stream are missing: its records cannot be framed any more.
    public func gap(_ length: Int, in direction: Direction) {
        summary[direction].gapBytes = saturatingSum(summary[direction].gapBytes, max(0, length))
        guard !directions[direction.rawValue].stopped else { return }
        stop(direction, reason: .gap, unread: 0)
    }

    /// The connection is over: records still waiting for a hello that never came are counted
    /// unread, a record cut off at the end is counted unread.
    public func finish() {
        guard !finished else { return }
        finished = true
        if phase == .awaitingClientHello || phase == .awaitingServerHello {
            fail(.handshakeNotCaptured)
            phase = .opaque
        }
        for direction in Direction.allCases { releaseWaiting(direction) }
        for direction in Direction.allCases {
            let d = direction.rawValue
            summary[direction].unreadBytes = saturatingSum(summary[direction].unreadBytes, directions[d].partial.count)
            directions[d].partial = []
        }
    }

    // MARK: records

    /// Total record length from a 5-byte header, or nil when the header cannot be TLS.
    private func recordLength(_ header: UnsafeRawBufferPointer) -> Int? {
        let type = header[0]
        guard type >= 20 && type <= 24, header[1] == 3, header[2] <= 4 else { return nil }
        let length = Int(header[3]) << 8 | Int(header[4])
        guard length <= Self.maximumFragment else { return nil }
        return 5 + length
    }

    private func stop(_ direction: Direction, reason: NotDecryptedReason, unread: Int) {
        let d = direction.rawValue
        directions[d].stopped = true
        summary[direction].unreadBytes = saturatingSum(
            summary[direction].unreadBytes, saturatingSum(unread, directions[d].partial.count))
        directions[d].partial = []
        directions[d].partialTarget = 0
        if summary[direction].notDecrypted == nil { summary[direction].notDecrypted = reason }
        if summary.notDecrypted == nil { summary.notDecrypted = reason }
    }

    /// Whether a record of `direction` must wait for the peer's hello (or for records already
    /// waiting, to keep the order).
    private func mustWait(_ direction: Direction) -> Bool {
        if !directions[direction.rawValue].waiting.isEmpty { return true }
        switch phase {
        case .awaitingClientHello: return direction == .down
        case .awaitingServerHello: return direction == .up
        case .established, .opaque: return false
        }
    }

    private func handle(_ record: UnsafeRawBufferPointer, from direction: Direction) {
        let d = direction.rawValue
        if !finished && mustWait(direction) {
            if directions[d].waiting.count + record.count <= Self.maximumWaiting {
                directions[d].waiting.append(contentsOf: record)
                return
            }
            // The peer's hello is not coming in time: give up on decrypting the connection.
            fail(.handshakeNotCaptured)
            phase = .opaque
            releaseWaiting(.up)
            releaseWaiting(.down)
        }
        process(record, from: direction)
    }

    /// Processes the records a direction held back, in order, until one must wait again.
    private func releaseWaiting(_ direction: Direction) {
        let d = direction.rawValue
        guard !directions[d].waiting.isEmpty else { return }
        let held = directions[d].waiting
        directions[d].waiting = []
        held.withUnsafeBytes { all in
            var offset = 0
            while offset + 5 <= all.count {
                let total = 5 + (Int(all[offset + 3]) << 8 | Int(all[offset + 4]))
                let record = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + total)])
                if !finished && mustWait(direction) {
                    directions[d].waiting.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[offset...]))
                    return
                }
                process(record, from: direction)
                offset += total
            }
        }
    }

    private func fail(_ reason: NotDecryptedReason) {
        if summary.notDecrypted == nil { summary.notDecrypted = reason }
        for direction in Direction.allCases where summary[direction].notDecrypted == nil {
            summary[direction].notDecrypted = reason
        }
    }

    private func failDirection(_ direction: Direction, _ reason: NotDecryptedReason) {
        if summary[direction].notDecrypted == nil { summary[direction].notDecrypted = reason }
        if summary.notDecrypted == nil { summary.notDecrypted = reason }
        directions[direction.rawValue].decryptor = nil
        directions[direction.rawValue].pendingDecryptor = nil
    }

    private func process(_ record: UnsafeRawBufferPointer, from direction: Direction) {
        let d = direction.rawValue
        let outerType = record[0]
        let fragment = UnsafeRawBufferPointer(rebasing: record[5...])
        let firstRecord = !directions[d].sawRecord
        directions[d].sawRecord = true

        if phase == .awaitingClientHello && direction == .up && firstRecord
            && outerType != TLSContentType.handshake.rawValue
        {
            fail(.handshakeNotCaptured)
            phase = .opaque
        }
        let encrypted: Bool
        switch phase {
        case .opaque:
            encrypted = outerType == TLSContentType.applicationData.rawValue
        case .awaitingClientHello, .awaitingServerHello:
            encrypted = false
        case .established:
            encrypted = isTLS13 ? outerType == TLSContentType.applicationData.rawValue : directions[d].afterCipherChange
        }
        guard encrypted else {
            deliver(record, type: outerType, content: fragment, readable: true, from: direction)
            runHandshakeMessages(from: direction)
            if !isTLS13 && phase == .established && outerType == TLSContentType.changeCipherSpec.rawValue {
                directions[d].afterCipherChange = true
                directions[d].decryptor = directions[d].pendingDecryptor
                directions[d].pendingDecryptor = nil
            }
            return
        }
        guard summary[direction].notDecrypted == nil, var decryptor = directions[d].decryptor else {
            if summary[direction].notDecrypted == nil { failDirection(direction, .noKey) }
            deliver(
                record, type: outerType, content: UnsafeRawBufferPointer(start: nil, count: 0), readable: false,
                from: direction)
            return
        }
        // Held alone while it decrypts: its nonce and header buffers are then not copied.
        directions[d].decryptor = nil
        let result = decryptor.decrypt(record: record, into: &plaintext)
        directions[d].decryptor = decryptor
        switch result {
        case .plaintext(let innerType):
            summary[direction].decryptedRecords += 1
            plaintext.withUnsafeBytes { deliver(record, type: innerType, content: $0, readable: true, from: direction) }
            runHandshakeMessages(from: direction)
            switch directions[d].keyChange {
            case .none: break
            case .applicationSecret:
                if let secret = directions[d].applicationSecret, let suite = serverSuite {
                    directions[d].decryptor = RecordDecryptor(tls13: suite, trafficSecret: secret)
                }
            case .keyUpdate:
                directions[d].decryptor?.updateTrafficSecret()
            }
            directions[d].keyChange = .none
        case .authenticationFailed:
            failDirection(direction, .badKey)
            deliver(
                record, type: outerType, content: UnsafeRawBufferPointer(start: nil, count: 0), readable: false,
                from: direction)
        case .malformed:
            failDirection(direction, .malformed)
            deliver(
                record, type: outerType, content: UnsafeRawBufferPointer(start: nil, count: 0), readable: false,
                from: direction)
        }
    }

    private var serverSuite: CipherSuite? { summary.serverHello.flatMap { CipherSuite.lookup($0.cipherSuite) } }

    /// Counts a record, reads the handshake messages it carries, and hands it on.
    private func deliver(
        _ record: UnsafeRawBufferPointer, type: UInt8, content: UnsafeRawBufferPointer,
        readable: Bool, from direction: Direction
    ) {
        summary[direction].count(contentType: type, wireLength: record.count)
        let isApplicationData = type == TLSContentType.applicationData.rawValue
        if readable && isApplicationData {
            summary[direction].plaintextBytes = saturatingSum(summary[direction].plaintextBytes, content.count)
        }
        if readable && type == TLSContentType.handshake.rawValue && phase != .opaque {
            // Messages are acted on once the record is done (see runHandshakeMessages): acting
            // may process the peer's waiting records, which reuse the plaintext buffer.
            var assembler = HandshakeAssembler()
            swap(&assembler, &directions[direction.rawValue].handshake)
            assembler.feed(content) { messageType, body, complete in
                pendingMessages.append(PendingMessage(type: messageType, body: Array(body), complete: complete))
            }
            swap(&assembler, &directions[direction.rawValue].handshake)
        }
        if let onRecord {
            let info = TLSRecordInfo(
                direction: direction, outerContentType: record[0], contentType: type,
                wireLength: record.count, readable: readable)
            onRecord(info, readable && isApplicationData ? content : UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    // MARK: handshake

    private func handshakeMessage(
        _ type: UInt8, body: UnsafeRawBufferPointer, complete: Bool, from direction: Direction
    ) {
        switch (direction, type) {
        case (.up, HandshakeType.clientHello):
            guard phase == .awaitingClientHello else { return }
            guard complete, let hello = HandshakeParser.clientHello(body) else {
                fail(.malformed)
                phase = .opaque
                return
            }
            summary.clientHello = hello
            phase = .awaitingServerHello
            releaseWaiting(.down)
        case (.up, _) where phase == .awaitingClientHello:
            // The first handshake message is not a ClientHello: the start is not in the capture.
            fail(.handshakeNotCaptured)
            phase = .opaque
        case (.down, HandshakeType.serverHello):
            guard phase == .awaitingServerHello else { return }
            guard complete, let hello = HandshakeParser.serverHello(body) else {
                fail(.malformed)
                phase = .opaque
                return
            }
            if hello.isHelloRetryRequest {
                // The client answers with a second ClientHello (same random), then the real
                // ServerHello follows.
                summary.helloRetryRequest = true
                phase = .awaitingClientHello
                releaseWaiting(.up)
                return
            }
            summary.serverHello = hello
            establish(hello)
            releaseWaiting(.up)
        case (.down, HandshakeType.encryptedExtensions) where isTLS13:
            if complete, let selected = HandshakeParser.encryptedExtensions(body) { summary.selectedALPN = selected }
        case (_, HandshakeType.finished) where isTLS13:
            // Key changes align with record ends: the next record uses the application secret.
            // A later Finished (post-handshake authentication) changes no key.
            if !directions[direction.rawValue].finishedSeen {
                directions[direction.rawValue].finishedSeen = true
                directions[direction.rawValue].keyChange = .applicationSecret
            }
        case (_, HandshakeType.keyUpdate) where isTLS13:
            summary[direction].keyUpdates += 1
            directions[direction.rawValue].keyChange = .keyUpdate
        default:
            break
        }
    }

    private func establish(_ hello: ServerHelloInfo) {
        phase = .established
        isTLS13 = hello.version == TLSVersion.tls13
        guard let clientHello = summary.clientHello else {
            fail(.handshakeNotCaptured)
            return
        }
        if !isTLS13 {
            summary.selectedALPN = hello.selectedALPN
            summary.resumed = !clientHello.sessionID.isEmpty && hello.sessionID == clientHello.sessionID
        }
        guard hello.version == TLSVersion.tls12 || hello.version == TLSVersion.tls13 else {
            fail(.unsupportedVersion)
            return
        }
        guard let suite = CipherSuite.lookup(hello.cipherSuite), suite.isTLS13 == isTLS13 else {
            fail(.unsupportedSuite)
            return
        }
        guard let secrets = keyLog.secrets(forClientRandom: clientHello.random) else {
            fail(.noKey)
            return
        }
        if isTLS13 {
            guard let clientHandshake = secrets.clientHandshakeTrafficSecret,
                let serverHandshake = secrets.serverHandshakeTrafficSecret,
                let clientApplication = secrets.clientTrafficSecret0,
                let serverApplication = secrets.serverTrafficSecret0
            else {
                fail(.noKey)
                return
            }
            directions[0].decryptor = RecordDecryptor(tls13: suite, trafficSecret: clientHandshake)
            directions[1].decryptor = RecordDecryptor(tls13: suite, trafficSecret: serverHandshake)
            directions[0].applicationSecret = clientApplication
            directions[1].applicationSecret = serverApplication
        } else {
            guard let master = secrets.masterSecret else {
                fail(.noKey)
                return
            }
            let keys = KeySchedule.keyBlock12(
                suite, masterSecret: master, clientRandom: clientHello.random,
                serverRandom: hello.random)
            var encryptThenMAC = false
            if case .aesCBC = suite.cipher { encryptThenMAC = hello.encryptThenMAC }
            directions[0].pendingDecryptor = RecordDecryptor(
                tls12: suite, keys: keys.client, encryptThenMAC: encryptThenMAC)
            directions[1].pendingDecryptor = RecordDecryptor(
                tls12: suite, keys: keys.server, encryptThenMAC: encryptThenMAC)
        }
    }
}
