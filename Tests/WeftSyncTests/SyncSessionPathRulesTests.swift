import Testing
import WeftCore
@testable import WeftSync

/// Path rules and entry kinds (``PathRules``, ``PeerKind``) as a session applies them, and their reload.
@Suite struct SyncSessionPathRulesTests {
    func path(_ text: String) -> Path { try! Path(text) }

    /// alice writes and reads her own subtree and reads /public; leaf1 is a peer limited to its store.
    static func rules(publicReadable: Bool = true) -> PathRules {
        var rules = PathRules()
        try! rules.setKind(.client, for: "alice")
        try! rules.add(try! PathRule(grant: .readWrite, pattern: "/users/$name/**"), for: "alice")
        if publicReadable { try! rules.add(try! PathRule(grant: .read, pattern: "/public/**"), for: "alice") }
        try! rules.setKind(.peer, for: "leaf1")
        try! rules.add(try! PathRule(grant: .readWrite, pattern: "/stores/$name/**"), for: "leaf1")
        return rules
    }

    /// The acceptor's (node 1's) book: node 0's token filed under `name`, with `rules`.
    static func book(name: String, rules: PathRules, token: AuthToken = Harness.token(0, 1)) -> TokenBook {
        var book = TokenBook()
        book.set(token, for: name)
        book.rules = rules
        return book
    }

    /// Node 0 introduces itself as `name` with `role` to node 1, whose book files its token under that name.
    func connect(
        name: String, role: SyncRole, rules: PathRules = Self.rules(), prepare: (inout Harness) -> Void = { _ in }
    ) -> Harness {
        var harness = Harness(nodeCount: 2)
        prepare(&harness)
        harness.connect(0, 1) { configuration, side in
            if side == .acceptor {
                configuration.tokens = Self.book(name: name, rules: rules)
            } else {
                configuration.role = role
                configuration.name = name
            }
        }
        harness.run()
        return harness
    }

    func send(_ harness: inout Harness, _ requests: [ClientRequest]) {
        for request in requests {
            harness.perform(try! harness.endpoints[0].session.onClientRequest(request, now: harness.now), at: 0)
        }
        harness.run()
    }

    func answer(_ harness: inout Harness, _ reply: ClientReply) {
        harness.perform(harness.endpoints[1].session.onClientReply(reply, now: harness.now), at: 1)
        harness.run()
    }

    func refusal(_ harness: Harness, id: UInt64) -> SyncError? {
        guard let reply = harness.endpoints[0].replies.last(where: { $0.id == id }) else { return nil }
        if case .failed(let error) = reply.result { return error }
        return nil
    }

    @Test func aClientIsKeptToWhatItsRulesGrant() {
        var harness = connect(name: "alice", role: .client)
        send(
            &harness,
            [
                ClientRequest(id: 1, command: .set(path("/users/alice/score"), .int(1))),
                ClientRequest(id: 2, command: .get(path("/public/news"))),
                ClientRequest(id: 3, command: .set(path("/users/bob"), .int(1))),
                ClientRequest(id: 4, command: .get(path("/users"))),
                ClientRequest(id: 5, command: .set(path("/public/news"), .int(1))),
                ClientRequest(id: 6, command: .watch(path("/users"))),
                ClientRequest(
                    id: 7,
                    command: .merge(
                        path("/users"),
                        [
                            MergeChild(relative: path("alice/deep/key"), value: .int(1)),
                            MergeChild(relative: path("bob/x"), value: .int(2)),
                        ])),
                ClientRequest(id: 8, command: .increment(path("/public/n"), by: .int(1), from: .int(0))),
                ClientRequest(id: 9, command: .status),
                ClientRequest(id: 10, command: .push(path("/users/alice/log"), .int(1))),
            ])
        #expect(harness.endpoints[1].requests.map(\.id) == [1, 2, 10], "only granted requests reach the owner")
        #expect(harness.endpoints[0].replies.map(\.id) == [3, 4, 5, 6, 7, 8, 9])
        #expect(refusal(harness, id: 3)?.code == .permissionDenied)
        #expect(refusal(harness, id: 3)?.message.hasPrefix("no write access to /users/bob for alice") == true)
        #expect(refusal(harness, id: 4)?.message.hasPrefix("no read access to /users for alice") == true)
        #expect(refusal(harness, id: 5)?.message.hasPrefix("no write access to /public/news for alice") == true)
        #expect(refusal(harness, id: 6)?.message.hasPrefix("no read access to /users for alice") == true)
        #expect(refusal(harness, id: 7)?.message.hasPrefix("no write access to /users/bob/x for alice") == true)
        #expect(refusal(harness, id: 8)?.message.hasPrefix("no write access to /public/n for alice") == true)
        #expect(refusal(harness, id: 9)?.message.hasPrefix("no read access to / for alice") == true)
        #expect(refusal(harness, id: 3)?.message.contains("its rules: readwrite /users/$name/**") == true)
        #expect(harness.endpoints[1].session.phase == .connected, "a refused request leaves the session open")
    }

    @Test func aClientTokenCannotOpenAPeerSession() {
        let harness = connect(name: "alice", role: .peer) { harness in
            harness.write(node: 1, .set(.string("secret")), at: "/users/bob")
        }
        let refusal = harness.endpoints[1].session.closeError
        #expect(refusal?.code == .roleMismatch)
        #expect(refusal?.message == "\"alice\" holds a client token, which cannot open a peer session")
        #expect(harness.endpoints[0].session.closeError?.raisedByPeer == true)
        #expect(harness.logs[0].versionVector == VersionVector(), "nothing was replicated to it")
        #expect(harness.endpoints[0].statuses.allSatisfy { $0.phase != .connected })
    }

    @Test func aPeerTokenCannotOpenAClientSession() {
        let harness = connect(name: "leaf1", role: .client)
        #expect(harness.endpoints[1].session.closeError?.code == .roleMismatch)
        #expect(
            harness.endpoints[1].session.closeError?.message
                == "\"leaf1\" holds a peer token, which cannot open a client session")
    }

    @Test func aStrangerLearnsNothingOfAnEntrysKind() {
        // The wrong secret for a client entry, as a peer: refused for the secret, not for the kind.
        var harness = Harness(nodeCount: 2)
        harness.connect(0, 1) { configuration, side in
            if side == .acceptor {
                configuration.tokens = Self.book(
                    name: "alice", rules: Self.rules(), token: try! AuthToken(string: "another long secret"))
            } else {
                configuration.name = "alice"
            }
        }
        harness.run()
        #expect(harness.endpoints[1].session.closeError?.code == .authenticationFailed)
    }

    @Test func aPeerLimitedToASubtreeMayWriteThereAndIsSentOnlyAPlaceholderOfWhatLiesOutside() {
        let harness = connect(name: "leaf1", role: .peer) { harness in
            harness.write(node: 0, .set(.int(1)), at: "/stores/leaf1/stock")
            harness.write(node: 1, .set(.string("hub only")), at: "/stores/leaf2/stock")
        }
        #expect(harness.logs[1].versionVector[Harness.replica(0)] == 1)
        let sent = harness.opsSent(by: 1)
        #expect(sent.count == 1 && sent.allSatisfy(OpProjection.isWithheld), "\(sent)")
        #expect(harness.logs[0].versionVector == harness.logs[1].versionVector, "its log has no gap")
        #expect(harness.state(0) == (try! Value(json: #"{"stores":{"leaf1":{"stock":1}}}"#)))
        #expect(harness.endpoints[1].session.phase == .connected)
    }

    @Test func aPeerLimitedToASubtreeHasItsOpsOutsideRefused() {
        let harness = connect(name: "leaf1", role: .peer) { harness in
            harness.write(node: 0, .set(.int(1)), at: "/stores/leaf1/stock")
            harness.write(node: 0, .set(.int(2)), at: "/stores/leaf2/stock")
        }
        let refusal = harness.endpoints[1].session.closeError
        #expect(refusal?.code == .permissionDenied)
        #expect(refusal?.message.contains("the peer may not write /stores/leaf2/stock") == true)
        #expect(harness.logs[1].versionVector == VersionVector(), "the frame holding it is refused whole")
    }

    // MARK: - Reload

    /// alice, connected, watching /public/news (watch 5) and /users/alice (watch 6).
    func aliceWatching() -> Harness {
        var harness = connect(name: "alice", role: .client)
        send(
            &harness,
            [
                ClientRequest(id: 5, command: .watch(path("/public/news"))),
                ClientRequest(id: 6, command: .watch(path("/users/alice"))),
            ])
        answer(&harness, ClientReply(id: 5, result: .ok(.null)))
        answer(&harness, ClientReply(id: 6, result: .ok(.null)))
        return harness
    }

    func reload(_ harness: inout Harness, _ book: TokenBook) -> [SyncAction] {
        let actions = harness.endpoints[1].session.onCredentialsChanged(book, now: harness.now)
        harness.perform(actions, at: 1)
        harness.run()
        return actions
    }

    func event(_ harness: inout Harness, watch: UInt64, at target: String, _ value: Value) {
        let event = ClientEvent(watchID: watch, path: path(target), value: value)
        harness.perform(harness.endpoints[1].session.onClientEvent(event, now: harness.now), at: 1)
        harness.run()
    }

    @Test func aReloadEndsTheWatchesOfAPathNoLongerReadableAndTheSessionGoesOn() {
        var harness = aliceWatching()
        _ = reload(&harness, Self.book(name: "alice", rules: Self.rules(publicReadable: false)))
        #expect(harness.endpoints[1].session.phase == .connected)
        #expect(harness.endpoints[0].session.phase == .connected)
        let ended = refusal(harness, id: 5)
        #expect(ended?.code == .permissionDenied)
        #expect(ended?.message.hasPrefix("watch 5 of /public/news ended: no read access to /public/news") == true)
        #expect(harness.endpoints[1].session.openWatchIDs == [6])
        event(&harness, watch: 5, at: "/public/news", .int(1))
        event(&harness, watch: 6, at: "/users/alice", .int(2))
        #expect(harness.endpoints[0].events == [ClientEvent(watchID: 6, path: path("/users/alice"), value: .int(2))])
        send(&harness, [ClientRequest(id: 7, command: .get(path("/public/news")))])
        #expect(refusal(harness, id: 7)?.code == .permissionDenied, "the new rules bind later requests")
    }

    @Test func aReloadThatChangesNothingKeepsTheSessionAndItsWatches() {
        var harness = aliceWatching()
        let actions = reload(&harness, Self.book(name: "alice", rules: Self.rules()))
        #expect(actions.isEmpty)
        #expect(harness.endpoints[1].session.openWatchIDs == [5, 6])
    }

    @Test func aReloadThatRemovesTheTokenClosesTheSession() {
        var harness = aliceWatching()
        var book = TokenBook()
        book.set(Harness.token(0, 7), for: "somebody else")
        let actions = reload(&harness, book)
        #expect(actions.errorSent?.code == .authenticationFailed)
        #expect(actions.errorSent?.message == "the token of \"alice\" was removed")
        #expect(harness.endpoints[0].session.closeError?.code == .authenticationFailed)
    }

    @Test func aReloadThatChangesTheSecretClosesTheSession() {
        var harness = aliceWatching()
        let actions = reload(
            &harness,
            Self.book(name: "alice", rules: Self.rules(), token: try! AuthToken(string: "a brand new long secret")))
        #expect(actions.errorSent?.code == .authenticationFailed)
    }

    @Test func aReloadThatMakesAClientAPeerClosesItsClientSession() {
        var harness = aliceWatching()
        var rules = PathRules()
        try! rules.setKind(.peer, for: "alice")
        let actions = reload(&harness, Self.book(name: "alice", rules: rules))
        #expect(actions.errorSent?.code == .roleMismatch)
    }

    @Test func aReloadThatChangesAPeersRulesClosesItsSessionSoItDialsAgainUnderThem() {
        var harness = connect(name: "leaf1", role: .peer)
        #expect(harness.endpoints[1].session.phase == .connected)
        var unchanged = harness
        #expect(reload(&unchanged, Self.book(name: "leaf1", rules: Self.rules())).isEmpty)
        var rules = PathRules()
        try! rules.setKind(.peer, for: "leaf1")
        let actions = reload(&harness, Self.book(name: "leaf1", rules: rules))
        #expect(actions.errorSent?.code == .permissionDenied)
        #expect(actions.errorSent?.message.contains("the rules of \"leaf1\" changed") == true)
    }

    @Test func aWatchEndedBeforeTheOwnerAnsweredItGetsOneReplyTheRefusal() {
        var harness = connect(name: "alice", role: .client)
        send(&harness, [ClientRequest(id: 5, command: .watch(path("/public/news")))])
        #expect(harness.endpoints[1].requests.map(\.id) == [5])
        _ = reload(&harness, Self.book(name: "alice", rules: Self.rules(publicReadable: false)))
        #expect(harness.endpoints[0].replies.isEmpty, "the watch is still waiting for its answer")
        answer(&harness, ClientReply(id: 5, result: .ok(.null)))
        #expect(harness.endpoints[0].replies.count == 1)
        #expect(refusal(harness, id: 5)?.code == .permissionDenied)
        #expect(harness.endpoints[0].session.phase == .connected)
        event(&harness, watch: 5, at: "/public/news", .int(1))
        #expect(harness.endpoints[0].events.isEmpty)
    }

    @Test func aReloadThatOnlyNamesAPeersKindKeepsItsSession() {
        var rulesBefore = PathRules()
        try! rulesBefore.add(try! PathRule(grant: .readWrite, pattern: "/"), for: "paris")
        var harness = connect(name: "paris", role: .peer, rules: rulesBefore)
        #expect(harness.endpoints[1].session.phase == .connected)
        var rulesAfter = rulesBefore
        try! rulesAfter.setKind(.peer, for: "paris")
        let actions = reload(&harness, Self.book(name: "paris", rules: rulesAfter))
        #expect(actions.isEmpty)
        #expect(harness.endpoints[1].session.phase == .connected)
    }

    @Test func aClientAcceptsTheEndOfAnOpenWatchButNoReplyToAnythingElse() {
        var harness = aliceWatching()
        // A failed reply to a watch that is not open is still a protocol violation.
        let stray = ClientReply(id: 99, result: .failed(SyncError(.permissionDenied, "no")))
        let frame = MessageCodec.encode(.reply(stray))
        let actions = harness.endpoints[0].session.onBytesReceived(frame, source: harness.logs[0], now: harness.now)
        #expect(actions.errorSent?.code == .protocolViolation)
    }
}
