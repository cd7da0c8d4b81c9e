/// Reads a Charles XML session (`.chlsx`: `<charles-session>` holding `<transaction>` elements)
/// one transaction at a time over `XMLPullReader`. Each transaction is turned into the shape of
/// its `.chlsj` twin (docs/CHARLES.md, "XML") and decoded by the same `CharlesDecoder`, so both
/// formats of one session give the same transactions. Other children of the root are skipped.
/// Errors are fatal for the file: once thrown, `next()` throws the same again.
public final class CharlesXMLReader: CharlesSessionReader {
    public let path: String
    public let format = "chlsx"
    public private(set) var transactionCount = 0

    private let xml: XMLPullReader
    private let decoder = CharlesDecoder(textScalars: true)
    private var finished = false
    private var failure: CharlesError?

    /// A transaction's elements, bounded by the transaction (one at a time).
    final class Element {
        let name: String
        let attributes: [(String, String)]
        var children: [Element] = []
        var text: [String] = []

        init(name: String, attributes: [(String, String)]) {
            self.name = name
            self.attributes = attributes
        }

        func child(_ name: String) -> Element? { children.first { $0.name == name } }
        var joinedText: String { text.joined() }
    }

    public init(path: String, chunkSize: Int = XMLPullReader.defaultChunkSize) throws {
        self.path = path
        do {
            xml = try XMLPullReader(path: path, chunkSize: chunkSize)
            while true {
                guard let event = try xml.next() else { throw CharlesError.notASession("no root element") }
                if case let .start(name, _) = event {
                    guard name == "charles-session" else {
                        throw CharlesError.notASession("the root element is <\(name)>, not <charles-session>")
                    }
                    break
                }
            }
        } catch let error as XMLStreamError {
            throw CharlesError(error)
        }
    }

    public var bytesRead: Int { xml.bytesRead }

    public func next() throws -> CharlesResult? {
        if let failure { throw failure }
        if finished { return nil }
        do {
            while true {
                guard let event = try xml.next() else { throw XMLStreamError.invalidXML(line: xml.line, column: xml.column, reason: "unexpected end of file") }
                switch event {
                case .text: continue
                case .end:
                    // The root closed: only the end of the document may follow.
                    while try xml.next() != nil {}
                    finished = true
                    return nil
                case let .start(name, attributes):
                    let element = try readElement(name: name, attributes: attributes)
                    guard name == "transaction" else { continue }
                    let index = transactionCount
                    transactionCount += 1
                    return CharlesJSONReader.decode(Self.value(transaction: element), index: index, decoder: decoder)
                }
            }
        } catch let error as XMLStreamError {
            failure = CharlesError(error)
            throw failure!
        }
    }

    /// Reads the rest of an element whose start tag was just read.
    private func readElement(name: String, attributes: [(String, String)]) throws -> Element {
        let root = Element(name: name, attributes: attributes)
        var open = [root]
        while let current = open.last {
            guard let event = try xml.next() else { throw XMLStreamError.invalidXML(line: xml.line, column: xml.column, reason: "unexpected end of file") }
            switch event {
            case let .start(childName, childAttributes):
                let child = Element(name: childName, attributes: childAttributes)
                current.children.append(child)
                open.append(child)
            case let .text(text):
                current.text.append(text)
            case .end:
                open.removeLast()
            }
        }
        return root
    }

    // MARK: XML → the JSON shape

    static func attributes(_ element: Element) -> [(String, JSONValue)] {
        element.attributes.map { ($0.0, .string($0.1)) }
    }

    static func value(transaction element: Element) -> JSONValue {
        var members = attributes(element)
        for child in element.children {
            switch child.name {
            case "request", "response": members.append((child.name, part(child)))
            case "times", "ssl", "alpn": members.append((child.name, .object(attributes(child))))
            default: break
            }
        }
        return .object(members)
    }

    /// `<request>` / `<response status="…">` with `<sizes …/>`, `<headers>` (a `<first-line>` and
    /// `<header><name/><value/></header>` elements) and `<body encoding="plain|base64" decoded="…">`.
    static func part(_ element: Element) -> JSONValue {
        var members = attributes(element).filter { $0.0 == "status" }
        if let sizes = element.child("sizes") { members.append(("sizes", .object(attributes(sizes)))) }
        if let headers = element.child("headers") {
            var header: [(String, JSONValue)] = []
            if let firstLine = headers.child("first-line") { header.append(("firstLine", .string(firstLine.joinedText))) }
            let fields: [JSONValue] = headers.children.filter { $0.name == "header" }.map { field in
                var pair: [(String, JSONValue)] = []
                if let name = field.child("name") { pair.append(("name", .string(name.joinedText))) }
                if let value = field.child("value") { pair.append(("value", .string(value.joinedText))) }
                return .object(pair)
            }
            header.append(("headers", .array(fields)))
            members.append(("header", .object(header)))
        }
        if let body = element.child("body") {
            var members2: [(String, JSONValue)] = []
            let encoding = body.attributes.first { $0.0 == "encoding" }?.1.lowercased()
            members2.append((encoding == "base64" ? "encoded" : "text", .string(body.joinedText)))
            if let decoded = body.attributes.first(where: { $0.0 == "decoded" }) { members2.append(("decoded", .string(decoded.1))) }
            members.append(("body", .object(members2)))
        }
        return .object(members)
    }
}

extension CharlesError {
    init(_ error: XMLStreamError) {
        switch error {
        case let .cannotOpen(path, reason): self = .cannotOpen(path: path, reason: reason)
        case let .readFailed(path, reason): self = .readFailed(path: path, reason: reason)
        case let .invalidXML(line, column, reason): self = .invalid(format: "XML", line: line, column: column, reason: reason)
        }
    }
}
