import Flows
import XCTest
@testable import TLS

/// Hex (whitespace ignored) to bytes; traps on bad input, which only tests write.
func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8.filter { !($0 == 32 || $0 == 10 || $0 == 9) })
    guard let bytes = decodeHex(digits) else { fatalError("bad hex in test: \(text)") }
    return bytes
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// What a TLSConnection handed on, per direction.
final class RecordLog {
    var records: [TLSRecordInfo] = []
    var plaintext: [[UInt8]] = [[], []]
    var plaintextRecords: [[Int]] = [[], []] // plaintext bytes per application_data record

    func handler() -> TLSConnection.RecordHandler {
        { [unowned self] info, bytes in
            self.records.append(info)
            if info.readable && info.contentType == TLSContentType.applicationData.rawValue {
                self.plaintext[info.direction.rawValue] += bytes
                self.plaintextRecords[info.direction.rawValue].append(bytes.count)
            }
        }
    }

    func wireLengths(_ direction: Direction) -> [Int] {
        records.filter { $0.direction == direction }.map(\.wireLength)
    }
}

extension TLSConnection {
    func receive(_ bytes: [UInt8], from direction: Direction) {
        bytes.withUnsafeBytes { receive($0, from: direction) }
    }

    /// Feeds `bytes` in pieces of `pieceLength`.
    func receive(_ bytes: [UInt8], from direction: Direction, inPiecesOf pieceLength: Int) {
        var start = 0
        while start < bytes.count {
            let end = min(start + pieceLength, bytes.count)
            receive(Array(bytes[start..<end]), from: direction)
            start = end
        }
    }
}
