import Foundation
import Weft
import WeftCore

/// `weft bench models`: the same reads, writes and queries through typed models and through the untyped
/// path API, in one run; each typed figure has the untyped one as its baseline (goal: at most 1.3×).
///
/// - (a) reading four fields of an object: `post.title`, … on a bound model, against
///   `node.child(…).decodedValue(as:)` on each field's node;
/// - (b) inserting objects of six fields, in batches of 100: `post.insert(in: batch)`, against
///   `batch.set(Row(…), at: child)` of an `Encodable` struct;
/// - (c) saving two changed fields of existing objects, in batches of 100: `post.save(in: batch)`, against
///   two `batch.set(_:at:)` on the fields' nodes;
/// - (d) a top-20 typed query through an index, reading two fields of each object, against the same
///   `DataQuery` with its rows decoded as an `Decodable` struct.
///
/// The writes (b) and (c) are timed by turns, a tenth of the objects typed then the same tenth untyped,
/// so that the load of a shared machine changing during the run weighs on both sides alike.
enum ModelBench {
    static let suite = "models"
    /// Objects per batch when writing.
    static let batchSize = 100
    /// Repetitions of the query.
    static let queryRuns = 2_000
    /// Slices the writes are measured in, typed and untyped by turns.
    static let turns = 10

    final class Item: Model {
        override class var collection: String { "items" }
        @Property var title: String
        @Property var priority: Int
        @Property var color: String
        @Property var done: Bool
        @Property var note: String?
        @SharedProperty var likes: Int
    }

    struct Row: Codable {
        var title: String
        var priority: Int
        var color: String
        var done: Bool
        var likes: Int
    }

    struct TitleAndPriority: Decodable {
        var title: String
        var priority: Int
    }

    static func run(objects: Int, progress: BenchProgress) async throws -> [Measurement] {
        var options = ReplicaOptions()
        options.groupCommitDelayMilliseconds = 0
        let replica = try Replica.inMemory(options: options)
        guard let items = replica.node(for: "/items") else { throw BenchFailure("no /items node") }
        let colors = ["red", "green", "blue"]
        var measurements: [Measurement] = []

        // (b) Inserts: typed, then untyped, the same objects, by turns (a slice of each at a time), so
        // that a change in the machine's load weighs on both sides alike.
        progress.step("models: inserting \(objects) objects typed, then untyped, by turns")
        guard let plain = replica.node(for: "/plain") else { throw BenchFailure("no /plain node") }
        var typedInsert = 0.0
        var untypedInsert = 0.0
        for slice in slices(of: objects) {
            typedInsert += try await seconds {
                for start in stride(from: slice.lowerBound, to: slice.upperBound, by: batchSize) {
                    try await replica.performChanges(waitingFor: .pending) { batch in
                        for number in start..<min(start + batchSize, slice.upperBound) {
                            let item = Item()
                            item.title = "item \(number)"
                            item.priority = number % 1_000
                            item.color = colors[number % 3]
                            item.done = number.isMultiple(of: 2)
                            item.likes = number % 7
                            try item.insert(in: batch)
                        }
                    }
                }
            }
            untypedInsert += try await seconds {
                for start in stride(from: slice.lowerBound, to: slice.upperBound, by: batchSize) {
                    try await replica.performChanges(waitingFor: .pending) { batch in
                        for number in start..<min(start + batchSize, slice.upperBound) {
                            let row = Row(
                                title: "item \(number)", priority: number % 1_000, color: colors[number % 3],
                                done: number.isMultiple(of: 2), likes: number % 7)
                            try batch.push(row, under: plain)
                        }
                    }
                }
            }
        }
        try await replica.flush()
        let ids = try await items.childrenKeys()
        guard ids.count == objects else { throw BenchFailure("\(ids.count) objects stored, not \(objects)") }
        let bound = try ids.map { try Item(id: $0, in: replica) }
        let nodes = ids.compactMap { items / $0 }

        // (a) Reads of four fields.
        progress.step("models: reading 4 fields of \(objects) objects, typed then untyped")
        var checksum = 0
        let typedRead = try await seconds {
            for item in bound {
                checksum &+= item.title.count &+ item.priority &+ item.color.count &+ (item.done ? 1 : 0)
            }
        }
        let untypedRead = try await seconds {
            for node in nodes {
                let title = try await (node / "title")!.decodedValue(as: String.self)
                let priority = try await (node / "priority")!.decodedValue(as: Int.self)
                let color = try await (node / "color")!.decodedValue(as: String.self)
                let done = try await (node / "done")!.decodedValue(as: Bool.self)
                checksum &-= title.count &+ priority &+ color.count &+ (done ? 1 : 0)
            }
        }
        guard checksum == 0 else { throw BenchFailure("typed and untyped reads differ") }

        // (c) Saves of two changed fields, by turns as the inserts.
        progress.step("models: saving 2 fields of \(objects) objects, typed then untyped, by turns")
        var typedSave = 0.0
        var untypedSave = 0.0
        for slice in slices(of: objects) {
            typedSave += try await seconds {
                for start in stride(from: slice.lowerBound, to: slice.upperBound, by: batchSize) {
                    try await replica.performChanges(waitingFor: .pending) { batch in
                        for item in bound[start..<min(start + batchSize, slice.upperBound)] {
                            item.title = "renamed"
                            item.priority = 5
                            try item.save(in: batch)
                        }
                    }
                }
            }
            untypedSave += try await seconds {
                for start in stride(from: slice.lowerBound, to: slice.upperBound, by: batchSize) {
                    try await replica.performChanges(waitingFor: .pending) { batch in
                        for node in nodes[start..<min(start + batchSize, slice.upperBound)] {
                            try batch.set("renamed again", at: (node / "title")!)
                            try batch.set(6, at: (node / "priority")!)
                        }
                    }
                }
            }
        }

        // (d) A top-20 query through an index, reading two fields of each row.
        try await replica.performChanges(waitingFor: .pending) { batch in
            for (index, node) in nodes.enumerated() { try batch.set(index % 1_000, at: (node / "priority")!) }
        }
        try replica.defineIndex(on: "/items", orderedBy: "priority")
        let low = 500
        progress.step("models: \(queryRuns) top-20 queries, typed then untyped")
        let typedQuery = try await seconds {
            for _ in 0..<queryRuns {
                let result = try replica.fetch(for: Item.self).where(
                    \.$priority >= low, limit: 20, orderBy: [\.$priority.ascending])
                for item in result { checksum &+= item.title.count &+ item.priority }
            }
        }
        let untypedQuery = try await seconds {
            for _ in 0..<queryRuns {
                let query = try items.orderedByChild("priority").where(QueryField("priority") >= .int(Int64(low)))
                    .limit(toFirst: 20)
                for row in try await query.fetch(as: TitleAndPriority.self) {
                    checksum &-= row.value.title.count &+ row.value.priority
                }
            }
        }
        let plan = try replica.explain(for: Item.self).where(\.$priority >= low, limit: 20, orderBy: [\.$priority.ascending])
        progress.step("models: typed query: \(plan)")
        guard checksum == 0 else { throw BenchFailure("typed and untyped queries differ") }
        await replica.shutdown()

        let perObject = 1e6 / Double(objects)
        measurements.append(
            Measurement(suite: suite, name: "(a) read 4 fields, per object", value: typedRead * perObject, unit: "µs",
                baseline: untypedRead * perObject))
        measurements.append(
            Measurement(suite: suite, name: "(b) insert, per object", value: typedInsert * perObject, unit: "µs",
                baseline: untypedInsert * perObject))
        measurements.append(
            Measurement(suite: suite, name: "(c) save 2 fields, per object", value: typedSave * perObject, unit: "µs",
                baseline: untypedSave * perObject))
        measurements.append(
            Measurement(suite: suite, name: "(d) top-20 query + 2 fields", value: typedQuery * 1e6 / Double(queryRuns),
                unit: "µs", baseline: untypedQuery * 1e6 / Double(queryRuns)))
        return measurements
    }

    /// The objects cut in ``turns`` slices (the last one may be shorter).
    static func slices(of objects: Int) -> [Range<Int>] {
        let size = max(batchSize, (objects + turns - 1) / turns)
        return stride(from: 0, to: objects, by: size).map { $0..<min($0 + size, objects) }
    }

    /// Wall seconds of `body`.
    static func seconds(_ body: () async throws -> Void) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
