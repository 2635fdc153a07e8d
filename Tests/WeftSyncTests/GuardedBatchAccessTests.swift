import Testing

@testable import WeftCore
@testable import WeftSync

/// A peer sending a guarded batch needs write access where it writes and only read access where it
/// merely read.
@Suite struct GuardedBatchAccessTests {
    static let origin = ReplicaID(rawValue: 9) ?? ReplicaID(rawValue: 1)!

    @Test("a guarded batch needs write where it writes and read where it only reads")
    func accessFollowsWritesAndReads() throws {
        let written = try Path("/tasks/t1/assignee")
        let read = try Path("/people/p1")
        let both = try Path("/counts")
        let guarded = try OpKind.guarded(
            read: VersionVector(), reads: [read, both],
            writes: [.set(written, .string("/people/p1")), .increment(both, by: .int(1), from: .int(0))])
        let op = Op(
            stamp: Stamp(millis: 1, counter: 0, replica: Self.origin), sequence: 1, path: guarded.path,
            kind: guarded.kind)
        let needed = SyncLink.accessNeeded(by: op)
        #expect(needed.filter { $0.0 == .write }.map(\.1).sorted() == [both, written].sorted())
        #expect(needed.filter { $0.0 == .read }.map(\.1) == [read])
    }

    @Test("other ops need write access at every anchor, as before")
    func otherOpsNeedWrite() throws {
        let op = Op(
            stamp: Stamp(millis: 1, counter: 0, replica: Self.origin), sequence: 1, path: try Path("/a"),
            kind: .set(.int(1)))
        let needed = SyncLink.accessNeeded(by: op)
        #expect(needed.count == 1)
        #expect(needed.first?.0 == .write)
        #expect(needed.first?.1 == (try Path("/a")))
    }
}
