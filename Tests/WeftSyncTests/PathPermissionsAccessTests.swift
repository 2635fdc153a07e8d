import Testing
import WeftCore
@testable import WeftSync

@Suite struct PathPermissionsAccessTests {
    func path(_ text: String) -> Path { try! Path(text) }

    var permissions: PathPermissions {
        PathPermissions([
            .root: .read, path("/users/alice"): .readWrite, path("/secrets"): [], path("/users/alice/locked"): .read,
        ])
    }

    @Test func theLongestPrefixDecides() {
        #expect(permissions.grant(at: path("/anything/deep")) == .read)
        #expect(permissions.grant(at: path("/users/alice/score")) == .readWrite)
        #expect(permissions.grant(at: path("/users/alice/locked/x")) == .read)
        #expect(permissions.grant(at: path("/secrets/key")) == [])
        #expect(PathPermissions().grant(at: .root) == [])
    }

    @Test func aSubtreeNeedsTheGrantEverywhereInside() {
        #expect(permissions.allows(.write, subtree: path("/users/alice/score")))
        #expect(!permissions.allows(.write, subtree: path("/users/alice")), "a read-only branch lies inside")
        #expect(!permissions.allows(.read, subtree: .root), "a hidden branch lies inside")
        #expect(permissions.allows(.read, subtree: path("/users")))
        #expect(!permissions.allows(.readWrite, subtree: path("/users/bob")))
    }

    @Test func allAndReadOnlyCoverTheWholeTree() {
        #expect(PathPermissions.all.allowsEverywhere(.readWrite))
        #expect(PathPermissions.readOnly.allowsEverywhere(.read))
        #expect(!PathPermissions.readOnly.allowsEverywhere(.write))
    }
}

@Suite struct SyncSessionPermissionTests {
    /// Node 0 (a client named "alice", or a peer) connects to node 1, which grants `permissions`.
    func connect(role: SyncRole, permissions: PathPermissions, prepare: (inout Harness) -> Void = { _ in }) -> Harness {
        var harness = Harness(nodeCount: 2)
        prepare(&harness)
        harness.connect(0, 1) { configuration, side in
            if side == .acceptor {
                configuration.tokens.set(
                    Harness.token(0, 1), for: Harness.replica(0).description, permissions: permissions)
            } else {
                configuration.role = role
            }
        }
        harness.run()
        return harness
    }

    @Test func aClientRequestOutsideItsPermissionsIsRefusedWithoutReachingTheOwner() {
        let permissions = PathPermissions([.root: .read, try! Path("/users/alice"): .readWrite])
        var harness = connect(role: .client, permissions: permissions)
        let requests = [
            ClientRequest(id: 1, command: .set(try! Path("/users/bob"), .int(1))),
            ClientRequest(id: 2, command: .set(try! Path("/users/alice/score"), .int(1))),
            ClientRequest(id: 3, command: .get(try! Path("/users/bob"))),
            ClientRequest(
                id: 4,
                command: .merge(
                    try! Path("/users"),
                    [
                        MergeChild(relative: try! Path("alice/x"), value: .int(1)),
                        MergeChild(relative: try! Path("bob"), value: .int(2)),
                    ])),
        ]
        for request in requests {
            harness.perform(try! harness.endpoints[0].session.onClientRequest(request, now: harness.now), at: 0)
        }
        harness.run()
        #expect(harness.endpoints[1].requests.map(\.id) == [2, 3])
        let refused = harness.endpoints[0].replies
        #expect(refused.map(\.id) == [1, 4])
        #expect(
            refused.first?.result
                == .failed(SyncError(.permissionDenied, "no write access to /users/bob", raisedByPeer: true)))
        #expect(harness.endpoints[1].session.phase == .connected)
    }

    @Test func anIncrementNeedsReadAccessSinceItsReplyCarriesTheValue() {
        // A write-only client could otherwise read a counter by incrementing it by zero.
        let permissions = PathPermissions([try! Path("/votes"): .write, try! Path("/score"): .readWrite])
        var harness = connect(role: .client, permissions: permissions)
        let requests = [
            ClientRequest(id: 1, command: .increment(try! Path("/votes"), by: .int(0), from: .int(0))),
            ClientRequest(id: 2, command: .set(try! Path("/votes"), .int(1))),
            ClientRequest(id: 3, command: .increment(try! Path("/score"), by: .int(1), from: .int(0))),
        ]
        for request in requests {
            harness.perform(try! harness.endpoints[0].session.onClientRequest(request, now: harness.now), at: 0)
        }
        harness.run()
        #expect(harness.endpoints[1].requests.map(\.id) == [2, 3])
        let denied = SyncError(.permissionDenied, "no read access to /votes", raisedByPeer: true)
        #expect(harness.endpoints[0].replies.first == ClientReply(id: 1, result: .failed(denied)))
    }

    @Test func aPeerWithoutWritePermissionCannotSendOps() {
        let harness = connect(role: .peer, permissions: .readOnly) { harness in
            harness.write(node: 0, .set(.int(1)), at: "/a")
        }
        #expect(harness.endpoints[1].session.closeError?.code == .permissionDenied)
        #expect(harness.logs[1].versionVector == VersionVector())
    }

    @Test func aPeerWithoutReadPermissionOverTheWholeTreeIsSentNoOps() {
        let permissions = PathPermissions([.root: .write])
        let harness = connect(role: .peer, permissions: permissions) { harness in
            harness.write(node: 1, .set(.int(1)), at: "/a")
            harness.write(node: 0, .set(.int(2)), at: "/b")
        }
        #expect(harness.opsSent(by: 1).isEmpty)
        #expect(harness.logs[1].versionVector[Harness.replica(0)] == 1)
        #expect(harness.endpoints.allSatisfy { $0.session.phase == .connected })
    }

    @Test func aPeerWithoutWritePermissionOverTheWholeTreeCannotSendASnapshot() {
        // A snapshot replaces the receiver's whole base: a peer that may write one branch must not
        // overwrite the rest by compacting first and sending its base.
        let permissions = PathPermissions([.root: .read, try! Path("/shared"): .readWrite])
        let harness = connect(role: .peer, permissions: permissions) { harness in
            harness.write(node: 0, .set(.int(1)), at: "/shared/x")
            harness.write(node: 0, .set(.int(2)), at: "/elsewhere")
            harness.logs[0].compact(upTo: harness.logs[0].versionVector)
        }
        #expect(harness.endpoints[0].messagesSent.contains { $0.type == .snapshotBegin })
        #expect(harness.endpoints[1].session.closeError?.code == .permissionDenied)
        #expect(harness.state(1) == .null)
        #expect(harness.logs[1].versionVector == VersionVector())
    }

    /// A peer that may not read the whole tree is sent no op, so what it says it holds of them cannot
    /// be so through this session: its hello and acks must not make this replica's writes acknowledged
    /// or stable, nor make it a member that holds the frontier back.
    @Test func aPeerThatMayNotReadTheWholeTreeDoesNotCountForStability() {
        let permissions = PathPermissions([.root: [], try! Path("/shared"): .readWrite])
        var harness = connect(role: .peer, permissions: permissions) { harness in
            harness.write(node: 0, .set(.int(1)), at: "/shared/x")
            harness.write(node: 1, .set(.int(2)), at: "/private")
        }
        harness.write(node: 0, .set(.int(3)), at: "/shared/y")
        harness.run()
        #expect(harness.logs[1].versionVector[Harness.replica(0)] == 2, "its writes still arrive")
        let acceptor = harness.endpoints[1]
        #expect(acceptor.session.phase == .connected)
        #expect(acceptor.acknowledgements.isEmpty, "\(acceptor.acknowledgements)")
        #expect(acceptor.statuses.last?.peerIsMember == false)
        #expect(harness.endpoints[0].statuses.last?.peerIsMember == true, "the other side may read everything")
    }

    @Test func aPeerMayWriteWhereItsGrantAllows() {
        let permissions = PathPermissions([.root: .read, try! Path("/shared"): .readWrite])
        let harness = connect(role: .peer, permissions: permissions) { harness in
            harness.write(node: 0, .set(.int(2)), at: "/shared/x")
            harness.write(node: 0, .increment(by: .int(1), from: .int(0)), at: "/shared/n")
        }
        #expect(harness.logs[1].versionVector[Harness.replica(0)] == 2)
        #expect(harness.endpoints[1].session.phase == .connected)
    }
}
