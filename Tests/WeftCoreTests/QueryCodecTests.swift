import PropertyBased
import Testing

@testable import WeftCore

@Suite struct QueryCodecTests {
    @Test("every query decodes to itself")
    func queriesRoundTrip() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let path = Path(uncheckedKeys: (0..<rng.below(3)).map { _ in QueryWorkload.key(rng: &rng) })
            let query = QueryWorkload.query(path: path, rng: &rng)
            #expect((try? QueryCodec.decode(QueryCodec.encode(query))) == query, "seed \(seed)")
        }
    }

    @Test("truncated or mutated bytes throw a typed error or decode to a valid query, never crash")
    func damagedBytesFailCleanly() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let query = QueryWorkload.query(path: Path(uncheckedKeys: ["posts"]), rng: &rng)
            let bytes = QueryCodec.encode(query)
            let cut = Int(rng.below(UInt64(bytes.count)))
            #expect(throws: (any Error).self, "seed \(seed)") { try QueryCodec.decode(Array(bytes[..<cut])) }
            var mutated = bytes
            mutated[Int(rng.below(UInt64(bytes.count)))] ^= UInt8(1 + rng.below(255))
            do {
                let decoded = try QueryCodec.decode(mutated)
                // What decodes went through the builders: encoding it again gives the same query back.
                #expect((try? QueryCodec.decode(QueryCodec.encode(decoded))) == decoded, "seed \(seed)")
            } catch {
                #expect(error is CoreError || error is QueryError, "seed \(seed)")
            }
        }
    }

    @Test("an encoded query that breaks a rule is refused with the rule's error")
    func invalidEncodedQueriesAreRefused() throws {
        var writer = ByteWriter()
        writer.write(byte: QueryCodec.format)
        OpCodec.write(Path(uncheckedKeys: ["posts"]), to: &writer)
        writer.write(byte: 1 << 5)  // limit to first
        writer.write(byte: 0)  // by key
        writer.write(varint: 0)  // a limit of 0
        #expect(throws: QueryError.limitNotPositive(0)) { try QueryCodec.decode(writer.bytes) }
        #expect(throws: CoreError.self) { try QueryCodec.decode([9]) }
        #expect(throws: CoreError.self) { try QueryCodec.decode(QueryCodec.encode(Query(path: .root)) + [0]) }
    }

    @Test("a predicate nested past the limit is refused while it is read")
    func deepPredicatesAreRefusedWhileRead() throws {
        var writer = ByteWriter()
        writer.write(byte: QueryCodec.format)
        OpCodec.write(Path.root, to: &writer)
        writer.write(byte: 1 << 3)
        writer.write(byte: 0)
        for _ in 0..<100_000 { writer.write(byte: 5) }  // not, not, not, …
        #expect(throws: QueryError.self) { try QueryCodec.decode(writer.bytes) }
    }

    @Test("results and change sets round trip")
    func resultsAndChangeSetsRoundTrip() throws {
        let old: QueryResult = [QueryRow(key: "a", value: .int(1)), QueryRow(key: "b", value: .string("x"))]
        let new: QueryResult = [QueryRow(key: "b", value: .string("y")), QueryRow(key: "c", value: .bool(true))]
        let changes = QueryChangeSet(from: old, to: new)
        var writer = ByteWriter()
        QueryCodec.write(new, to: &writer)
        QueryCodec.write(changes, to: &writer)
        var reader = ByteReader(writer.bytes)
        #expect(try QueryCodec.readResult(from: &reader, depth: 1) == new)
        #expect(try QueryCodec.readChangeSet(from: &reader) == changes)
        #expect(reader.isAtEnd)
    }
}
