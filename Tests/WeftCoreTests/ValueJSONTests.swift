import PropertyBased
import Testing

@testable import WeftCore

@Suite struct ValueJSONTests {
    func nested(_ depth: Int, leaf: String) -> String {
        String(repeating: #"{"k":"#, count: depth) + leaf + String(repeating: "}", count: depth)
    }

    // MARK: - Round trips

    @Test func scalarsParseToTheirCases() throws {
        #expect(try Value(json: "null") == .null)
        #expect(try Value(json: "true") == .bool(true))
        #expect(try Value(json: "false") == .bool(false))
        #expect(try Value(json: "42") == .int(42))
        #expect(try Value(json: "-0") == .int(0))
        #expect(try Value(json: "-1.5") == .double(-1.5))
        #expect(try Value(json: #""hi""#) == .string("hi"))
        #expect(try Value(json: " \t\r\n 7 \n") == .int(7))
    }

    @Test func anObjectRoundTripsThroughCanonicalText() throws {
        let text = #"{"active":true,"name":"alice","nested":{"x":-3,"y":2.5},"off":false,"score":3}"#
        let value = try Value(json: text)
        #expect(value["score"] == .int(3))
        #expect(value["nested"]["y"] == .double(2.5))
        #expect(value.jsonString() == text)
        #expect(try Value(json: value.jsonString()) == value)
    }

    @Test func randomValuesRoundTripThroughJSON() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let value = random.value(depthMax: 4)
            let text = value.jsonString()
            let back = try Value(json: text)
            #expect(back == value)
            #expect(back.jsonString() == text)
            #expect(try Value(jsonBytes: Array(text.utf8)) == value)
        }
    }

    @Test func doublesKeepExactBitsThroughJSON() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let d = random.double()
            let back = try Value(json: Value.double(d).jsonString())
            guard case .double(let parsed) = back else {
                Issue.record("\(d) came back as \(back)")
                return
            }
            // -0.0 prints as 0.0; every other double keeps its bits.
            #expect(parsed.bitPattern == d.bitPattern || (d == 0 && parsed == 0))
        }
    }

    // MARK: - Arrays, nulls and empty objects

    @Test func arraysBecomeObjectsKeyedByIndex() throws {
        let value = try Value(json: #"{"tags":["a","b",["c"]]}"#)
        #expect(
            value
                == .object(["tags": .object(["0": .string("a"), "1": .string("b"), "2": .object(["0": .string("c")])])])
        )
        #expect(value.jsonString() == #"{"tags":{"0":"a","1":"b","2":{"0":"c"}}}"#)
    }

    @Test func nullsInArraysAndObjectsVanishButKeepTheOtherIndexes() throws {
        #expect(try Value(json: "[1,null,3]") == .object(["0": .int(1), "2": .int(3)]))
        #expect(try Value(json: #"{"a":null,"b":1}"#) == .object(["b": .int(1)]))
        #expect(try Value(json: #"{"a":null}"#) == .null)
        #expect(try Value(json: "[null,null]") == .null)
        #expect(try Value(json: #"{"a":1,"a":null}"#) == .null)
    }

    @Test(arguments: ["{}", "[]", #"{"a":{}}"#, #"{"a":{"b":{}}}"#, "[[],{}]", #"{"a":[null,{}]}"#, " { } "])
    func emptyObjectsVanish(text: String) throws {
        #expect(try Value(json: text) == .null)
    }

    @Test func emptyObjectsVanishNextToSiblingsThatStay() throws {
        #expect(try Value(json: #"{"a":{"b":{}},"c":1}"#) == .object(["c": .int(1)]))
    }

    // MARK: - Numbers

    @Test func int64ExtremesStayExact() throws {
        #expect(try Value(json: "9223372036854775807") == .int(.max))
        #expect(try Value(json: "-9223372036854775808") == .int(.min))
        #expect(Value.int(.max).jsonString() == "9223372036854775807")
        #expect(Value.int(.min).jsonString() == "-9223372036854775808")
    }

    /// They were rounded to doubles: `123456789012345678901234567890` was stored as `1.2345678901234568e+29`.
    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "123456789012345678901234567890"])
    func integersBeyondInt64AreRefusedNotRounded(text: String) throws {
        #expect {
            try Value(json: text)
        } throws: { error in
            guard case CoreError.invalidJSON(let offset, let reason) = error else { return false }
            return offset == 0 && reason.contains("outside the 64-bit range") && reason.contains(text)
        }
        #expect(throws: CoreError.self) { try Value(json: #"{"id":\#(text)}"#) }
    }

    @Test func largeNumbersWithAnExponentOrAFractionStayDoubles() throws {
        #expect(try Value(json: "9.223372036854775808e18") == .double(0x1p63))
        #expect(try Value(json: "1e23") == .double(1e23))
        #expect(try Value(json: "100000000000000000000000.0") == .double(1e23))
    }

    @Test func fractionsAndExponentsGiveDoubles() throws {
        #expect(try Value(json: "0.1") == .double(0.1))
        #expect(try Value(json: "1.0") == .double(1))
        #expect(try Value(json: "1e3") == .double(1000))
        #expect(try Value(json: "1E-2") == .double(0.01))
        #expect(try Value(json: "-1.5e+2") == .double(-150))
        #expect(try Value(json: "2.5E0") == .double(2.5))
        #expect(try Value(json: "1e-400") == .double(0))
    }

    @Test func wholeDoublesPrintWithAFractionSoTheyStayDoubles() throws {
        #expect(Value.double(1000).jsonString() == "1000.0")
        #expect(Value.double(-3).jsonString() == "-3.0")
        #expect(Value.double(0.5).jsonString() == "0.5")
        for d in [1e15, 1e20, -1e300, 1.2345678901234568e20, .leastNonzeroMagnitude, .greatestFiniteMagnitude] {
            #expect(try Value(json: Value.double(d).jsonString()) == .double(d))
        }
    }

    // MARK: - Strings

    @Test func escapesDecode() throws {
        #expect(try Value(json: #""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
        #expect(try Value(json: #""\u00e9\u20AC\u0041""#) == .string("é€A"))
        #expect(try Value(json: #""\u0000""#) == .string("\u{0}"))
        #expect(try Value(json: "\"raw é 日本 😀\"") == .string("raw é 日本 😀"))
    }

    @Test func surrogatePairsDecodeToOneScalar() throws {
        #expect(try Value(json: #""\ud83d\ude00""#) == .string("😀"))
        #expect(try Value(json: #""a\uD834\uDD1Eb""#) == .string("a𝄞b"))
    }

    @Test func stringsPrintWithTheEscapesJSONNeeds() throws {
        let value = Value.string("q\"b\\n\nr\rt\t\u{0}\u{1F}\u{7F}é😀")
        #expect(value.jsonString() == #""q\"b\\n\nr\rt\t\u0000\u001f"# + "\u{7F}é😀\"")
        #expect(try Value(json: value.jsonString()) == value)
    }

    // MARK: - Invalid JSON

    @Test(arguments: [
        ("1 x", 2), ("{} {}", 3), ("nulll", 4), ("[1,2]]", 5), ("", 0), ("   ", 3), ("\"a\u{01}b\"", 2),
        ("\"abc", 4), ("[1 2]", 3), (#"{"a" 1}"#, 5),
    ])
    func invalidJSONIsReportedAtItsByteOffset(text: String, offset: Int) throws {
        guard case .invalidJSON(let reported, _) = coreError({ try Value(json: text) }) else {
            Issue.record("\(text) did not give invalidJSON")
            return
        }
        #expect(reported == offset)
    }

    @Test(arguments: [
        ("01", "leading zero"), ("-01", "leading zero"), ("00", "leading zero"),
        (#""abc"#, "unterminated string"), (#""a\"#, "unterminated escape"), (#""a\x""#, "unknown escape"),
        (#""\u12G4""#, "invalid hex digit"), (#""\u12""#, "truncated unicode escape"),
        ("\"tab\there\"", "control character"), ("\"nl\n\"", "control character"),
        (#""\ud800""#, "lone high surrogate"), (#""\ud800x""#, "lone high surrogate"),
        (#""\ud800\u0041""#, "invalid low surrogate"), (#""\udc00""#, "invalid unicode escape"),
        ("tru", "end of text"), ("trUe", "unknown literal"), ("True", "expected a value"), ("nul", "end of text"),
        ("[1,]", "expected a value"), (#"{"a":1,}"#, "expected a key"), ("{a:1}", "expected a key"),
        (#"{"a" 1}"#, "expected ':'"), ("[1 2]", "expected ',' or ']'"), (#"{"a":1 "b":2}"#, "expected ',' or '}'"),
        ("1.", "digits after '.'"), (".5", "expected a value"), ("1e", "exponent"), ("1e+", "exponent"),
        ("+1", "expected a value"), ("-", "expected a value"), ("NaN", "expected a value"),
        ("Infinity", "expected a value"), ("1e400", "out of range"), ("-1e400", "out of range"),
        ("[", "end of text"), ("{", "expected a key"), ("[1", "end of text in array"),
        (#"{"a":1"#, "end of text in object"), ("'a'", "expected a value"), ("[1]x", "after the value"),
    ])
    func malformedTextGivesInvalidJSONWithAReason(text: String, reason: String) throws {
        guard case .invalidJSON(let offset, let given) = coreError({ try Value(json: text) }) else {
            Issue.record("\(text) did not give invalidJSON")
            return
        }
        #expect(given.contains(reason), "\(text): \(given)")
        #expect((0...text.utf8.count).contains(offset))
    }

    @Test func invalidUTF8IsRefusedNotRepaired() throws {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0x61, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D],
        ] {
            guard case .invalidJSON(_, let reason) = coreError({ try Value(jsonBytes: bytes) }) else {
                Issue.record("\(bytes) did not give invalidJSON")
                continue
            }
            #expect(reason.contains("UTF-8"))
        }
        #expect(try Value(jsonBytes: Array("\"é\"".utf8)) == .string("é"))
    }

    @Test func keysInJSONAreValidated() throws {
        for (text, key) in [
            (#"{"a.b":1}"#, "a.b"), (#"{"":1}"#, ""), (#"{"a/b":1}"#, "a/b"),
            (#"{"x":{"$y":1}}"#, "$y"), (#"{"\u0000":1}"#, "\u{0}"), (#"{"\u007f":1}"#, "\u{7F}"),
        ] {
            guard case .invalidKey(let named, _) = coreError({ try Value(json: text) }) else {
                Issue.record("\(text) did not give invalidKey")
                continue
            }
            #expect(named == key)
        }
        let longKey = String(repeating: "k", count: 769)
        #expect(
            coreError { try Value(json: "{\"\(longKey)\":1}") }.map { if case .invalidKey = $0 { true } else { false } }
                == true)
        #expect(try Value(json: "{\"\(String(longKey.dropLast()))\":1}").children.count == 1)
    }

    // MARK: - Nesting

    @Test func thirtyTwoLevelsOfNestingHoldALeaf() throws {
        let value = try Value(json: nested(32, leaf: "1"))
        #expect(value.value(at: Array(repeating: "k", count: 32)[...]) == .int(1))
    }

    @Test func aNodeDeeperThanThirtyTwoLevelsIsRefused() throws {
        // 33 levels of objects put the leaf at depth 33, which no path may reach.
        guard case .invalidValue(let path, _) = coreError({ try Value(json: nested(33, leaf: "1")) }) else {
            Issue.record("a leaf at depth 33 was accepted")
            return
        }
        #expect(path == "/" + Array(repeating: "k", count: 33).joined(separator: "/"))
        #expect(
            coreError { try Value(json: String(repeating: "[", count: 33) + "1" + String(repeating: "]", count: 33)) }
                != nil)
    }

    @Test func anEmptyObjectJustBelowTheLimitVanishesInsteadOfFailing() throws {
        #expect(try Value(json: nested(32, leaf: "{}")) == .null)
        #expect(try Value(json: nested(32, leaf: "[]")) == .null)
    }

    @Test func nestingBeyondTheLimitThrowsWithoutExhaustingTheStack() throws {
        for depth in [34, 100_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            guard case .invalidValue(_, let reason) = coreError({ try Value(json: text) }) else {
                Issue.record("\(depth) levels of nesting were accepted")
                continue
            }
            #expect(reason.contains("nesting"))
        }
    }

    // MARK: - Canonical output

    @Test func canonicalTextSortsKeysByUTF8Bytes() throws {
        let value = try Value(json: #"{"b":1,"é":4,"a":2,"\uFFFD":7,"B":3,"😀":8,"aa":6,"z":5}"#)
        #expect(value.jsonString() == "{\"B\":3,\"a\":2,\"aa\":6,\"b\":1,\"z\":5,\"é\":4,\"\u{FFFD}\":7,\"😀\":8}")
    }

    @Test func canonicalTextDoesNotDependOnInsertionOrder() {
        var forward: [Key: Value] = [:]
        var backward: [Key: Value] = [:]
        backward.reserveCapacity(1000)
        let keys: [Key] = (0..<200).map { "key\($0)" }
        for key in keys { forward[key] = .int(1) }
        for key in keys.reversed() { backward[key] = .int(1) }
        #expect(Value.object(forward).jsonString() == Value.object(backward).jsonString())
    }

    // MARK: - Tree writes

    @Test func writingUnderAScalarTurnsItIntoAnObject() {
        var value = Value.object(["a": .int(5), "s": .string("keep")])
        value.write(.string("x"), at: ["a", "b"])
        #expect(value == .object(["a": .object(["b": .string("x")]), "s": .string("keep")]))
        var root = Value.bool(true)
        root.write(.int(1), at: ["n"])
        #expect(root == .object(["n": .int(1)]))
    }

    @Test func writingKeepsSiblingsAndReplacesTheSubtree() {
        var value = Value.object(["a": .object(["b": .int(1), "c": .int(2)]), "x": .int(0)])
        value.write(.object(["d": .int(4)]), at: ["a"])
        #expect(value == .object(["a": .object(["d": .int(4)]), "x": .int(0)]))
        value.write(.int(9), at: [])
        #expect(value == .int(9))
    }

    @Test func aNullWritePrunesTheAncestorsItEmpties() throws {
        var value = Value.object(["a": .object(["b": .object(["c": .int(1)])]), "x": .int(1)])
        value.write(.null, at: try Path("/a/b/c"))
        #expect(value == .object(["x": .int(1)]))
        value.write(.null, at: ["x"])
        #expect(value == .null)
    }

    @Test func aNullWriteKeepsAncestorsThatStillHoldSomething() {
        var value = Value.object(["a": .object(["b": .int(1), "c": .int(2)])])
        value.write(.null, at: ["a", "b"])
        #expect(value == .object(["a": .object(["c": .int(2)])]))
    }

    @Test func aNullWriteUnderAScalarOrAMissingNodeChangesNothing() {
        let original = Value.object(["a": .int(5)])
        for keys: [Key] in [["a", "b"], ["a", "b", "c"], ["missing", "x"], ["missing"]] {
            var value = original
            value.write(.null, at: keys[...])
            #expect(value == original)
        }
        var scalar = Value.string("s")
        scalar.write(.null, at: ["x"])
        #expect(scalar == .string("s"))
    }

    @Test func readsFollowKeysAndGiveNullWhereNothingIs() throws {
        let value = try Value(json: #"{"a":{"b":1},"s":"t"}"#)
        #expect(value.value(at: try Path("/a/b")) == .int(1))
        #expect(value.value(at: try Path("/a/zz")) == .null)
        #expect(value.value(at: try Path("/s/x")) == .null)
        #expect(value.value(at: .root) == value)
        #expect(value["s"] == .string("t"))
        #expect(Value.int(1)["a"] == .null)
        #expect(value.children.count == 2)
        #expect(Value.int(1).children.isEmpty)
        #expect(value.nodeCount == 4)
        #expect(Value.null.nodeCount == 0)
        #expect(Value.object(normalizing: ["a": .null, "b": .int(1)]) == .object(["b": .int(1)]))
        #expect(Value.object(normalizing: ["a": .null]) == .null)
    }
    @Test func objectMembersKeepTheirNamesAsWrittenAndTheirNulls() throws {
        let members = try Value.jsonMembers(#" {"a/b": 1, "c": null, "d": {"e": [true]}, "a/b": 2} "#)
        #expect(members.map(\.name) == ["c", "d", "a/b"])
        #expect(members.map(\.value) == [.null, .object(["e": .object(["0": .bool(true)])]), .int(2)])
        #expect(try Value.jsonMembers("{}").isEmpty)
        for bad in ["[1]", "1", #"{"a":1"#, #"{"a":1} x"#, #"{"a":{"b.c":1}}"#, #"{"a":1,}"#] {
            #expect(throws: CoreError.self) { try Value.jsonMembers(bad) }
        }
    }
}
