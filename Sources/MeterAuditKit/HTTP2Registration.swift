import Analysis
import CostAccounting
import Flows
import HTTP2
import MessageModel

/// HTTP/2 (docs/METERING.md §2a): on a TCP stream from the client's connection preface (h2c
/// with prior knowledge) or, mid-connection, from a chain of frame headers; inside TLS when
/// ALPN says `h2` or the client's first plaintext is the preface; after an HTTP/1.1
/// `Upgrade: h2c` and its 101. Its preface and control frames are `h2_control`.
extension ProtocolRegistration {
    static let http2 = ProtocolRegistration(
        name: "h2",
        entries: [
            .stream(
                probeLength: H2.preface.count, probe: { bytes, _, _ in H2.prefaceProbe(bytes) },
                route: { route in
                    CleartextConnection.route(route, clientSide: route.decidingSide, reader: H2.reader)
                }),
            .stream(
                probeLength: H2.chainBytes, probe: { bytes, _, _ in H2.framesProbe(bytes) },
                route: { route in
                    // No preface tells the client: the initiator (or the assembler's guess of it) is.
                    CleartextConnection.route(route, clientSide: .up, startsAtBeginning: false, reader: H2.reader)
                }),
            .alpn("h2", probe: H2.plaintextProbe, content: .h2, reader: H2.reader),
            .upgrade("h2c", reader: H2.reader),
        ],
        overheadKinds: [.h2Control])
}

/// The HTTP/2 registration's probes and reader.
private enum H2 {
    typealias Connection = HTTP2Connection<ConnectionRecordSink>
    static let preface = Connection.prefaceBytes
    /// A side's bytes to tell frames mid-connection: a chain of three frame headers.
    static let chainBytes = Connection.chainBytes

    /// The client's connection preface, whole; needMore while what came is a prefix of it.
    static func prefaceProbe(_ bytes: UnsafeRawBufferPointer) -> ProbeVerdict {
        let shown = bytes.prefix(preface.count)
        guard !shown.isEmpty, shown.elementsEqual(preface.prefix(shown.count)) else { return .no }
        return shown.count == preface.count ? .yes : .needMore
    }

    /// Frames without a preface (a capture begun mid-connection).
    static func framesProbe(_ bytes: UnsafeRawBufferPointer) -> ProbeVerdict {
        switch Connection.beginsWithFrames(bytes) {
        case true?: return .yes
        case nil: return .needMore
        case false?: return .no
        }
    }

    /// Without ALPN: the client's first plaintext is the preface.
    static func plaintextProbe(_ plaintext: UnsafeRawBufferPointer, _ direction: Direction) -> Bool {
        direction == .up && plaintext.count >= preface.count && plaintext.prefix(preface.count).elementsEqual(preface)
    }

    static func reader(_ route: ReaderRoute) -> ConnectionReader {
        Connection(
            info: route.info, sink: route.sink, limits: route.limits.http, clientSide: route.clientSide,
            firstIndexes: route.firstIndexes, upgradedRequest: route.upgradedRequest,
            startsAtBeginning: route.startsAtBeginning)
    }
}

extension HTTP2Connection: ConnectionReader where Sink == ConnectionRecordSink {
    /// An HTTP/2 connection's row: h2, and the frames no message owns.
    public func describe(_ row: inout ConnectionRow) {
        row.protocolKind = .h2
        row.http2 = HTTP2Overhead(summary)
    }
}

extension HTTP2Overhead {
    /// What an HTTP/2 connection's frames no message owns cost, per direction and type.
    init(_ summary: HTTP2ConnectionSummary) {
        func bytesByType(_ tally: HTTP2DirectionTally) -> [String: FrameTypeCount] {
            var result: [String: FrameTypeCount] = [:]
            if tally.prefaceBytes > 0 { result["preface"] = FrameTypeCount(frames: 1, bytes: tally.prefaceBytes) }
            for type in FrameType.allCases where ![.data, .headers, .continuation, .pushPromise].contains(type) {
                let count = tally[type]
                if count.frames > 0 { result[type.name] = FrameTypeCount(frames: count.frames, bytes: count.bytes) }
            }
            if tally.unknown.frames > 0 {
                result["unknown"] = FrameTypeCount(frames: tally.unknown.frames, bytes: tally.unknown.bytes)
            }
            if tally.unowned.frames > 0 {
                result["unowned"] = FrameTypeCount(frames: tally.unowned.frames, bytes: tally.unowned.bytes)
            }
            return result
        }
        self.init(
            client: bytesByType(summary.client), server: bytesByType(summary.server),
            clientErrors: summary.client.frameSizeErrors + summary.client.protocolErrors + summary.client.hpackErrors,
            serverErrors: summary.server.frameSizeErrors + summary.server.protocolErrors + summary.server.hpackErrors,
            streams: summary.streams)
    }
}
