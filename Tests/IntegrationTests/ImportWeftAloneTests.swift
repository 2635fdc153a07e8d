import Testing
import Weft

/// An app that embeds a daemon or talks to one imports Weft alone: the types of `SyncDriver`'s and
/// `SyncClient`'s signatures come with it. `AuthToken` and the rest lived only in WeftSync, so the
/// embedding app had to import an implementation module too.
@Suite struct ImportWeftAloneTests {
    @Test func theSyncTypesOfThePublicAPIComeWithWeft() throws {
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
}
