import PropertyBased
import Testing
import WeftTestSupport

@testable import WeftCore

@Suite struct OpCodecTests {
    let origin = ReplicaID(rawValue: 0x0102_0304_0506_0708)!
    let other = ReplicaID(rawValue: 42)!
    var stamp: Stamp { Stamp(millis: 1_700_000_000_000, counter: 3, replica: origin) }

    func op(_ kind: OpKind, path: String = "/users/alice", sequence: UInt64 = 7) throws -> Op {
        try .make(kind, at: path, origin: stamp.replica, millis: stamp.millis, sequence: sequence, counter: stamp.counter)
    }

    func children(_ pairs: [(String, Value)]) throws -> [MergeChild] {
        try MergeChild.validated(pairs.map { MergeChild(relative: try Path($0.0), value: $0.1) })
    }

    /// Decodes, checks the op comes back equal, and that its encoding is canonical.
    func expectRoundTrip(_ op: Op, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = OpCodec.encode(op)
        let back = try OpCodec.decode(bytes)
        #expect(back == op, sourceLocation: sourceLocation)
        #expect(OpCodec.encode(back) == bytes, sourceLocation: sourceLocation)
    }

    /// The start of an op encoding up to and including the kind tag.
    func header(sequence: UInt64 = 1, path: Path = .root, kind: UInt8) -> ByteWriter {
        var writer = ByteWriter()
        writer.write(byte: OpCodec.format)
        OpCodec.write(stamp, to: &writer)
        writer.write(varint: sequence)
        OpCodec.write(path, to: &writer)
        writer.write(byte: kind)
        return writer
    }

    /// The reason of the `malformedEncoding` error that decoding `bytes` throws, nil (and an issue) otherwise.
    func malformedReason(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let error = coreError(sourceLocation: sourceLocation) { try OpCodec.decode(bytes) }
        guard case .malformedEncoding(let offset, let reason) = error else {
            if let error { Issue.record("expected malformedEncoding, got \(error)", sourceLocation: sourceLocation) }
            return nil
        }
        #expect((0...bytes.count).contains(offset), sourceLocation: sourceLocation)
        return reason
    }

    // MARK: - Round trips of every kind

    @Test func aSetRoundTrips() throws {
        try expectRoundTrip(try op(.set(try Value(json: #"{"name":"alice","score":3,"tags":["a","b"]}"#))))
        try expectRoundTrip(try op(.set(.null)))
        try expectRoundTrip(try op(.set(.string("")), path: "/"))
    }

    @Test func aMergeRoundTrips() throws {
        let merge = try children([("score", .int(4)), ("profile/city", .string("Lyon")), ("old", .null)])
        try expectRoundTrip(try op(.merge(merge)))
        try expectRoundTrip(try op(.merge([])))
    }

    @Test func incrementsWithIntsAndDoublesRoundTrip() throws {
        for (by, from) in [
            (Number.int(1), Number.int(0)), (.int(.min), .int(.max)), (.double(0.5), .double(-2.5)),
            (.int(-3), .double(1e300)), (.double(0.0), .int(0)),
        ] {
            try expectRoundTrip(try op(.increment(by: by, from: from)))
        }
    }

    @Test func aBatchWithEachPartKindRoundTrips() throws {
        let parts: [Write] = [
            .set(try Path("/a/b"), .int(1)),
            .set(try Path("/a/gone"), .null),
            .merge(try Path("/a"), try children([("c", .bool(true)), ("d/e", .double(2.5))])),
            .increment(try Path("/a/n"), by: .int(2), from: .double(0.5)),
        ]
        try expectRoundTrip(try op(.batch(parts), path: "/a"))
    }

    @Test func aTransactionWithAVersionVectorRoundTrips() throws {
        let read = VersionVector([origin: 6, other: .max, ReplicaID(rawValue: 9)!: 1])
        try expectRoundTrip(try op(.transaction(read: read, result: .object(["balance": .int(90)]))))
        try expectRoundTrip(try op(.transaction(read: VersionVector(), result: .null)))
    }

    @Test func aCallRoundTrips() throws {
        let call = FunctionCall(
            name: "transfer", version: .max, arguments: try Value(json: #"{"from":"a","amount":5}"#))
        try expectRoundTrip(try op(.call(call), path: "/accounts"))
        try expectRoundTrip(try op(.call(FunctionCall(name: "é", version: 0, arguments: .null))))
    }

    @Test func extremeStampsAndSequencesRoundTrip() throws {
        for sequence: UInt64 in [1, 127, 128, .max] {
            let extreme = Op(
                stamp: Stamp(time: .max, replica: ReplicaID(rawValue: .max)!), sequence: sequence, path: .root,
                kind: .set(.int(1)))
            try expectRoundTrip(extreme)
        }
    }

    @Test func randomOpsRoundTrip() async {
        await propertyCheck(count: 600, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let op = random.op()
            let bytes = OpCodec.encode(op)
            let back = try OpCodec.decode(bytes)
            #expect(back == op)
            #expect(OpCodec.encode(back) == bytes)
        }
    }

    @Test func aValueIsCountedAsLongAsItsEncoding() async {
        await propertyCheck(count: 600, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let value = random.value(depthMax: 4)
            #expect(OpCodec.byteCount(of: value) == OpCodec.encode(value).count)
        }
        for extreme: Value in [.int(.min), .int(.max), .int(-1), .int(63), .int(64), .string(""), .double(-0.0)] {
            #expect(OpCodec.byteCount(of: extreme) == OpCodec.encode(extreme).count)
        }
    }

    @Test func anEncodingIsPinnedSoAFormatChangeIsNoticed() throws {
        let pinned = Op(
            stamp: Stamp(time: 0x0102, replica: ReplicaID(rawValue: 3)!), sequence: 1, path: try Path("/a"),
            kind: .set(.int(5)))
        #expect(
            OpCodec.encode(pinned) == [
                1,  // format
                0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 3,  // stamp: time, replica
                1,  // sequence
                1, 1, 0x61,  // path: one key "a"
                1,  // set
                3, 10,  // int 5, zigzag
            ])
    }

    // MARK: - Values

    @Test func valueEncodingsArePinned() throws {
        #expect(OpCodec.encode(Value.null) == [0])
        #expect(OpCodec.encode(Value.bool(false)) == [1])
        #expect(OpCodec.encode(Value.bool(true)) == [2])
        #expect(OpCodec.encode(Value.int(1)) == [3, 2])
        #expect(OpCodec.encode(Value.int(-1)) == [3, 1])
        #expect(OpCodec.encode(Value.int(.min)) == [3] + Array(repeating: 0xFF, count: 9) + [1])
        #expect(OpCodec.encode(Value.double(1)) == [4, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(OpCodec.encode(Value.string("é")) == [5, 2, 0xC3, 0xA9])
        #expect(OpCodec.encode(Value.object(["b": .bool(true), "a": .bool(false)])) == [6, 2, 1, 0x61, 1, 1, 0x62, 2])
    }

    @Test func valuesRoundTripAndEncodeCanonically() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let value = random.value(depthMax: 5)
            let bytes = OpCodec.encode(value)
            let back = try OpCodec.decodeValue(bytes)
            #expect(back == value)
            // Rebuilding every object with a shuffled insertion order gives the same bytes.
            #expect(OpCodec.encode(Reinserted.value(value, using: &random.rng)) == bytes)
        }
    }

    @Test func aValueWithTrailingBytesIsRefused() {
        #expect(
            coreError { try OpCodec.decodeValue([3, 2, 0]) }
                == .malformedEncoding(offset: 2, reason: "trailing bytes after the value"))
    }

    // MARK: - Garbage never crashes

    @Test func randomBytesThrowOrDecodeToAnOpThatReEncodes() async {
        await propertyCheck(count: 1000, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let bytes: [UInt8]
            switch random.rng.below(3) {
            case 0:
                bytes = random.bytes(countMax: 80)
            case 1:
                // A plausible start (format byte, a stamp) followed by noise, to reach the deeper readers.
                var writer = ByteWriter()
                writer.write(byte: OpCodec.format)
                OpCodec.write(random.stamp(), to: &writer)
                bytes = writer.bytes + random.bytes(countMax: 80)
            default:
                // A valid op with a few bytes changed, inserted or removed.
                var mutated = OpCodec.encode(random.op())
                for _ in 0..<random.rng.int(in: 1...3) {
                    let at = Int(random.rng.below(UInt64(mutated.count)))
                    switch random.rng.below(3) {
                    case 0: mutated[at] = UInt8(truncatingIfNeeded: random.rng.next())
                    case 1: mutated.insert(UInt8(truncatingIfNeeded: random.rng.next()), at: at)
                    default: if mutated.count > 1 { mutated.remove(at: at) }
                    }
                }
                bytes = mutated
            }
            do {
                let op = try OpCodec.decode(bytes)
                #expect(op.sequence >= 1)
                #expect(try OpCodec.decode(OpCodec.encode(op)) == op)
            } catch is CoreError {
                // Refused with a typed error: what garbage must get.
            }
        }
    }

    @Test func everyTruncationOfAValidEncodingThrows() async {
        await propertyCheck(count: 200, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let bytes = OpCodec.encode(random.op())
            for length in 0..<bytes.count {
                #expect(throws: CoreError.self) { try OpCodec.decode(Array(bytes[..<length])) }
            }
        }
    }

    // MARK: - Specific malformations

    // Format 2 is a partial op (`OpProjectionTests`).
    @Test(arguments: [UInt8(0), 3, 0xFF])
    func anUnknownFormatIsRefused(format: UInt8) throws {
        var bytes = OpCodec.encode(try op(.set(.int(1))))
        bytes[0] = format
        #expect(
            coreError { try OpCodec.decode(bytes) }
                == .malformedEncoding(offset: 0, reason: "unknown op format \(format)"))
    }

    @Test(arguments: [UInt8(0), 8, 0xFF])
    func anUnknownKindTagIsRefused(tag: UInt8) throws {
        let writer = header(kind: tag)
        let bytes = writer.bytes + [0]
        #expect(
            coreError { try OpCodec.decode(bytes) }
                == .malformedEncoding(offset: writer.bytes.count - 1, reason: "unknown op kind \(tag)"))
    }

    @Test func anUnknownBatchPartOrValueTagIsRefused() throws {
        var batch = header(kind: 4)
        batch.write(varint: 1)
        batch.write(byte: 9)
        OpCodec.write(Path.root, to: &batch)
        batch.write(byte: 0)
        #expect(malformedReason(batch.bytes) == "unknown batch part 9")
        let set = header(kind: 1).bytes + [7]
        #expect(malformedReason(set) == "unknown value tag 7")
    }

    @Test func aVarintLongerThanSixtyFourBitsIsRefused() throws {
        var start = ByteWriter()
        start.write(byte: OpCodec.format)
        OpCodec.write(stamp, to: &start)
        for sequence in [
            Array(repeating: 0xFF, count: 11), Array(repeating: 0xFF, count: 9) + [0x02],
            Array(repeating: 0x80, count: 10) + [0x00],
        ] as [[UInt8]] {
            #expect(malformedReason(start.bytes + sequence + [0, 1, 0]) == "varint is too long")
        }
        // Nine continuation bytes and a final 1 are exactly UInt64.max.
        let largest = try OpCodec.decode(start.bytes + Array(repeating: 0xFF, count: 9) + [0x01, 0, 1, 0])
        #expect(largest.sequence == .max)
    }

    @Test func aCountBeyondTheBytesLeftIsRefusedBeforeAnyAllocation() throws {
        var object = header(kind: 1)
        object.write(byte: 6)
        object.write(varint: 9_000_000)
        var batch = header(kind: 4)
        batch.write(varint: 99_999)
        var vector = header(kind: 5)
        vector.write(varint: 999_999)
        var string = header(kind: 1)
        string.write(byte: 5)
        string.write(varint: UInt64(CoreLimits.stringBytesMax))
        for writer in [object, batch, vector, string] {
            let reason = try #require(malformedReason(writer.bytes + [1, 2, 3]))
            #expect(reason.contains("exceeds the bytes left"), "\(reason)")
        }
    }

    @Test func aCountBeyondItsLimitIsRefused() throws {
        var object = header(kind: 1)
        object.write(byte: 6)
        object.write(varint: UInt64(CoreLimits.objectChildrenMax) + 1)
        var batch = header(kind: 4)
        batch.write(varint: UInt64(CoreLimits.batchPartsMax) + 1)
        var path = ByteWriter()
        path.write(byte: OpCodec.format)
        OpCodec.write(stamp, to: &path)
        path.write(varint: 1)
        path.write(varint: UInt64(CoreLimits.pathDepthMax) + 1)
        var string = header(kind: 1)
        string.write(byte: 5)
        string.write(varint: UInt64(CoreLimits.stringBytesMax) + 1)
        var key = header(kind: 1)
        key.write(byte: 6)
        key.write(varint: 1)
        key.write(varint: UInt64(CoreLimits.keyBytesMax) + 1)
        var name = header(kind: 6)
        name.write(varint: UInt64(CoreLimits.functionNameBytesMax) + 1)
        for writer in [object, batch, path, string, key, name] {
            let reason = try #require(malformedReason(writer.bytes + Array(repeating: 0x61, count: 4)))
            #expect(reason.contains("exceeds the limit"), "\(reason)")
        }
    }

    @Test func invalidKeyBytesAreRefusedNamingTheKey() throws {
        for bad in ["a.b", "$x", "", "x\u{1}"] {
            var path = ByteWriter()
            path.write(byte: OpCodec.format)
            OpCodec.write(stamp, to: &path)
            path.write(varint: 1)
            path.write(varint: 1)
            path.write(string: bad)
            path.write(byte: 1)
            path.write(byte: 0)
            var object = header(kind: 1)
            object.write(byte: 6)
            object.write(varint: 1)
            object.write(string: bad)
            object.write(byte: 2)
            // Padding so that the count checks pass and the key itself is what fails.
            for bytes in [path.bytes + [0, 0], object.bytes + [0, 0]] {
                guard case .invalidKey(let key, _) = coreError({ try OpCodec.decode(bytes) }) else {
                    Issue.record("\(bad) was not refused as a key")
                    continue
                }
                #expect(key == bad)
            }
        }
    }

    @Test func invalidUTF8IsRefusedInKeysStringsAndNames() throws {
        let invalid: [[UInt8]] = [[0xFF], [0x61, 0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF]]
        for raw in invalid {
            var key = ByteWriter()
            key.write(byte: OpCodec.format)
            OpCodec.write(stamp, to: &key)
            key.write(varint: 1)
            key.write(varint: 1)
            key.write(bytes: raw)
            key.write(byte: 1)
            key.write(byte: 0)
            var string = header(kind: 1)
            string.write(byte: 5)
            string.write(bytes: raw)
            var name = header(kind: 6)
            name.write(bytes: raw)
            name.write(varint: 1)
            name.write(byte: 0)
            for writer in [key, string, name] {
                #expect(malformedReason(writer.bytes) == "string is not valid UTF-8")
            }
        }
    }

    @Test func aZeroReplicaIDIsRefused() throws {
        var bytes = OpCodec.encode(try op(.set(.int(1))))
        for i in 9..<17 { bytes[i] = 0 }
        #expect(coreError { try OpCodec.decode(bytes) } == .malformedEncoding(offset: 9, reason: "replica id 0"))
        var vector = header(kind: 5)
        vector.write(varint: 1)
        vector.write(fixed: 0)
        vector.write(varint: 3)
        vector.write(byte: 0)
        #expect(malformedReason(vector.bytes) == "replica id 0")
    }

    @Test func sequenceZeroIsRefused() throws {
        var bytes = OpCodec.encode(try op(.set(.int(1)), sequence: 1))
        bytes[17] = 0
        #expect(malformedReason(bytes) == "sequence 0")
    }

    @Test(arguments: [Double.infinity, -.infinity, .nan, .signalingNaN, -.nan])
    func nonFiniteDoublesAreRefused(double: Double) throws {
        var set = header(kind: 1)
        set.write(byte: 4)
        set.write(fixed: double.bitPattern)
        #expect(malformedReason(set.bytes) == "non-finite double")
        var increment = header(kind: 3)
        increment.write(byte: 4)
        increment.write(fixed: double.bitPattern)
        increment.write(byte: 3)
        increment.write(byte: 0)
        #expect(malformedReason(increment.bytes) == "non-finite double")
    }

    @Test func trailingBytesAreRefused() throws {
        let bytes = OpCodec.encode(try op(.set(.int(1))))
        #expect(
            coreError { try OpCodec.decode(bytes + [0]) }
                == .malformedEncoding(offset: bytes.count, reason: "trailing bytes after the op"))
    }

    @Test func overlappingMergeChildrenAreRefused() throws {
        for relatives in [["a", "a/b"], ["x/y/z", "x/y"], ["a", "a"]] {
            var merge = header(kind: 2)
            merge.write(varint: UInt64(relatives.count))
            for relative in relatives {
                OpCodec.write(try Path(relative), to: &merge)
                OpCodec.write(Value.int(1), to: &merge)
            }
            let reason = try #require(malformedReason(merge.bytes))
            #expect(reason.contains("overlap"), "\(reason)")
        }
        var rootChild = header(kind: 2)
        rootChild.write(varint: 1)
        OpCodec.write(Path.root, to: &rootChild)
        OpCodec.write(Value.int(1), to: &rootChild)
        #expect(try #require(malformedReason(rootChild.bytes)).contains("cannot be empty"))
        // Siblings, however deep, do not overlap.
        var siblings = header(kind: 2)
        siblings.write(varint: 2)
        for relative in ["a/b", "a/c"] {
            OpCodec.write(try Path(relative), to: &siblings)
            OpCodec.write(Value.int(1), to: &siblings)
        }
        guard case .merge(let decoded) = try OpCodec.decode(siblings.bytes).kind else {
            Issue.record("siblings did not decode as a merge")
            return
        }
        #expect(decoded.map(\.relative.description) == ["/a/b", "/a/c"])
    }

    @Test func objectsMustBeNormalizedAndKeysUnique() throws {
        var duplicate = header(kind: 1)
        duplicate.write(byte: 6)
        duplicate.write(varint: 2)
        for _ in 0..<2 {
            duplicate.write(string: "k")
            duplicate.write(byte: 2)
        }
        #expect(malformedReason(duplicate.bytes) == "duplicate key k")
        var nullChild = header(kind: 1)
        nullChild.write(byte: 6)
        nullChild.write(varint: 1)
        nullChild.write(string: "k")
        nullChild.write(byte: 0)
        #expect(malformedReason(nullChild.bytes) == "null child in object")
        var empty = header(kind: 1)
        empty.write(byte: 6)
        empty.write(varint: 0)
        #expect(malformedReason(empty.bytes) == "empty object")
    }

    @Test func structuralRulesOfKindsAreChecked() throws {
        var emptyBatch = header(kind: 4)
        emptyBatch.write(varint: 0)
        #expect(malformedReason(emptyBatch.bytes) == "empty batch")
        for notANumber: Value in [.string("1"), .null, .bool(true), .object(["a": .int(1)])] {
            var increment = header(kind: 3)
            OpCodec.write(notANumber, to: &increment)
            OpCodec.write(Value.int(0), to: &increment)
            #expect(malformedReason(increment.bytes) == "expected a number")
        }
        var version = header(kind: 6)
        version.write(string: "f")
        version.write(varint: UInt64(UInt32.max) + 1)
        version.write(byte: 0)
        #expect(malformedReason(version.bytes) == "function version out of range")
    }

    @Test func valuesAndMergeChildrenMayNotReachBelowDepth32() throws {
        let deep = try Path(keys: (1...31).map { "k\($0)" })
        // A one-level object at depth 31 puts its leaf at 32: allowed.
        try expectRoundTrip(Op(stamp: stamp, sequence: 1, path: deep, kind: .set(.object(["leaf": .int(1)]))))
        var tooDeep = header(path: try deep.child("k32"), kind: 1)
        OpCodec.write(Value.object(["leaf": .int(1)]), to: &tooDeep)
        #expect(malformedReason(tooDeep.bytes) == "value nested too deep")
        var merge = header(path: deep, kind: 2)
        merge.write(varint: 1)
        OpCodec.write(try Path("x/y"), to: &merge)
        OpCodec.write(Value.int(1), to: &merge)
        #expect(malformedReason(merge.bytes) == "merge child path too deep")
    }

    // MARK: - Primitives

    @Test func varintsAndZigzagsRoundTripAtTheirBoundaries() throws {
        var writer = ByteWriter()
        let unsigned: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), .max - 1, .max]
        let signed: [Int64] = [0, -1, 1, -64, 63, -65, 64, .min, .max]
        for value in unsigned { writer.write(varint: value) }
        for value in signed { writer.write(zigzag: value) }
        writer.write(fixed32: 0xDEAD_BEEF)
        writer.write(bytes: [1, 2, 3])
        var reader = ByteReader(writer.bytes)
        for value in unsigned { #expect(try reader.readVarint() == value) }
        for value in signed { #expect(try reader.readZigzag() == value) }
        #expect(try reader.readFixed32() == 0xDEAD_BEEF)
        #expect(try reader.readBytes(max: 3) == [1, 2, 3])
        #expect(reader.isAtEnd)
        #expect(throws: CoreError.self) { try reader.readByte() }
        var short = ByteReader([1, 2, 3])
        #expect(throws: CoreError.self) { try short.readFixed() }
        #expect(throws: CoreError.self) { try short.readFixed32() }
        #expect(short.offset == 0)
    }
}
