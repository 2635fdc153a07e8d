import Testing
import WeftCore
@testable import WeftSync

@Suite struct PathRulesMatchingTests {
    func path(_ text: String) -> Path { try! Path(text) }

    func reaches(_ pattern: String, _ target: String, name: String = "alice") -> Bool {
        (try! PathPattern(pattern)).resolved(name: name)?.reaches(path(target)) ?? false
    }

    @Test func aPatternReachesThePathsItNamesAndEverythingBelowThem() {
        #expect(reaches("/public", "/public"))
        #expect(reaches("/public", "/public/news/today"))
        #expect(!reaches("/public", "/publicity"))
        #expect(!reaches("/public", "/"))
        #expect(reaches("/", "/anything/at/all"))
        #expect(reaches("/", "/"))
    }

    @Test func aStarStandsForExactlyOneKey() {
        #expect(reaches("/rooms/*/title", "/rooms/r1/title"))
        #expect(reaches("/rooms/*/title", "/rooms/r1/title/en"))
        #expect(!reaches("/rooms/*/title", "/rooms/title"))
        #expect(!reaches("/rooms/*/title", "/rooms/r1/r2/title"))
        #expect(!reaches("/rooms/*", "/rooms"))
    }

    @Test func aDoubleStarStandsForAnyNumberOfKeysNoneIncluded() {
        #expect(reaches("/users/$name/**", "/users/alice"))
        #expect(reaches("/users/$name/**", "/users/alice/a/b/c"))
        #expect(reaches("/rooms/**/public", "/rooms/public"))
        #expect(reaches("/rooms/**/public", "/rooms/a/b/public/x"))
        #expect(!reaches("/rooms/**/public", "/rooms/a/b/private"))
        #expect(reaches("/**", "/"))
    }

    @Test func thePlaceholderIsTheClientsOwnName() {
        #expect(reaches("/users/$name", "/users/alice/score"))
        #expect(!reaches("/users/$name", "/users/bob"))
        #expect(reaches("/users/$name", "/users/bob", name: "bob"))
        #expect(reaches("/inbox/to-$name", "/inbox/to-alice/1"))
        #expect(!reaches("/inbox/to-$name", "/inbox/alice"))
    }

    @Test func aNameThatIsNoValidKeyMakesThePlaceholderRuleGrantNothing() {
        // A name holding "/" or "." must not reach another subtree through the placeholder.
        #expect((try! PathPattern("/users/$name")).resolved(name: "a/b") == nil)
        #expect((try! PathPattern("/users/$name")).resolved(name: "..") == nil)
        #expect((try! PathPattern("/public")).resolved(name: "a/b") != nil, "no placeholder, nothing to replace")
    }

    @Test(arguments: [
        "public", "/a//b", "/a/", "/a/./b", "/a/../b", "/a/b*", "/a/$other", "/a/$", "/a/x.y", "/a/#",
    ])
    func aPatternThatCannotSayExactlyWhereIsRefused(_ text: String) {
        let error = #expect(throws: SyncError.self) { try PathPattern(text) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("invalid path pattern \(text)") == true)
    }

    var rules: PathRules {
        var rules = PathRules()
        try! rules.setKind(.client, for: "alice")
        try! rules.add(try! PathRule(grant: .write, pattern: "/users/$name/**"), for: "alice")
        try! rules.add(try! PathRule(grant: .read, pattern: "/users/$name/**"), for: "alice")
        try! rules.add(try! PathRule(grant: .read, pattern: "/public/**"), for: "alice")
        try! rules.setKind(.peer, for: "paris")
        return rules
    }

    @Test func grantsAddUpAndEverythingElseIsDeniedOnceANameHasARule() throws {
        try rules.check(client: "alice", path: path("/users/alice/x"), access: .readWrite)
        try rules.check(client: "alice", path: path("/public/news"), access: .read)
        for (target, access) in [("/users/bob", Grant.read), ("/users", .read), ("/public/news", .write), ("/", .read)]
        {
            #expect(throws: SyncError.self) { try rules.check(client: "alice", path: path(target), access: access) }
        }
    }

    @Test func aNameWithoutRulesKeepsTheWholeTree() throws {
        try rules.check(client: "paris", path: .root, access: .readWrite)
        try rules.check(client: "someone else", path: path("/users/alice"), access: .readWrite)
        #expect(rules.grants(for: "paris") == nil)
        #expect(rules.kind(of: "paris") == .peer)
        #expect(rules.kind(of: "someone else") == .any)
    }

    @Test func aRefusalNamesThePathTheAccessLackingAndTheRules() {
        let error = #expect(throws: SyncError.self) {
            try rules.check(client: "alice", path: path("/public/news"), access: .readWrite)
        }
        #expect(error?.code == .permissionDenied)
        #expect(
            error?.message
                == "no write access to /public/news for alice: it lacks a rule granting write on /public/news or "
                + "above it (its rules: write /users/$name/**, read /users/$name/**, read /public/**)")
    }

    @Test func anEntryIsAPeerOrAClientNotBoth() {
        var rules = self.rules
        let error = #expect(throws: SyncError.self) { try rules.setKind(.peer, for: "alice") }
        #expect(error?.message == "alice is already a client; it cannot also be a peer")
        #expect(PeerKind.client.admits(.client) && !PeerKind.client.admits(.peer) && !PeerKind.client.admits(.hub))
        #expect(PeerKind.peer.admits(.hub) && PeerKind.peer.admits(.peer) && !PeerKind.peer.admits(.client))
        #expect(PeerKind.any.admits(.client) && PeerKind.any.admits(.peer))
    }

    @Test func aNameHoldsAtMostTheRulesLimit() throws {
        var rules = PathRules()
        let rule = try PathRule(grant: .read, pattern: "/a")
        for _ in 0..<SyncLimits.pathRulesPerNameMax { try rules.add(rule, for: "n") }
        #expect(throws: SyncError.self) { try rules.add(rule, for: "n") }
    }

    @Test func theTokenBookGivesEachNameItsKindAndGrants() throws {
        var book = TokenBook()
        book.set(try AuthToken(string: "alice's long secret"), for: "alice")
        book.set(try AuthToken(string: "paris's long secret"), for: "paris")
        book.rules = rules
        let replica = ReplicaID(rawValue: 7)!
        let alice = try #require(book.credential(name: "alice", replica: replica))
        #expect(alice.kind == .client)
        #expect(alice.grants?.allows(.write, at: path("/users/alice/x")) == true)
        #expect(alice.grants?.allows(.read, at: path("/users/bob")) == false)
        let paris = try #require(book.credential(name: "paris", replica: replica))
        #expect(paris.kind == .peer && paris.grants == nil)
        #expect(Set(book.names) == ["alice", "paris"])
    }
}
