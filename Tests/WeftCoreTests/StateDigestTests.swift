import PropertyBased
import Testing

@testable import WeftCore

/// The pinned digests were computed with an independent Python implementation of FNV-1a over the walk
/// that `FNV1a.add(_:)` documents, so they hold on every process and machine.
@Suite struct StateDigestTests {
    let document: Value = .object([
        "users": .object([
            "alice": .object(["score": .int(42), "name": .string("Alice"), "active": .bool(true)]),
            "bob": .object(["score": .int(-7), "ratio": .double(0.5)]),
        ]),
        "tags": .object(["0": .string("a"), "1": .string("é")]),
    ])

    @Test func theDigestOfAFixedValueIsPinned() {
        #expect(StateDigest(of: .null).rawValue == 0xAF63_BD4C_8601_B7DF)
        #expect(StateDigest(of: document).rawValue == 0x3185_6822_D422_D6A4)
        #expect(StateDigest(of: document).description == "31856822d422d6a4")
        #expect(StateDigest(rawValue: 0xAB).description == "00000000000000ab")
    }

    @Test func theDigestDoesNotDependOnInsertionOrder() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let value = random.value(depthMax: 5)
            #expect(StateDigest(of: Reinserted.value(value, using: &random.rng)) == StateDigest(of: value))
        }
    }

    @Test func theDigestOfADocumentBuiltInReverseOrderIsTheSame() throws {
        var reversed: [Key: Value] = [:]
        reversed["tags"] = document["tags"]
        reversed["users"] = document["users"]
        #expect(StateDigest(of: .object(reversed)) == StateDigest(of: document))
        let parsed = try Value(
            json:
                #"{"tags":["a","é"],"users":{"bob":{"ratio":0.5,"score":-7},"alice":{"active":true,"name":"Alice","score":42}}}"#
        )
        #expect(StateDigest(of: parsed) == StateDigest(of: document))
    }

    @Test func valuesThatDifferGiveDifferentDigests() {
        let values: [Value] = [
            .null, .bool(false), .bool(true), .int(0), .int(1), .double(1), .double(0), .string(""), .string("1"),
            .string("a"), .object(["a": .int(1)]), .object(["b": .int(1)]), .object(["a": .int(2)]),
            .object(["ab": .int(1)]), .object(["a": .object(["b": .int(1)])]),
            .object(["a": .string("b"), "c": .int(1)]), .object(["a": .string("bc"), "d": .int(1)]),
        ]
        let digests = Set(values.map { StateDigest(of: $0) })
        #expect(digests.count == values.count)
    }

    @Test func randomDistinctValuesRarelyCollide() async {
        await propertyCheck(count: 200, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let a = random.value(depthMax: 3)
            let b = random.value(depthMax: 3)
            #expect((StateDigest(of: a) == StateDigest(of: b)) == (a == b))
        }
    }
}
