/// Reads a Charles JSON session (`.chlsj`: a top-level array of transactions) one transaction at
/// a time over the same `JSONStreamReader` as HAR: memory is one read chunk plus one transaction.
/// Errors are fatal for the file: once thrown, `next()` throws the same again.
public final class CharlesJSONReader: CharlesSessionReader {
    public let path: String
    public let format = "chlsj"
    /// Transactions yielded so far (good and broken).
    public private(set) var transactionCount = 0

    private let stream: JSONStreamReader
    private let decoder = CharlesDecoder(textScalars: false)
    private var finished = false
    private var failure: CharlesError?

    public init(path: String, chunkSize: Int = JSONStreamReader.defaultChunkSize) throws {
        self.path = path
        do {
            stream = try JSONStreamReader(path: path, chunkSize: chunkSize)
            guard try stream.next() == .beginArray else {
                throw CharlesError.notASession("the top-level value is not an array of transactions")
            }
        } catch let error as JSONStreamError {
            throw CharlesError(error)
        }
    }

    public var bytesRead: Int { stream.bytesRead }

    public func next() throws -> CharlesResult? {
        if let failure { throw failure }
        if finished { return nil }
        do {
            guard let token = try stream.next() else {
                throw JSONStreamError.invalidJSON(line: stream.line, column: stream.column, reason: "unexpected end of file")
            }
            if token == .endArray {
                if try stream.next() != nil { throw JSONStreamError.misuse("data after the top-level array") }
                finished = true
                return nil
            }
            let raw = try RawCharlesTransaction.read(stream, startingWith: token)
            let index = transactionCount
            transactionCount += 1
            return Self.decode(raw, index: index, decoder: decoder)
        } catch let error as JSONStreamError {
            failure = CharlesError(error)
            throw failure!
        }
    }

    /// A transaction the XML reader built as a value.
    static func decode(_ value: JSONValue, index: Int, decoder: CharlesDecoder) -> CharlesResult {
        decode(RawCharlesTransaction(value: value), index: index, decoder: decoder)
    }

    static func decode(_ raw: RawCharlesTransaction, index: Int, decoder: CharlesDecoder) -> CharlesResult {
        do {
            return .transaction(try decoder.transaction(raw, index: index))
        } catch let broken as CharlesDecoder.Broken {
            return .broken(index: index, reason: broken.reason)
        } catch let broken as HAREntryDecoder.Broken {
            return .broken(index: index, reason: broken.reason)
        } catch {
            return .broken(index: index, reason: "\(error)")
        }
    }
}
