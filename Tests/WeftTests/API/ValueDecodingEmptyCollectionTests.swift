import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// The tree keeps no empty collection (as Firebase), so `tags: []` is stored as nothing. Decoding reads
/// a missing key of a collection type back as empty (``ReplicaOptions/decodesMissingCollectionsAsEmpty``);
/// before, such a record failed with `no key "tags"`.
@Suite struct ValueDecodingEmptyCollectionTests {
    struct Product: Codable, Equatable, Sendable {
        var name: String
        var tags: [String]
        var prices: [String: Int]
        var sizes: Set<Int>
    }

    struct Shelf: Codable, Equatable, Sendable {
        var label: String
        var products: [Product]
        var extras: Extras

        struct Extras: Codable, Equatable, Sendable {
            var notes: [String]
            var flags: [String: Bool]
        }
    }

    @Test("a record with empty collections decodes back", arguments: ReplicaKind.allCases)
    func aRecordWithEmptyCollectionsDecodesBack(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let node = try fixture.replica.root.child("products/p1")
        let product = Product(name: "pen", tags: [], prices: [:], sizes: [])
        try await node.set(product)
        #expect(try await node.value() == ["name": "pen"], "the empty collections were not stored")
        #expect(try await node.decodedValue(as: Product.self) == product)
        await fixture.finish()
    }

    @Test func nestedStructsAndArrayElementsGetTheirEmptyCollections() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("shelf")
        let shelf = Shelf(
            label: "A",
            products: [
                Product(name: "pen", tags: ["blue"], prices: [:], sizes: [1]),
                Product(name: "ink", tags: [], prices: ["eur": 3], sizes: []),
            ],
            extras: Shelf.Extras(notes: [], flags: [:]))
        try await node.set(shelf)
        #expect(try await node.decodedValue(as: Shelf.self) == shelf)
        await replica.shutdown()
    }

    @Test func anAbsentNodeDecodesAsAnEmptyCollection() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("nothing/here")
        #expect(try await node.decodedValue(as: [String].self) == [])
        #expect(try await node.decodedValue(as: [String: Int].self) == [:])
        let error = await #expect(throws: WeftError.self) { try await node.decodedValue(as: User.self) }
        #expect(error?.code == .decodingFailed)
        await replica.shutdown()
    }

    @Test func aMissingKeyOfAnotherTypeStillFailsAndSaysWhich() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("users/ada")
        try await node.set(["age": 36])
        let error = await #expect(throws: WeftError.self) { try await node.decodedValue(as: User.self) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.message.contains(#"no key "name""#) == true, "\(String(describing: error))")
        await replica.shutdown()
    }

    @Test func turnedOffAMissingCollectionFailsAsBefore() async throws {
        var options = ReplicaOptions()
        options.decodesMissingCollectionsAsEmpty = false
        let replica = try Replica.inMemory(options: options)
        #expect(!replica.decodesMissingCollectionsAsEmpty)
        let node = try replica.root.child("products/p1")
        try await node.set(Product(name: "pen", tags: [], prices: [:], sizes: []))
        let error = await #expect(throws: WeftError.self) { try await node.decodedValue(as: Product.self) }
        #expect(error?.message.contains(#"no key "#) == true)
        replica.decodesMissingCollectionsAsEmpty = true
        #expect(try await node.decodedValue(as: Product.self).tags == [])
        await replica.shutdown()
    }
}
