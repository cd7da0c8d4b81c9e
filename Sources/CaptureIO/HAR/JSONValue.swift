/// A materialized JSON value. Objects keep their members in file order (duplicates too).
public enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(JSONNumber)
    case bool(Bool)
    case null

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.array(a), .array(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.bool(a), .bool(b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    /// The first member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? {
        if case let .string(text) = self { return text }
        return nil
    }

    /// The value when this is a number written as an integer that fits in `Int`.
    public var intValue: Int? {
        if case let .number(number) = self { return number.intValue }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case let .array(elements) = self { return elements }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// "an object", "a string", ... for messages.
    public var kindName: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    public var description: String {
        switch self {
        case let .object(members): return "{" + members.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
        case let .array(elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case let .string(text): return "\"\(text)\""
        case let .number(number): return number.raw
        case let .bool(flag): return flag ? "true" : "false"
        case .null: return "null"
        }
    }
}
