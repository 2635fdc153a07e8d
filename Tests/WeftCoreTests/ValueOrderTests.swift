import Testing

@testable import WeftCore

@Suite struct ValueOrderTests {
    @Test("mixed types sort null, false, true, numbers, strings, objects")
    func mixedTypesSortInFirebaseOrder() {
        let values: [Value] = [
            .object(["a": .int(1)]), .string("b"), .string("a"), .double(2.5), .int(-4), .bool(true), .bool(false), .null,
        ]
        let sorted = values.sorted(by: ValueOrder.precedes)
        #expect(sorted == [
            .null, .bool(false), .bool(true), .int(-4), .double(2.5), .string("a"), .string("b"), .object(["a": .int(1)]),
        ])
    }

    @Test("integers and doubles compare by exact numeric value")
    func integersAndDoublesCompareExactly() {
        #expect(ValueOrder.compare(.int(2), .double(2.0)) == 0)
        #expect(ValueOrder.compare(.int(2), .double(2.5)) == -1)
        #expect(ValueOrder.compare(.double(-0.5), .int(0)) == -1)
        // 2^53 + 1 rounds to 2^53 as a double; the exact comparison still sees it above.
        #expect(ValueOrder.compare(.int(9_007_199_254_740_993), .double(9_007_199_254_740_992)) == 1)
        #expect(ValueOrder.compare(.int(.max), .double(9_223_372_036_854_775_808.0)) == -1)
        #expect(ValueOrder.compare(.int(.min), .double(-9_223_372_036_854_775_808.0)) == 0)
        #expect(ValueOrder.compare(.int(.min), .double(-1e300)) == 1)
        #expect(ValueOrder.compare(.double(1e300), .int(.max)) == 1)
    }

    @Test("strings compare by UTF-8 bytes, not canonical equivalence")
    func stringsCompareByBytes() {
        #expect(ValueOrder.compare(.string("10"), .string("9")) == -1)
        #expect(ValueOrder.compare(.string("B"), .string("a")) == -1)
        #expect(ValueOrder.compare(.string("ab"), .string("a")) == 1)
        // "é" precomposed (C3 A9) and decomposed (65 CC 81) are equal Swift strings but distinct bytes.
        #expect(ValueOrder.compare(.string("\u{E9}"), .string("e\u{301}")) == 1)
    }

    @Test("the order is total: antisymmetric and transitive over a pool of values")
    func orderIsTotal() {
        var rng = SeededGenerator(seed: 11)
        let pool = (0..<60).map { _ in QueryWorkload.scalar(rng: &rng) } + [.object(["x": .int(1)])]
        for a in pool {
            for b in pool {
                #expect(ValueOrder.compare(a, b) == -ValueOrder.compare(b, a))
                for c in pool where ValueOrder.compare(a, b) <= 0 && ValueOrder.compare(b, c) <= 0 {
                    #expect(ValueOrder.compare(a, c) <= 0)
                }
            }
        }
    }
}
