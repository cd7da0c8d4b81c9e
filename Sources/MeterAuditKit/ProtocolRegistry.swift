import Analysis
import CostAccounting
import Flows
import MessageModel

/// What a probe of a connection's first bytes says of its protocol.
public enum ProbeVerdict: Sendable {
    case yes, no
    /// The bytes so far could still be it or not.
    case needMore
}

/// A protocol's reader of one connection's ordered bytes, behind the router: it feeds its
/// messages and claims to its `ConnectionRecordSink` and tells the sink its summary when it
/// closes. What it adds to its connection's row (a protocol's own overhead) it writes in
/// `describe`.
public protocol ConnectionReader: ByteStreamHandler {
    /// The reader's own facts in its connection's row, once it is closed; the row's
    /// `protocolKind` says HTTP/1.x when a message was found, other otherwise, unless set here.
    func describe(_ row: inout ConnectionRow)
}

extension ConnectionReader {
    public func describe(_ row: inout ConnectionRow) {}
}

/// What a reader is made with: its connection (its initiator the client, as far as known),
/// the sink its messages and claims go to, and the run's bounds.
public struct ReaderRoute {
    public let info: ConnectionInfo
    public let sink: ConnectionRecordSink
    /// The side that sends requests (the side that decided the protocol, for one that says so).
    public let clientSide: Direction
    /// False when the capture began mid-connection (no preface seen).
    public let startsAtBeginning: Bool
    /// The request an HTTP/1.1 `Upgrade` turned into the new protocol's first (h2c).
    public let upgradedRequest: RequestSummary?
    public let limits: Limits
    /// The index of each side's first message (client, server): not 0 inside a tunnel.
    public let firstIndexes: [Int]
}

/// One protocol's place in the router (ARCHITECTURE.md, "Adding a protocol"): how it is found,
/// (transport or ALPN, a probe) and who reads it (a factory), and the overhead and counter kinds
/// it registers.
public struct ProtocolRegistration: @unchecked Sendable {
    // @unchecked: immutable once made; its closures are the protocols' static functions.
    enum Entry {
        /// Over a TCP stream: a probe of one side's first bytes (at most `probeLength`) chooses it.
        case stream(
            probeLength: Int, probe: (UnsafeRawBufferPointer, Direction, ConnectionInfo) -> ProbeVerdict,
            route: (StreamRoute) -> Route)
        /// Inside TLS: the ALPN name chosen, or without one a probe of the first plaintext.
        case alpn(
            String, probe: (UnsafeRawBufferPointer, Direction) -> Bool, content: ConnectionRow.Content?,
            reader: (ReaderRoute) -> ConnectionReader)
        /// After an HTTP/1.1 `Upgrade: token` and its 101, the rest of the connection.
        case upgrade(String, reader: (ReaderRoute) -> ConnectionReader)
        /// Over UDP: one reader per input is offered every new flow (`UDPFlowReader`).
        case datagrams(reader: (UDPReaderContext) -> UDPFlowReader)
        /// Over QUIC: the streams of a connection whose ALPN is this name (HTTP/3: "h3").
        case quicApplication(String, handler: (QUICApplicationRoute) -> MultiplexedStreamHandler)
    }

    public let name: String
    let entries: [Entry]
    let overheadKinds: [OverheadKind]
    let counterKinds: [ConnectionCounterKind]

    init(
        name: String, entries: [Entry], overheadKinds: [OverheadKind] = [],
        counterKinds: [ConnectionCounterKind] = []
    ) {
        self.name = name
        self.entries = entries
        self.overheadKinds = overheadKinds
        self.counterKinds = counterKinds
    }

    /// A protocol read straight from a TCP stream, in cleartext: `probe` looks at one side's
    /// first bytes (up to `probeLength`; with that side and the connection, its ports), `reader`
    /// reads the connection; its row, cost layers and records come as for HTTP/1.x.
    /// An application protocol over QUIC, chosen by the ALPN of the connection's handshake:
    /// `handler` takes every stream's ordered bytes (`MultiplexedStreamHandler`).
    public static func quic(
        _ name: String, alpn: String, handler: @escaping (QUICApplicationRoute) -> MultiplexedStreamHandler,
        overheadKinds: [OverheadKind] = [], counterKinds: [ConnectionCounterKind] = []
    ) -> ProtocolRegistration {
        ProtocolRegistration(
            name: name, entries: [.quicApplication(alpn, handler: handler)], overheadKinds: overheadKinds,
            counterKinds: counterKinds)
    }

    public static func tcp(
        _ name: String, probeLength: Int = 0,
        probe:
            @escaping (_ first: UnsafeRawBufferPointer, _ side: Direction, _ connection: ConnectionInfo) ->
            ProbeVerdict,
        reader: @escaping (ReaderRoute) -> ConnectionReader, overheadKinds: [OverheadKind] = [],
        counterKinds: [ConnectionCounterKind] = []
    ) -> ProtocolRegistration {
        ProtocolRegistration(
            name: name,
            entries: [
                .stream(
                    probeLength: probeLength, probe: probe,
                    route: { route in CleartextConnection.route(route, clientSide: route.decidingSide, reader: reader) }
                )
            ], overheadKinds: overheadKinds, counterKinds: counterKinds)
    }
}

/// The protocols a run reads, in the order their probes are asked; the last one (HTTP/1.x) takes
/// what no other claims. A run's `AnalysisOptions.protocols`.
public struct ProtocolRegistry: Sendable {
    public private(set) var registrations: [ProtocolRegistration]

    /// HTTP/2 (preface, frames mid-connection, ALPN h2, h2c), TLS, HTTP/1.x; QUIC over UDP and
    /// HTTP/3 over QUIC (ALPN h3).
    public static var standard: ProtocolRegistry { ProtocolRegistry(registrations: [.http2, .tls, .quic, .http3, .http1]) }

    /// Adds a protocol, asked before the standard ones (HTTP/1.x, which takes anything, stays last).
    public mutating func register(_ registration: ProtocolRegistration) {
        registrations.insert(registration, at: 0)
    }

    /// Every overhead and counter kind the protocols claim, registered before anything reads
    /// `OverheadKind.all` or `ConnectionCounterKind.all`.
    func registerOverheadKinds() {
        for registration in registrations {
            _ = registration.overheadKinds
            _ = registration.counterKinds
        }
    }

    /// The most bytes of one side a stream probe needs.
    var probeLength: Int {
        var length = 0
        for registration in registrations {
            for case let .stream(probeLength, _, _) in registration.entries { length = max(length, probeLength) }
        }
        return length
    }

    /// The stream entry whose probe says yes, in order; nil while one still needs more bytes
    /// (or none says yes before one says needMore).
    func stream(for bytes: UnsafeRawBufferPointer, from side: Direction, on info: ConnectionInfo) -> (
        (StreamRoute) -> Route
    )? {
        for registration in registrations {
            for case let .stream(_, probe, route) in registration.entries {
                switch probe(bytes, side, info) {
                case .yes: return route
                case .needMore: return nil
                case .no: continue
                }
            }
        }
        return nil
    }

    /// The protocol that takes what no probe claimed: the last stream entry (HTTP/1.x).
    var fallbackStream: (StreamRoute) -> Route {
        for registration in registrations.reversed() {
            for case let .stream(_, _, route) in registration.entries.reversed() { return route }
        }
        preconditionFailure("no stream protocol registered")
    }

    /// Inside TLS: the protocol ALPN named, or without ALPN the one whose probe takes the first
    /// plaintext; else the last ALPN entry (HTTP/1.x).
    func plaintext(alpn: String?, first: UnsafeRawBufferPointer, from direction: Direction) -> PlaintextProtocol {
        var last: PlaintextProtocol?
        for registration in registrations {
            for case let .alpn(name, probe, content, reader) in registration.entries {
                let entry = PlaintextProtocol(content: content, reader: reader)
                if let alpn { if alpn == name { return entry } } else if probe(first, direction) { return entry }
                last = entry
            }
        }
        guard let last else { preconditionFailure("no protocol registered inside TLS") }
        return last
    }

    /// One reader per UDP protocol for an input, in registration order.
    func udpReaders(_ context: UDPReaderContext) -> [UDPFlowReader] {
        var readers: [UDPFlowReader] = []
        for registration in registrations {
            for case let .datagrams(make) in registration.entries { readers.append(make(context)) }
        }
        return readers
    }

    /// The handler of a QUIC connection's streams for an ALPN name, if a protocol registered it
    /// (the first registered wins; a name ending in "-*" takes every name with that prefix, so
    /// "h3-*" takes the drafts' "h3-29").
    func quicApplication(_ alpn: String) -> ((QUICApplicationRoute) -> MultiplexedStreamHandler)? {
        for registration in registrations {
            for case let .quicApplication(name, handler) in registration.entries {
                if name == alpn || (name.hasSuffix("-*") && alpn.hasPrefix(name.dropLast())) { return handler }
            }
        }
        return nil
    }

    /// The reader an `Upgrade` token names, if a protocol registered it.
    func upgrade(_ token: String) -> ((ReaderRoute) -> ConnectionReader)? {
        for registration in registrations {
            for case let .upgrade(name, reader) in registration.entries where name == token { return reader }
        }
        return nil
    }
}

/// A protocol chosen inside TLS: what the row says it carried, and its reader's factory.
struct PlaintextProtocol {
    let content: ConnectionRow.Content?
    let reader: (ReaderRoute) -> ConnectionReader
}

/// What a stream factory is given: the connection and the bytes that decided it.
struct StreamRoute {
    let info: ConnectionInfo
    let context: ConnectionContext
    let costs: ConnectionCostLedger
    /// The side whose first bytes decided the protocol (the side that sent a preface).
    let decidingSide: Direction
    /// The first bytes held while the protocol was undecided, with their side; nil when the
    /// first bytes decided at once.
    let firstBytes: (Direction, [UInt8])?
}

/// A decided connection, as the router holds it: `reader` takes every byte (the one call per
/// packet there was before the decision), `ending` closes it and writes its row.
struct Route {
    let reader: ByteStreamHandler
    let ending: ConnectionEnding
}

/// What closes a decided connection and writes its row.
protocol ConnectionEnding: AnyObject {
    func close(_ accounting: ConnectionAccounting)
}

/// What a UDP protocol's reader is made with, once per input: the keys, the bounds, where its
/// records go and where each connection's row goes when it closes.
struct UDPReaderContext {
    let input: String
    let keys: KeyStore
    let limits: Limits
    let sink: RecordSink
    let closed: (ConnectionRow, HTTPConnectionSummary) -> Void
    let diagnostics: DiagnosticsCollector
    let protocols: ProtocolRegistry
}

/// What an application over QUIC (HTTP/3) is made with: the connection (its first flow; `up`
/// from the client), the sink its records and claims go to, and the run's bounds.
public struct QUICApplicationRoute {
    public let info: ConnectionInfo
    public let sink: ConnectionRecordSink
    public let limits: Limits
}
