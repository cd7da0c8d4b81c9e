import Analysis
import Flows
import HTTP1
import MessageModel

/// HTTP/1.x: the protocol of last resort on a TCP stream (recognized by content, resynchronized
/// when it is not at a message start), and inside TLS when ALPN says `http/1.1` or nothing else
/// claims the plaintext. The one file under Sources/ that imports HTTP1.
extension ProtocolRegistration {
    static let http1 = ProtocolRegistration(
        name: "http1",
        entries: [
            .alpn(
                "http/1.1", probe: { _, _ in false }, content: nil, reader: HTTPConnection<ConnectionRecordSink>.reader),
            .stream(
                probeLength: 0, probe: { _, _, _ in .yes },
                route: { route in
                    CleartextConnection.route(
                        route, clientSide: .up, reader: HTTPConnection<ConnectionRecordSink>.reader)
                }),
        ])
}

extension HTTPConnection: ConnectionReader where Sink == ConnectionRecordSink {
    /// A reader of `route`'s connection, bounded by the run's `Limits.http`.
    static func reader(_ route: ReaderRoute) -> ConnectionReader {
        HTTPConnection(info: route.info, sink: route.sink, limits: route.limits.http, firstIndexes: route.firstIndexes)
    }
}
