import CaptureIO
import CostAccounting
import Flows
import MessageModel
import Records

/// The cost layers (docs/METERING.md §2c) summed over one group of measured records, with how
/// many records each sum covers: a HAR record has the HTTP layer only (`wire_bytes`), a
/// captured one every layer (docs/FIGURES.md, Cost layers).
public struct LayerFigures: Sendable, Equatable {
    /// Records whose `wire_tls` is known, and Σ `wire_tls` over them.
    public var tlsRecords = 0
    public var tls = 0
    /// Records whose layers under TLS are known, and Σ `wire_tcp`, `wire_ip`, `wire_frame`,
    /// retransmitted bytes over them.
    public var lowerRecords = 0
    public var tcp = 0
    public var ip = 0
    public var frame = 0
    public var retransmitted = 0
    /// Of `lowerRecords`, those with a part never captured: their layers are lower bounds.
    public var lowerBoundRecords = 0
    /// Σ `wire_ip` plus the share of their connections' overhead these records were given.
    public var ipShare = 0

    public init() {}

    mutating func add(_ wire: WireSize) {
        if let tls = wire.tls {
            tlsRecords += 1
            self.tls = saturatingSum(self.tls, tls)
        }
        if let lower = wire.lower {
            lowerRecords += 1
            tcp = saturatingSum(tcp, lower.tcp)
            ip = saturatingSum(ip, lower.ip)
            frame = saturatingSum(frame, lower.frame)
            retransmitted = saturatingSum(retransmitted, lower.retransmitted)
            ipShare = saturatingSum(ipShare, lower.ip)
            if lower.lowerBound { lowerBoundRecords += 1 }
        }
    }

    public mutating func merge(_ other: LayerFigures) {
        tlsRecords += other.tlsRecords
        tls = saturatingSum(tls, other.tls)
        lowerRecords += other.lowerRecords
        tcp = saturatingSum(tcp, other.tcp)
        ip = saturatingSum(ip, other.ip)
        frame = saturatingSum(frame, other.frame)
        retransmitted = saturatingSum(retransmitted, other.retransmitted)
        lowerBoundRecords += other.lowerBoundRecords
        ipShare = saturatingSum(ipShare, other.ipShare)
    }
}

/// A layer an estimate is compared against, beside the HTTP bytes (`wire_total`).
public enum CostLayer: String, Sendable, CaseIterable {
    case tls, tcp, ip, frame
    /// `wire_ip` with the connection overhead shared out (docs/FIGURES.md, `ip_share`).
    case ipShare = "ip_share"
}

/// One estimator's error against each cost layer, over the records it counts (measured, with
/// an estimate) that have the layer.
public struct LayerErrors: Sendable, Equatable {
    /// Records counted with `wire_tls`, and Σ of their estimates and of `wire_tls`.
    public var tlsCount = 0
    public var tlsEstimated = 0
    public var tls = 0
    /// Records counted with the layers under TLS, and Σ of their estimates and layers.
    public var lowerCount = 0
    public var lowerEstimated = 0
    public var tcp = 0
    public var ip = 0
    public var frame = 0
    public var ipShare = 0

    public init() {}

    mutating func add(_ wire: WireSize, estimate: Int) {
        if let tls = wire.tls {
            tlsCount += 1
            tlsEstimated = saturatingSum(tlsEstimated, estimate)
            self.tls = saturatingSum(self.tls, tls)
        }
        if let lower = wire.lower {
            lowerCount += 1
            lowerEstimated = saturatingSum(lowerEstimated, estimate)
            tcp = saturatingSum(tcp, lower.tcp)
            ip = saturatingSum(ip, lower.ip)
            frame = saturatingSum(frame, lower.frame)
            ipShare = saturatingSum(ipShare, lower.ip)
        }
    }

    public mutating func merge(_ other: LayerErrors) {
        tlsCount += other.tlsCount
        tlsEstimated = saturatingSum(tlsEstimated, other.tlsEstimated)
        tls = saturatingSum(tls, other.tls)
        lowerCount += other.lowerCount
        lowerEstimated = saturatingSum(lowerEstimated, other.lowerEstimated)
        tcp = saturatingSum(tcp, other.tcp)
        ip = saturatingSum(ip, other.ip)
        frame = saturatingSum(frame, other.frame)
        ipShare = saturatingSum(ipShare, other.ipShare)
    }

    /// Records counted against `layer`.
    public func count(_ layer: CostLayer) -> Int { layer == .tls ? tlsCount : lowerCount }

    /// Σ of `layer` over the records counted against it.
    public func bytes(_ layer: CostLayer) -> Int {
        switch layer {
        case .tls: return tls
        case .tcp: return tcp
        case .ip: return ip
        case .frame: return frame
        case .ipShare: return ipShare
        }
    }

    /// `Σ estimate − Σ layer` (signed bytes); nil when no record is counted against it.
    public func error(_ layer: CostLayer) -> Int? {
        guard count(layer) > 0 else { return nil }
        let estimated = layer == .tls ? tlsEstimated : lowerEstimated
        let (difference, overflow) = estimated.subtractingReportingOverflow(bytes(layer))
        return overflow ? nil : difference
    }

    /// `100 × error / layer`; nil when there is no error or the layer's sum is 0.
    public func errorPercent(_ layer: CostLayer) -> Double? {
        guard let error = error(layer), bytes(layer) != 0 else { return nil }
        return 100 * Double(error) / Double(bytes(layer))
    }
}

extension Direction {
    /// The side that sent a record: requests go up, responses down; an HTTP/2 server push's
    /// promised request (anomaly `pushed`) is sent by the server.
    public static func of(_ record: MessageRecord) -> Direction {
        record.message.kind == .request && !record.message.anomalies.contains(.pushed) ? .up : .down
    }
}

/// What the network carried one way, over every input: the records' bytes split by layer and
/// the connections' overhead by kind (report.md's "What the network carried").
public struct NetworkFigures: Sendable, Equatable {
    /// Records whose layers under HTTP are known, and of them those that are lower bounds.
    public var records = 0
    public var lowerBoundRecords = 0
    /// Records with HTTP bytes only (HAR): in no figure here.
    public var httpOnlyRecords = 0
    /// The records' own bytes, a partition of their frame bytes: HTTP (`wire_total`, at most
    /// the TCP payload sent once), TLS record overhead (the rest of that payload), TCP payload
    /// sent again, IP and TCP headers, link-layer headers.
    public var http = 0
    public var tlsOverhead = 0
    public var retransmitted = 0
    public var headers = 0
    public var link = 0
    /// The connections' overhead (and totals) added up from their rows.
    public var connections = 0
    public var cost = DirectionCost()
    /// Connection overhead in IP bytes that no record could be given (a connection without a
    /// measured record with IP bytes: TLS not decrypted, not HTTP, or a capture cut short).
    public var unsharedIP = 0
    /// UDP (docs/METERING.md §2d) apart from the connections' layers: the UDP no protocol read,
    /// a row of its own in `parts` when there is any. QUIC connections' datagrams are split by
    /// owner like TCP's packets (records and `cost`), so `quicIP`/`quicFrame` stay 0 in a run;
    /// they are kept so that parts written before (part.figures) still merge.
    public var quicIP = 0
    public var quicFrame = 0
    public var otherUDPIP = 0
    public var otherUDPFrame = 0
    /// QUIC's share of the records' bytes and of the connection overhead, parts of their own
    /// ("QUIC overhead", "UDP/IP headers"): the records' QUIC packet bytes beyond their HTTP/3
    /// frames, their UDP and IP headers, and the QUIC connections' costs (a part of `cost`).
    public var quicOverhead = 0
    public var udpHeaders = 0
    public var quicCost = DirectionCost()

    public init() {}

    mutating func add(_ record: MessageRecord) {
        guard let lower = record.wire.lower else {
            httpOnlyRecords += 1
            return
        }
        records += 1
        if lower.lowerBound { lowerBoundRecords += 1 }
        // Payload sent once; HTTP bytes beyond it (a gap never captured) are not on this bill.
        let once = max(lower.tcp - min(lower.retransmitted, lower.tcp), 0)
        let httpPart = min(max(record.wire.total ?? 0, 0), once)
        http = saturatingSum(http, httpPart)
        retransmitted = saturatingSum(retransmitted, lower.tcp - once)
        // Over QUIC `tcp` holds the QUIC packet bytes, and `ip - tcp` UDP's and IP's headers.
        if lower.udp == nil {
            tlsOverhead = saturatingSum(tlsOverhead, once - httpPart)
            headers = saturatingSum(headers, max(lower.ip - lower.tcp, 0))
        } else {
            quicOverhead = saturatingSum(quicOverhead, once - httpPart)
            udpHeaders = saturatingSum(udpHeaders, max(lower.ip - lower.tcp, 0))
        }
        link = saturatingSum(link, max(lower.frame - max(lower.ip, lower.tcp), 0))
    }

    mutating func add(_ cost: DirectionCost) {
        // A connection known without its frames (a Charles tunnel: its TCP payload only) is in
        // no frame figure; its bytes are in connections.csv and the TLS section.
        guard cost.total.frame > 0 || cost.total.tcp == 0 else { return }
        connections += 1
        self.cost.add(cost)
        if cost.udp > 0 { quicCost.add(cost) }
    }

    public mutating func merge(_ other: NetworkFigures) {
        records += other.records
        lowerBoundRecords += other.lowerBoundRecords
        httpOnlyRecords += other.httpOnlyRecords
        http = saturatingSum(http, other.http)
        tlsOverhead = saturatingSum(tlsOverhead, other.tlsOverhead)
        retransmitted = saturatingSum(retransmitted, other.retransmitted)
        headers = saturatingSum(headers, other.headers)
        link = saturatingSum(link, other.link)
        connections += other.connections
        cost.add(other.cost)
        unsharedIP = saturatingSum(unsharedIP, other.unsharedIP)
        quicIP = saturatingSum(quicIP, other.quicIP)
        quicFrame = saturatingSum(quicFrame, other.quicFrame)
        otherUDPIP = saturatingSum(otherUDPIP, other.otherUDPIP)
        otherUDPFrame = saturatingSum(otherUDPFrame, other.otherUDPFrame)
        quicOverhead = saturatingSum(quicOverhead, other.quicOverhead)
        udpHeaders = saturatingSum(udpHeaders, other.udpHeaders)
        quicCost.add(other.quicCost)
    }

    /// The rows of report.md's "What the network carried", in order, partitioning `frameTotal`:
    /// (name, bytes). TLS handshake records count as TLS overhead; the headers of the packets
    /// that carry connection overhead as TCP/IP (UDP/IP over QUIC) and link-layer headers. A
    /// run with QUIC has two more rows, "QUIC overhead" and "UDP/IP headers"; without, the rows
    /// are those of a TCP-only run.
    public var parts: [(name: String, bytes: Int)] {
        // Each overhead kind's bytes go to its part; the headers of its packets (but those of
        // packets without payload, which are their own part) to the header parts. TCP's share of
        // a kind is what QUIC's connections (`quicCost`) leave of it.
        var tls = tlsOverhead
        var quic = quicOverhead
        var (tcpHeaders, quicHeaders) = (headers, udpHeaders)
        var emptyPackets = 0
        var other = 0
        var overheadLink = 0
        for kind in OverheadKind.all {
            let quicBytes = quicCost[kind]
            let all = cost[kind]
            for (bytes, overQUIC) in [(all.minus(quicBytes), false), (quicBytes, true)] {
                switch kind.part {
                case .tls:
                    if overQUIC { quic = saturatingSum(quic, bytes.tcp) } else { tls = saturatingSum(tls, bytes.tcp) }
                case .emptyPackets: emptyPackets = saturatingSum(emptyPackets, bytes.ip)
                case .other: other = saturatingSum(other, bytes.tcp)
                }
                if kind.part != .emptyPackets {
                    let packetHeaders = max(bytes.ip - bytes.tcp, 0)
                    if overQUIC {
                        quicHeaders = saturatingSum(quicHeaders, packetHeaders)
                    } else {
                        tcpHeaders = saturatingSum(tcpHeaders, packetHeaders)
                    }
                }
                overheadLink = saturatingSum(overheadLink, max(bytes.frame - bytes.ip, 0))
            }
        }
        let hasQUIC = quicCost.total.frame > 0 || quicOverhead > 0 || udpHeaders > 0
        var rows: [(name: String, bytes: Int)] = [("HTTP bytes", http), ("TLS overhead", tls)]
        if hasQUIC { rows.append(("QUIC overhead", quic)) }
        rows += [("retransmissions", retransmitted), ("TCP/IP headers", tcpHeaders)]
        if hasQUIC { rows.append(("UDP/IP headers", quicHeaders)) }
        rows += [("handshakes and ACKs", emptyPackets), ("other connection overhead", other)]
        if quicFrame > 0 { rows.append(("QUIC connections (UDP/IP)", quicIP)) }
        if otherUDPFrame > 0 { rows.append(("other UDP (UDP/IP)", otherUDPIP)) }
        let udpLink = saturatingSum(max(quicFrame - quicIP, 0), max(otherUDPFrame - otherUDPIP, 0))
        rows.append(("link-layer headers", saturatingSum(saturatingSum(link, overheadLink), udpLink)))
        return rows
    }

    /// Σ of `parts`: every frame byte of the records and of the connection overhead.
    public var frameTotal: Int { parts.reduce(0) { saturatingSum($0, $1.bytes) } }
}

/// A share of connection overhead: to whom it goes. Records of one connection, side, endpoint
/// and direction that the same estimators count share together.
public struct ShareKey: Hashable, Sendable, Comparable {
    public var group: GroupKey
    /// Bit i: estimator i counts these records (measured, with an estimate).
    public var estimators: UInt64

    public init(group: GroupKey, estimators: UInt64) {
        self.group = group
        self.estimators = estimators
    }

    public static func < (a: ShareKey, b: ShareKey) -> Bool {
        a.group != b.group ? a.group < b.group : a.estimators < b.estimators
    }
}

/// What `OverheadSharing.finish` hands the aggregation: shares per key and side, and the
/// overhead no record could take.
public struct OverheadShares: Sendable, Equatable {
    public var shares: [ShareKey: Int] = [:]
    public var unshared: [Direction: Int] = [:]

    public init() {}
}

/// Shares each connection's overhead (IP layer, per side) out over the connection's measured
/// records with IP bytes, in proportion to their `wire_ip` (docs/FIGURES.md, `ip_share`).
///
/// Rounding: largest remainder. Each key k of weight w_k (Σ `wire_ip` of its records) out of
/// W gets ⌊O·w_k/W⌋ of the overhead O; the bytes left (fewer than the keys) go one each to
/// the keys of largest remainder (O·w_k mod W), ties in key order. The shares of a connection
/// add up to O exactly. A side with no such record gives its overhead to the records the
/// other side sent (a request never answered still cost the server's ACKs); a connection
/// with no such record at all leaves it unshared.
///
/// Records and the row that closes their connection come in any order (a record may wait for
/// its body's measurement), so a connection's state is kept until `finish`, at the end of an
/// input: a few integers per connection and endpoint.
public struct OverheadSharing: Sendable {
    struct ConnectionKey: Hashable {
        var connection: Int
        var tunnelHost: String
    }

    struct Pending {
        var weights: [Direction: [ShareKey: Int]] = [:]
        var overhead: [Direction: Int] = [:]
    }

    fileprivate var pending: [ConnectionKey: Pending] = [:]

    public init() {}

    public mutating func add(_ record: MessageRecord) {
        guard record.measured, case let .capture(flow) = record.source, let lower = record.wire.lower, lower.ip > 0
        else { return }
        var mask: UInt64 = 0
        for (index, estimate) in record.estimates.enumerated() where index < 64 {
            if case .success = estimate { mask |= 1 << UInt64(index) }
        }
        let key = ShareKey(group: GroupKey(endpoint: record.endpoint, direction: record.direction), estimators: mask)
        let connection = ConnectionKey(connection: flow.connection, tunnelHost: flow.tunnelHost ?? "")
        let side = Direction.of(record)
        // One access in place: the keys (two of them strings) are hashed once per record.
        pending[connection, default: Pending()].weights[side, default: [:]][key, default: 0].addSaturating(lower.ip)
    }

    public mutating func add(_ row: ConnectionRow) {
        let connection = ConnectionKey(connection: row.connection, tunnelHost: row.tunnelHost)
        for (side, cost) in [(Direction.up, row.clientCost), (.down, row.serverCost)] {
            let overhead = max(cost.overhead.ip, 0)
            guard overhead > 0 else { continue }
            pending[connection, default: Pending()].overhead[side, default: 0].addSaturating(overhead)
        }
    }

    /// Shares out every connection seen, and forgets them.
    public mutating func finish() -> OverheadShares {
        var result = OverheadShares()
        for (_, connection) in pending {
            for side in Direction.allCases {
                guard let overhead = connection.overhead[side], overhead > 0 else { continue }
                let own = connection.weights[side] ?? [:]
                let other = connection.weights[side == .up ? .down : .up] ?? [:]
                let weights = own.values.contains { $0 > 0 } ? own : other
                guard let shares = Self.shares(overhead, weights: weights) else {
                    result.unshared[side] = saturatingSum(result.unshared[side] ?? 0, overhead)
                    continue
                }
                for (key, share, _) in shares where share > 0 {
                    result.shares[key, default: 0].addSaturating(share)
                }
            }
        }
        pending.removeAll()
        return result
    }

    /// `amount` split over `weights` in proportion, by largest remainder (ties in key order);
    /// nil when the weights sum to 0. The shares sum to `amount` exactly.
    ///
    /// Keys are compared only where remainders tie at the last place that gets a byte: sorting
    /// every key (an endpoint's text each) cost more than the rest of the sharing.
    public static func largestRemainder(_ amount: Int, weights: [ShareKey: Int]) -> [ShareKey: Int]? {
        guard let entries = shares(amount, weights: weights) else { return nil }
        var shares: [ShareKey: Int] = [:]
        shares.reserveCapacity(entries.count)
        for entry in entries { shares[entry.key] = entry.share }
        return shares
    }

    /// `largestRemainder`'s shares as a list (with each key's remainder), for `finish`, which
    /// adds them up by key anyway.
    static func shares(_ amount: Int, weights: [ShareKey: Int]) -> [(key: ShareKey, share: Int, remainder: Int)]? {
        // Non-negative terms: the saturating sum does not depend on the order.
        let total = weights.values.reduce(0) { saturatingSum($0, max($1, 0)) }
        guard total > 0, amount >= 0 else { return nil }
        var entries: [(key: ShareKey, share: Int, remainder: Int)] = []
        entries.reserveCapacity(weights.count)
        var given = 0
        for (key, weight) in weights {
            // amount × weight may exceed Int: divide the double-width product.
            let product = amount.multipliedFullWidth(by: max(weight, 0))
            let (quotient, remainder) = total.dividingFullWidth((high: product.high, low: product.low))
            entries.append((key, quotient, remainder))
            given += quotient
        }
        // Fewer bytes left than keys: one each to the largest remainders. Those above the
        // remainder of the last one to get a byte all get one; of those at it, the first in key order.
        let left = amount - given
        if left > 0 {
            let threshold = entries.map(\.remainder).sorted(by: >)[left - 1]
            var tied: [Int] = []
            var above = 0
            for index in entries.indices {
                if entries[index].remainder > threshold {
                    entries[index].share += 1
                    above += 1
                } else if entries[index].remainder == threshold {
                    tied.append(index)
                }
            }
            tied.sort { entries[$0].key < entries[$1].key }
            for index in tied.prefix(left - above) { entries[index].share += 1 }
        }
        return entries
    }
}

/// What endpoints are ranked by (`--rank-by`): the ranking estimator's error against the HTTP
/// bytes (`wire_total`), or against the IP bytes with the connection overhead shared out
/// (`ip_share`).
public enum RankLayer: String, Sendable, CaseIterable {
    case http, ip

    /// A group's error for the ranking: HTTP, or against `ip_share` (0 without IP bytes: a HAR
    /// endpoint then ranks last).
    public func error(_ figures: EstimatorFigures) -> Int {
        switch self {
        case .http: return figures.error
        case .ip: return figures.layers.error(.ipShare) ?? 0
        }
    }
}

/// A record's weight in its connection's overhead sharing, kept apart from the record when the
/// estimators that count it are known only later (an app meter's, joined at the end of the run).
public struct PendingShare: Sendable {
    let connection: OverheadSharing.ConnectionKey
    let side: Direction
    let group: GroupKey
    let ip: Int

    /// Nil when the record takes no share (not measured, not captured, no IP bytes). Borrowed:
    /// an initializer's parameters are otherwise owned, which copied the whole record.
    public init?(_ record: borrowing MessageRecord) {
        guard record.measured, case let .capture(flow) = record.source, let lower = record.wire.lower, lower.ip > 0
        else { return nil }
        connection = OverheadSharing.ConnectionKey(connection: flow.connection, tunnelHost: flow.tunnelHost ?? "")
        side = Direction.of(record)
        group = GroupKey(endpoint: record.endpoint, direction: record.direction)
        ip = lower.ip
    }
}

extension OverheadSharing {
    /// `add(_ record:)` of a record kept as its `PendingShare`, counted by the estimators in `mask`.
    public mutating func add(_ share: PendingShare, estimators mask: UInt64) {
        let key = ShareKey(group: share.group, estimators: mask)
        pending[share.connection, default: Pending()].weights[share.side, default: [:]][key, default: 0]
            .addSaturating(share.ip)
    }
}
