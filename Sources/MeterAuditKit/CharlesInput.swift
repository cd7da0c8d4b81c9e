import Analysis
import CaptureIO
import CostAccounting
import Foundation
import HARMessages
import Records
import TLS

extension InputAnalyzer {
    /// A Charles session (docs/CHARLES.md): transactions → messages → records, like a HAR's
    /// entries; `tunnel: true` transactions become connection rows, not messages.
    func analyzeCharles(
        path: String, sink: RecordSink, diagnostics collector: DiagnosticsCollector, progress: ((Int, Int) -> Void)?,
        connection: ((ConnectionRow) -> Void)?
    ) {
        let reader: CharlesSessionReader
        do {
            reader = try CharlesSession.open(path: path)
        } catch {
            collector.fail("\(path): \(error)", readable: false)
            return
        }
        collector.setFormat(reader.format)
        let builder = CharlesMessageBuilder()
        let input = String(path.split(separator: "/").last ?? Substring(path))
        let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        // Three stages, each on its own thread, in file order, as for HAR (analyzeHAR).
        let transactions = readingAhead(reader.next, bytesRead: { reader.bytesRead }, cost: { ReadItem.cost($0) })
        let ahead = ReadAhead<ReadItem, (counts: InputDiagnostics.HARCounts, error: Error?)> { put in
            var counts = InputDiagnostics.HARCounts(version: nil)
            counts.creator = "Charles Proxy"
            var count = 0
            while let (result, read) = transactions.next() {
                count += 1
                switch result {
                case let .transaction(transaction):
                    counts.entries += 1
                    if transaction.tunnel {
                        put(.tunnel(Self.tunnelRow(transaction, input: input)), 1024)
                        continue
                    }
                    if transaction.response == nil { counts.noResponse += 1 }
                    let (request, response) = builder.messages(for: transaction)
                    counts.wireSources[request.wire.source, default: 0] += 1
                    if let response { counts.wireSources[response.wire.source, default: 0] += 1 }
                    let itemCost = ReadItem.cost(request, response)
                    put(.messages(consume request, consume response), itemCost)
                case let .broken(index, reason):
                    counts.brokenEntries.append(.init(index: index, reason: reason))
                }
                if progress != nil, count & 0x3f == 0 { put(.progress(read), 0) }
            }
            return (counts, transactions.result)
        }
        sink.freeElsewhere = { ahead.giveBack($0) }
        defer { sink.freeElsewhere = nil }
        while let item = ahead.next() {
            if case let .tunnel(row) = item {
                collector.countRecorded(row)
                connection?(row)
            } else {
                record(item, sink: sink, progress: progress, fileSize: fileSize)
            }
        }
        let (counts, failure) = ahead.result
        if let failure { collector.fail("\(path): \(failure)", readable: true) }
        collector.setHAR(counts)
    }

    /// A CONNECT Charles did not decrypt, as a `tls-undecrypted` row (docs/CHARLES.md,
    /// "Tunnels"): each direction's bytes are its `sizes` (CONNECT head, TLS handshake, tunnelled
    /// bytes), the handshake its TLS control bytes, and no message owns any of them.
    static func tunnelRow(_ transaction: CharlesTransaction, input: String) -> ConnectionRow {
        let server = CharlesMessageBuilder.endpoint(
            transaction.remoteAddress ?? transaction.host, transaction.actualPort)
        var row = ConnectionRow(
            input: input, connection: transaction.index,
            client: CharlesMessageBuilder.endpoint(transaction.clientAddress, transaction.clientPort), server: server,
            protocolKind: .tlsUndecrypted)
        row.serverName = transaction.host ?? ""
        row.alpn = transaction.alpn ?? ""
        row.tlsVersion = transaction.tlsProtocol ?? ""
        row.cipherSuite = transaction.cipherSuite ?? ""
        row.decrypted = "charles-tunnel"
        func fill(_ part: CharlesMessagePart?, tcp: inout Int, tls: inout Int, control: inout Int, cost: inout DirectionCost) {
            guard let part else { return }
            let handshake = part.handshakeSize ?? 0
            let head = part.headersSize ?? 0
            let body = part.bodySize ?? 0
            tcp = saturatingSum(saturatingSum(handshake, head), body)
            tls = saturatingSum(handshake, body)
            control = handshake
            cost.total.tcp = tcp
            cost.total.tls = tls
            cost.kinds[.tlsControl].tcp = handshake
            cost.kinds[.tlsControl].tls = handshake
            cost.kinds[.unclaimed].tcp = tcp - handshake
            cost.kinds[.unclaimed].tls = tls - handshake
        }
        fill(
            transaction.request, tcp: &row.clientTCPBytes, tls: &row.clientTLSBytes, control: &row.clientTLSControlBytes,
            cost: &row.clientCost)
        fill(
            transaction.response, tcp: &row.serverTCPBytes, tls: &row.serverTLSBytes,
            control: &row.serverTLSControlBytes, cost: &row.serverCost)
        return row
    }
}
