import Analysis
import ContentCoding
import HTTP1

/// Decodes each message body as it streams past, counting only.
final class BodyDecoder: BodyObserver {
    let decoder: ContentDecoder

    init(decoder: ContentDecoder) { self.decoder = decoder }

    func bodyBytes(_ bytes: UnsafeRawBufferPointer) { decoder.feed(bytes) }
    func bodyGap(_ length: Int) { decoder.gap(length) }
}

/// The HTTP layer's sink for one input: turns messages into records, hands them on, and
/// keeps the input's diagnostics.
final class RecordCollector: HTTPRecordSink {
    typealias Observer = BodyDecoder

    private let source: String
    private let limits: DecodingLimits
    private let emit: (MessageRecord) -> Void
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private(set) var diagnostics: InputDiagnostics
    private var serverNames: Set<String> = []

    init(diagnostics: InputDiagnostics, limits: DecodingLimits, emit: @escaping (MessageRecord) -> Void) {
        self.source = diagnostics.source
        self.diagnostics = diagnostics
        self.limits = limits
        self.emit = emit
    }

    deinit { scratch.deallocate() }

    func bodyObserver(for message: HTTPMessage) -> BodyDecoder? {
        let codings = message.values(of: "content-encoding").flatMap { value in
            value.split(separator: UInt8(ascii: ",")).map { String(httpBytes: Array(trimmedSpaces($0))) }
        }.filter { !$0.isEmpty }
        return BodyDecoder(decoder: ContentDecoder(codings: codings, limits: limits, scratch: scratch))
    }

    func record(_ message: HTTPMessage, body: BodyDecoder?) {
        let outcome = body?.decoder.finish() ?? .identity
        let decoded = outcome == .decoded ? body!.decoder.decodedLength : message.bodyLength
        switch outcome {
        case .identity, .decoded: break
        case .unsupported: diagnostics.notes["body-coding-unsupported", default: 0] += 1
        case .failed: diagnostics.notes["body-decoding-failed", default: 0] += 1
        case .overLimit: diagnostics.notes["body-decoding-over-limit", default: 0] += 1
        }
        count(message)
        emit(MessageRecord(source: source, message: message, measured: message.complete,
                           bodyDecoded: decoded, decoding: outcome))
    }

    private func count(_ message: HTTPMessage) {
        if message.kind == .request { diagnostics.records.requests += 1 } else { diagnostics.records.responses += 1 }
        if message.isInterim { diagnostics.records.interim += 1 }
        if message.complete { diagnostics.records.complete += 1 } else { diagnostics.records.incomplete += 1 }
        if message.pair != nil { diagnostics.records.paired += 1 } else if !message.isInterim { diagnostics.records.unpaired += 1 }
    }

    func connectionClosed(_ summary: HTTPConnectionSummary) {
        let accounting = summary.accounting
        diagnostics.connections.total += 1
        switch summary.protocolKind {
        case .http: diagnostics.connections.http += 1
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

    func finishPackets(_ packets: InputDiagnostics.PacketCounts, unsupported: [InputDiagnostics.UnsupportedLinkType]) {
        diagnostics.packets = packets
        diagnostics.unsupportedLinkTypes = unsupported
    }

    func fail(_ message: String, readable: Bool) {
        diagnostics.error = message
        diagnostics.readable = readable
    }

    func setFormat(_ format: String) { diagnostics.format = format }
}

private func trimmedSpaces(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
    while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
    return slice
}
