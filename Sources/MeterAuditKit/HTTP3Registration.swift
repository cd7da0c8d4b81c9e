import Analysis
import CostAccounting
import Flows
import HTTP3
import MessageModel

/// HTTP/3 (docs/METERING.md §2d): the application protocol of a QUIC connection whose ALPN is
/// `h3`. QUIC (its own module and registration) decrypts the packets, orders each stream's bytes
/// and hands them to the reader `HTTP3Hook.reader` makes, a `MultiplexedStreamHandler` feeding
/// the connection's `ConnectionRecordSink` as HTTP/2's reader does: records, claims per
/// (direction, stream), the summary at close. Its control, QPACK and unknown streams are
/// `h3_control`. No TCP entry: HTTP/3 never runs over TCP; QUIC asks for it by ALPN.
extension ProtocolRegistration {
    static let http3 = ProtocolRegistration.quic(
        "h3", alpn: HTTP3Hook.alpn,
        handler: { route in HTTP3Hook.reader(info: route.info, sink: route.sink, limits: route.limits) },
        overheadKinds: [.h3Control], counterKinds: [.h3Frames])
}

extension ConnectionCounterKind {
    /// connections.csv's `client_h3_overhead_bytes` … `h3_errors`, diagnostics.json's `h3`:
    /// per direction the control and QPACK streams, unknown streams and frames, push stream
    /// preambles and frames no message owns, by kind (docs/METERING.md §2d); the request
    /// streams, and the protocol and QPACK errors and unknown sections.
    public static let h3Frames = ConnectionCounterKind.register(
        "h3", unit: "frames", counts: ["streams", "errors"], order: 210)
}

/// A reader of one QUIC connection's streams as HTTP/3, with its connections.csv columns.
public protocol MultiplexedConnectionReader: MultiplexedStreamHandler {
    /// Adds the protocol's own columns to its connection's row.
    func describe(_ row: inout ConnectionRow)
}

/// The hook QUIC calls: which ALPN is HTTP/3, and the reader of such a connection.
public enum HTTP3Hook {
    /// The ALPN protocol id of HTTP/3 (RFC 9114 §3.1).
    public static let alpn = "h3"

    /// The reader of one QUIC connection whose ALPN is `h3`: `sink` is the connection's
    /// record sink (its claims go to the connection's cost ledger, stream by stream),
    /// `clientSide` the side that sent the Initial packets.
    public static func reader(
        info: ConnectionInfo, sink: ConnectionRecordSink, limits: Limits, clientSide: Direction = .up
    ) -> MultiplexedConnectionReader {
        HTTP3Connection(info: info, sink: sink, limits: limits.http, clientSide: clientSide)
    }
}

extension HTTP3Hook {
    /// The same reader over any sink (QUIC's own, or a test's): records, claims per (direction,
    /// stream) and the summary go to `sink`.
    public static func reader<Sink: MessageSink>(
        info: ConnectionInfo, sink: Sink, limits: Limits, clientSide: Direction = .up
    ) -> HTTP3Connection<Sink> {
        HTTP3Connection(info: info, sink: sink, limits: limits.http, clientSide: clientSide)
    }
}

extension HTTP3Connection: MultiplexedConnectionReader where Sink == ConnectionRecordSink {
    /// An HTTP/3 connection's row: h3, and what its streams carried besides messages.
    public func describe(_ row: inout ConnectionRow) {
        row.protocolKind = .h3
        row.counters[.h3Frames] = ConnectionCounters(summary)
    }
}

extension ConnectionCounters {
    /// What an HTTP/3 connection's streams carried besides messages, per direction and kind;
    /// its request streams, and its errors (both directions'), in `h3Frames`' order.
    init(_ summary: HTTP3ConnectionSummary) {
        func byKind(_ tally: HTTP3DirectionTally) -> [String: FrameTypeCount] {
            var result: [String: FrameTypeCount] = [:]
            func add(_ name: String, frames: Int = 0, _ bytes: Int) {
                if bytes > 0 { result[name] = FrameTypeCount(frames: frames, bytes: bytes) }
            }
            add("control_stream", frames: H3FrameType.allCases.filter { $0 != .data && $0 != .headers && $0 != .pushPromise }
                .map { tally[$0].frames }.reduce(0, +), tally.controlStreamBytes)
            add("qpack_encoder_stream", tally.encoderStreamBytes)
            add("qpack_decoder_stream", tally.decoderStreamBytes)
            add("unknown_streams", tally.unknownStreamBytes)
            add("push_stream_preambles", tally.pushStreamPreambleBytes)
            add("other_frames", frames: tally.unknownFrames.frames, tally.requestStreamOtherBytes)
            add("unowned", frames: tally.unowned.frames, tally.unowned.bytes)
            return result
        }
        let errors = [summary.client, summary.server].map { $0.protocolErrors + $0.qpackErrors + $0.qpackUnknownSections }
        self.init(
            client: byKind(summary.client), server: byKind(summary.server),
            counts: [summary.client.requestStreams, errors.reduce(0, +)])
    }
}
