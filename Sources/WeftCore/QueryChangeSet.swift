import Foundation

/// How one query result became the next, in the terms of a table view's batch update (UIKit's
/// `performBatchUpdates`, AppKit's `beginUpdates`): rows deleted at their old indexes, rows inserted at
/// their new ones, rows changed in place at their old indexes, and rows moved from an old index to a new
/// one (a moved row may have changed too: read its value from the new result at `to`).
///
/// ```swift
/// let changes = QueryChangeSet(from: old, to: new)
/// tableView.performBatchUpdates {
///     tableView.deleteRows(at: changes.deletions.map { IndexPath(row: $0, section: 0) }, with: .fade)
///     tableView.insertRows(at: changes.insertions.map { IndexPath(row: $0, section: 0) }, with: .fade)
///     tableView.reloadRows(at: changes.modifications.map { IndexPath(row: $0, section: 0) }, with: .none)
///     for move in changes.moves { tableView.moveRow(at: IndexPath(row: move.from, section: 0),
///                                                   to: IndexPath(row: move.to, section: 0)) }
/// }
/// ```
///
/// A row is known by its key. A row that leaves the window (or the range, or stops matching) is a
/// deletion, one that enters is an insertion. Rows that stay and keep their order relative to one another
/// are modifications when their value changed; the fewest rows needed to restore the new order are moves.
public struct QueryChangeSet: Sendable, Hashable, CustomStringConvertible {
    /// A row that stayed in the result at another place.
    public struct Move: Sendable, Hashable {
        /// Its index in the old result.
        public let from: Int
        /// Its index in the new result.
        public let to: Int

        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Indexes in the old result of the rows that left it.
    public let deletions: IndexSet
    /// Indexes in the new result of the rows that entered it.
    public let insertions: IndexSet
    /// Indexes in the old result of the rows that stayed in place and changed value.
    public let modifications: IndexSet
    /// The rows that stayed and moved, from their old index to their new one, by ascending `from`.
    public let moves: [Move]

    public init(deletions: IndexSet, insertions: IndexSet, modifications: IndexSet, moves: [Move]) {
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
        self.moves = moves
    }

    /// True when the two results were the same.
    public var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && moves.isEmpty }

    /// The changes from `old` to `new` (each a result: keys appear at most once).
    public init(from old: QueryResult, to new: QueryResult) {
        var newIndex: [Key: Int] = [:]
        newIndex.reserveCapacity(new.count)
        for (index, row) in new.rows.enumerated() { newIndex[row.key] = index }
        var deletions = IndexSet()
        // The rows that stayed: (old index, new index), in old order.
        var stayed: [(old: Int, new: Int)] = []
        for (index, row) in old.rows.enumerated() {
            if let position = newIndex[row.key] { stayed.append((index, position)) } else { deletions.insert(index) }
        }
        var insertions = IndexSet(integersIn: 0..<new.count)
        for pair in stayed { insertions.remove(pair.new) }
        let anchored = Self.longestIncreasingRun(stayed.map(\.new))
        var modifications = IndexSet()
        var moves: [Move] = []
        for (position, pair) in stayed.enumerated() {
            if anchored.contains(position) {
                if old.rows[pair.old].value != new.rows[pair.new].value { modifications.insert(pair.old) }
            } else {
                moves.append(Move(from: pair.old, to: pair.new))
            }
        }
        self.init(deletions: deletions, insertions: insertions, modifications: modifications, moves: moves)
        precondition(old.count - deletions.count == new.count - insertions.count, "rows that stay are counted once")
    }

    /// The positions in `sequence` of one longest strictly increasing subsequence (patience sorting,
    /// O(n log n)): the rows that keep their relative order and need not move.
    static func longestIncreasingRun(_ sequence: [Int]) -> Set<Int> {
        var tails: [Int] = []  // positions in `sequence` ending the best run of each length
        var previous = [Int](repeating: -1, count: sequence.count)
        for (position, element) in sequence.enumerated() {
            let length = tails.partitionPoint { sequence[$0] >= element }
            if length > 0 { previous[position] = tails[length - 1] }
            if length == tails.count { tails.append(position) } else { tails[length] = position }
        }
        var run = Set<Int>()
        var position = tails.last ?? -1
        while position >= 0 {
            run.insert(position)
            position = previous[position]
        }
        return run
    }

    /// Replays the changes on `old`, reading from `new` only the rows the changes name (insertions, moves'
    /// targets, modifications): what a client holding `old` does with a change set and those rows. Equal to
    /// `new` when the change set was made from `old` to `new`.
    public func applied(to old: QueryResult, reading new: QueryResult) -> QueryResult {
        let movedFrom = Set(moves.map(\.from))
        let movedTo = Set(moves.map(\.to))
        var survivors: [(row: QueryRow, modified: Bool)] = []
        for (index, row) in old.rows.enumerated() where !deletions.contains(index) && !movedFrom.contains(index) {
            survivors.append((row, modifications.contains(index)))
        }
        let count = old.count - deletions.count + insertions.count
        var rows: [QueryRow] = []
        rows.reserveCapacity(count)
        var next = 0
        for index in 0..<count {
            if insertions.contains(index) || movedTo.contains(index) {
                guard index < new.count else { break }
                rows.append(new.rows[index])
            } else {
                guard next < survivors.count else { break }
                let survivor = survivors[next]
                next += 1
                if survivor.modified, index < new.count {
                    rows.append(new.rows[index])
                } else {
                    rows.append(survivor.row)
                }
            }
        }
        return QueryResult(rows: rows)
    }

    public var description: String {
        "deleted \(Array(deletions)) inserted \(Array(insertions)) modified \(Array(modifications)) "
            + "moved \(moves.map { "\($0.from)→\($0.to)" })"
    }
}
