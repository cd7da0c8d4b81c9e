import Analysis
import CaptureIO
import ContentCoding
import Estimation
import MessageModel

/// Keeps one input's diagnostics while it is read: records by kind, bodies that did not
/// decode, estimates that could not be made, connections, packets.
final class DiagnosticsCollector {
    /// Counted into several times per record: not checked for overlapping access at run time
    /// (`@exclusivity(unchecked)`), as the collector lives on the parsing thread alone and each
    /// count is a plain change of one figure, with no code running meanwhile. The run tests
    /// count through it in debug builds.
    @exclusivity(unchecked) private(set) var diagnostics: InputDiagnostics
    private var serverNames: Set<String> = []

    init(_ diagnostics: InputDiagnostics) {
        self.diagnostics = diagnostics
    }

    func count(_ message: HTTPMessage) {
        if message.kind == .request { diagnostics.records.requests += 1 } else { diagnostics.records.responses += 1 }
        if message.isInterim { diagnostics.records.interim += 1 }
        if message.complete { diagnostics.records.complete += 1 } else { diagnostics.records.incomplete += 1 }
        if message.pair != nil {
            diagnostics.records.paired += 1
        } else if !message.isInterim {
            diagnostics.records.unpaired += 1
        }
    }

    func count(_ outcome: DecodingOutcome) {
        if let note = DiagnosticNote(outcome) { diagnostics.notes[note, default: 0] += 1 }
    }

    func count(_ estimates: [Result<Estimate, EstimateUnavailable>], estimators: EstimatorSet) {
        // By index: the estimators' names are looked up only for a failure (an array of them
        // per record cost more than the rest of the count).
        for (index, estimate) in estimates.enumerated() {
            if case let .failure(reason) = estimate {
                diagnostics.unestimated[estimators.estimators[index].name, default: [:]][reason, default: 0] += 1
            }
        }
    }

    func count(_ summary: HTTPConnectionSummary, tlsCounted: Bool = false) {
        let accounting = summary.accounting
        diagnostics.connections.total += 1
        switch summary.protocolKind {
        case .http: diagnostics.connections.http += 1
        case .tls where tlsCounted:
            diagnostics.connections.tls += 1
        case .tls:
            diagnostics.connections.tls += 1
            diagnostics.tls.connections += 1
            diagnostics.tls.bytes += accounting.initiator.payloadBytes + accounting.responder.payloadBytes
            if let name = summary.serverName, serverNames.insert(name).inserted {
                diagnostics.tls.serverNames = serverNames.sorted()
            }
        case .other: diagnostics.connections.other += 1
        }
        for end in [accounting.initiatorEnd, accounting.responderEnd] where end == .endOfCapture || end == .idle {
            diagnostics.connections.unterminated += 1
            break
        }
        for side in [accounting.initiator, accounting.responder] {
            diagnostics.gaps.count += side.gaps
            diagnostics.gaps.bytes += side.gapBytes
            diagnostics.gaps.truncatedBytes += side.truncatedBytes
            diagnostics.connections.retransmittedBytes += side.retransmittedBytes
        }
        for tally in [summary.clientTally, summary.serverTally] {
            diagnostics.connections.tunnelBytes += tally.tunnelBytes
            diagnostics.connections.skippedBytes += tally.skippedBytes
        }
    }

    /// A connection closed: its summary as before, and what its TLS said.
    func count(_ row: ConnectionRow, _ summary: HTTPConnectionSummary) {
        var layers = diagnostics.layers ?? InputDiagnostics.LayerCounts()
        layers.up.add(row.clientCost)
        layers.down.add(row.serverCost)
        diagnostics.layers = layers
        for (kind, counters) in row.counters {
            diagnostics.counters[kind, default: InputDiagnostics.CounterTotals(kind: kind)].add(counters)
        }
        // A CONNECT tunnel's TCP connection is counted once, as its own row; its TLS below.
        let inTunnel = !row.tunnelHost.isEmpty
        if inTunnel {
            diagnostics.connections.tunnelsRead += 1
            // Read as a connection: no longer bytes left unmeasured inside a tunnel (the
            // outer connection counts them as tunnel bytes when it closes, right after).
            diagnostics.connections.tunnelBytes =
                diagnostics.connections.tunnelBytes
                - saturatingSum(row.clientTCPBytes, row.serverTCPBytes)
        } else if row.decrypted.isEmpty {
            return count(summary)
        }
        guard !row.decrypted.isEmpty else { return }
        if !inTunnel {
            var cleared = summary
            cleared.protocolKind = row.protocolKind == .http1 ? .http : .other
            if row.protocolKind == .tlsUndecrypted || row.protocolKind == .h2 { cleared.protocolKind = .tls }
            count(cleared, tlsCounted: true)
        }
        let bytes = saturatingSum(row.clientTCPBytes, row.serverTCPBytes)
        diagnostics.tls.connections += 1
        diagnostics.tls.bytes = saturatingSum(diagnostics.tls.bytes, bytes)
        if !row.serverName.isEmpty, serverNames.insert(row.serverName).inserted {
            diagnostics.tls.serverNames = serverNames.sorted()
        }
        if row.protocolKind == .h2 { diagnostics.tls.h2 += 1 }
        if row.decrypted == "yes" {
            diagnostics.tls.decrypted += 1
        } else {
            diagnostics.tls.notDecrypted[row.decrypted, default: 0] += 1
            if row.protocolKind == .tlsUndecrypted {
                diagnostics.tls.undecryptedBytes[row.serverName, default: 0] = saturatingSum(
                    diagnostics.tls.undecryptedBytes[row.serverName, default: 0], bytes)
            }
        }
    }

    /// A connection a recorded session describes (a Charles tunnel, docs/CHARLES.md): counted as
    /// a TLS connection that was not decrypted, its bytes per host, its layers in the totals.
    func countRecorded(_ row: ConnectionRow) {
        var layers = diagnostics.layers ?? InputDiagnostics.LayerCounts()
        layers.up.add(row.clientCost)
        layers.down.add(row.serverCost)
        diagnostics.layers = layers
        let bytes = saturatingSum(row.clientTCPBytes, row.serverTCPBytes)
        diagnostics.connections.total += 1
        diagnostics.connections.tls += 1
        diagnostics.tls.connections += 1
        diagnostics.tls.bytes = saturatingSum(diagnostics.tls.bytes, bytes)
        if !row.serverName.isEmpty, serverNames.insert(row.serverName).inserted {
            diagnostics.tls.serverNames = serverNames.sorted()
        }
        diagnostics.tls.notDecrypted[row.decrypted, default: 0] += 1
        diagnostics.tls.undecryptedBytes[row.serverName, default: 0] = saturatingSum(
            diagnostics.tls.undecryptedBytes[row.serverName, default: 0], bytes)
    }

    func addKeyLogIssues(_ issues: [String]) { diagnostics.tls.keyLogIssues += issues }

    /// The UDP flow table's counts, with the QUIC connections' figures already added.
    func setUDP(_ counts: InputDiagnostics.UDPCounts) {
        let quic = diagnostics.udp?.quic
        let trials = diagnostics.udp?.midConnectionTrials
        diagnostics.udp = counts
        diagnostics.udp?.quic = quic
        diagnostics.udp?.midConnectionTrials = trials
    }

    /// What the trial of 1-RTT secrets on flows joined mid-way cost (QUIC's reader, at its end).
    func setMidConnectionTrials(_ trials: InputDiagnostics.UDPCounts.MidConnectionTrials) {
        var udp = diagnostics.udp ?? InputDiagnostics.UDPCounts()
        udp.midConnectionTrials = trials
        diagnostics.udp = udp
    }

    /// One QUIC connection's figures, when its row is written.
    func addQUIC(decrypted: Bool, _ body: (inout InputDiagnostics.UDPCounts.QUICCounts) -> Void) {
        var udp = diagnostics.udp ?? InputDiagnostics.UDPCounts()
        var quic = udp.quic ?? .init()
        quic.connections += 1
        if decrypted { quic.decrypted += 1 }
        body(&quic)
        udp.quic = quic
        diagnostics.udp = udp
    }

    func finishPackets(_ packets: InputDiagnostics.PacketCounts, unsupported: [InputDiagnostics.UnsupportedLinkType]) {
        diagnostics.packets = packets
        diagnostics.unsupportedLinkTypes = unsupported
    }

    func fail(_ message: String, readable: Bool) {
        diagnostics.error = message
        diagnostics.readable = readable
    }

    func setFormat(_ format: String) { diagnostics.format = format }

    func setHAR(_ counts: InputDiagnostics.HARCounts) { diagnostics.har = counts }
}
