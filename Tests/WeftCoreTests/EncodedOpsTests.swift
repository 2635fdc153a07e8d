import Testing
import WeftTestSupport

@testable import WeftCore

/// Ops read with the bytes each came in.
@Suite struct EncodedOpsTests {
    let origin = ReplicaID(rawValue: 0x0102_0304_0506_0708)!

    func op(_ sequence: UInt64, _ path: String, _ kind: OpKind) throws -> Op {
        try .make(kind, at: path, origin: origin, millis: 1_700_000_000_000 + sequence, sequence: sequence)
    }

    @Test func eachOpKeepsExactlyItsOwnBytes() throws {
        let ops = [
            try op(1, "/a", .set(.object(["x": .int(1), "y": .string("z")]))),
            try op(2, "/b", .increment(by: .double(0.5), from: .int(0))),
            try op(
                3, "/", .batch([.set(try Path("/a"), .null), .increment(try Path("/b"), by: .int(1), from: .int(0))])),
        ]
        var writer = ByteWriter()
        for op in ops { OpCodec.write(op, to: &writer) }
        var reader = ByteReader(writer.bytes)
        let read = try EncodedOps.read(from: &reader, countMax: 3)
        #expect(reader.isAtEnd)
        #expect(read.ops == ops)
        #expect(read.encodings.map(Array.init) == ops.map(OpCodec.encode))
        #expect(read == EncodedOps(ops))
        #expect(read.subset([2, 0]).ops == [ops[2], ops[0]])
        #expect(read.subset([2, 0]).encodings.map(Array.init) == [OpCodec.encode(ops[2]), OpCodec.encode(ops[0])])
    }

    @Test func repeatedPathsInAFrameDecodeToTheSamePaths() throws {
        // Many ops over a few paths (the frame's path cache answers the repeats), some paths sharing
        // a prefix, a batch and a merge whose paths go through the same cache, and a non-ASCII key.
        let paths = ["/counters/c1", "/counters/c2", "/counters/c1/x", "/é/ü", "/counters/c1"]
        var ops: [Op] = []
        for sequence in 1...300 {
            let path = paths[sequence % paths.count]
            switch sequence % 3 {
            case 0: ops.append(try op(UInt64(sequence), path, .increment(by: .int(1), from: .int(0))))
            case 1:
                ops.append(
                    try op(
                        UInt64(sequence), "/",
                        .batch([.set(try Path(path), .int(Int64(sequence))), .set(try Path("/counters/c2"), .null)])))
            default:
                ops.append(
                    try op(
                        UInt64(sequence), path, .merge([MergeChild(relative: try Path("counters/c1"), value: .int(1))]))
                )
            }
        }
        var writer = ByteWriter()
        for op in ops { OpCodec.write(op, to: &writer) }
        var reader = ByteReader(writer.bytes)
        let read = try EncodedOps.read(from: &reader, countMax: ops.count)
        #expect(read.ops == ops)
        #expect(read.ops.map(\.path.keys) == ops.map(\.path.keys))
        // One op at a time, with no cache, reads the same.
        #expect(try ops.map { try OpCodec.decode(OpCodec.encode($0)) } == read.ops)
    }

    @Test func aPathCacheAnswersOnlyTheExactBytes() throws {
        var cache = PathCache()
        let path = try Path("/ab/c")
        var writer = ByteWriter()
        OpCodec.write(path, to: &writer)
        cache.store(path, encodedBy: writer.bytes[...])
        #expect(cache.path(encodedBy: writer.bytes[...]) == path)
        var otherWriter = ByteWriter()
        OpCodec.write(try Path("/ab/d"), to: &otherWriter)
        #expect(cache.path(encodedBy: otherWriter.bytes[...]) == nil)
        #expect(cache.path(encodedBy: writer.bytes.dropLast()) == nil)
    }

    @Test func stringsDecodeAsciiAndUnicodeAndRefuseBadUTF8() throws {
        for text in ["plain", "", "é-ü-中", String(repeating: "k", count: 700)] {
            var writer = ByteWriter()
            writer.write(string: text)
            var reader = ByteReader(writer.bytes)
            #expect(try reader.readString(max: 1024) == text)
            #expect(reader.isAtEnd)
        }
        var invalid = ByteReader([3, 0x61, 0xC3, 0x28])
        #expect(throws: CoreError.self) { try invalid.readString(max: 16) }
        var overlong = ByteReader([2, 0xC0, 0xAF])
        #expect(throws: CoreError.self) { try overlong.readString(max: 16) }
    }

    @Test func garbageTruncationAndTooManyOpsAreErrors() throws {
        let bytes = OpCodec.encode(try op(1, "/a", .set(.int(1))))
        var truncated = ByteReader(Array(bytes.dropLast()))
        #expect(throws: CoreError.self) { try EncodedOps.read(from: &truncated, countMax: 10) }
        var garbage = ByteReader([0xFF, 0x00, 0x13])
        #expect(throws: CoreError.self) { try EncodedOps.read(from: &garbage, countMax: 10) }
        var twice = ByteReader(bytes + bytes)
        #expect(throws: CoreError.self) { try EncodedOps.read(from: &twice, countMax: 1) }
    }
}
