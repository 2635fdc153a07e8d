import Foundation
import Testing
import WeftCore

@testable import Weft

@Suite struct DataNodeReadTests {
    let backend = MemoryBackend()

    @Test func anAbsentNodeReadsAsNull() async throws {
        let node = try backend.node("nothing/here")
        #expect(try await node.value() == .null)
        #expect(try await node.childrenKeys() == [])
    }

    @Test func valueReturnsTheWrittenJSON() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(User(name: "Alice", age: 31))
        #expect(try await alice.value() == ["name": "Alice", "age": 31])
        #expect(try await (alice / "age")?.value() == 31)
        #expect(try await backend.root.value() == ["users": ["alice": ["name": "Alice", "age": 31]]])
    }

    @Test func decodedValueDecodesWithTheReplicaDecoder() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(User(name: "Alice", age: 31))
        #expect(try await alice.decodedValue(as: User.self) == User(name: "Alice", age: 31))
        let age: Int = try await alice.at("age").decodedValue()
        #expect(age == 31)
        let missing: String? = try await alice.at("email").decodedValue()
        #expect(missing == nil)
    }

    @Test func aFailedDecodingSaysWhichPathAndWhy() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(.raw, ["name": "Alice", "age": "old"])
        do {
            _ = try await alice.decodedValue(as: User.self)
            Issue.record("decoding should fail")
        } catch let error as WeftError {
            #expect(error.code == .decodingFailed)
            #expect(error.path == "/users/alice")
            #expect(error.message.contains("age"))
            #expect(error.message.contains("User"))
        }
        do {
            _ = try await alice.decodedValue(as: [String: Int].self)
            Issue.record("decoding should fail")
        } catch let error as WeftError {
            #expect(error.code == .decodingFailed)
        }
    }

    @Test func arraysReadBackAsArraysFollowingFirebasesRule() async throws {
        let tags = try backend.node("tags")
        try await tags.set(["a", "b", "c"])
        #expect(try await tags.value() == ["0": "a", "1": "b", "2": "c"])
        #expect(try await tags.decodedValue(as: [String].self) == ["a", "b", "c"])
        #expect(try await tags.decodedValue(as: [String: String].self) == ["0": "a", "1": "b", "2": "c"])
        try await tags.set(.raw, ["0": "a", "2": "c"])
        #expect(try await tags.decodedValue(as: [String?].self) == ["a", nil, "c"])
        try await tags.set(.raw, ["0": "a", "9": "z"])
        #expect(throws: WeftError.self) { try tags.currentDecodedValue(as: [String].self) }
    }

    @Test func childrenKeysComeInFirebaseKeyOrder() async throws {
        let node = try backend.node("mixed")
        try await node.set(.raw, ["b": 1, "10": 2, "a": 3, "2": 4, "-1": 5, "Z": 6])
        #expect(try await node.childrenKeys() == ["-1", "2", "10", "Z", "a", "b"])
    }

    @Test func readsSeeLocalWritesBeforeTheyAreDurable() async throws {
        let manual = MemoryBackend(durabilityDelay: nil)
        let node = try manual.node("draft")
        let receipt = try await node.set("text", waitingFor: .pending)
        #expect(receipt.status == .pending)
        #expect(try await node.value() == "text")
        manual.makeDurable()
        #expect(try await receipt.wait(for: .durable) == .durable)
    }

    @Test func completionFormsDeliverOnTheGivenQueue() async throws {
        let node = try backend.node("users/alice")
        try await node.set(User(name: "Alice", age: 31))
        let queue = DispatchQueue(label: "reads")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let values = Collector<Value>()
        let users = Collector<User>()
        let keys = Collector<[String]>()
        let onQueue = Collector<Bool>()
        node.value(queue: queue) { result in
            onQueue.append(DispatchQueue.getSpecific(key: key) == 7)
            if case .success(let value) = result { values.append(value) }
        }
        node.decodedValue(as: User.self, queue: queue) { if case .success(let user) = $0 { users.append(user) } }
        node.childrenKeys(queue: queue) { if case .success(let k) = $0 { keys.append(k) } }
        await drain(queue)
        #expect(values.values == [["name": "Alice", "age": 31]])
        #expect(users.values == [User(name: "Alice", age: 31)])
        #expect(keys.values == [["age", "name"]])
        #expect(onQueue.values == [true])
    }

    @Test func theDecoderIsConfigurableOnTheReplica() async throws {
        struct Event: Codable, Equatable { var when: Date }
        let node = try backend.node("event")
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        backend.api.jsonEncoder = encoder
        backend.api.jsonDecoder = decoder
        try await node.set(Event(when: Date(timeIntervalSince1970: 1000)))
        #expect(try await node.value() == ["when": 1000])
        #expect(try await node.decodedValue(as: Event.self) == Event(when: Date(timeIntervalSince1970: 1000)))
    }
}
