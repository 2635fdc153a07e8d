/// For each origin replica, the highest sequence number seen with no gap below it.
///
/// ```swift
/// var vv = VersionVector()
/// vv.advance(origin: a, to: 3)
/// vv.contains(origin: a, sequence: 2)   // true
/// ```
public struct VersionVector: Sendable, Hashable, CustomStringConvertible {
    /// Highest gap-free sequence per origin; origins at zero are absent.
    public private(set) var entries: [ReplicaID: UInt64]

    /// An empty vector.
    public init() { entries = [:] }

    /// A vector from entries (zero entries are dropped).
    public init(_ entries: [ReplicaID: UInt64]) {
        self.entries = entries.filter { $0.value > 0 }
    }

    /// The sequence seen from `origin` (0 when none).
    @inlinable public subscript(origin: ReplicaID) -> UInt64 { entries[origin] ?? 0 }

    /// True when the op `sequence` of `origin` is covered.
    @inlinable public func contains(origin: ReplicaID, sequence: UInt64) -> Bool { self[origin] >= sequence }

    /// This vector with the entry of `origin` no higher than `sequence`.
    public func capped(origin: ReplicaID, at sequence: UInt64) -> VersionVector {
        guard self[origin] > sequence else { return self }
        var entries = self.entries
        entries[origin] = sequence
        return VersionVector(entries)
    }

    /// Raises the entry of `origin` to `sequence` (never lowers it).
    public mutating func advance(origin: ReplicaID, to sequence: UInt64) {
        if sequence > self[origin] { entries[origin] = sequence }
    }

    /// The pointwise maximum.
    public func merged(with other: VersionVector) -> VersionVector {
        var result = self
        for (origin, sequence) in other.entries { result.advance(origin: origin, to: sequence) }
        return result
    }

    /// The pointwise minimum (what every vector of the list covers).
    public static func minimum(_ vectors: [VersionVector]) -> VersionVector {
        guard let first = vectors.first else { return VersionVector() }
        // Built entry by entry (updating a table while iterating it would copy it).
        var result = VersionVector()
        result.entries.reserveCapacity(first.entries.count)
        for (origin, sequence) in first.entries {
            var lowest = sequence
            for vector in vectors.dropFirst() where lowest > 0 { lowest = min(lowest, vector[origin]) }
            if lowest > 0 { result.entries[origin] = lowest }
        }
        return result
    }

    /// True when this vector covers every entry of `other`.
    public func covers(_ other: VersionVector) -> Bool {
        other.entries.allSatisfy { self[$0.key] >= $0.value }
    }

    /// Total number of ops covered.
    public var total: UInt64 { entries.values.reduce(0, +) }

    public var description: String {
        "[" + entries.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",") + "]"
    }
}
