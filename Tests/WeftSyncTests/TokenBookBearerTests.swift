import Testing
import WeftCore
@testable import WeftSync

/// `TokenBook.client(presenting:)`: the lookup of a secret presented whole (HTTP's bearer token).
@Suite struct TokenBookBearerTests {
    static func book() throws -> TokenBook {
        var book = TokenBook()
        book.set(try AuthToken(string: "alice's long secret"), for: "alice")
        book.set(try AuthToken(string: "the mesh's long secret"), for: "north")
        book.set(try AuthToken(string: "anyone's long secret"), for: "ops")
        try book.rules.setKind(.client, for: "alice")
        try book.rules.add(try PathRule(grant: .readWrite, pattern: "/users/$name/**"), for: "alice")
        try book.rules.setKind(.peer, for: "north")
        return book
    }

    @Test("a client's secret finds its name and its rules")
    func aClientSecretFindsItsEntry() throws {
        let found = try #require(try Self.book().client(presenting: Array("alice's long secret".utf8)))
        #expect(found.name == "alice")
        #expect(found.credential.grants?.allows(.write, at: try Path("/users/alice/x")) == true)
        #expect(found.credential.grants?.allows(.read, at: try Path("/users/bob")) == false)
    }

    @Test("an entry no rule names is a client of the whole tree")
    func anUnnamedEntryIsAClient() throws {
        let found = try #require(try Self.book().client(presenting: Array("anyone's long secret".utf8)))
        #expect(found.name == "ops")
        #expect(found.credential.grants == nil)
    }

    @Test("a client entry is found by its name with its rules; a peer's or a missing name is not")
    func aClientIsFoundByName() throws {
        let book = try Self.book()
        let alice = try #require(book.client(named: "alice"))
        #expect(alice.grants?.allows(.read, at: try Path("/users/alice")) == true)
        #expect(alice.grants?.allows(.read, at: try Path("/public")) == false)
        #expect(book.client(named: "ops")?.grants == nil)
        #expect(book.client(named: "north") == nil)
        #expect(book.client(named: "bob") == nil)
    }

    @Test("a peer's secret, a wrong one, a prefix and an empty one find nothing")
    func otherSecretsFindNothing() throws {
        let book = try Self.book()
        #expect(book.client(presenting: Array("the mesh's long secret".utf8)) == nil)
        #expect(book.client(presenting: Array("alice's long secreT".utf8)) == nil)
        #expect(book.client(presenting: Array("alice's long".utf8)) == nil)
        #expect(book.client(presenting: Array("alice's long secret and more".utf8)) == nil)
        #expect(book.client(presenting: []) == nil)
    }

    @Test("the credential's prefix permissions and the name's rules must both allow")
    func denialNeedsBoth() throws {
        let book = try Self.book()
        let alice = try #require(book.client(presenting: Array("alice's long secret".utf8)))
        #expect(alice.credential.denial(.write, at: try Path("/users/alice/x"), rules: book.rules, name: "alice") == nil)
        let refused = alice.credential.denial(.write, at: try Path("/users/bob/x"), rules: book.rules, name: "alice")
        #expect(refused?.code == .permissionDenied)
        var limited = alice.credential
        limited.permissions = .readOnly
        #expect(limited.denial(.write, at: try Path("/users/alice/x"), rules: book.rules, name: "alice") != nil)
    }
}
