import CaptureIO
import HARMessages
import Records

/// The whole input as a Charles session: the first input byte picks the format (even: JSON,
/// odd: XML), the rest is the file, read transaction by transaction by the reader a run uses,
/// each made into messages by `CharlesMessageBuilder`.
enum CharlesReaderEntry {
    /// Small read chunks, so tokens straddle chunk boundaries in inputs of a few hundred bytes.
    static let chunkSize = 61

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let path = InputFile.shared.write(UnsafeRawBufferPointer(rebasing: input.dropFirst()))
        let reader: CharlesSessionReader
        do {
            reader =
                first & 1 == 0
                ? try CharlesJSONReader(path: path, chunkSize: chunkSize)
                : try CharlesXMLReader(path: path, chunkSize: chunkSize)
        } catch {
            return
        }
        let builder = CharlesMessageBuilder()
        var total = 0
        do {
            while let result = try reader.next() {
                guard case let .transaction(transaction) = result else { continue }
                if transaction.tunnel {
                    total &+= transaction.request.handshakeSize ?? 0
                    continue
                }
                let (request, response) = builder.messages(for: transaction)
                total &+= request.wire.total ?? 0
                total &+= request.body?.count ?? 0
                if let response {
                    total &+= response.wire.total ?? 0
                    total &+= response.body?.count ?? 0
                }
            }
        } catch {
            // A broken session ends with an error: expected for most inputs.
        }
        blackHole(total)
    }
}
