import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct ValueConversionTests {
    @Test func rawJSONTellsBooleansFromNumbers() throws {
        let parsed = try JSONSerialization.jsonObject(
            with: Data(#"{"t":true,"one":1,"half":0.5,"big":9007199254740993}"#.utf8))
        let value = try RawJSON.value(of: parsed, at: .root)
        #expect(value == ["t": true, "one": 1, "half": 0.5, "big": .int(9_007_199_254_740_993)])
        #expect(try RawJSON.value(of: 1 as Any, at: .root) == 1)
        #expect(try RawJSON.value(of: true as Any, at: .root) == true)
        #expect(try RawJSON.value(of: Float(0.1), at: .root) == 0.1)
        #expect(try RawJSON.value(of: UInt8(7), at: .root) == 7)
        #expect(try RawJSON.value(of: [1, nil, 3] as [Int?], at: .root) == ["0": 1, "2": 3])
        #expect(try RawJSON.value(of: ["a": [String: Any]()], at: .root) == .null)
    }

    @Test func rawJSONRefusesWhatJSONCannotHold() {
        #expect(throws: WeftError.self) { try RawJSON.value(of: Date(), at: .root) }
        #expect(throws: WeftError.self) { try RawJSON.value(of: ["a": Double.infinity], at: .root) }
        #expect(throws: WeftError.self) { try RawJSON.value(of: ["a/b": 1], at: .root) }
    }

    @Test func valuesRoundTripThroughCodable() throws {
        let value: Value = ["name": "Alice", "age": 31, "ratio": 0.5, "ok": true, "tags": ["x", "y"]]
        let data = try JSONEncoder().encode(value)
        let back = try JSONDecoder().decode(Value.self, from: data)
        #expect(back == value)
        #expect(try JSONDecoder().decode(Value.self, from: Data("null".utf8)) == .null)
        #expect(try JSONDecoder().decode(Value.self, from: Data(#"{"a":null,"b":{}}"#.utf8)) == .null)
    }

    @Test func literalsBuildNormalizedValues() {
        let value: Value = ["a": nil, "b": [:], "c": [1, 2]]
        #expect(value == ["c": ["0": 1, "1": 2]])
        #expect(value["c"]["1"].intValue == 2)
        #expect(Value.double(1.5).doubleValue == 1.5)
        #expect(Value.int(2).doubleValue == 2)
        #expect(Value.string("s").stringValue == "s")
        #expect(Value.bool(true).boolValue == true)
        #expect(Value.string("s").intValue == nil)
    }

    @Test func checksCountTheDepthFromTheRoot() throws {
        let path = try Path(Array(repeating: "d", count: 30).joined(separator: "/"))
        #expect(try ValueCheck.validated(["a": ["b": 1]], at: path) == ["a": ["b": 1]])
        #expect(throws: WeftError.self) { try ValueCheck.validated(["a": ["b": ["c": 1]]], at: path) }
        #expect(throws: WeftError.self) { try ValueCheck.validated(.double(.nan), at: .root) }
    }

    @Test func keysSortTheFirebaseWay() {
        let keys = ["b", "10", "a", "2", "-1", "01", "1", "2147483648", "A", "-"]
        #expect(keys.sorted(by: KeyOrder.precedes) == ["-1", "1", "01", "2", "10", "-", "2147483648", "A", "a", "b"])
        #expect(KeyOrder.integer("2147483647") == Int32.max)
        #expect(KeyOrder.integer("12345678901") == nil)
        #expect(KeyOrder.integer("1a") == nil)
        #expect(ChildrenConstraint.keyRange(from: "2", to: "b").admits("10"))
        #expect(!ChildrenConstraint.keyRange(from: "2", to: "b").admits("1"))
        #expect(!ChildrenConstraint.keyRange(from: nil, to: "a").admits("b"))
        #expect(!ChildrenConstraint.none.admits("a"))
    }

    @Test func decodingErrorsNameTheCodingPath() throws {
        struct Team: Decodable { var members: [User] }
        let coding = ValueCoding(encoder: JSONEncoder(), decoder: JSONDecoder())
        let value: Value = ["members": [["name": "a", "age": 1], ["name": "b"]]]
        do {
            _ = try coding.decode(Team.self, from: value, path: "/teams/x")
            Issue.record("decoding should fail")
        } catch let error as WeftError {
            #expect(error.code == .decodingFailed)
            #expect(error.path == "/teams/x")
            #expect(error.message.contains("members/1"))
            #expect(error.message.contains("age"))
        }
    }
}
