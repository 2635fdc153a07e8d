import Foundation
import WeftCore

/// A change of a live query's result (``ClientCommand/watchQuery(_:)``): the change set from the previous
/// result to the new one, and only the rows of the new result that the change set names (inserted, moved
/// or modified). A client holding the previous result rebuilds the new one with ``applied(to:)``; rows
/// that stayed in place unchanged cost nothing on the wire.
///
/// ```swift
/// let event = ClientQueryEvent(watchID: 7, from: old, to: new)
/// let rebuilt = try event.applied(to: old)   // == new
/// ```
public struct ClientQueryEvent: Sendable, Hashable {
    /// A row of the new result, at its index there.
    public struct Row: Sendable, Hashable {
        /// The row's index in the new result.
        public let index: Int
        /// The row.
        public let row: QueryRow

        /// A row from its index in the new result and its content.
        public init(index: Int, row: QueryRow) {
            self.index = index
            self.row = row
        }
    }

    /// The id of the `watchQuery` request.
    public var watchID: UInt64
    /// How the previous result became the new one.
    public var changes: QueryChangeSet
    /// The rows of the new result the changes name, by ascending index.
    public var rows: [Row]

    /// An event from its parts, as decoded.
    public init(watchID: UInt64, changes: QueryChangeSet, rows: [Row]) {
        self.watchID = watchID
        self.changes = changes
        self.rows = rows
    }

    /// The event that takes a client from `old` to `new`.
    public init(watchID: UInt64, from old: QueryResult, to new: QueryResult) {
        let changes = QueryChangeSet(from: old, to: new)
        let named = Self.namedIndexes(changes, oldCount: old.count)
        self.init(watchID: watchID, changes: changes, rows: named.map { Row(index: $0, row: new[$0]) })
    }

    /// The new result, from the previous one.
    ///
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/protocolViolation`` when the event does not fit
    ///   `old` (an index out of range, an index in two roles, a named row missing, a key twice): the two
    ///   ends disagree on the result, and the live query cannot go on.
    public func applied(to old: QueryResult) throws(SyncError) -> QueryResult {
        let deletions = changes.deletions
        let modifications = changes.modifications
        let movedFrom = Set(changes.moves.map(\.from))
        let movedTo = Set(changes.moves.map(\.to))
        let count = old.count - deletions.count + changes.insertions.count
        let fromIndexes = Array(deletions) + Array(modifications) + Array(movedFrom)
        let toIndexes = Array(changes.insertions) + Array(movedTo)
        guard fromIndexes.allSatisfy({ $0 >= 0 && $0 < old.count }), Set(fromIndexes).count == fromIndexes.count,
            movedFrom.count == changes.moves.count, movedTo.count == changes.moves.count, count >= 0,
            toIndexes.allSatisfy({ $0 >= 0 && $0 < count }), Set(toIndexes).count == toIndexes.count
        else {
            throw SyncError(.protocolViolation, "live query \(watchID): the change set does not fit the result held")
        }
        var named: [Int: QueryRow] = [:]
        for row in rows { named[row.index] = row.row }
        var result: [QueryRow] = []
        result.reserveCapacity(count)
        var survivors = old.rows.indices.lazy.filter { !deletions.contains($0) && !movedFrom.contains($0) }
            .makeIterator()
        for index in 0..<count {
            var row: QueryRow?
            if changes.insertions.contains(index) || movedTo.contains(index) {
                row = named[index]
            } else if let survivor = survivors.next() {
                row = modifications.contains(survivor) ? named[index] : old[survivor]
            }
            guard let row else {
                throw SyncError(.protocolViolation, "live query \(watchID): row \(index) of the new result is missing")
            }
            result.append(row)
        }
        guard survivors.next() == nil, Set(result.map(\.key)).count == result.count,
            named.count == rows.count, named.count == Self.namedIndexes(changes, oldCount: old.count).count
        else {
            throw SyncError(.protocolViolation, "live query \(watchID): the rows sent do not match the change set")
        }
        return QueryResult(rows: result)
    }

    /// The indexes of the new result whose rows the client cannot take from the old result: insertions,
    /// moves' targets, and the new places of the rows modified in place. Ascending.
    static func namedIndexes(_ changes: QueryChangeSet, oldCount: Int) -> [Int] {
        let movedFrom = Set(changes.moves.map(\.from))
        let movedTo = Set(changes.moves.map(\.to))
        let count = oldCount - changes.deletions.count + changes.insertions.count
        var survivors = (0..<oldCount).lazy.filter { !changes.deletions.contains($0) && !movedFrom.contains($0) }
            .makeIterator()
        var named: [Int] = []
        for index in 0..<max(count, 0) {
            if changes.insertions.contains(index) || movedTo.contains(index) {
                named.append(index)
            } else if let survivor = survivors.next(), changes.modifications.contains(survivor) {
                named.append(index)
            }
        }
        return named
    }
}
