import Testing
import Weft

/// An app that embeds a daemon or talks to one imports Weft alone: the types of `SyncDriver`'s and
/// `SyncClient`'s signatures come with it. `AuthToken` and the rest lived only in WeftSync, so the
/// embedding app had to import an implementation module too.
@Suite struct ImportWeftAloneTests {
    @Test func theSyncTypesOfThePublicAPIComeWithWeft() async throws {
        let token = try AuthToken(string: "an embedding app's long secret")
        var book = TokenBook()
        book.set(token, for: "client", permissions: PathPermissions([try Path("/public"): .readWrite]))
        book.sharedCredential = PeerCredential(token: token)
        let configuration = SyncConfiguration(
            replica: try #require(ReplicaID(rawValue: 7)), role: SyncRole.hub, name: "hub", tokens: book)
        let command = ClientCommand.merge(try Path("/a"), [MergeChild(relative: try Path("b"), value: .int(1))])
        #expect(configuration.name == "hub")
        #expect(command == .merge(try Path("/a"), [MergeChild(relative: try Path("b"), value: .int(1))]))
    }

    /// An app's Combine code compiles with `import Weft` alone, the same on Linux and macOS: `AnyCancellable`,
    /// `DispatchQueue.main` and `.receive(on: DispatchQueue.main)` (OpenCombineDispatch's scheduler on
    /// Linux, which the app had to import itself and spell `.ocombine`).
    @MainActor
    @Test func combineCodeCompilesAndRunsWithWeftAlone() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("inventory/widget")
        var cancellables = Set<AnyCancellable>()
        var received: [Value] = []
        node.publisher()
            .receive(on: DispatchQueue.main)
            .sink { event in received.append(event.value) }
            .store(in: &cancellables)
        try await node.set(12)
        let deadline = ContinuousClock.now + .seconds(30)
        while received.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(received == [.null, 12])
        cancellables.removeAll()
        await replica.shutdown()
    }
}
