import Foundation
import Testing
import WeftCore
import WeftStore
import WeftSync

@_spi(Engine) @testable import Weft

/// A replica limited to a share takes the decisions its hub revised (`Replica.reviseCarried(_:)`): each
/// replaces the op held under its origin and sequence, the state follows, and both stay after a reopen.
@Suite(.timeLimit(.minutes(5))) struct ReplicaRevisionTests {
    static let hub = ReplicaID(rawValue: 0x4B)!
    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }

    /// A carried decision as applied (a partial guarded batch writing leaf1's order) and the same op
    /// decided again as rejected (its placeholder).
    static func decisions() throws -> (applied: Op, rejected: Op) {
        let order = path("/stores/leaf1/order")
        let applied = Op(
            stamp: Stamp(millis: 1_700_000_000_000, counter: 0, replica: hub), sequence: 1, path: order,
            kind: .guardedBatch(
                read: VersionVector([hub: OpProjection.everySequence]), reads: [order],
                writes: [.set(order, .string("hub"))]),
            isPartial: true)
        let rejected = Op(
            stamp: applied.stamp, sequence: 1, path: order,
            kind: .guardedBatch(read: VersionVector(), reads: [order], writes: []), isPartial: true)
        return (applied, rejected)
    }

    @Test(
        "a revised decision replaces the op held, changes the state, and stays after a reopen",
        arguments: [ReplicaKind.memory, .sqlite])
    func revisionReplacesTheOp(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        fixture.clock.now = 1_700_000_000_100
        let (applied, rejected) = try Self.decisions()
        try fixture.replica.applyRemote([applied])
        #expect(fixture.replica.snapshot() == (try Value(json: #"{"stores":{"leaf1":{"order":"hub"}}}"#)))
        #expect(try fixture.replica.reviseCarried([applied]) == 0, "the op held as it is: nothing to do")
        #expect(try fixture.replica.reviseCarried([rejected]) == 1)
        #expect(fixture.replica.snapshot() == .null)
        try await fixture.replica.flush()
        try await fixture.reopen()
        #expect(fixture.replica.snapshot() == .null)
        #expect(fixture.replica.ops(from: Self.hub, after: 0, limit: 10) == [rejected])
        await fixture.finish()
    }

    @Test("a hub's replica gives the value an applied call wrote, which a leaf's share of it is cut from")
    func callResult() async throws {
        let fixture = try ReplicaFixture(.memory)
        fixture.clock.now = 1_700_000_000_100
        let other = ReplicaID(rawValue: 0x07)!
        let stores = Self.path("/stores")
        let balances = Op(
            stamp: Stamp(millis: 1_700_000_000_000, counter: 0, replica: Self.hub), sequence: 1, path: stores,
            kind: .set(try Value(json: #"{"leaf1":3,"leaf2":10}"#)))
        let arguments = try Value(json: #"{"from":"leaf2","to":"leaf1","amount":4}"#)
        let transfer = Op(
            stamp: Stamp(millis: 1_700_000_000_002, counter: 0, replica: Self.hub), sequence: 2, path: stores,
            kind: .call(FunctionCall(name: "transfer", version: 1, arguments: arguments)))
        try fixture.replica.applyRemote([balances, transfer])
        #expect(fixture.replica.callResult(of: transfer.stamp) == (try Value(json: #"{"leaf1":7,"leaf2":6}"#)))
        #expect(fixture.replica.callResult(of: balances.stamp) == nil, "not a call")
        // An op stamped before the call, arriving after it, changes what the call wrote.
        let deposit = Op(
            stamp: Stamp(millis: 1_700_000_000_001, counter: 0, replica: other), sequence: 1,
            path: Self.path("/stores/leaf2"), kind: .set(.int(20)))
        try fixture.replica.applyRemote([deposit])
        #expect(fixture.replica.callResult(of: transfer.stamp) == (try Value(json: #"{"leaf1":7,"leaf2":16}"#)))
        await fixture.finish()
    }

    @Test("a revision of a whole op, or of an op not held, is refused and changes nothing")
    func revisionRefused() async throws {
        let fixture = try ReplicaFixture(.memory)
        fixture.clock.now = 1_700_000_000_100
        let (applied, rejected) = try Self.decisions()
        let error = #expect(throws: WeftError.self) { try fixture.replica.reviseCarried([rejected]) }
        #expect(error?.message.contains("does not hold that op") == true, "\(String(describing: error))")
        let whole = Op(stamp: applied.stamp, sequence: 1, path: applied.path, kind: .set(.int(1)))
        try fixture.replica.applyRemote([whole])
        let heldWhole = #expect(throws: WeftError.self) { try fixture.replica.reviseCarried([rejected]) }
        #expect(heldWhole?.message.contains("held whole") == true, "\(String(describing: heldWhole))")
        #expect(fixture.replica.snapshot() == (try Value(json: #"{"stores":{"leaf1":{"order":1}}}"#)))
        await fixture.finish()
    }
}
