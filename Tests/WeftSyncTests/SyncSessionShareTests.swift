import Testing
import WeftCore
@testable import WeftSync

/// A hub serving a peer limited to a share (`peer leaf1 readwrite /stores/$name/**`): the peer is sent
/// each op projected into its share (``OpProjection``), its log stays gap-free, a snapshot is cut to the
/// share, and partial ops never reach a replica of the whole tree.
@Suite struct SyncSessionShareTests {
    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }
    static func json(_ text: String) -> Value { (try? Value(json: text)) ?? .null }

    static var rules: PathRules {
        var rules = PathRules()
        try? rules.setKind(.peer, for: "leaf1")
        if let rule = try? PathRule(grant: .readWrite, pattern: "/stores/$name/**") { try? rules.add(rule, for: "leaf1") }
        return rules
    }

    static var share: CredentialShare {
        CredentialShare(PeerCredential(token: Harness.token(0, 1), kind: .peer, grants: rules.grants(for: "leaf1")))
    }

    /// Node 0 (leaf1) dials node 1, a hub that files it under the rules above.
    static func connect(prepare: (inout Harness) -> Void = { _ in }) -> Harness {
        var harness = Harness(nodeCount: 2)
        prepare(&harness)
        harness.connect(0, 1, adjust: hubAdjust)
        harness.run()
        return harness
    }

    /// The configurations of leaf1 (node 0, initiator) and its hub (node 1, acceptor): the hub files node 0
    /// as leaf1 under the rules above, and knows node 2 as a replica of the whole tree.
    static func hubAdjust(_ configuration: inout SyncConfiguration, _ side: SyncSide) {
        if side == .acceptor {
            var book = TokenBook()
            book.set(Harness.token(0, 1), for: "leaf1")
            book.set(Harness.token(1, 2), for: Harness.replica(2).description)
            book.rules = rules
            configuration.tokens = book
            configuration.role = .hub
        } else {
            configuration.name = "leaf1"
        }
    }

    @Test("the share of CredentialShare follows the rules: inside, above and outside")
    func shareRelations() {
        let share = Self.share
        #expect(share.relation(to: .root) == .above)
        #expect(share.relation(to: Self.path("/stores")) == .above)
        #expect(share.relation(to: Self.path("/stores/leaf1")) == .inside)
        #expect(share.relation(to: Self.path("/stores/leaf1/a/b")) == .inside)
        #expect(share.relation(to: Self.path("/stores/leaf2")) == .outside)
        #expect(share.relation(to: Self.path("/users")) == .outside)
        let permissions = CredentialShare(
            PeerCredential(token: Harness.token(0, 1), permissions: PathPermissions([.root: .read, Self.path("/secret"): .write])))
        #expect(permissions.relation(to: .root) == .above)
        #expect(permissions.relation(to: Self.path("/secret")) == .outside)
        #expect(permissions.relation(to: Self.path("/open")) == .inside)
    }

    @Test("a leaf ends with the hub's state cut to its share, and a vector equal to the hub's")
    func leafHoldsItsShare() {
        var harness = Self.connect { harness in
            harness.write(node: 1, .set(Self.json(#"{"leaf1":{"stock":3},"leaf2":{"stock":4}}"#)), at: "/stores")
            harness.write(node: 1, .set(.string("hub only")), at: "/users/alice")
        }
        harness.write(node: 0, .set(.int(9)), at: "/stores/leaf1/orders/o1")
        harness.write(node: 1, .increment(by: .int(-1), from: .int(0)), at: "/stores/leaf1/stock")
        harness.write(node: 1, .increment(by: .int(-1), from: .int(0)), at: "/stores/leaf2/stock")
        harness.write(
            node: 1,
            .merge([
                MergeChild(relative: Self.path("/leaf1/open"), value: .bool(true)),
                MergeChild(relative: Self.path("/leaf2/open"), value: .bool(false)),
            ]), at: "/stores")
        harness.run()
        let share = Self.share
        #expect(harness.logs[0].versionVector == harness.logs[1].versionVector)
        #expect(harness.state(0) == share.restrict(harness.state(1), at: .root))
        #expect(harness.state(0) == Self.json(#"{"stores":{"leaf1":{"stock":2,"open":true,"orders":{"o1":9}}}}"#))
        #expect(harness.opsSent(by: 1).filter(\.isPartial).count == 4, "the set and merge cut, two withheld")
        #expect(harness.endpoints.allSatisfy { $0.session.phase == .connected })
        #expect(harness.endpoints[1].acknowledgements.isEmpty, "a leaf sent its share does not count for stability")
    }

    @Test("a decision the hub carries stands on the leaf, even against a leaf's op the hub had not seen")
    func carriedDecisionStands() {
        let order = Self.path("/stores/leaf1/order")
        let harness = Self.connect { harness in
            // The leaf's write, stamped first, reaches the hub only after the hub sent its batch.
            harness.write(node: 0, .set(.string("leaf")), at: "/stores/leaf1/order")
            harness.write(node: 1, .set(.int(4)), at: "/stores/leaf2/stock")
            let read = harness.logs[1].versionVector
            let guarded = try? OpKind.guarded(
                read: read, reads: [Self.path("/stores/leaf2/stock")], writes: [.set(order, .string("hub"))])
            if let guarded { harness.write(node: 1, guarded.kind, at: guarded.path.description) }
        }
        let sent = harness.opsSent(by: 1)
        #expect(sent.contains { $0.isPartial && $0.kind.isGuardedBatchWriting(order) }, "\(sent)")
        #expect(harness.logs[0].versionVector == harness.logs[1].versionVector)
        // The hub applied the batch (nothing touched the stock it read); stamped last, it wins on both.
        #expect(harness.state(1).value(at: order) == .string("hub"))
        #expect(harness.state(0) == Self.share.restrict(harness.state(1), at: .root))
    }

    @Test("a leaf behind the hub's compaction gets a snapshot of its share, checked by a digest of the share")
    func snapshotOfTheShare() {
        let harness = Self.connect { harness in
            harness.write(node: 1, .set(Self.json(#"{"leaf1":{"stock":3},"leaf2":{"secret":4}}"#)), at: "/stores")
            harness.write(node: 1, .set(.int(1)), at: "/users/alice")
            harness.logs[1].compact(upTo: harness.logs[1].versionVector)
        }
        #expect(harness.endpoints[1].messagesSent.contains { $0.type == .snapshotBegin })
        #expect(harness.state(0) == Self.json(#"{"stores":{"leaf1":{"stock":3}}}"#))
        #expect(harness.logs[0].versionVector == harness.logs[1].versionVector)
        #expect(harness.endpoints.allSatisfy { $0.session.phase == .connected })
    }

    @Test("a hub refuses a partial op, and nothing of its frame is applied")
    func aHubRefusesPartialOps() {
        var harness = Self.connect()
        let whole = Op(
            stamp: Stamp(millis: 5, counter: 0, replica: Harness.replica(0)), sequence: 1, path: Self.path("/stores"),
            kind: .set(Self.json(#"{"leaf1":1,"leaf2":2}"#)))
        guard case .partial(let cut) = OpProjection.project(whole, into: Self.share, outcome: nil, seen: VersionVector())
        else {
            Issue.record("a set above the share is cut")
            return
        }
        // Sent raw, as a leaf that skipped its own check would.
        let frame = MessageCodec.encode(.ops(EncodedOps([cut])))
        let actions = harness.endpoints[1].session.onBytesReceived(frame, source: harness.logs[1], now: harness.now)
        harness.perform(actions, at: 1)
        harness.run()
        let refusal = harness.endpoints[1].session.closeError
        #expect(refusal?.code == .protocolViolation)
        #expect(refusal?.message.contains("a hub holds every op whole") == true, "\(String(describing: refusal))")
        #expect(harness.logs[1].versionVector[Harness.replica(0)] == 0)
    }

    @Test("a replica holding partial ops does not pass them on to a replica of the whole tree")
    func partialOpsStayWithTheLeaf() {
        // Node 0 holds a placeholder of node 1's op; node 2 lacks the op, and would be sent it.
        let whole = Op(
            stamp: Stamp(millis: 5, counter: 0, replica: Harness.replica(1)), sequence: 1, path: Self.path("/stores/leaf2"),
            kind: .set(.int(1)))
        var third = Harness(nodeCount: 3)
        third.logs[0].apply([OpProjection.withheld(whole, share: Self.share)])
        third.connect(0, 2)
        third.run()
        let refusal = third.endpoints.first { $0.session.closeError?.code == .roleMismatch }?.session.closeError
        #expect(refusal?.message.contains("holds only its share") == true, "\(String(describing: refusal))")
        #expect(third.logs[2].versionVector[Harness.replica(1)] == 0)
    }
}

extension OpKind {
    /// True for a guarded batch with a part writing `path`.
    fileprivate func isGuardedBatchWriting(_ path: Path) -> Bool {
        guard case .guardedBatch(_, _, let writes) = self else { return false }
        return writes.contains { $0.path == path }
    }
}
