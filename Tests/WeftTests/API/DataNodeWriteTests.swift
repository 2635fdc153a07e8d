import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct DataNodeWriteTests {
    let backend = MemoryBackend()

    @Test func setReplacesTheWholeSubtree() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(.raw, ["name": "Alice", "age": 30, "email": "a@example.com"])
        try await alice.set(User(name: "Alice", age: 31))
        #expect(try await alice.value() == ["name": "Alice", "age": 31])
    }

    @Test func theRawAndTextFormsAcceptJSON() async throws {
        let node = try backend.node("doc")
        try await node.set(.raw, ["list": [1, 2.5, "x", true, NSNull()], "nested": ["empty": [String: Any]()]])
        #expect(try await node.value() == ["list": ["0": 1, "1": 2.5, "2": "x", "3": true]])
        try await node.set(json: #"{"a":{"b":[null,7]},"c":null}"#)
        #expect(try await node.value() == ["a": ["b": ["1": 7]]])
        try await node.set(.raw, NSNumber(value: true))
        #expect(try await node.value() == true)
        try await node.set(.raw, NSNumber(value: 42))
        #expect(try await node.value() == 42)
        // Rounded to a double it would be another number: refused, and the node keeps its value.
        await #expect(throws: WeftError.self) { try await node.set(.raw, UInt64.max) }
        #expect(try await node.value() == 42)
        try await node.set(.raw, nil)
        #expect(try await node.value() == .null)
    }

    @Test func clearAndNilDeleteTheNodeAndEmptyParentsVanish() async throws {
        let leaf = try backend.node("a/b/c")
        try await leaf.set("x")
        try await leaf.clear()
        #expect(try await backend.root.value() == .null)
        try await leaf.set("x")
        try await leaf.set(nil as String?)
        #expect(try await backend.root.value() == .null)
    }

    @Test func theAssignmentOperatorSets() async throws {
        let score = try backend.node("score")
        assignWithoutWaiting(score, 42)
        #expect(try await score.value() == 42)
        try await score <- "forty-three"
        #expect(try await score.value() == "forty-three")
    }

    @Test func mergeKeepsChildrenItDoesNotList() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(User(name: "Alice", age: 31))
        try await alice.merge(with: ["age": 32, "city": "Lyon"] as [String: Value])
        #expect(try await alice.value() == ["name": "Alice", "age": 32, "city": "Lyon"])
        try await alice.merge(.raw, with: ["city": NSNull(), "address/zip": "69001", "address/street": "Rue X"])
        try await alice.merge(.raw, with: ["address/zip": "69002"])
        #expect(
            try await alice.value() == ["name": "Alice", "age": 32, "address": ["zip": "69002", "street": "Rue X"]])
    }

    @Test func mergeRefusesWhatIsNotAnObjectAndWritesNothing() async throws {
        let node = try backend.node("m")
        try await node.set(["keep": 1] as [String: Int])
        #expect(await weftErrorCode { try await node.merge(with: 5) } == .invalidValue)
        #expect(await weftErrorCode { try await node.merge(with: [String: Int]()) } == .invalidValue)
        #expect(await weftErrorCode { try await node.merge(.raw, with: [:]) } == .invalidValue)
        #expect(await weftErrorCode { try await node.merge(.raw, with: ["a": 1, "a/b": 2]) } == .invalidValue)
        #expect(await weftErrorCode { try await node.merge(.raw, with: ["ok": 1, "bad.key": 2]) } == .invalidKey)
        #expect(try await node.value() == ["keep": 1])
    }

    @Test func invalidInputIsATypedErrorAndWritesNothing() async throws {
        let node = try backend.node("guarded")
        try await node.set("before")
        #expect(await weftErrorCode { try await node.set(json: "{oops") } == .invalidJSON)
        #expect(await weftErrorCode { try await node.set(Double.nan) } == .invalidValue)
        #expect(await weftErrorCode { try await node.set(["x": Double.infinity]) } == .invalidValue)
        #expect(await weftErrorCode { try await node.set(.raw, ["x": Double.nan]) } == .invalidValue)
        #expect(await weftErrorCode { try await node.set(Value.double(.infinity)) } == .invalidValue)
        #expect(await weftErrorCode { try await node.set(.raw, Date()) } == .invalidJSON)
        #expect(await weftErrorCode { try await node.set(["a/b": 1]) } == .invalidKey)
        #expect(await weftErrorCode { try await node.set(Value.object(["$x": 1])) } == .invalidKey)
        #expect(
            await weftErrorCode { try await node.set("x", waitingFor: .rejected(.notANumber(.root))) } == .invalidValue)
        #expect(try await node.value() == "before")
    }

    @Test func valuesTooDeepOrTooLargeAreRefused() async throws {
        let deep = try backend.node(Array(repeating: "d", count: 31).joined(separator: "/"))
        #expect(await weftErrorCode { try await deep.set(["a": ["b": 1]]) } == .invalidPath)
        try await deep.set(["a": 1])
        let big = String(repeating: "x", count: CoreLimits.stringBytesMax + 1)
        let node = try backend.node("big")
        #expect(await weftErrorCode { try await node.set(big) } == .invalidValue)
        let parts = Dictionary(
            uniqueKeysWithValues: (0..<2).map { ("k\($0)", String(repeating: "y", count: 8 * 1024 * 1024)) })
        #expect(await weftErrorCode { try await node.set(parts) } == .valueTooLarge)
        #expect(try await node.value() == .null)
    }

    @Test func pushAddsChildrenInChronologicalOrder() async throws {
        let chat = try backend.node("chat")
        let first = try await chat.push(Message(author: "alice", text: "hi"))
        let second = try await chat.push(.raw, ["author": "bob", "text": "hello"])
        pushWithoutWaiting(chat, Message(author: "carol", text: "hey"))
        try await chat += Message(author: "dave", text: "yo")
        #expect(first.parent == chat)
        #expect(try await first.decodedValue(as: Message.self) == Message(author: "alice", text: "hi"))
        let keys = try await chat.childrenKeys()
        #expect(keys.count == 4)
        #expect(keys.first == first.key)
        #expect(keys[1] == second.key)
        let authors = try await keys.asyncMap { try await chat.at($0).at("author").value() }
        #expect(authors == ["alice", "bob", "carol", "dave"])
    }

    @Test func incrementCountsFromStartAndReturnsTheNumber() async throws {
        let likes = try backend.node("likes")
        #expect(try await likes.increment().value == 1)
        #expect(try await likes.increment(by: 5).value == 6)
        #expect(try await likes.increment(by: -2).value == 4)
        let stock = try backend.node("stock")
        #expect(try await stock.increment(from: 100, by: -1).value == 99)
        #expect(try await likes.increment(by: 0.5).value == .double(4.5))
        let big = try backend.node("big")
        try await big.set(Int64.max)
        #expect(try await big.increment().value == .double(Double(Int64.max) + 1))
    }

    @Test func incrementOfANonNumberIsRejected() async throws {
        let name = try backend.node("name")
        try await name.set("alice")
        #expect(await weftErrorCode { _ = try await name.increment() } == .rejected)
        #expect(try await name.value() == "alice")
        #expect(await weftErrorCode { _ = try await name.increment(by: .double(.nan)) } == .invalidValue)
        // The callback form returns no number for it: 1 was returned, a value the node never held.
        let results = Collector<Result<IncrementResult, WeftError>>()
        let returned = name.increment(by: 1) { results.append($0) }
        #expect(returned?.value == nil)
        #expect(await results.wait(for: 1).first.map { (try? $0.get()) == nil } == true)
    }

    @Test func concurrentIncrementsFromManyTasksSumExactly() async throws {
        let counter = try backend.node("counter")
        let tasks = 50
        let perTask = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<tasks {
                group.addTask {
                    for _ in 0..<perTask {
                        _ = try await counter.increment(by: index % 2 == 0 ? 1 : 2, waitingFor: .pending)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await counter.value() == .int(Int64(tasks / 2 * perTask * 1 + tasks / 2 * perTask * 2)))
    }

    @Test func copyValueCopiesToANodeOrAPath() async throws {
        let draft = try backend.node("drafts/1")
        try await draft.set(Message(author: "alice", text: "draft"))
        let published = try backend.node("posts/1")
        #expect(try await draft.copyValue(to: published) == ["author": "alice", "text": "draft"])
        #expect(try await published.value() == ["author": "alice", "text": "draft"])
        try await draft.copyValue(to: "/archive/1")
        #expect(try await backend.node("archive/1").value() == ["author": "alice", "text": "draft"])
        #expect(await weftErrorCode { try await draft.copyValue(to: "/bad.path") } == .invalidPath)
        #expect(await weftErrorCode { try await draft.copyValue(to: MemoryBackend().root) } == .invalidPath)
    }

    @Test func anExplicitTimeBeyondTheAllowedDriftIsRefused() async throws {
        let node = try backend.node("timed")
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let receipt = try await node.set("past", at: .millis(now - 60_000))
        #expect(receipt.stamp.millis >= now - 60_000)
        #expect(await weftErrorCode { try await node.set("future", at: .millis(now + 3_600_000)) } == .clockRefused)
        #expect(try await node.value() == "past")
    }

    @Test func completionFormsSubmitAtOnceAndReportLater() async throws {
        let node = try backend.node("callbacks")
        let receipts = Collector<Result<WriteReceipt, WeftError>>()
        let returned = node.set("v") { receipts.append($0) }
        #expect(returned != nil)
        #expect(try await node.value() == "v")
        let results = await receipts.wait(for: 1)
        #expect((try? results[0].get())?.stamp == returned?.stamp)
        let failures = Collector<Result<WriteReceipt, WeftError>>()
        #expect(node.set(json: "nope") { failures.append($0) } == nil)
        let failure = await failures.wait(for: 1)
        let failureCode: WeftError.Code? = failure.first.flatMap {
            if case .failure(let e) = $0 { e.code } else { nil }
        }
        #expect(failureCode == .invalidJSON)
        let pushed = Collector<Result<DataNode, WeftError>>()
        let child = node.parent?.push(["k": 1]) { pushed.append($0) }
        #expect((try? await pushed.wait(for: 1).first?.get()) == child)
        let numbers = Collector<Result<IncrementResult, WeftError>>()
        #expect(try backend.node("n").increment(by: 3) { numbers.append($0) }?.value == 3)
        #expect((try? await numbers.wait(for: 1).first?.get())?.value == 3)
    }
}

/// The operators without `await` exist in synchronous contexts only (an async context picks the async ones).
private func assignWithoutWaiting(_ node: DataNode, _ value: Int) { node <- value }

private func pushWithoutWaiting(_ node: DataNode, _ value: Message) { node += value }

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
