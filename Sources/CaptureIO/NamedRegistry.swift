#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process-wide list of named entries that modules add to once, where they declare them (a
/// protocol's overhead kinds, its connection counters), and that outputs read in a fixed order:
/// by `order`, then by name. Written at registration and read by outputs, never per packet, so
/// a lock is enough.
public final class NamedRegistry<Entry>: @unchecked Sendable {
    // @unchecked: every access to `entries` holds `lock`.
    private var entries: [Entry]
    private let name: KeyPath<Entry, String>
    private let order: KeyPath<Entry, Int>
    private let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    public init(_ builtIn: [Entry] = [], name: KeyPath<Entry, String>, order: KeyPath<Entry, Int>) {
        entries = builtIn
        self.name = name
        self.order = order
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }

    /// The entry's index; an entry of the same name keeps its first registration's.
    public func register(_ entry: Entry, capacity: Int = .max) -> Int {
        locked {
            if let index = entries.firstIndex(where: { $0[keyPath: name] == entry[keyPath: name] }) { return index }
            precondition(entries.count < capacity, "more than \(capacity) entries registered")
            entries.append(entry)
            return entries.count - 1
        }
    }

    public func entry(at index: Int) -> Entry { locked { entries[index] } }

    /// Every index, by order then name.
    public func orderedIndices() -> [Int] {
        locked {
            entries.indices.sorted {
                let (a, b) = (entries[$0], entries[$1])
                return a[keyPath: order] != b[keyPath: order]
                    ? a[keyPath: order] < b[keyPath: order] : a[keyPath: name] < b[keyPath: name]
            }
        }
    }
}
