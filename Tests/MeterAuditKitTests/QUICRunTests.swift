import Analysis
import CaptureIO
import Foundation
import Flows
import PacketLayers
import TestSupport
import MeterAuditKit
import XCTest

/// QUIC through the whole run: RFC 9001 Appendix A's client and server Initial packets in a
/// capture (the RFC is the oracle for what they hold), and the HTTP/3 samples against tshark.
final class QUICRunTests: XCTestCase {
    private func udpFrame(_ from: String, _ to: String, _ payload: [UInt8]) -> [UInt8] {
        let (a, b) = (PacketBuilder.endpoint(from), PacketBuilder.endpoint(to))
        let udp = PacketBuilder.be16(a.port) + PacketBuilder.be16(b.port) + PacketBuilder.be16(UInt16(8 + payload.count))
            + [0, 0] + payload
        return PacketBuilder.frame(PacketBuilder.ipv4(source: a.address, destination: b.address, protocolNumber: 17, payload: udp))
    }

    /// The RFC's client Initial (1200 bytes) from port 50000, the server's Initial (135 bytes)
    /// answering, then the client's Initial again from port 50001 (a port change): one connection.
    func testInitialsMakeOneRowAcrossAPortChange() throws {
        let client = RFC9001Packets.clientInitial
        let server = RFC9001Packets.serverInitial
        let frames = [
            udpFrame("10.0.0.1:50000", "10.0.0.2:443", client),
            udpFrame("10.0.0.2:443", "10.0.0.1:50000", server),
            udpFrame("10.0.0.1:50001", "10.0.0.2:443", client),
        ]
        let pcap = CaptureFileWriter.pcap(frames.enumerated().map { .init(timestamp: Int64($0.offset) * 1000, bytes: $0.element) })
        let path = try CaptureFileWriter.temporaryFile(named: "quic-initials.pcap", containing: pcap)
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer().analyze(path: path, connection: { rows.append($0) }) { _ in }
        XCTAssertEqual(rows.count, 1)
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.protocolKind, .quic) // the RFC's ClientHello offers ALPN "alpn", not h3
        XCTAssertEqual(row.serverName, "example.com")
        XCTAssertEqual(row.alpn, "alpn")
        XCTAssertEqual(row.tlsVersion, "QUIC v1")
        XCTAssertEqual(row.cipherSuite, "TLS_AES_128_GCM_SHA256")
        XCTAssertEqual(row.decrypted, "no-key")
        XCTAssertEqual(row.records, 0)
        // Up: two datagrams of 1200 bytes: + 8 UDP + 20 IPv4 each, + 14 Ethernet.
        XCTAssertEqual(row.clientTCPBytes, 2400)
        XCTAssertEqual(row.clientCost.total.ip, 2 * 1228)
        XCTAssertEqual(row.clientCost.total.frame, 2 * 1242)
        XCTAssertEqual(row.serverCost.total.frame, 135 + 42)
        let udp = try XCTUnwrap(diagnostics.udp)
        XCTAssertEqual(udp.flows, 2)
        XCTAssertEqual(udp.readFlows, 2)
        XCTAssertEqual(udp.other, [:])
        let quic = try XCTUnwrap(udp.quic)
        XCTAssertEqual(quic.connections, 1)
        XCTAssertEqual(quic.up.packets, 2)
        XCTAssertEqual(quic.up.decrypted, 2)
        XCTAssertEqual(quic.down.decrypted, 1)
        XCTAssertEqual(quic.up.cryptoBytes, 2 * 241)
        XCTAssertEqual(quic.notDecrypted, ["no-key": 1])
        XCTAssertEqual(quic.undecryptedBytes, ["example.com": 2400 + 135])
        // Every UDP payload byte in one place: here each datagram is one Initial packet.
        XCTAssertEqual(quic.up.packetBytes, ["handshake": 2400, "stream": 0, "ack_only": 0, "control": 0, "unread": 0])
        XCTAssertEqual(quic.down.packetBytes["handshake"], 135)
        XCTAssertEqual(quic.up.datagramPadding + quic.up.unreadableBytes, 0)
    }

    /// Every HTTP/3 sample with its key log, against tshark's QUIC decryption: per direction,
    /// packets, STREAM frames and STREAM data bytes, and the UDP datagrams' frame and IP bytes.
    /// The samples come from scripts/make-h3-samples (METERAUDIT_H3_SAMPLES names another folder
    /// of them). tshark learns connections from their handshake: in a capture that starts after
    /// it (h3-midconn) it finds none, so that one is checked against the senders' qlog after the
    /// cut instead (`testMidConnectionAgainstTheSendersAfterTheCut`).
    func testH3SamplesAgreeWithTshark() throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark is not installed") }
        let folder = ProcessInfo.processInfo.environment["METERAUDIT_H3_SAMPLES"]
            ?? (Fixtures.sample("h3") as NSString).deletingLastPathComponent
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasPrefix("h3-") && ($0.hasSuffix(".pcap") || $0.hasSuffix(".pcap.gz")) }.sorted()
        guard !names.isEmpty else { throw XCTSkip("no h3-*.pcap in \(folder)") }
        var comparedWithQlog = 0
        defer { print("QUICRunTests: \(names.count) samples, \(comparedWithQlog) against their senders' qlog") }
        for name in names {
            let pcap = folder + "/" + name
            let keys = folder + "/" + name.replacingOccurrences(of: ".pcap.gz", with: ".pcap").dropLast(5) + ".keys"
            var options = AnalysisOptions()
            var keyOption: [String] = []
            if FileManager.default.fileExists(atPath: keys) {
                try options.loadKeyLogs([keys])
                keyOption = ["-o", "tls.keylog_file:" + keys]
            }
            var rows: [ConnectionRow] = []
            let diagnostics = InputAnalyzer(options: options).analyze(path: pcap, connection: { rows.append($0) }) { _ in }
            // tshark: the client's port is the source of the first packet.
            func perSide(_ filter: String, _ fields: [String]) throws -> [[Int]] {
                var sums = [[Int]](repeating: [Int](repeating: 0, count: fields.count), count: 2)
                var clientPort: String?
                let output = try runTool(
                    tshark, keyOption + ["-r", pcap, "-Y", filter, "-T", "fields", "-e", "udp.srcport"] + fields.flatMap { ["-e", $0] })
                for line in output.split(separator: "\n") {
                    let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                    guard cells.count == fields.count + 1 else { continue }
                    clientPort = clientPort ?? cells[0]
                    let side = cells[0] == clientPort ? 0 : 1
                    for (index, cell) in cells.dropFirst().enumerated() {
                        let values = cell.split(separator: ",")
                        // packet_length: one per packet (count them); IPv6's payload length plus its
                        // 40-byte header; the others summed.
                        switch fields[index] {
                        case "quic.packet_length": sums[side][index] += values.count
                        case "ipv6.plen": sums[side][index] += values.reduce(0) { $0 + (Int($1) ?? 0) + 40 }
                        default: sums[side][index] += values.reduce(0) { $0 + (Int($1) ?? 0) }
                        }
                    }
                }
                return sums
            }
            let quicSides = try perSide("quic", ["quic.packet_length", "quic.stream.length"])
            if name.hasPrefix("h3-midconn") {
                XCTAssertEqual(quicSides[0][0] + quicSides[1][0], 0, "\(name): tshark found a connection without its handshake")
                XCTAssertEqual(diagnostics.udp?.quic?.midConnection, 1, name)
                continue
            }
            guard let quic = diagnostics.udp?.quic else {
                XCTAssertEqual(quicSides[0][0] + quicSides[1][0], 0, "\(name): tshark found QUIC packets")
                continue
            }
            XCTAssertEqual([quic.up.packets, quic.down.packets], [quicSides[0][0], quicSides[1][0]], "\(name): packets")
            XCTAssertEqual([quic.up.streamBytes, quic.down.streamBytes], [quicSides[0][1], quicSides[1][1]], "\(name): STREAM bytes")
            let frames = try perSide("udp", ["frame.len", "ip.len", "ipv6.plen"])
            let row = try XCTUnwrap(rows.first { $0.protocolKind == .h3 || $0.protocolKind == .quic }, name)
            XCTAssertEqual([row.clientCost.total.frame, row.serverCost.total.frame], [frames[0][0], frames[1][0]], "\(name): frame bytes")
            XCTAssertEqual([row.clientCost.total.ip, row.serverCost.total.ip], [frames[0][1] + frames[0][2], frames[1][1] + frames[1][2]], "\(name): IP bytes")
            XCTAssertEqual(row.decrypted, keyOption.isEmpty ? "no-key" : "yes", name)
            // The senders' own logs (qlog, written by aioquic as it sent): packets, STREAM frames,
            // STREAM bytes and those sent again (same stream, same offset), per direction.
            let qlog = folder + "/" + name.prefix(while: { $0 != "." }) + ".qlog.gz"
            if !keyOption.isEmpty, FileManager.default.fileExists(atPath: qlog), let gzip = executable("gzip") {
                let sent = try Self.sentByEachSide(qlog: try runTool(gzip, ["-dc", qlog]))
                comparedWithQlog += 1
                for (side, figures) in [(0, quic.up), (1, quic.down)] {
                    XCTAssertEqual(
                        [figures.packets, figures.streamFrames, figures.streamBytes, figures.repeatedStreamBytes], sent[side],
                        "\(name): side \(side) against the sender's qlog")
                }
            }
            // Every UDP payload byte lands in one place: a packet by class, datagram padding or unreadable.
            for (side, payload) in [(quic.up, row.clientTCPBytes), (quic.down, row.serverTCPBytes)] {
                XCTAssertEqual(
                    side.packetBytes.values.reduce(0, +) + side.datagramPadding + side.unreadableBytes, payload,
                    "\(name): UDP payload by packet class")
                XCTAssertEqual(side.unreadableBytes, 0, name)
            }
        }
    }
}

/// Records what a QUIC connection's streams deliver, checking the contract on the way.
final class StreamRecorder: MultiplexedStreamHandler {
    var bytes = [0, 0]
    var gaps = 0
    var finished: Set<String> = []
    var next: [String: Int64] = [:]
    var outOfOrder = 0

    func receive(_ data: UnsafeRawBufferPointer, stream: UInt64, from side: Direction, at position: StreamPosition) {
        let key = "\(stream)/\(side.name)"
        if position.offset != next[key, default: 0] { outOfOrder += 1 }
        next[key] = position.offset + Int64(data.count)
        bytes[side.rawValue] += data.count
    }
    func gap(_ length: Int, stream: UInt64, from side: Direction, at position: StreamPosition) { gaps += length }
    func end(stream: UInt64, of side: Direction, reason: StreamEndReason, time: Int64) {
        if reason == .fin { finished.insert("\(stream)/\(side.name)") }
    }
    func close(_ accounting: ConnectionAccounting) {}
}

extension QUICRunTests {
    private var h3Folder: String? {
        let folder = ProcessInfo.processInfo.environment["METERAUDIT_H3_SAMPLES"]
            ?? (Fixtures.sample("h3") as NSString).deletingLastPathComponent
        return FileManager.default.fileExists(atPath: folder + "/h3-loss.qlog.gz") ? folder : nil
    }

    /// The loss sample's streams through the application's handler (what HTTP/3 will be): every
    /// byte the client and the server sent once (their qlog, repeats removed) arrives in order,
    /// none twice, no gap, and the streams the senders finished end with FIN.
    func testStreamsReachTheApplicationInOrder() throws {
        guard let folder = h3Folder, let gzip = executable("gzip") else { throw XCTSkip("no h3-loss sample") }
        let pcap = folder + "/h3-loss.pcap" + (FileManager.default.fileExists(atPath: folder + "/h3-loss.pcap") ? "" : ".gz")
        var options = AnalysisOptions()
        try options.loadKeyLogs([folder + "/h3-loss.keys"])
        let recorder = StreamRecorder()
        // An application of the test's own for ALPN h3, registered in one line.
        options.protocols.register(.quic("stream-recorder", alpn: "h3", handler: { _ in recorder }))
        _ = InputAnalyzer(options: options).analyze(path: pcap) { _ in }
        let sent = try Self.sentByEachSide(qlog: try runTool(gzip, ["-dc", folder + "/h3-loss.qlog.gz"]))
        XCTAssertEqual(recorder.bytes, [sent[0][2] - sent[0][3], sent[1][2] - sent[1][3]])
        XCTAssertEqual(recorder.outOfOrder, 0)
        XCTAssertEqual(recorder.gaps, 0)
        XCTAssertTrue(recorder.finished.contains("0/up") && recorder.finished.contains("0/down"), "\(recorder.finished)")
    }

    /// h3-midconn against what each peer logged as sent after the cut (Tests/Fixtures/h3/
    /// h3-midconn.truth.json, `scripts/h3-truth truth --after`): per direction, the QUIC packets
    /// and their bytes, the datagrams' UDP payload, and the STREAM frame data bytes; every packet
    /// decrypted, the trial found it on the second datagram (the first, alone, is tried with a
    /// 0-length destination ID only: 2 secrets x 2 variants, 4 masks and at most 4 AEAD opens;
    /// the second, from the client too, confirms length 8, tried first: one mask, one open), and
    /// the other direction was found by trial too.
    func testMidConnectionAgainstTheSendersAfterTheCut() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        var options = AnalysisOptions()
        try options.loadKeyLogs([folder + "/h3-midconn.keys"])
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(
            path: folder + "/h3-midconn.pcap", connection: { rows.append($0) }) { _ in }
        let udp = try XCTUnwrap(diagnostics.udp)
        let quic = try XCTUnwrap(udp.quic)
        let truth = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: Fixtures.path("h3/h3-midconn.truth.json")))) as! [String: Any]
        let directions = ((truth["connections"] as! [[String: Any]])[0]["directions"]) as! [String: [String: Any]]
        XCTAssertEqual(udp.other, [:])
        XCTAssertEqual(udp.readFlows, 1)
        XCTAssertEqual(quic.connections, 1)
        XCTAssertEqual(quic.decrypted, 1)
        XCTAssertEqual(quic.midConnection, 1)
        let row = try XCTUnwrap(rows.first)
        for (label, side, sent) in [("up", quic.up, row.clientTCPBytes), ("down", quic.down, row.serverTCPBytes)] {
            let truth = try XCTUnwrap(directions[label])
            XCTAssertEqual(side.packets, truth["packets"] as? Int, "\(label): packets")
            XCTAssertEqual(side.decrypted, side.packets, "\(label): every packet decrypted")
            XCTAssertEqual(side.packetBytes.values.reduce(0, +), truth["packet_bytes"] as? Int, "\(label): packet bytes")
            XCTAssertEqual(sent, truth["datagram_bytes"] as? Int, "\(label): UDP payload")
            XCTAssertEqual(side.streamBytes, truth["stream_frame_bytes"] as? Int, "\(label): STREAM bytes")
            XCTAssertEqual(side.repeatedStreamBytes, truth["retransmitted_stream_bytes"] as? Int, "\(label): repeated")
            XCTAssertEqual(side.withoutKey + side.badTag + side.unreadableBytes, 0, label)
        }
        let trials = try XCTUnwrap(udp.midConnectionTrials)
        XCTAssertEqual([trials.flows, trials.datagrams, trials.connections, trials.untriedFlows], [1, 2, 1, 0])
        XCTAssertGreaterThanOrEqual(trials.trials, 4 + 2)
        XCTAssertLessThanOrEqual(trials.trials, 4 + 4 + 2)
    }

    /// A copy of a key log with the last hex digit of every secret changed: every secret wrong.
    private func wrongKeyLog(_ path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let wrong = text.split(separator: "\n").map { line -> String in
            guard let last = line.last, let digit = last.hexDigitValue else { return String(line) }
            return line.dropLast() + String((digit + 1) % 16, radix: 16)
        }.joined(separator: "\n") + "\n"
        let name = "wrong-" + (path.split(separator: "/").last.map(String.init) ?? "keys")
        return try CaptureFileWriter.temporaryFile(named: name, containing: Array(wrong.utf8))
    }

    /// The same capture with every secret of its key log wrong: no tag verifies, so the flow is
    /// what it was without the trial, other UDP (never a guessed connection), every byte counted
    /// there; the trial tried its 4 datagrams and stopped.
    func testMidConnectionWithAWrongKeyStaysOtherUDP() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        let keys = try wrongKeyLog(folder + "/h3-midconn.keys")
        var options = AnalysisOptions()
        try options.loadKeyLogs([keys])
        var rows: [ConnectionRow] = []
        var records = 0
        let diagnostics = InputAnalyzer(options: options).analyze(
            path: folder + "/h3-midconn.pcap", connection: { rows.append($0) }) { _ in records += 1 }
        let udp = try XCTUnwrap(diagnostics.udp)
        XCTAssertEqual(records, 0)
        XCTAssertEqual(rows.count, 0)
        XCTAssertNil(udp.quic)
        XCTAssertEqual(udp.readFlows, 0)
        XCTAssertEqual(udp.readDatagrams, 0)
        // 16 datagrams: 1,890 + 2,662 payload bytes (the truth's datagram bytes), 8 + 20 + 14
        // bytes of UDP, IPv4 and Ethernet headers each.
        let port = try XCTUnwrap(udp.other["18534"])
        XCTAssertEqual(port.flows, 1)
        XCTAssertEqual(port.datagrams, 16)
        XCTAssertEqual(port.payloadBytes, 1890 + 2662)
        XCTAssertEqual(port.udpBytes, 1890 + 2662 + 16 * 8)
        XCTAssertEqual(port.ipBytes, 1890 + 2662 + 16 * 28)
        XCTAssertEqual(port.frameBytes, 1890 + 2662 + 16 * 42)
        XCTAssertEqual(udp.otherUp.datagrams + udp.otherDown.datagrams, 16)
        let trials = try XCTUnwrap(udp.midConnectionTrials)
        XCTAssertEqual(trials.flows, 1)
        XCTAssertEqual(trials.datagrams, Limits().midConnectionQUIC.maxDatagramsTried)
        XCTAssertEqual(trials.connections, 0)
        XCTAssertGreaterThan(trials.trials, 0)
        XCTAssertLessThanOrEqual(trials.trials, Limits().midConnectionQUIC.maxTrialsPerFlow)
    }

    /// h3-midconn without its first two datagrams (the client's): the first one captured is the
    /// server's, opened by the server's secret, so the flow's first sender is the server; the row
    /// still names the client as client, and both directions are read.
    func testMidConnectionFirstSeenFromTheServer() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/h3-midconn.pcap")))
        // Classic pcap, little-endian: a 24-byte file header, then 16-byte record headers.
        var at = 24
        for _ in 0..<2 {
            let length = Int(bytes[at + 8]) | Int(bytes[at + 9]) << 8 | Int(bytes[at + 10]) << 16 | Int(bytes[at + 11]) << 24
            at += 16 + length
        }
        let cut = try CaptureFileWriter.temporaryFile(named: "midconn-server-first.pcap", containing: Array(bytes[0..<24] + bytes[at...]))
        var options = AnalysisOptions()
        try options.loadKeyLogs([folder + "/h3-midconn.keys"])
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(path: cut, connection: { rows.append($0) }) { _ in }
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.client, "127.0.0.1:58847")
        XCTAssertEqual(row.server, "127.0.0.1:18534")
        XCTAssertEqual(row.decrypted, "mid-connection")
        let quic = try XCTUnwrap(diagnostics.udp?.quic)
        // The truth's 9 client packets less the 2 cut, and the server's 7.
        XCTAssertEqual([quic.up.packets, quic.down.packets], [7, 7])
        XCTAssertEqual([quic.up.decrypted, quic.down.decrypted], [7, 7])
    }

    /// A key log whose secrets are all wrong: tags do not verify, so nothing is read past the
    /// Initial packets, and the row says bad-key.
    func testWrongSecretsAreABadKey() throws {
        guard let folder = h3Folder else { throw XCTSkip("no h3 samples") }
        let keys = try wrongKeyLog(folder + "/h3-mixed.keys")
        var options = AnalysisOptions()
        try options.loadKeyLogs([keys])
        var rows: [ConnectionRow] = []
        let diagnostics = InputAnalyzer(options: options).analyze(path: folder + "/h3-mixed.pcap", connection: { rows.append($0) }) { _ in }
        XCTAssertEqual(rows.first?.decrypted, "bad-key")
        let quic = try XCTUnwrap(diagnostics.udp?.quic)
        XCTAssertGreaterThan(quic.up.badTag + quic.down.badTag, 0)
        XCTAssertEqual(quic.up.streamBytes + quic.down.streamBytes, 0)
        XCTAssertEqual(quic.decrypted, 0)
    }

    /// Per side (client, server): packets sent, STREAM frames, their data bytes, and the bytes
    /// that repeat a (stream, offset) the side had sent before, from each vantage point's
    /// `packet_sent` events.
    static func sentByEachSide(qlog text: String) throws -> [[Int]] {
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var result = [[0, 0, 0, 0], [0, 0, 0, 0]]
        for trace in root["traces"] as? [[String: Any]] ?? [] {
            let type = (trace["vantage_point"] as? [String: Any])?["type"] as? String
            let side = type == "client" ? 0 : 1
            var seen: [Int: [Range<Int>]] = [:]
            for event in trace["events"] as? [[String: Any]] ?? [] {
                guard let name = event["name"] as? String, name.hasSuffix("packet_sent"),
                    let data = event["data"] as? [String: Any]
                else { continue }
                result[side][0] += 1
                for frame in data["frames"] as? [[String: Any]] ?? [] where frame["frame_type"] as? String == "stream" {
                    guard let id = frame["stream_id"] as? Int, let offset = frame["offset"] as? Int,
                        let length = frame["length"] as? Int
                    else { continue }
                    result[side][1] += 1
                    result[side][2] += length
                    let range = offset..<(offset + length)
                    // `seen` holds each stream's sent bytes as disjoint ranges.
                    var union = seen[id, default: []]
                    result[side][3] += union.reduce(0) { $0 + ($1.overlaps(range) ? $1.clamped(to: range).count : 0) }
                    union.append(range)
                    union.sort { $0.lowerBound < $1.lowerBound }
                    var merged: [Range<Int>] = []
                    for next in union {
                        if let last = merged.last, last.upperBound >= next.lowerBound {
                            merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, next.upperBound)
                        } else {
                            merged.append(next)
                        }
                    }
                    seen[id] = merged
                }
            }
        }
        return result
    }
}
