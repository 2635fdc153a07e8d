import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

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

    struct Profile: Codable, Equatable {
        var tags: [String]
        var scoreByLevel: [String: Int]
        var grid: [[Int]]
        var friends: [Friend]
    }

    struct Friend: Codable, Equatable {
        var name: String
        var aliases: [String]
        var votesByRound: [Int: Int]
    }

    @Test func eachArrayFieldIsOfferedAsAnArrayAndEachNumberKeyedDictionaryAsAnObject() async throws {
        let node = try backend.node("profiles/p")
        let profile = Profile(
            tags: ["a", "b"], scoreByLevel: ["1": 10, "2": 20], grid: [[1, 2], [3]],
            friends: [
                Friend(name: "bob", aliases: ["b"], votesByRound: [0: 3, 1: 4]),
                Friend(name: "eve", aliases: ["e", "v"], votesByRound: [1: 5, 2: 6]),
            ])
        try await node.set(profile)
        #expect(try await node.decodedValue(as: Profile.self) == profile)
    }

    @Test func aFailedDecodingOfATypeWithArraysNamesTheRealCause() async throws {
        struct Stats: Codable, Equatable {
            var byYear: [String: Int]
            var tags: [String]
            var total: Int
        }
        let node = try backend.node("stats")
        try await node.set(Stats(byYear: ["0": 1, "1": 2], tags: ["x"], total: 3))
        try await node.at("total").clear()
        do {
            _ = try await node.decodedValue(as: Stats.self)
            Issue.record("decoding should fail")
        } catch let error as WeftError {
            #expect(error.code == .decodingFailed)
            #expect(error.message.contains("no key \"total\""), "\(error.message)")
        }
    }

    @Test func anArrayNestedToTheDeepestPathDecodes() async throws {
        indirect enum Nest: Codable, Equatable {
            case leaf(Int)
            case list([Nest])
            init(from decoder: any Decoder) throws {
                if let number = try? decoder.singleValueContainer().decode(Int.self) {
                    self = .leaf(number)
                } else {
                    self = .list(try [Nest](from: decoder))
                }
            }
            func encode(to encoder: any Encoder) throws {
                switch self {
                case .leaf(let number): try number.encode(to: encoder)
                case .list(let list): try list.encode(to: encoder)
                }
            }
        }
        let node = try backend.node("nest")
        var nest = Nest.leaf(7)
        for _ in 0..<(CoreLimits.pathDepthMax - 1) { nest = .list([nest]) }
        try await node.set(nest)
        #expect(try await node.decodedValue(as: Nest.self) == nest)
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
