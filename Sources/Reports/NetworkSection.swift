import Analysis
import Flows

/// report.md's "What the network carried" (docs/METERING.md §2c): per direction, the frame
/// bytes of every captured connection split into the HTTP bytes and what carried them.
extension MarkdownReport {
    static func networkSection(_ run: RunReport) -> [String] {
        var lines = ["## What the network carried", ""]
        let section = NetworkSection(run.aggregation)
        let sides = section.sides
        let httpOnly = section.httpOnlyRecords
        let captured = sides.contains {
            $0.figures.records > 0 || $0.figures.connections > 0 || $0.figures.otherUDPFrame > 0
        }
        guard captured else {
            lines.append("No layer under HTTP is known" + httpOnlyNote(httpOnly) + ".")
            return lines + [""]
        }
        lines.append("Every frame of the captured connections, by what it carried: the HTTP messages' bytes,")
        lines.append("then what TLS, TCP/IP and the link added, retransmitted message bytes, and the packets")
        lines.append("and records no message owns. Shares are of the direction's frame bytes.")
        lines.append("")
        var header = ["part"]
        for side in sides { header += ["\(side.side.label) B", "\(side.side.label) %"] }
        lines += MarkdownText.header(header, right: Set(1..<header.count))
        let names = sides.first?.parts.map(\.name) ?? []
        for (position, name) in names.enumerated() {
            var cells = [name]
            for side in sides {
                let bytes = side.parts[position].bytes
                cells += [TextFormat.bytes(bytes), share(bytes, of: side.frameTotal)]
            }
            lines.append(MarkdownText.row(cells))
        }
        var total = ["frame bytes (all)"]
        for side in sides {
            total += [TextFormat.bytes(side.frameTotal), share(side.frameTotal, of: side.frameTotal)]
        }
        lines.append(MarkdownText.row(total))
        lines.append("")
        for entry in sides {
            let (side, figures) = (entry.side, entry.figures)
            var note =
                "- \(side.label.capitalizedFirst): \(TextFormat.count(figures.records, "record")) with their layers"
                + " on \(TextFormat.count(figures.connections, "connection"))"
            if figures.lowerBoundRecords > 0 {
                note += " (\(TextFormat.bytes(figures.lowerBoundRecords)) partly never captured: lower bounds)"
            }
            lines.append(note + ".")
            let cost = figures.cost
            if cost.retransmittedBytes > 0 || figures.retransmitted > 0 {
                lines.append(
                    "  Sent again: \(TextFormat.bytes(cost.retransmittedBytes)) B of TCP payload"
                        + " in \(TextFormat.count(cost.retransmittedSegments, "segment")),"
                        + " \(TextFormat.bytes(figures.retransmitted)) B of it message bytes;"
                        + " the rest is in the connection overhead.")
            }
            if figures.unsharedIP > 0 {
                lines.append(
                    "  \(TextFormat.bytes(figures.unsharedIP)) B of IP overhead is in no endpoint's ip_share:"
                        + " its connections have no measured record.")
            }
        }
        if httpOnly > 0 {
            lines.append("- \(TextFormat.count(httpOnly, "record")) HTTP only (HAR), in no figure here.")
        }
        return lines + [""]
    }

    private static func httpOnlyNote(_ records: Int) -> String {
        records == 0
            ? "" : ": \(TextFormat.count(records, "record")) \(records == 1 ? "has" : "have") HTTP bytes only (HAR)"
    }

    /// `bytes` as a percentage of `total` (report.md's and report.html's network tables).
    static func share(_ bytes: Int, of total: Int) -> String {
        total == 0 ? "n/a" : TextFormat.fixed(100 * Double(bytes) / Double(total), decimals: 2) + "%"
    }
}

extension Direction {
    /// `up (client to server)`, `down (server to client)`.
    var label: String { self == .up ? "up" : "down" }
}
