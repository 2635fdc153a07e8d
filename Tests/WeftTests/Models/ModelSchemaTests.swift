import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// A model with a subclass, stored properties that are not fields, and a nested model.
class Entry: Model {
    override class var collection: String { "entries" }
    @Property var title: String
    var scratch = 0
}

final class Note: Entry {
    @Property var body: String
    let label = "not a field"
    @Nested var place: Address
    @SharedProperty var views: Int
}

/// A generic model: its fields' offsets are known only at run time.
final class Tagged<T: Codable & Sendable>: Model {
    @Property var value: T?
    @Property var weight: Int
}

/// The fields of an object are read at offsets found once per type, not by a `Mirror` walk per object
/// (`weft bench models`): the offsets must give exactly the wrappers `Mirror` finds, in its order.
@Suite(.timeLimit(.minutes(5))) struct ModelSchemaTests {
    @Test func theFieldsReadAtOffsetsAreTheOnesMirrorFindsWithSubclassesAndGenerics() {
        let objects: [Model] = [Note(), Note(), Post(), Tagged<String>(), Tagged<[Int]>(), Address()]
        for object in objects {
            let schema = ModelSchema.of(type(of: object))
            #expect(schema.readsFieldsAtOffsets, "\(type(of: object)) falls back to Mirror")
            let atOffsets = schema.fields(of: object)
            let reflected = ModelSchema.declaredFields(of: object).map(\.1)
            #expect(atOffsets.count == reflected.count)
            #expect(zip(atOffsets, reflected).allSatisfy { $0 === $1 }, "\(type(of: object))")
        }
        #expect(ModelSchema.of(Note.self).fields.map(\.label) == ["_title", "_body", "_place", "_views"])
    }

    @Test func aSubclassedModelStoresAndReadsItsOwnAndItsSuperclassFields() async throws {
        let fixture = try ReplicaFixture(.memory)
        let note = Note()
        note.title = "Shopping"
        note.body = "eggs"
        note.place.city = "Nantes"
        note.views = 2
        try await fixture.replica.performChanges { batch in try note.insert(in: batch) }
        let stored = try await #require(note.node).value()
        #expect(stored["title"] == .string("Shopping"))
        #expect(stored["body"] == .string("eggs"))
        #expect(stored["place"]["city"] == .string("Nantes"))
        #expect(stored["views"] == .int(2))

        let read = try Note(id: try #require(note.id), in: fixture.replica)
        read.body = "eggs, milk"
        read.views += 1
        try await fixture.replica.performChanges { batch in try read.save(in: batch) }
        let saved = try await #require(note.node).value()
        #expect(saved["body"] == .string("eggs, milk"))
        #expect(saved["views"] == .int(3))
        #expect(saved["title"] == .string("Shopping"))
        await fixture.finish()
    }

    @Test func aGenericModelLeftNilStoresNull() async throws {
        let fixture = try ReplicaFixture(.memory)
        let tagged = Tagged<String>()
        tagged.weight = 4
        try await fixture.replica.performChanges { batch in try tagged.insert(in: batch) }
        let stored = try await #require(tagged.node).value()
        #expect(stored["value"] == .null)
        #expect(stored["weight"] == .int(4))
        await fixture.finish()
    }
}
