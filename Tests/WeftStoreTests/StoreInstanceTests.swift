import Foundation
import Testing
import WeftCore

@testable import WeftStore

/// Copied databases, run against both stores.
@Suite struct StoreInstanceTests {
    /// A copy of the fixture's database, opened as a store (a file copy for SQLite).
    private func copy(of fixture: StoreFixture) throws -> (any Store, cleanup: () -> Void) {
        switch fixture.kind {
        case .memory:
            let memory = try #require(fixture.store as? MemoryStore)
            return (memory.copyFile(), {})
        case .sqlite:
            try fixture.store.close()
            let copyPath = fixture.directory.appendingPathComponent("copy.sqlite").path
            try FileManager.default.copyItem(atPath: fixture.databasePath, toPath: copyPath)
            try fixture.reopen()
            let store = try SQLiteStore(path: copyPath)
            return (store, { try? store.close() })
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aCopiedDatabaseKnowsItIsACopyAndRefusesToCommitOrSync(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind, replica: 0xC0FFEE)
        let op = Sample.setOp(origin: 0xC0FFEE, sequence: 1, millis: 10)
        try fixture.store.commit(Sample.batch([op], status: .durable))
        let (copied, cleanup) = try copy(of: fixture)
        defer { cleanup() }

        guard case .copied = copied.identity.instance else {
            Issue.record("the copy reports \(copied.identity.instance)")
            return
        }
        #expect(copied.identity.replica == Sample.replica(0xC0FFEE))
        #expect(throws: StoreError.self) { try copied.requireOriginal() }
        do {
            try copied.commit(Sample.batch([Sample.setOp(origin: 0xC0FFEE, sequence: 2, millis: 20)], status: .durable))
            Issue.record("a copy accepted a commit")
        } catch StoreError.copiedDatabase {
            // Expected.
        }
        // Reading is fine.
        #expect(try copied.allOps().map(\.op) == [op])
        // The original is unaffected.
        #expect(fixture.store.identity.instance == .original)
        try fixture.store.requireOriginal()
    }

    @Test(arguments: StoreKind.allCases)
    func aReidentifiedCopyIsAnOriginalWithItsOwnIdAndToken(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind, replica: 0xC0FFEE)
        let (copied, cleanup) = try copy(of: fixture)
        defer { cleanup() }
        try copied.reidentify(newID: Sample.replica(0xD00D))
        #expect(copied.identity.instance == .original)
        #expect(copied.identity.replica == Sample.replica(0xD00D))
        #expect(copied.identity.instanceToken != fixture.store.identity.instanceToken)
        try copied.requireOriginal()
        try copied.commit(Sample.batch([Sample.setOp(origin: 0xD00D, sequence: 1, millis: 20)], status: .durable))
        #expect(try copied.opCount() == 1)
    }
}
