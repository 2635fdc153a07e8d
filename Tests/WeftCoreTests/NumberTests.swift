import PropertyBased
import Testing

@testable import WeftCore

@Suite struct NumberTests {
    @Test func integersAddExactly() {
        #expect(Number.int(2).adding(.int(3)) == .int(5))
        #expect(Number.int(.max - 1).adding(.int(1)) == .int(.max))
        #expect(Number.int(.min).adding(.int(0)) == .int(.min))
        #expect(Number.int(-5).adding(.int(5)) == .int(0))
    }

    @Test func integerOverflowBecomesADouble() {
        #expect(Number.int(.max).adding(.int(1)) == .double(0x1p63))
        #expect(Number.int(.min).adding(.int(-1)) == .double(-0x1p63))
        #expect(Number.int(.max).adding(.int(.max)) == .double(0x1p64))
    }

    @Test func aDoubleOperandGivesADouble() {
        #expect(Number.int(1).adding(.double(0.5)) == .double(1.5))
        #expect(Number.double(0.25).adding(.int(2)) == .double(2.25))
        #expect(Number.double(1).adding(.double(-1)) == .double(0))
        #expect(Number.int(1).adding(.double(1)) == .double(2))
    }

    @Test func aNonFiniteSumGivesNil() {
        #expect(Number.double(.greatestFiniteMagnitude).adding(.double(.greatestFiniteMagnitude)) == nil)
        #expect(Number.double(-.greatestFiniteMagnitude).adding(.double(-.greatestFiniteMagnitude)) == nil)
        #expect(Number.double(.greatestFiniteMagnitude).adding(.int(.max)) == .double(.greatestFiniteMagnitude))
    }

    @Test func integerSumsAreExactWheneverTheyFitInt64() async {
        await propertyCheck(count: 500, input: Gen.int64(), Gen.int64()) { a, b in
            let (sum, overflow) = a.addingReportingOverflow(b)
            let result = Number.int(a).adding(.int(b))
            if overflow {
                #expect(result == .double(Double(a) + Double(b)))
            } else {
                #expect(result == .int(sum))
            }
        }
    }

    @Test func numbersConvertToAndFromValues() {
        #expect(Number(.int(3)) == .int(3))
        #expect(Number(.double(2.5)) == .double(2.5))
        for notANumber: Value in [.null, .bool(true), .string("3"), .object(["a": .int(1)])] {
            #expect(Number(notANumber) == nil)
        }
        #expect(Number.int(3).value == .int(3))
        #expect(Number.double(2.5).value == .double(2.5))
        #expect(Number.int(.max).doubleValue == 0x1p63)
        #expect(Number.double(-1.5).doubleValue == -1.5)
    }

    @Test func descriptionsMatchTheJSONText() {
        #expect(Number.int(-42).description == "-42")
        #expect(Number.double(3).description == "3.0")
        #expect(Number.double(0.1).description == "0.1")
    }
}
