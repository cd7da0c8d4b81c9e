import Analysis
import Flows

/// What each direction cost the network, layer by layer: one bar per direction (up, down),
/// its frame bytes stacked by what they carried (`NetworkFigures.parts`: HTTP, TLS (and QUIC),
/// retransmitted, TCP/IP (and UDP/IP) headers, handshakes and ACKs, other overhead, link
/// layer), on a linear byte scale.
enum CostLayersChart {
    /// Short legend names for `NetworkFigures.parts` by part name, with their colors: the parts
    /// every run has, then those only a run with QUIC or other UDP has (the legend shows them
    /// only when a bar has them).
    static let standard: [(name: String, label: String, color: String)] = [
        ("HTTP bytes", "HTTP", ChartColor.body), ("TLS overhead", "TLS", ChartColor.headers),
        ("retransmissions", "retransmitted", ChartColor.under), ("TCP/IP headers", "TCP/IP headers", ChartColor.request),
        ("handshakes and ACKs", "handshakes and ACKs", ChartColor.line),
        ("other connection overhead", "other overhead", ChartColor.response),
        ("link-layer headers", "link layer", ChartColor.interim),
    ]
    static let optional: [String: (label: String, color: String)] = [
        "QUIC overhead": ("QUIC", "#882255"), "UDP/IP headers": ("UDP/IP headers", "#44AA99"),
        "QUIC connections (UDP/IP)": ("QUIC", "#0B3C5D"), "other UDP (UDP/IP)": ("other UDP", "#F0E442"),
    ]

    static func legendEntry(_ name: String) -> (label: String, color: String) {
        if let entry = standard.first(where: { $0.name == name }) { return (entry.label, entry.color) }
        return optional[name] ?? (name, ChartColor.interim)
    }

    static func chart(_ network: NetworkSection) -> Chart {
        let sides = network.sidesWithFrames
        // The parts in their order; an optional one only when a bar has it.
        let present = Set(sides.flatMap { $0.parts.filter { $0.bytes > 0 }.map(\.name) })
        let names = sides.first?.parts.map(\.name) ?? Self.standard.map(\.name)
        let legend = names.filter { optional[$0] == nil || present.contains($0) }.map(legendEntry)
        let rowHeight = 34.0
        var frame = ChartFrame.endpointRows(2, rowHeight: rowHeight)
        frame.left = 150
        var svg = SVG(
            width: frame.width, height: frame.height, label: "Bytes per layer, stacked per direction")
        svg.legend(legend, x: frame.plotLeft, y: 16)
        let largest = sides.map { Double($0.frameTotal) }.max() ?? 0
        var domain = LinearScale.nice(0, largest, count: 6)
        if domain.0 == domain.1 { domain = (0, 1) }
        let scale = LinearScale(domain: domain, range: (frame.plotLeft, frame.plotRight))
        frame.xAxis(&svg, scale: scale, label: "bytes on the wire (frame bytes, link layer included)")
        svg.line(
            x1: frame.plotLeft, y1: frame.plotTop, x2: frame.plotLeft, y2: frame.plotBottom, stroke: ChartColor.axis)
        if sides.isEmpty {
            svg.text(
                "no captured connection: the layers under HTTP are unknown", x: (frame.plotLeft + frame.plotRight) / 2,
                y: frame.plotTop + 14, anchor: .middle)
        }
        for (position, entry) in sides.enumerated() {
            let y = frame.plotTop + Double(position) * rowHeight
            var start = 0
            for part in entry.parts where part.bytes > 0 {
                let end = start + part.bytes
                let x0 = scale.position(Double(start))
                let x1 = scale.position(Double(end))
                let share = TextFormat.fixed(100 * Double(part.bytes) / Double(entry.frameTotal), decimals: 2)
                svg.rect(
                    x: x0, y: y + 4, width: max(x1 - x0, 1), height: rowHeight - 8, fill: legendEntry(part.name).color,
                    tooltip: "\(entry.side.label), \(part.name): \(TextFormat.bytes(part.bytes)) B (\(share)%)")
                start = end
            }
            svg.text(
                entry.side == .up ? "↑ up (client to server)" : "↓ down (server to client)", x: frame.plotLeft - 8,
                y: y + rowHeight / 2 + 4, anchor: .end, size: 11)
        }
        let httpOnly = network.httpOnlyRecords
        var note =
            "Every frame of the captured connections, up and down, split by what it carried; hover a segment for"
            + " its bytes and share."
        if httpOnly > 0 {
            note += " \(TextFormat.count(httpOnly, "record")) HTTP only (HAR) are not in it."
        }
        return Chart(
            title: "What the network carried beyond the HTTP bytes: TLS, TCP/IP, handshakes and ACKs, per direction",
            svg: svg.rendered, note: note)
    }
}
