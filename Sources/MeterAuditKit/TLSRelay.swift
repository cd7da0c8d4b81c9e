import Analysis
import CostAccounting
import Flows
import MessageModel
import TLS

/// A TLS connection: its two TCP streams go through `TLSConnection`; the decrypted application
/// data of each direction goes, as that direction's ordered stream (offsets in plaintext bytes),
/// to the reader of the protocol ALPN chose (or the first plaintext shows; HTTP/1.x otherwise),
/// from `ProtocolRegistry`. A TCP gap stops that direction's decryption. The records' cost
/// layers follow the one TLS rule (`TLSCostLayer`).
final class TLSRelay: ByteStreamHandler, ConnectionEnding {
    /// The TLS records' share of the connection's costs, for every protocol inside alike
    /// (docs/METERING.md §2b-§2c).
    private let recordCosts: TLSCostLayer
    private let costs: ConnectionCostLedger

    private let info: ConnectionInfo
    private let context: ConnectionContext
    /// The TCP side that sent the ClientHello.
    private let clientSide: Direction
    private var tls: TLSConnection!
    private let recordSink: ConnectionRecordSink
    /// The protocol inside, once the first readable application data decided it, and its
    /// reader, once plaintext came.
    private var content: PlaintextProtocol?
    private var reader: ConnectionReader?
    /// Per TLS direction: plaintext bytes handed on so far (the next record's offset).
    private var plaintextOffset: [Int64] = [0, 0]
    /// Per TLS direction: where the next record starts in the TCP stream, and the time of the
    /// packet it started in when that was an earlier piece.
    private var recordStart: [Int64?] = [nil, nil]
    private var recordStartTime: [Int64?] = [nil, nil]
    /// Per TLS direction: the piece being fed.
    private var piece: [StreamPosition?] = [nil, nil]

    init(_ route: StreamRoute) {
        info = route.info
        context = route.context
        costs = route.costs
        // Without the TCP handshake, the side whose first record is a ClientHello is the client
        // (one that sent a ServerHello is the server).
        var client = Direction.up
        if !info.sawHandshake, let (side, bytes) = route.firstBytes, bytes.count >= 6, bytes[0] == 22 {
            if bytes[5] == 1 { client = side } else if bytes[5] == 2 { client = side.peer }
        }
        clientSide = client
        // A tunnel's packets are its outer connection's: without a link to that connection's
        // ledger, no packet reaches its records (they get their TLS bytes only).
        recordCosts = TLSCostLayer(
            costs: costs, clientSide: client, control: .tlsControl, limits: context.limits.costs,
            carried: context.packetsReachLedger)
        recordSink = ConnectionRecordSink(context: context, transport: .tls)
        tls = TLSConnection(keyLog: context.keys.keyLog) { [unowned self] record, plaintext in
            self.tlsRecord(record, plaintext)
        }
        recordSink.claims = recordCosts
        recordSink.claimsInitiator = info.endpoint(client)
    }

    private func direction(_ side: Direction) -> Direction { side == clientSide ? .up : .down }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        let d = direction(side)
        piece[d.rawValue] = position
        if recordStart[d.rawValue] == nil { recordStart[d.rawValue] = position.offset }
        tls.receive(bytes, from: d)
        // A record left open at the end of this piece started in it (or earlier).
        if let start = recordStart[d.rawValue], start >= position.offset,
            start < position.offset + Int64(bytes.count)
        {
            recordStartTime[d.rawValue] = position.time
        }
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        tls.gap(length, in: direction(side))
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        reader?.end(of: direction(side), reason: reason, time: time)
    }

    func close(_ accounting: ConnectionAccounting) {
        tls.finish()
        reader?.close(accounting)
        recordCosts.close()
        recordSink.claims = nil
        let summary = tls.summary
        let httpSummary = recordSink.summary
        let protocolKind: ConnectionRow.Content
        if summary.client.plaintextBytes == 0 && summary.server.plaintextBytes == 0 && !summary.isDecrypted {
            protocolKind = .tlsUndecrypted
        } else if let content = content?.content {
            protocolKind = content
        } else {
            protocolKind = httpSummary?.protocolKind == .http ? .http1 : .other
        }
        var row = ConnectionRow(
            info, input: context.input, clientSide: clientSide, protocolKind: protocolKind,
            records: recordSink.records, accounting: accounting, costs: costs)
        Self.describeTLS(summary, in: &row)
        reader?.describe(&row)
        row.protocolKind = protocolKind
        let initiatorIsClient = clientSide == .up
        var connectionSummary =
            httpSummary
            ?? HTTPConnectionSummary(
                accounting: accounting, protocolKind: .other, serverName: nil, clientTally: StreamTally(),
                serverTally: StreamTally())
        connectionSummary.accounting = accounting
        connectionSummary.serverName = summary.serverName
        connectionSummary.clientEndpoint = initiatorIsClient ? info.initiator : info.responder
        context.closed(row, connectionSummary)
        tls = nil
        reader = nil
    }

    /// The TLS columns of a connection row. Kept out of close(_:): inlined there, Swift 6.3.1's
    /// optimizer (CopyPropagation) crashes on the release build.
    @inline(never)
    private static func describeTLS(_ summary: TLSSummary, in row: inout ConnectionRow) {
        row.serverName = summary.serverName ?? ""
        row.alpn = summary.selectedALPN ?? ""
        row.tlsVersion = summary.version.map(TLSVersion.name) ?? ""
        row.cipherSuite = summary.cipherSuiteName ?? ""
        row.decrypted = summary.notDecrypted?.rawValue ?? "yes"
        row.clientTLSBytes = summary.client.recordBytes
        row.serverTLSBytes = summary.server.recordBytes
        row.clientTLSControlBytes = summary.client.controlBytes
        row.serverTLSControlBytes = summary.server.controlBytes
    }

    /// One TLS record, in stream order per direction.
    private func tlsRecord(_ record: TLSRecordInfo, _ plaintext: UnsafeRawBufferPointer) {
        let d = record.direction.rawValue
        // When the record began: in the piece being fed, or in an earlier one.
        let position = piece[d] ?? StreamPosition(time: info.firstPacketTime, offset: 0, peerAcknowledged: nil)
        var time = position.time
        let tcpStart = recordStart[d] ?? 0
        if let start = recordStart[d] {
            if start < position.offset, let earlier = recordStartTime[d] { time = earlier }
            recordStart[d] = start + Int64(record.wireLength)
        }
        let isApplication = record.contentType == TLSContentType.applicationData.rawValue
        recordCosts.add(
            TLSCostLayer.Record(
                carrierStart: tcpStart, wireLength: record.wireLength, plaintextOffset: plaintextOffset[d],
                plaintextLength: record.readable && isApplication ? plaintext.count : 0,
                kind: !record.readable
                    ? (isApplication ? .opaque : .control) : (isApplication ? .application : .control)),
            from: record.direction)
        defer { recordCosts.drain(record.direction) }
        guard record.readable, isApplication else { return }
        let offset = plaintextOffset[d]
        plaintextOffset[d] = offset + Int64(plaintext.count)
        if content == nil {
            content = context.protocols.plaintext(
                alpn: tls.summary.selectedALPN, first: plaintext, from: record.direction)
        }
        guard plaintext.count > 0 else { return }
        (reader ?? makeReader()).receive(
            plaintext, from: record.direction, at: StreamPosition(time: time, offset: offset, peerAcknowledged: nil))
    }

    /// The reader of the plaintext (of the protocol decided): its client is the TLS client.
    private func makeReader() -> ConnectionReader {
        guard let content else { preconditionFailure("plaintext before its protocol was decided") }
        let inner = ConnectionInfo(
            number: info.number, initiator: info.endpoint(clientSide), responder: info.endpoint(clientSide.peer),
            sawHandshake: true, firstPacketTime: info.firstPacketTime)
        let reader = content.reader(
            ReaderRoute(
                info: inner, sink: recordSink, clientSide: .up, startsAtBeginning: true, upgradedRequest: nil,
                limits: context.limits, firstIndexes: context.firstIndexes))
        self.reader = reader
        return reader
    }
}

extension TLSDirectionSummary {
    /// Bytes of the records that carry no application data: handshake, alert,
    /// change_cipher_spec and other types.
    var controlBytes: Int { recordBytes - applicationData.bytes }
}
