import CaptureIO
import ContentCoding
import CostAccounting
import Estimation
import PacketLayers
import Records

/// What happened while reading one input: the file's own account of packets, connections,
/// gaps and records, written to `diagnostics.json` and summarized on stderr.
public struct InputDiagnostics: Codable, Sendable, Equatable {
    public var source: String
    public var path: String
    /// `pcap`, `pcapng` (with `.gz` when compressed); empty when the file could not be opened.
    public var format = ""
    /// False when nothing could be read (not a capture, missing); the run's exit code says so.
    public var readable = true
    /// The error that stopped reading, naming the file and packet; nil when read to the end.
    public var error: String?

    public var packets = PacketCounts()
    public var connections = ConnectionCounts()
    public var gaps = GapCounts()
    public var records = RecordCounts()
    public var tls = TLSCounts()
    /// Link types we do not decode, once per interface.
    public var unsupportedLinkTypes: [UnsupportedLinkType] = []
    /// Records an estimator could give no figure for: estimator → reason → count.
    public var unestimated: [String: [EstimateUnavailable: Int]] = [:]
    /// Other notes worth a reader's eye (undecodable bodies and the like), counted by kind.
    public var notes: [DiagnosticNote: Int] = [:]
    /// What a HAR input held; nil for captures.
    public var har: HARCounts?
    /// Each registered protocol's connection counts (HTTP/2's: `h2`), summed; a kind no
    /// connection had is absent. Encoded under each kind's name.
    public var counters: [ConnectionCounterKind: CounterTotals] = [:]
    /// A capture's cost layers (docs/METERING.md §2c) summed over its connections, by direction:
    /// `up` client to server, `down` server to client; nil for HAR inputs. Not encoded with the
    /// input: diagnostics.json gives the run's sum.
    public var layers: LayerCounts?
    /// A capture's UDP (docs/METERING.md §2d); nil when it held none, and then not written.
    public var udp: UDPCounts?

    /// What a capture's UDP carried: every datagram, those of flows a protocol read (QUIC),
    /// and the others by port, at every layer.
    public struct UDPCounts: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case datagrams, flows, other, quic
            case otherUp = "other_up"
            case otherDown = "other_down"
            case readDatagrams = "read_datagrams"
            case readFlows = "read_flows"
            case evictedFlows = "evicted_flows"
            case midConnectionTrials = "mid_connection_trials"
        }
        /// Every UDP datagram decoded (tunnels opened: the inner ones).
        public var datagrams = 0
        /// UDP flows (4-tuples) seen.
        public var flows = 0
        /// Datagrams and flows a protocol took (QUIC): in its connections' rows.
        public var readDatagrams = 0
        public var readFlows = 0
        /// Flows closed early to stay under `Limits.maxUDPFlows`.
        public var evictedFlows = 0
        /// The datagrams no protocol took, by the flow's service port (its first datagram's
        /// destination port, unless only the source port is under 1024).
        public var other: [String: PortCounts] = [:]
        /// The same datagrams by direction (up: from the flow's first sender), over every port.
        public var otherUp = PortCounts()
        public var otherDown = PortCounts()
        /// The QUIC connections' packets and frames, summed; nil when there was none.
        public var quic: QUICCounts?
        /// The trial of the key log's 1-RTT secrets on flows that looked like QUIC joined after
        /// its handshake; nil when no flow was tried (and then not written).
        public var midConnectionTrials: MidConnectionTrials?

        /// What finding QUIC connections begun before the capture cost (docs/METERING.md §2d):
        /// flows and datagrams tried, trials (header-protection masks and AEAD opens), the
        /// connections found, and the flows left untried once the input's budget was spent.
        public struct MidConnectionTrials: Codable, Sendable, Equatable {
            enum CodingKeys: String, CodingKey {
                case flows, datagrams, trials, connections
                case untriedFlows = "untried_flows"
            }
            public var flows = 0
            public var datagrams = 0
            public var trials = 0
            public var connections = 0
            public var untriedFlows = 0
            public init(flows: Int = 0, datagrams: Int = 0, trials: Int = 0, connections: Int = 0, untriedFlows: Int = 0) {
                self.flows = flows
                self.datagrams = datagrams
                self.trials = trials
                self.connections = connections
                self.untriedFlows = untriedFlows
            }
        }

        public init() {}

        /// QUIC connections (docs/METERING.md §2d), and per direction their packets and frames.
        public struct QUICCounts: Codable, Sendable, Equatable {
            /// Connections, and those whose 1-RTT packets were decrypted.
            public var connections = 0
            public var decrypted = 0
            public var up = Side()
            public var down = Side()
            /// The connections not decrypted, by reason (no-key, bad-key, handshake-not-captured).
            public var notDecrypted: [String: Int] = [:]
            /// Of the decrypted ones, those found mid-way by a trial of the key log's 1-RTT
            /// secrets (`decrypted` `mid-connection`); nil when none was (and then not written).
            public var midConnection: Int?
            /// Their UDP payload bytes (both directions) by server name (`""`: no SNI).
            public var undecryptedBytes: [String: Int] = [:]
            public init() {}

            enum CodingKeys: String, CodingKey {
                case connections, decrypted, up, down
                case notDecrypted = "not_decrypted"
                case undecryptedBytes = "undecrypted_bytes_by_server_name"
                case midConnection = "mid_connection"
            }

            /// One direction: packets (coalesced ones each), decrypted, without a key, whose tag
            /// did not verify (a wrong key); STREAM frames and their data bytes (repeated ones
            /// included, and apart), CRYPTO data, PADDING, ACK frames, unknown frame types,
            /// key updates, stream bytes never captured.
            public struct Side: Codable, Sendable, Equatable {
                enum CodingKeys: String, CodingKey {
                    case packets, decrypted
                    case withoutKey = "without_key"
                    case badTag = "bad_tag"
                    case streamFrames = "stream_frames"
                    case streamBytes = "stream_bytes"
                    case repeatedStreamBytes = "repeated_stream_bytes"
                    case cryptoBytes = "crypto_bytes"
                    case paddingBytes = "padding_bytes"
                    case ackFrames = "ack_frames"
                    case unknownFrames = "unknown_frames"
                    case keyUpdates = "key_updates"
                    case gapBytes = "gap_bytes"
                    case packetBytes = "packet_bytes"
                    case datagramPadding = "datagram_padding"
                    case unreadableBytes = "unreadable_bytes"
                    case streamFrameHeaderBytes = "stream_frame_header_bytes"
                }
                public var packets = 0
                public var decrypted = 0
                public var withoutKey = 0
                public var badTag = 0
                public var streamFrames = 0
                public var streamBytes = 0
                public var repeatedStreamBytes = 0
                public var cryptoBytes = 0
                public var paddingBytes = 0
                public var ackFrames = 0
                public var unknownFrames = 0
                public var keyUpdates = 0
                public var gapBytes = 0
                /// The packets' bytes (header, payload, tag) by what they carried: handshake
                /// (Initial, Handshake), stream, ack_only, control, unread. With the padding
                /// after a datagram's last packet and the bytes that could not be read as a
                /// packet, every UDP payload byte of the direction.
                public var packetBytes: [String: Int] = [:]
                public var datagramPadding = 0
                public var unreadableBytes = 0
                /// STREAM frames' type, id, offset and length bytes (their data apart).
                public var streamFrameHeaderBytes = 0
                public init() {}
            }
        }

        /// One port's datagrams at each layer: the UDP payload, UDP (payload and 8-byte
        /// headers), IP (whole IP datagrams) and frame bytes.
        public struct PortCounts: Codable, Sendable, Equatable {
            enum CodingKeys: String, CodingKey {
                case datagrams, flows
                case payloadBytes = "payload_bytes"
                case udpBytes = "udp_bytes"
                case ipBytes = "ip_bytes"
                case frameBytes = "frame_bytes"
            }
            public var datagrams = 0
            public var flows = 0
            public var payloadBytes = 0
            public var udpBytes = 0
            public var ipBytes = 0
            public var frameBytes = 0
            public init() {}
        }
    }

    /// Per direction, every layer's total and the overhead no message owns, by kind.
    public struct LayerCounts: Codable, Sendable, Equatable {
        public var up = DirectionCost()
        public var down = DirectionCost()

        public init() {}

        /// The sum over `inputs`; nil when none has layers (HAR only).
        public init?(summing inputs: [InputDiagnostics]) {
            let counted = inputs.compactMap(\.layers)
            guard !counted.isEmpty else { return nil }
            for layers in counted {
                up.add(layers.up)
                down.add(layers.down)
            }
        }
    }

    public init(source: String, path: String) {
        self.source = source
        self.path = path
    }

    // snake_case keys, like the CSV columns; diagnostics.json and report.json share them.
    enum CodingKeys: String, CodingKey {
        case source, path, format, readable, error, packets, connections, gaps, records, tls, notes, unestimated, har,
            layers, udp
        case unsupportedLinkTypes = "unsupported_link_types"
    }

    /// Like the synthesized encoding, but `error` is written as null when there is none, and
    /// each counter kind under its name (the encoder sorts the keys).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(source, forKey: .source)
        try container.encode(path, forKey: .path)
        try container.encode(format, forKey: .format)
        try container.encode(readable, forKey: .readable)
        try container.encode(error, forKey: .error)
        try container.encode(packets, forKey: .packets)
        try container.encode(connections, forKey: .connections)
        try container.encode(gaps, forKey: .gaps)
        try container.encode(records, forKey: .records)
        try container.encode(tls, forKey: .tls)
        try container.encode(unsupportedLinkTypes, forKey: .unsupportedLinkTypes)
        try container.encode(unestimated, forKey: .unestimated)
        try container.encode(notes, forKey: .notes)
        try container.encodeIfPresent(har, forKey: .har)
        try container.encodeIfPresent(udp, forKey: .udp)
        var named = encoder.container(keyedBy: NamedKey.self)
        for (kind, totals) in counters { try named.encode(totals, forKey: NamedKey(kind.name)) }
        // `layers` is written once per run, summed (diagnostics.json's `layers`), not per input.
    }

    /// A HAR file's entries, and how its records' sizes were found.
    public struct HARCounts: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case version, creator, entries
            case creatorVersion = "creator_version"
            case brokenEntries = "broken_entries"
            case noResponse = "no_response"
            case statusZero = "status_zero"
            case fromCache = "from_cache"
            case webSocketMessages = "websocket_messages"
            case wireSources = "wire_sources"
        }
        public var version: String?
        public var creator: String?
        public var creatorVersion: String?
        /// Entries read, broken ones not included.
        public var entries = 0
        /// Entries that are JSON but no usable HAR entry: skipped, by index.
        public var brokenEntries: [BrokenEntry] = []
        /// Entries without a response object, and with `status: 0`: requests without response.
        public var noResponse = 0
        public var statusZero = 0
        public var fromCache = 0
        /// `_webSocketMessages` counted, not sized: they are not HTTP messages.
        public var webSocketMessages = 0
        /// Records by `wire_source`.
        public var wireSources: [WireSource: Int] = [:]

        public init(version: String?) {
            self.version = version
        }

        public struct BrokenEntry: Codable, Sendable, Equatable {
            public var index: Int
            public var reason: String

            public init(index: Int, reason: String) {
                self.index = index
                self.reason = reason
            }
        }
    }

    public struct PacketCounts: Codable, Sendable, Equatable {
        public init() {}
        enum CodingKeys: String, CodingKey {
            case read, tcp, skipped
            case fragmentsHeld = "fragments_held"
            case strayControl = "stray_control"
            case frameBytes = "frame_bytes"
            case fragmentDatagramsEvicted = "fragment_datagrams_evicted"
            case fragmentDatagramsExpired = "fragment_datagrams_expired"
            case clampedTimestamps = "clamped_timestamps"
            case assumedTimestampResolution = "assumed_timestamp_resolution"
            case ignoredResets = "ignored_resets"
        }
        public var read = 0
        public var tcp = 0
        /// IPv4 fragments stored until their datagram was complete.
        public var fragmentsHeld = 0
        /// Frames skipped, by reason.
        public var skipped: [SkipReason: Int] = [:]
        /// Payload-less packets of no known connection (late ACKs and RSTs).
        public var strayControl = 0
        public var frameBytes = 0
        /// Incomplete IPv4 datagrams dropped to stay under the fragment memory limit.
        public var fragmentDatagramsEvicted = 0
        /// Incomplete IPv4 datagrams dropped after 30 s (capture time) without a fragment.
        public var fragmentDatagramsExpired = 0
        /// Frames whose time lay outside 1970-01-01 ... 2262-04-11 and was clamped to it.
        public var clampedTimestamps = 0
        /// Frames of a pcapng interface whose if_tsresol was unusable (microseconds assumed).
        public var assumedTimestampResolution = 0
        /// RSTs that did not end their connection because the sender went on afterwards.
        public var ignoredResets = 0
    }

    public struct ConnectionCounts: Codable, Sendable, Equatable {
        public init() {}
        enum CodingKeys: String, CodingKey {
            case total, http, tls, other, unterminated
            case retransmittedBytes = "retransmitted_bytes"
            case tunnelBytes = "tunnel_bytes"
            case skippedBytes = "skipped_bytes"
            case tunnelsRead = "tunnels_read"
        }
        public var total = 0
        public var http = 0
        public var tls = 0
        public var other = 0
        /// Ended by the capture's end or the idle timeout rather than FIN/RST.
        public var unterminated = 0
        public var retransmittedBytes = 0
        /// Bytes after CONNECT / 101 Switching Protocols.
        public var tunnelBytes = 0
        /// Bytes skipped while resynchronizing on a message start.
        public var skippedBytes = 0
        /// CONNECT tunnels whose bytes were read as connections of their own (TLS or HTTP);
        /// their bytes are not in `tunnel_bytes`, which counts what no one read.
        public var tunnelsRead = 0

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            total = try container.decode(Int.self, forKey: .total)
            http = try container.decode(Int.self, forKey: .http)
            tls = try container.decode(Int.self, forKey: .tls)
            other = try container.decode(Int.self, forKey: .other)
            unterminated = try container.decode(Int.self, forKey: .unterminated)
            retransmittedBytes = try container.decode(Int.self, forKey: .retransmittedBytes)
            tunnelBytes = try container.decode(Int.self, forKey: .tunnelBytes)
            skippedBytes = try container.decode(Int.self, forKey: .skippedBytes)
            tunnelsRead = try container.decodeIfPresent(Int.self, forKey: .tunnelsRead) ?? 0
        }
    }

    public struct GapCounts: Codable, Sendable, Equatable {
        public init() {}
        enum CodingKeys: String, CodingKey {
            case count, bytes
            case truncatedBytes = "truncated_bytes"
        }
        public var count = 0
        public var bytes = 0
        /// Payload bytes cut by snaplen (known length, unknown content).
        public var truncatedBytes = 0
    }

    public struct RecordCounts: Codable, Sendable, Equatable {
        public init() {}
        public var requests = 0
        public var responses = 0
        public var interim = 0
        public var complete = 0
        public var incomplete = 0
        public var paired = 0
        public var unpaired = 0
        public var total: Int { requests + responses }
    }

    /// A registered `ConnectionCounterKind` summed over an input's connections: the object
    /// named after the kind (`h2`), with the connections that had it, each of its counts, and
    /// per direction its units by type.
    public struct CounterTotals: Encodable, Sendable, Equatable {
        public let kind: ConnectionCounterKind
        public var connections = 0
        public var counts: [Int]
        public var client: [String: FrameTypeCount] = [:]
        public var server: [String: FrameTypeCount] = [:]

        public init(kind: ConnectionCounterKind) {
            self.kind = kind
            counts = Array(repeating: 0, count: kind.counts.count)
        }

        public mutating func add(_ counters: ConnectionCounters) {
            connections += 1
            for (index, count) in counters.counts.enumerated() where index < counts.count {
                counts[index] = saturatingSum(counts[index], count)
            }
            for (name, count) in counters.client {
                client[name, default: FrameTypeCount(frames: 0, bytes: 0)].add(count)
            }
            for (name, count) in counters.server {
                server[name, default: FrameTypeCount(frames: 0, bytes: 0)].add(count)
            }
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: NamedKey.self)
            try container.encode(connections, forKey: NamedKey("connections"))
            for (name, count) in zip(kind.counts, counts) { try container.encode(count, forKey: NamedKey(name)) }
            try container.encode(client, forKey: NamedKey("client"))
            try container.encode(server, forKey: NamedKey("server"))
        }
    }

    /// A key named at run time: a registered kind's name and counts.
    struct NamedKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public struct TLSCounts: Codable, Sendable, Equatable {
        public init() {}
        enum CodingKeys: String, CodingKey {
            case connections, bytes, decrypted, h2
            case serverNames = "server_names"
            case notDecrypted = "not_decrypted"
            case undecryptedBytes = "undecrypted_bytes_by_server_name"
            case keyLogIssues = "key_log_issues"
        }
        /// TLS connections, decrypted or not, and their TCP payload bytes (both directions).
        public var connections = 0
        public var bytes = 0
        public var serverNames: [String] = []
        /// Connections whose every record was decrypted.
        public var decrypted = 0
        /// Decrypted connections whose ALPN (or preface) said HTTP/2 (read by the HTTP2 stage).
        public var h2 = 0
        /// Connections not (wholly) decrypted, by the first reason met (docs/METERING.md §2b).
        public var notDecrypted: [String: Int] = [:]
        /// TCP payload bytes of the connections not decrypted, by server name (`""`: no SNI).
        public var undecryptedBytes: [String: Int] = [:]
        /// Key log lines (files given with --keylog, this input's Decryption Secrets Blocks)
        /// that could not be used: `file:line: problem`.
        public var keyLogIssues: [String] = []

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            connections = try container.decode(Int.self, forKey: .connections)
            bytes = try container.decode(Int.self, forKey: .bytes)
            serverNames = try container.decode([String].self, forKey: .serverNames)
            decrypted = try container.decodeIfPresent(Int.self, forKey: .decrypted) ?? 0
            h2 = try container.decodeIfPresent(Int.self, forKey: .h2) ?? 0
            notDecrypted = try container.decodeIfPresent([String: Int].self, forKey: .notDecrypted) ?? [:]
            undecryptedBytes = try container.decodeIfPresent([String: Int].self, forKey: .undecryptedBytes) ?? [:]
            keyLogIssues = try container.decodeIfPresent([String].self, forKey: .keyLogIssues) ?? []
        }
    }

    public struct UnsupportedLinkType: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case interface
            case linkType = "link_type"
        }
        public var interface: Int
        public var linkType: Int32

        public init(interface: Int, linkType: Int32) {
            self.interface = interface
            self.linkType = linkType
        }
    }
}

/// A note on an input's bodies, counted in `InputDiagnostics.notes`; the raw value is its key
/// in diagnostics.json, `description` its line in report.md.
public enum DiagnosticNote: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    case bodyCodingUnsupported = "body-coding-unsupported"
    case bodyDecodingFailed = "body-decoding-failed"
    case bodyDecodingOverLimit = "body-decoding-over-limit"

    /// The note a body's decoding outcome calls for; nil when it came off (or there was none).
    public init?(_ outcome: DecodingOutcome) {
        switch outcome {
        case .identity, .decoded: return nil
        case .unsupported: self = .bodyCodingUnsupported
        case .failed: self = .bodyDecodingFailed
        case .overLimit: self = .bodyDecodingOverLimit
        }
    }

    public var description: String {
        switch self {
        case .bodyCodingUnsupported: return "Bodies in a content coding this build does not decode"
        case .bodyDecodingFailed: return "Bodies whose content coding failed to decode (damaged or cut)"
        case .bodyDecodingOverLimit: return "Bodies whose decoding stopped at a limit"
        }
    }
}
