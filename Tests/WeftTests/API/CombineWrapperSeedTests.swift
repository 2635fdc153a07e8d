#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// The seed's `CombineWrapper` has an `async` form of every call beside its future, and `<-` and `+=`
/// in both forms; the seed's callback writes take an optional completion. They were missing.
@Suite struct CombineWrapperSeedTests {
    @Test func theAsyncFormsOfTheWrapperReadAndWrite() async throws {
        let replica = try Replica.inMemory()
        let alice = try replica.root.child("users/alice").forCombine
        let receipt = try await alice.set(User(name: "Alice", age: 31))
        #expect(receipt.status >= .durable)
        try await alice.merge(with: ["age": 32])
        try await alice.merge(.raw, with: ["address/city": "Lyon"])
        #expect(try await alice.decodedValue(as: User.self) == User(name: "Alice", age: 32))
        #expect(try await alice.childrenKeys() == ["address", "age", "name"])
        let chat = try replica.root.child("chat").forCombine
        let pushed = try await chat.push(Message(author: "a", text: "hi"))
        try await chat.push(.raw, ["author": "b", "text": "yo"])
        #expect(try await pushed.decodedValue(as: Message.self) == Message(author: "a", text: "hi"))
        let likes = try replica.root.child("likes").forCombine
        #expect(try await likes.increment(by: 2).value == 2)
        let result = try await likes.runTransaction { .set(.int(($0.intValue ?? 0) * 10)) }
        #expect(result.isCommitted && result.value == 20)
        #expect(try await likes.copyValue(to: "/likesCopy") == 20)
        #expect(try await likes.copyValue(to: try replica.root.child("likesCopy2").forCombine) == 20)
        try await likes.clear()
        #expect(try await likes.value() == .null)
        try await alice.set(.raw, nil)
        #expect(try await alice.value() == .null)
        await replica.shutdown()
    }

    @Test func theOperatorsOfTheWrapperWaitInAsyncCode() async throws {
        let replica = try Replica.inMemory()
        let score = try replica.root.child("score").forCombine
        try await score <- 42
        #expect(try await score.value() == 42)
        let chat = try replica.root.child("chat").forCombine
        try await chat += Message(author: "a", text: "hi")
        #expect(try await chat.childrenKeys().count == 1)
        await replica.shutdown()
    }

    @Test func theSynchronousFormsWriteWithoutACompletion() async throws {
        let replica = try Replica.inMemory()
        let root = replica.root
        Self.writeFromSynchronousCode(root)
        try await replica.flush()
        #expect(try await root.child("a").value() == 1)
        #expect(try await root.child("b").value() == ["x": 1, "y": 2])
        #expect(try await root.child("c").value() == 3)
        #expect(try await root.child("list").childrenKeys().count == 2)
        #expect(try await root.child("d").value() == .null)
        #expect(try await root.child("e").value() == 10)
        #expect(try await root.child("f").value() == "raw")
        await replica.shutdown()
    }

    /// What a synchronous caller (a button action) writes: the seed's `node.set(v)` with no completion.
    static func writeFromSynchronousCode(_ root: DataNode) {
        guard let a = root / "a", let b = root / "b", let c = root / "c", let list = root / "list",
            let d = root / "d", let e = root / "e", let f = root / "f"
        else { return }
        a.set(1)
        b.set(.raw, ["x": 1])
        b.merge(with: ["y": 2])
        c.forCombine <- 2
        c.merge(.raw, with: [:])  // invalid (no member): logged, nothing written
        c.set(3)
        list.push(Message(author: "a", text: "1"))
        list.forCombine += Message(author: "b", text: "2")
        d.set(5)
        d.clear()
        e.increment(from: 9, by: 1)
        f.push(.raw, nil)
        f.set(.raw, "raw")
    }

    @Test func theDeprecatedKeysAliasAnswersAsChildrenKeys() async throws {
        let replica = try Replica.inMemory()
        let users = try replica.root.child("users")
        try await users.set(["b": 1, "a": 2, "10": 3, "9": 4])
        let alias: any SeedKeys = users
        #expect(try await alias.keys() == ["9", "10", "a", "b"])
        let keys = Collector<[String]>()
        alias.keys(queue: nil) { if case .success(let found) = $0 { keys.append(found) } }
        #expect(await keys.wait(for: 1) == [["9", "10", "a", "b"]])
        await replica.shutdown()
    }
}

/// The seed's deprecated names, called through a protocol so that this test compiles without the
/// deprecation warning a direct call gives (the warning is the point of the alias).
protocol SeedKeys {
    func keys() async throws -> [String]
    func keys(queue: DispatchQueue?, then completion: @escaping @Sendable (Result<[String], WeftError>) -> Void)
}

extension DataNode: SeedKeys {}
