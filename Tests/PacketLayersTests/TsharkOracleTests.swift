import CaptureIO
import Foundation
import PacketLayers
import TestSupport
import XCTest

/// Cross-checks the decoder against tshark on crafted frames: ports, raw sequence number and
/// TCP payload length must agree, frame by frame.
final class TsharkOracleTests: XCTestCase {
    private struct Case {
        var link: PacketBuilder.Link
        var bytes: [UInt8]
        var originalLength: Int
    }

    private func cases() -> [Case] {
        let body = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8)
        let big = [UInt8](repeating: 0x42, count: 1400)
        var out: [Case] = []
        func add(_ link: PacketBuilder.Link, _ bytes: [UInt8], cutTo: Int? = nil) {
            out.append(
                Case(link: link, bytes: cutTo.map { Array(bytes.prefix($0)) } ?? bytes, originalLength: bytes.count))
        }
        for link in PacketBuilder.Link.all(ipv6: false) {
            add(
                link,
                PacketBuilder.tcp(
                    from: "10.0.0.1:34567", to: "10.0.0.2:80", seq: 123_456, ack: 1,
                    flags: [.ack, .psh], payload: body, link: link))
        }
        for link in PacketBuilder.Link.all(ipv6: true) {
            add(
                link,
                PacketBuilder.tcp(
                    from: "[2001:db8::1]:40000", to: "[2001:db8::2]:8080", seq: 0xFFFF_FFF0,
                    payload: body, link: link, ipv6Extensions: [.hopByHop(), .destinationOptions()]))
        }
        add(
            .ethernet,
            PacketBuilder.tcp(from: "192.0.2.1:1", to: "192.0.2.2:2", seq: 9, payload: [1], padToMinimum: true))
        add(
            .ethernet,
            PacketBuilder.tcp(
                from: "192.0.2.1:1", to: "192.0.2.2:2", seq: 9, flags: [.syn],
                options: PacketBuilder.TCPOption.mss(1460), ipv4Options: [1, 1, 1, 1]))
        add(.ethernet, PacketBuilder.tcp(from: "192.0.2.1:1", to: "192.0.2.2:2", seq: 10, payload: big), cutTo: 96)
        add(
            .qinq(outer: 5, inner: 6), PacketBuilder.tcp(from: "[fe80::1]:5", to: "[fe80::2]:6", seq: 77, payload: big),
            cutTo: 128)
        // A fragmented datagram: tshark reassembles it too and shows TCP on the last fragment only.
        for fragment in PacketBuilder.tcpFragments(
            from: "10.9.9.9:4444", to: "10.8.8.8:80", seq: 31337,
            payload: big + big, maxFragmentPayload: 1000, ipID: 77)
        {
            add(.ethernet, fragment)
        }
        return out
    }

    func testAgreesWithTshark() throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark is not installed") }

        let cases = cases()
        // One pcapng file, one interface per link type, so tshark runs once.
        var interfaceIDs: [Int32: Int] = [:]
        var interfaces: [CaptureFileWriter.Interface] = []
        for item in cases where interfaceIDs[item.link.linkType] == nil {
            interfaceIDs[item.link.linkType] = interfaces.count
            interfaces.append(CaptureFileWriter.Interface(linkType: item.link.linkType))
        }
        let frames = cases.enumerated().map { index, item in
            CaptureFileWriter.Frame(
                timestamp: Int64(index + 1) * 1_000_000_000,
                interface: interfaceIDs[item.link.linkType]!,
                originalLength: item.originalLength, bytes: item.bytes)
        }
        let path = try CaptureFileWriter.temporaryFile(
            named: "oracle.pcapng", containing: CaptureFileWriter.pcapng(frames, interfaces: interfaces))
        let lines = try runTool(
            tshark,
            [
                "-r", path, "-o", "tcp.analyze_sequence_numbers:FALSE",
                "-T", "fields", "-E", "separator=,",
                "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.seq_raw", "-e", "tcp.len",
            ]
        )
        .split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, cases.count, "\(lines)")

        let decoder = PacketDecoder()
        for (index, item) in cases.enumerated() where index < lines.count {
            let context = "frame \(index + 1) (\(item.link))"
            let outcome = decoder.decode(item.bytes, link: item.link, originalLength: item.originalLength)
            if outcome == .held {
                XCTAssertEqual(lines[index], ",,,", context)
                continue
            }
            let segment = try XCTUnwrap(outcome.segment, context)
            let ours = "\(segment.source.port),\(segment.destination.port),\(segment.sequence),\(segment.payloadLength)"
            XCTAssertEqual(ours, lines[index], context)
        }
    }

}
