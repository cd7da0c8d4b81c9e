import CaptureIO
import HARMessages
import Records

/// The whole input as a HAR file: `HARReader` entry by entry, each made into messages by
/// `HARMessageBuilder`, as a run does.
enum HARReaderEntry {
    /// Small read chunks, so tokens straddle chunk boundaries in inputs of a few hundred bytes.
    static let chunkSize = 61

    static func run(_ input: UnsafeRawBufferPointer) {
        let path = InputFile.shared.write(input)
        guard let reader = try? HARReader(path: path, chunkSize: chunkSize) else { return }
        let builder = HARMessageBuilder(rule: ExporterRule(creatorName: reader.creatorName))
        var total = 0
        do {
            while let result = try reader.next() {
                guard case let .entry(entry) = result else { continue }
                let (request, response) = builder.messages(for: entry)
                total &+= request.wire.total ?? 0
                total &+= request.body?.count ?? 0
                if let response {
                    total &+= response.wire.total ?? 0
                    total &+= response.body?.count ?? 0
                }
            }
        } catch {
            // A broken HAR ends with an error: expected for most inputs.
        }
        blackHole(total)
    }
}
